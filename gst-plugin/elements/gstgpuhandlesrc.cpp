// gpuhandlesrc: video frames from another process over a Unix socket (gpuhandle's FrameReceiver).
#include "gstgpuhandlesrc.h"

#include "gstgpuhandletransport.h"

#include <chrono>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlemetabytes.hpp>
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_src_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_src_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::src;
using namespace std::chrono_literals;

namespace {

enum Property { PropSocketPath = 1, PropConnectTimeout, PropAllowedUids, PropStats };

// Each receive waits this long at most, so that unlock() (a flush, a state change) is honoured
// that quickly.
constexpr auto kReceiveSlice = 100ms;

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleSrc, gst_gpu_handle_src, GST_TYPE_PUSH_SRC)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DEFINE(gpuhandlesrc, "gpuhandlesrc", GST_RANK_NONE, GST_TYPE_GPU_HANDLE_SRC);

namespace {

SrcState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleSrc *>(self)->state;
}

// The producer's caps as system memory first (fd memory, mappable by any element), then as
// memory:GpuHandle (for gpuhandledownload and other GpuHandle consumers); null when the text
// is not caps.
GstCaps *capsFromProducer(const std::string &text)
{
	GstCaps *producer = gst_caps_from_string(text.c_str());
	if (!producer)
		return nullptr;
	GstCaps *out = gst_caps_new_empty();
	for (const char *feature :
	     { GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY, GST_CAPS_FEATURE_MEMORY_GPU_HANDLE }) {
		for (guint i = 0; i < gst_caps_get_size(producer); ++i)
			gst_caps_append_structure_full(
				out, gst_structure_copy(gst_caps_get_structure(producer, i)),
				gst_caps_features_new(feature, nullptr));
	}
	gst_caps_unref(producer);
	return out;
}

GstCaps *getCaps(GstBaseSrc *bsrc, GstCaps *filter)
{
	SrcState &s = stateOf(bsrc);
	std::string text;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		text = s.caps;
	}
	GstCaps *caps = text.empty() ? gst_pad_get_pad_template_caps(GST_BASE_SRC_PAD(bsrc))
				     : capsFromProducer(text);
	if (!caps) {
		GST_WARNING_OBJECT(bsrc, "the producer's caps are not caps: %s", text.c_str());
		caps = gst_caps_new_empty();
	}
	return intersectFilter(caps, filter);
}

gboolean start(GstBaseSrc *bsrc)
{
	SrcState &s = stateOf(bsrc);
	FrameReceiverOptions o;
	std::string uids;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		o.socketPath = s.socketPath;
		o.connectTimeout = std::chrono::nanoseconds(s.connectTimeoutNs);
		uids = s.allowedUids;
	}
	s.frames = 0;
	s.framesOverCachedFiles = 0;
	s.gpuHandleFrames = 0;
	s.metasRefused = 0;
	if (o.socketPath.empty()) {
		GST_ELEMENT_ERROR(bsrc, RESOURCE, NOT_FOUND,
				  (_("No socket path was given (the socket-path property).")),
				  ("socket-path is empty"));
		return FALSE;
	}
	Result<PeerRule> peers = parseAllowedUids(uids);
	if (!peers) {
		GST_ELEMENT_ERROR(bsrc, RESOURCE, SETTINGS,
				  (_("The allowed-uids property is not a list of user ids.")),
				  ("%s", peers.error().message().c_str()));
		return FALSE;
	}
	o.peers = *peers;
	GstElement *element = GST_ELEMENT_CAST(bsrc);
	o.log = [element](const Error &e) {
		GST_WARNING_OBJECT(element, "%s", e.message().c_str());
	};
	const std::string path = o.socketPath;
	Result<std::unique_ptr<FrameReceiver>> receiver = FrameReceiver::connect(std::move(o));
	if (!receiver) {
		GST_ELEMENT_ERROR(bsrc, RESOURCE, OPEN_READ,
				  (_("Could not connect to the socket \"%s\"."), path.c_str()),
				  ("%s", receiver.error().message().c_str()));
		return FALSE;
	}
	std::lock_guard<std::mutex> lock(s.mutex);
	s.receiver = std::move(*receiver);
	s.capsMessages = s.receiver->capsMessages();
	s.caps = s.receiver->caps();
	GST_INFO_OBJECT(bsrc, "connected to %s: %s", path.c_str(), s.caps.c_str());
	return TRUE;
}

gboolean stop(GstBaseSrc *bsrc)
{
	SrcState &s = stateOf(bsrc);
	std::unique_ptr<FrameReceiver> receiver;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		receiver = std::move(s.receiver);
		s.caps.clear();
	}
	s.shmFiles.clear(); // the streaming thread is stopped
	// Buffers still downstream keep their frames and signal their gates when freed.
	receiver.reset();
	return TRUE;
}

gboolean unlock(GstBaseSrc *bsrc)
{
	stateOf(bsrc).flushing = true;
	return TRUE;
}

gboolean unlockStop(GstBaseSrc *bsrc)
{
	stateOf(bsrc).flushing = false;
	return TRUE;
}

