// gpuhandlesrc's properties: their specs, getters and setters, and the stats structure.
#include "gstgpuhandlesrc.h"
#include "gstgpuhandletransport.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::src;

namespace {

enum Property {
	PropSocketPath = 1,
	PropConnectTimeout,
	PropAllowedUids,
	PropStats,
	PropReconnect,
	PropReconnectTimeout,
	PropTransportLatency,
};

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	SrcState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropSocketPath: {
		const gchar *path = g_value_get_string(value);
		s.socketPath = path ? path : "";
		break;
	}
	case PropConnectTimeout: s.connectTimeoutNs = g_value_get_uint64(value); break;
	case PropAllowedUids: {
		const gchar *uids = g_value_get_string(value);
		s.allowedUids = uids ? uids : "";
		break;
	}
	case PropReconnect: s.reconnect = g_value_get_boolean(value); break;
	case PropReconnectTimeout: s.reconnectTimeoutNs = g_value_get_uint64(value); break;
	case PropTransportLatency: s.transportLatencyNs = g_value_get_uint64(value); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	SrcState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropSocketPath: g_value_set_string(value, s.socketPath.c_str()); break;
	case PropConnectTimeout: g_value_set_uint64(value, s.connectTimeoutNs); break;
	case PropAllowedUids: g_value_set_string(value, s.allowedUids.c_str()); break;
	case PropReconnect: g_value_set_boolean(value, s.reconnect); break;
	case PropReconnectTimeout: g_value_set_uint64(value, s.reconnectTimeoutNs); break;
	case PropTransportLatency: g_value_set_uint64(value, s.transportLatencyNs); break;
	case PropStats:
		g_value_take_boxed(
			value, gst_structure_new(
				       "gpuhandlesrc-stats", "frames", G_TYPE_UINT64,
				       s.frames.load(), "frames-gpuhandle", G_TYPE_UINT64,
				       s.gpuHandleFrames.load(), "metas-refused", G_TYPE_UINT64,
				       s.metasRefused.load(), "frames-over-cached-files",
				       G_TYPE_UINT64, s.framesOverCachedFiles.load(), "reconnects",
				       G_TYPE_UINT64, s.reconnects.load(), "frames-copied",
				       G_TYPE_UINT64, s.framesCopied.load(), nullptr));
		break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

} // namespace

namespace gpuhandle::gst::src {

void installProperties(GObjectClass *object)
{
	object->set_property = setProperty;
	object->get_property = getProperty;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropSocketPath,
		g_param_spec_string(
			"socket-path", "Socket path",
			"The Unix socket of the gpuhandlesink to receive from. Required.", nullptr,
			flags));
	g_object_class_install_property(
		object, PropConnectTimeout,
		g_param_spec_uint64("connect-timeout", "Connect timeout",
				    "How long to wait for the producer's socket, in nanoseconds", 0,
				    kMaxTimeoutNs, 5ull * GST_SECOND, flags));
	g_object_class_install_property(
		object, PropAllowedUids,
		allowedUidsParamSpec("Users (comma-separated uids) the producer may run as besides "
				     "this process's own; empty: only this process's own user"));
	g_object_class_install_property(
		object, PropReconnect,
		g_param_spec_boolean(
			"reconnect", "Reconnect",
			"When the producer goes away (crash or stop without EOS), wait for the next "
			"one on the same socket path (reconnect-timeout) and go on: caps "
			"renegotiated if they changed, the first buffer marked DISCONT. The "
			"producer's EOS still ends the stream. false: the stream ends (an error "
			"for a crash, EOS for a stop)",
			FALSE, flags));
	g_object_class_install_property(
		object, PropReconnectTimeout,
		g_param_spec_uint64("reconnect-timeout", "Reconnect timeout",
				    "With reconnect, how long to wait for the next producer (ns) "
				    "before posting an error; 0: for ever (a flush or a state "
				    "change still ends the wait)",
				    0, G_MAXUINT64, 30ull * GST_SECOND, flags));
	g_object_class_install_property(
		object, PropTransportLatency,
		g_param_spec_uint64("transport-latency", "Transport latency",
				    "What the socket adds to the producer's latency (ns): the "
				    "LATENCY query answers the producer's latency plus this",
				    0, 10ull * GST_SECOND, 5ull * GST_MSECOND, flags));
	g_object_class_install_property(
		object, PropStats,
		g_param_spec_boxed(
			"stats", "Statistics",
			"frames, frames-gpuhandle (pushed as memory:GpuHandle), metas-refused, "
			"frames-over-cached-files (memfd frames whose file was already mapped "
			"here), reconnects (producers that came back: reconnect), frames-copied "
			"(copied out of the producer's memory because downstream held as many "
			"as the producer lets this consumer hold) (guint64)",
			GST_TYPE_STRUCTURE,
			static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));
}

} // namespace gpuhandle::gst::src
