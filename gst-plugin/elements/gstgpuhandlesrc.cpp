// gpuhandlesrc: video frames from another process over a Unix socket (gpuhandle's FrameReceiver).
#include "gstgpuhandlesrc.h"

#include "gstgpuhandlestats.h"
#include "gstgpuhandletransport.h"

#include <chrono>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlemetabytes.hpp>
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>

GST_DEBUG_CATEGORY(gst_gpu_handle_src_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_src_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::src;
using namespace std::chrono_literals;

namespace {

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
	std::string path;
	std::string uids;
	std::chrono::nanoseconds timeout{};
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		path = s.socketPath;
		timeout = std::chrono::nanoseconds(s.connectTimeoutNs);
		uids = s.allowedUids;
	}
	s.frames = 0;
	s.framesOverCachedFiles = 0;
	s.gpuHandleFrames = 0;
	s.metasRefused = 0;
	s.reconnects = 0;
	s.framesCopied = 0;
	s.timing.reset();
	s.timing.discont = false;
	s.flushing = false;
	if (path.empty()) {
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
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		s.peers = *peers;
	}
	Result<std::unique_ptr<FrameReceiver>> receiver = connectProducer(bsrc, path, timeout);
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
// With reconnect, a producer that went away (crashed, or stopped without ending the stream) is
// waited for again; its EOS still ends the stream.
GstFlowReturn receiveFrame(GstBaseSrc *bsrc, std::optional<Frame> &out)
{
	SrcState &s = stateOf(bsrc);
	for (;;) {
		if (s.flushing.load())
			return GST_FLOW_FLUSHING;
		FrameReceiver &receiver = *s.receiver;
		Result<std::optional<Frame>> got = receiver.receive(kReceiveSlice);
		if (!got && got.error().code() == ErrorCode::Timeout)
			continue;
		const bool gone = (!got && got.error().code() == ErrorCode::Io) ||
				  (got && !*got && receiver.saidBye());
		if (gone && s.reconnect) {
			const std::string why = got ? "it stopped" : got.error().message();
			if (GstFlowReturn ret = reconnectProducer(bsrc, why.c_str());
			    ret != GST_FLOW_OK)
				return ret;
			continue;
		}
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
			postStats(GST_ELEMENT(bsrc));
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
	// Downstream holds as many frames as the producer lets this consumer hold (an encoder's
	// queue, a muxer's): the producer would skip this consumer until one comes back. So this
	// one is copied into memory of its own and goes back at once, as v4l2src copies when its
	// pool runs low; the copy carries the metas but the release (gstgpuhandlesyncmeta.cpp).
	if (s.receiver->framesHeld() >= s.receiver->maxInFlight()) {
		GstBuffer *copy = gst_buffer_copy_deep(*buffer);
		gst_buffer_unref(*buffer);
		if (!copy)
			return Error(ErrorCode::OutOfMemory, "buffer",
				     "A frame could not be copied out of the producer's memory.");
		s.framesCopied++;
		return copy;
	}
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
	if (!s.receiver)
		return GST_FLOW_FLUSHING;
	std::optional<Frame> frame;
	if (GstFlowReturn ret = receiveFrame(bsrc, frame); ret != GST_FLOW_OK)
		return ret;
	// A reconnect may have replaced the receiver (on this thread).
	FrameReceiver *receiver = s.receiver.get();
	// The caps string is copied only when a caps message came (not per frame).
	if (const uint64_t messages = receiver->capsMessages(); messages != s.capsMessages) {
		s.capsMessages = messages;
		if (!adoptCaps(bsrc, receiver->caps())) {
			(void)frame->release().signal();
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
	stampBuffer(bsrc, *receiver, *buffer);
	s.frames++;
	*out = *buffer;
	return GST_FLOW_OK;
}

gboolean query(GstBaseSrc *bsrc, GstQuery *query)
{
	if (GST_QUERY_TYPE(query) == GST_QUERY_LATENCY) {
		answerLatency(bsrc, query);
		return TRUE;
	}
	return GST_BASE_SRC_CLASS(gst_gpu_handle_src_parent_class)->query(bsrc, query);
}

// The producer's times are on the monotonic clock: with the monotonic system clock (a pipeline's
// usual clock) they are this pipeline's clock times as they are.
gboolean setClock(GstElement *element, GstClock *clock)
{
	stateOf(element).timing.monotonicClock = isMonotonicClock(clock);
	return GST_ELEMENT_CLASS(gst_gpu_handle_src_parent_class)->set_clock(element, clock);
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
	object->finalize = finalize;
	installProperties(object);

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
	base->query = query;
	element->set_clock = setClock;
	GST_PUSH_SRC_CLASS(klass)->create = create;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_src_debug, "gpuhandlesrc", 0, "gpuhandle source");
}

static void gst_gpu_handle_src_init(GstGpuHandleSrc *self)
{
	self->state = new SrcState();
	GstBaseSrc *bsrc = GST_BASE_SRC(self);
	gst_base_src_set_live(bsrc, TRUE);
	// The producer's times cross (stampBuffer); do-timestamp=true stamps arrival times instead.
	gst_base_src_set_format(bsrc, GST_FORMAT_TIME);
}