// The next frame, in slices so that a flush ends the wait; the flow return when there is none.
GstFlowReturn receiveFrame(GstBaseSrc *bsrc, FrameReceiver &receiver, std::optional<Frame> &out)
{
	SrcState &s = stateOf(bsrc);
	for (;;) {
		if (s.flushing.load())
			return GST_FLOW_FLUSHING;
		Result<std::optional<Frame>> got = receiver.receive(kReceiveSlice);
		if (!got && got.error().code() == ErrorCode::Timeout)
			continue;
		if (!got) {
			// Io: the producer went away without Bye (it crashed).
			const char *why = got.error().message().c_str();
			if (got.error().code() == ErrorCode::Io)
				GST_ELEMENT_ERROR(bsrc, RESOURCE, READ,
						  (_("The frame producer went away without ending "
						     "the stream.")),
						  ("%s", why));
			else
				GST_ELEMENT_ERROR(bsrc, RESOURCE, READ,
						  (_("Could not receive a frame.")), ("%s", why));
			return GST_FLOW_ERROR;
		}
		if (!*got) {
			GST_INFO_OBJECT(bsrc, "the producer ended the stream");
			return GST_FLOW_EOS;
		}
		out = std::move(**got);
		return GST_FLOW_OK;
	}
}

// Whether the pad was negotiated for memory:GpuHandle (else system memory).
bool isGpuHandleCaps(GstCaps *caps)
{
	return caps && gst_caps_get_size(caps) > 0 &&
	       gst_caps_features_contains(gst_caps_get_features(caps, 0),
					  GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
}

// Whether downstream reads GstVideoMeta: without it, system-memory buffers must be exactly the
// caps' frame in GStreamer's default layout (the producer's pool may pad or page-round them).
gboolean decideAllocation(GstBaseSrc *bsrc, GstQuery *query)
{
	SrcState &s = stateOf(bsrc);
	GstCaps *caps = nullptr;
	gst_query_parse_allocation(query, &caps, nullptr);
	// Every negotiation that succeeds ends here, with the caps it set on the pad.
	s.gpuHandleCaps = isGpuHandleCaps(caps);
	if (!caps || !gst_video_info_from_caps(&s.info, caps)) {
		GST_ELEMENT_ERROR(bsrc, CORE, NEGOTIATION,
				  (_("The producer's caps are not raw video.")),
				  ("caps %" GST_PTR_FORMAT, static_cast<void *>(caps)));
		return FALSE;
	}
	s.downstreamVideoMeta =
		gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr) != FALSE;
	return GST_BASE_SRC_CLASS(gst_gpu_handle_src_parent_class)->decide_allocation(bsrc, query);
}

// The frame as a buffer whose last reference signals its release gate (the sync meta's).
// `gpuHandle`: the pad was negotiated for memory:GpuHandle.
Result<GstBuffer *> bufferOf(GstBaseSrc *bsrc, const Frame &frame, bool gpuHandle)
{
	if (gpuHandle) {
		GstBuffer *buffer = bufferFromFrame(frame, BackendRef{}, true);
		if (!buffer)
			return Error(ErrorCode::NotSupported, "format",
				     "The frame's format has no GstVideoFormat.");
		addSyncMeta(buffer, frame.acquire(), frame.release());
		stateOf(bsrc).gpuHandleFrames++;
		return buffer;
	}
	SrcState &s = stateOf(bsrc);
	const uint64_t hitsBefore = s.shmFiles.hits();
	// A peer without GstVideoMeta gets the caps' default layout: the producer's pool for these
	// caps is in it, so the buffer is made so (no meta to add and remove per frame).
	Result<GstBuffer *> buffer =
		s.downstreamVideoMeta ? fdBufferFromFrame(frame, s.shmFiles)
				      : defaultLayoutBufferFromFrame(frame, s.shmFiles, s.info);
	if (!buffer)
		return buffer;
	if (s.shmFiles.hits() != hitsBefore)
		s.framesOverCachedFiles++;
	// The producer's memory: a writer gets a copy (gst_memory_make_mapped), never the memfd.
	// (A frame copied into the default layout is in memory of its own.)
	for (guint i = 0; i < gst_buffer_n_memory(*buffer); ++i) {
		GstMemory *mem = gst_buffer_peek_memory(*buffer, i);
		if (gst_is_fd_memory(mem))
			mem->mini_object.flags |= GST_MEMORY_FLAG_READONLY;
	}
	return buffer;
}

