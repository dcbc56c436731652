// gpuhandlesink's properties: their specs, getters and setters, and the stats structure.
#include "gstgpuhandlesink.h"
#include "gstgpuhandletransport.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::sink;

namespace {

enum Property {
	PropSocketPath = 1,
	PropSocketMode,
	PropMaxConsumers,
	PropMaxInFlight,
	PropAllowedUids,
	PropWaitForConsumers,
	PropStats,
	PropReleaseTimeout,
};

GstStructure *statsStructure(SinkState &s)
{
	FrameSenderStats sender{};
	if (s.sender)
		sender = s.sender->stats();
	const SinkCounters &c = s.counters;
	return gst_structure_new(
		"gpuhandlesink-stats", "frames", G_TYPE_UINT64, c.frames.load(), "frames-zero-copy",
		G_TYPE_UINT64, c.zeroCopy.load(), "frames-copied", G_TYPE_UINT64, c.copied.load(),
		"frames-dropped", G_TYPE_UINT64, c.dropped.load(), "frames-unsent", G_TYPE_UINT64,
		c.unsent.load(), "frames-sent", G_TYPE_UINT64,
		static_cast<guint64>(sender.framesSent), "frames-skipped", G_TYPE_UINT64,
		static_cast<guint64>(sender.framesSkipped), "consumers", G_TYPE_UINT64,
		static_cast<guint64>(sender.peersConnected), "consumers-lost", G_TYPE_UINT64,
		static_cast<guint64>(sender.peersLost), "metas-left-out", G_TYPE_UINT64,
		c.metasLeftOut.load(), "frames-released-late", G_TYPE_UINT64, c.releasedLate.load(),
		"files-remembered", G_TYPE_UINT64, static_cast<guint64>(sender.filesRemembered),
		"frames-over-kept-files", G_TYPE_UINT64,
		static_cast<guint64>(sender.framesOverKeptFiles), nullptr);
}

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	SinkState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropSocketPath: {
		const gchar *path = g_value_get_string(value);
		s.socketPath = path ? path : "";
		break;
	}
	case PropSocketMode: s.socketMode = g_value_get_uint(value); break;
	case PropMaxConsumers: s.maxConsumers = g_value_get_uint(value); break;
	case PropMaxInFlight: s.maxInFlight = g_value_get_uint(value); break;
	case PropAllowedUids: {
		const gchar *uids = g_value_get_string(value);
		s.allowedUids = uids ? uids : "";
		break;
	}
	case PropWaitForConsumers: s.waitForConsumers = g_value_get_uint(value); break;
	case PropReleaseTimeout:
		s.releaseTimeout = std::chrono::nanoseconds(g_value_get_uint64(value));
		break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	SinkState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropSocketPath: g_value_set_string(value, s.socketPath.c_str()); break;
	case PropSocketMode: g_value_set_uint(value, s.socketMode); break;
	case PropMaxConsumers: g_value_set_uint(value, s.maxConsumers); break;
	case PropMaxInFlight: g_value_set_uint(value, s.maxInFlight); break;
	case PropAllowedUids: g_value_set_string(value, s.allowedUids.c_str()); break;
	case PropWaitForConsumers: g_value_set_uint(value, s.waitForConsumers); break;
	case PropReleaseTimeout:
		g_value_set_uint64(value, static_cast<guint64>(s.releaseTimeout.count()));
		break;
	case PropStats: g_value_take_boxed(value, statsStructure(s)); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

} // namespace

namespace gpuhandle::gst::sink {

void installProperties(GObjectClass *object)
{
	object->set_property = setProperty;
	object->get_property = getProperty;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropSocketPath,
		g_param_spec_string("socket-path", "Socket path",
				    "The Unix socket consumers connect to, bound when the element "
				    "goes to READY (a socket file there is replaced only when no "
				    "producer listens on it; another live producer's path is "
				    "refused). Required.",
				    nullptr, flags));
	g_object_class_install_property(
		object, PropSocketMode,
		g_param_spec_uint("socket-mode", "Socket mode",
				  "The socket file's permission bits (0600: the owner only)", 0,
				  0777, 0600, flags));
	g_object_class_install_property(
		object, PropMaxConsumers,
		g_param_spec_uint("max-consumers", "Maximum consumers",
				  "Consumers connected at once; more are refused", 1, 64, 8,
				  flags));
	g_object_class_install_property(
		object, PropMaxInFlight,
		g_param_spec_uint("max-in-flight", "Maximum frames in flight",
				  "Frames a consumer may hold; with one at this bound, the element "
				  "waits (up to 1 s) for room before sending the next, then skips "
				  "that consumer while others have room. The memfd pools grow to "
				  "max-in-flight x max-consumers + 1 buffers",
				  1, 64, 4, flags));
	g_object_class_install_property(
		object, PropAllowedUids,
		allowedUidsParamSpec("Users (comma-separated uids) that may connect besides this "
				     "process's own; empty: only this process's own user"));
	g_object_class_install_property(
		object, PropWaitForConsumers,
		g_param_spec_uint("wait-for-consumers", "Wait for consumers",
				  "Before the first frame, wait (up to 30 s) until this many "
				  "consumers connected; 0: do not wait (frames nobody takes are "
				  "dropped)",
				  0, 64, 0, flags));
	g_object_class_install_property(
		object, PropReleaseTimeout,
		g_param_spec_uint64(
			"release-timeout", "Release timeout",
			"How long consumers may hold a sent frame (ns, 1 ms to 1 day) before it is "
			"counted back anyway: its buffer returns to its pool and may be written "
			"again while a stuck consumer still maps it (counted in stats as "
			"frames-released-late)",
			GST_MSECOND, 24 * 3600 * GST_SECOND, 30 * GST_SECOND, flags));
	g_object_class_install_property(
		object, PropStats,
		g_param_spec_boxed("stats", "Statistics",
				   "frames, frames-zero-copy, frames-copied, frames-dropped, "
				   "frames-unsent, frames-sent, frames-skipped, "
				   "frames-released-late, consumers, consumers-lost, "
				   "metas-left-out, files-remembered (memfds sent once for "
				   "consumers to keep), frames-over-kept-files (frame messages "
				   "that named such a file instead of sending its fd) (guint64)",
				   GST_TYPE_STRUCTURE,
				   static_cast<GParamFlags>(G_PARAM_READABLE |
							    G_PARAM_STATIC_STRINGS)));
}

} // namespace gpuhandle::gst::sink