GstFlowReturn create(GstPushSrc *psrc, GstBuffer **out)
{
	GstBaseSrc *bsrc = GST_BASE_SRC_CAST(psrc);
	SrcState &s = stateOf(psrc);
	FrameReceiver *receiver = s.receiver.get();
	if (!receiver)
		return GST_FLOW_FLUSHING;
	std::optional<Frame> frame;
	if (GstFlowReturn ret = receiveFrame(bsrc, *receiver, frame); ret != GST_FLOW_OK)
		return ret;
	// The caps string is copied only when a caps message came (not per frame).
	std::string caps;
	bool changed = false;
	if (const uint64_t messages = receiver->capsMessages(); messages != s.capsMessages) {
		caps = receiver->caps();
		std::lock_guard<std::mutex> lock(s.mutex);
		s.capsMessages = messages;
		changed = caps != s.caps;
		s.caps = caps;
	}
	if (changed) {
		GST_INFO_OBJECT(bsrc, "the producer's caps changed: %s", caps.c_str());
		s.shmFiles.clear(); // the producer's pool for the old caps goes
		if (!gst_base_src_negotiate(bsrc)) {
			(void)frame->release().signal();
			GST_ELEMENT_ERROR(
				bsrc, CORE, NEGOTIATION,
				(_("Downstream does not accept the producer's new caps.")),
				("%s", caps.c_str()));
			return GST_FLOW_NOT_NEGOTIATED;
		}
	}
	const bool gpuHandle = s.gpuHandleCaps;
	if (!gpuHandle && !frame->acquire().isNoop()) {
		// System-memory elements read at once: the producer's fence first, in slices so
		// that unlock() (a flush, a state change) ends the wait.
		std::chrono::nanoseconds waited{};
		std::optional<Error> why;
		const SlicedWait done =
			waitSliced(frame->acquire(), kDefaultWaitTimeout, s.flushing, waited, why);
		if (done != SlicedWait::Signaled) {
			(void)frame->release().signal();
			if (done == SlicedWait::Flushing)
				return GST_FLOW_FLUSHING;
			GST_ELEMENT_ERROR(bsrc, STREAM, FORMAT,
					  (_("A received frame could not be made a buffer.")),
					  ("the producer's fence: %s",
					   why ? why->message().c_str() : "not signalled"));
			return GST_FLOW_ERROR;
		}
	}
	Result<GstBuffer *> buffer = bufferOf(bsrc, *frame, gpuHandle);
	if (!buffer) {
		(void)frame->release().signal();
		GST_ELEMENT_ERROR(bsrc, STREAM, FORMAT,
				  (_("A received frame could not be made a buffer.")),
				  ("%s", buffer.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	// The producer's buffer's metas (those that cross: gstgpuhandlemetabytes.hpp). Malformed
	// ones are refused as a whole; the frame still goes.
	if (std::span<const std::byte> metas = receiver->attachment(); !metas.empty()) {
		*buffer = gst_buffer_make_writable(*buffer);
		if (Status added = addMetasFromBytes(metas, *buffer); !added.ok()) {
			s.metasRefused++;
			GST_WARNING_OBJECT(bsrc, "the producer's metas were refused: %s",
					   added.error().message().c_str());
		}
	}
	s.frames++;
	*out = *buffer;
	return GST_FLOW_OK;
}

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
	case PropStats:
		g_value_take_boxed(
			value,
			gst_structure_new("gpuhandlesrc-stats", "frames", G_TYPE_UINT64,
					  s.frames.load(), "frames-gpuhandle", G_TYPE_UINT64,
					  s.gpuHandleFrames.load(), "metas-refused", G_TYPE_UINT64,
					  s.metasRefused.load(), "frames-over-cached-files",
					  G_TYPE_UINT64, s.framesOverCachedFiles.load(), nullptr));
		break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleSrc *>(static_cast<void *>(object));
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_src_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_src_class_init(GstGpuHandleSrcClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
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
		object, PropStats,
		g_param_spec_boxed(
			"stats", "Statistics",
			"frames, frames-gpuhandle (pushed as memory:GpuHandle), metas-refused, "
			"frames-over-cached-files (memfd frames whose file was already mapped "
			"here) (guint64)",
			GST_TYPE_STRUCTURE,
			static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	gst_element_class_set_static_metadata(
		element, "gpuhandle source", "Source/Video",
		"Receives video frames from a gpuhandlesink in another process over a Unix "
		"socket, without a copy (fd memory, or memory:GpuHandle)",
		"gpuhandle developers");
	GstCaps *srcCaps = templateCaps(GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY);
	gst_caps_append(srcCaps, templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE));
	gst_element_class_add_pad_template(element, gst_pad_template_new("src", GST_PAD_SRC,
									 GST_PAD_ALWAYS, srcCaps));
	gst_caps_unref(srcCaps);

	GstBaseSrcClass *base = GST_BASE_SRC_CLASS(klass);
	base->get_caps = getCaps;
	base->decide_allocation = decideAllocation;
	base->start = start;
	base->stop = stop;
	base->unlock = unlock;
	base->unlock_stop = unlockStop;
	GST_PUSH_SRC_CLASS(klass)->create = create;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_src_debug, "gpuhandlesrc", 0, "gpuhandle source");
}

static void gst_gpu_handle_src_init(GstGpuHandleSrc *self)
{
	self->state = new SrcState();
	GstBaseSrc *bsrc = GST_BASE_SRC(self);
	gst_base_src_set_live(bsrc, TRUE);
	gst_base_src_set_format(bsrc, GST_FORMAT_TIME);
	gst_base_src_set_do_timestamp(bsrc, TRUE);
}
