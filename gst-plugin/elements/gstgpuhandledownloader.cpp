// The steps gpuhandledownload and gpuhandleavdec share on the way into a negotiated memory: the
// target's device, the frame's fence waited, a frame copied through the CPU, paths counted.
#include "gstgpuhandledownloader.h"

namespace gpuhandle::gst::download {

WaitDuration timeoutOf(Downloader &s)
{
	std::lock_guard<std::mutex> lock(s.mutex);
	return timeoutFromNs(s.timeoutNs);
}

bool allowCopyOf(Downloader &s)
{
	std::lock_guard<std::mutex> lock(s.mutex);
	return s.allowCopy;
}

const char *targetName(const Downloader &s)
{
	return toSystemMemory(s) ? "system memory" : s.target->name;
}

bool toSystemMemory(const Downloader &s)
{
	return s.target->memory == BufferMemory::System;
}

// Opens the backend of the target's device through its adapter (the one GL and Vulkan neighbours
// share, CUDA's, or the fd backend for DMA-BUFs); posts the element error when it cannot.
bool setTarget(Downloader &s, const GstVideoInfo &info, PixelFormat format,
	       const MemoryTypeInfo &target)
{
	s.info = info;
	s.format = format;
	s.target = &target;
	s.lastPath = ExecutionPath::Kind::NotRun;
	s.noDirectWrapFrom = nullptr;
	s.adapters.dropPools(); // made for the old caps (and maybe another context)
	s.targetBackend.reset();
	s.targetAdapter = s.adapters.find(s.target->memory);
	Result<BackendRef> backend =
		s.targetAdapter
			? s.targetAdapter->openOutput(s.element, s.devices)
			: Result<BackendRef>(Error::format(ErrorCode::NotSupported, "target",
							   "%s is not built in", s.target->name));
	if (!backend.ok()) {
		GST_ELEMENT_ERROR(s.element, RESOURCE, NOT_FOUND,
				  (_("No device to download frames into %s."), targetName(s)),
				  ("%s", backend.error().message().c_str()));
		return false;
	}
	s.targetBackend = *backend;
	if (s.targetBackend)
		GST_CAT_INFO_OBJECT(s.category, s.element, "frames go into %s on %s", targetName(s),
				    s.targetBackend->deviceInfo().name.c_str());
	return true;
}

void noteDownstreamMetas(Downloader &s, GstQuery *query)
{
	s.downstreamVideoMeta =
		gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr) != FALSE;
	s.downstreamSyncMeta = gst_query_find_allocation_meta(
				       query, GST_GPU_HANDLE_SYNC_META_API_TYPE, nullptr) != FALSE;
}

bool answerQuery(Downloader &s, GstQuery *query)
{
	return handleDevicesQuery(query, s.devices) ||
	       s.adapters.answerContextQuery(s.element, query);
}

void setContext(Downloader &s, GstContext *context)
{
	handleDevicesSetContext(context, s.devices);
	s.adapters.setContext(s.element, context);
}

void release(Downloader &s)
{
	s.targetBackend.reset();
	s.targetAdapter = nullptr;
	s.adapters.release();
}

const Frame *inputFrame(Downloader &s, GstBuffer *inbuf, std::optional<Frame> &assembled,
			BackendRef &backend)
{
	GstMemory *first = gst_buffer_n_memory(inbuf) == 1 ? gst_buffer_peek_memory(inbuf, 0)
							   : nullptr;
	const Frame *whole = first ? memoryFrame(first) : nullptr;
	if (whole && whole->numResources() == 1 && memoryResourceIndex(first) == 0) {
		backend = memoryBackend(first);
		return whole;
	}
	Result<Frame> frame = frameFromBuffer(inbuf);
	if (!frame.ok()) {
		GPUHANDLE_ELEMENT_ERROR(s.element, STREAM, FORMAT,
					(_("An input buffer is not gpuhandle memory.")),
					frame.error());
		return nullptr;
	}
	backend = memoryBackend(gst_buffer_peek_memory(inbuf, 0));
	assembled = std::move(*frame);
	return &*assembled;
}

void copyMetadata(Downloader &s, GstBuffer *out, GstBuffer *in)
{
	if (s.carryMetadata)
		s.carryMetadata(s.element, out, in);
}

void notePath(Downloader &s, ExecutionPath path, ImportRoute route)
{
	s.stats.count(path.kind());
	if (path.kind() == s.lastPath && route == s.lastRoute)
		return;
	s.lastPath = path.kind();
	s.lastRoute = route;
	GST_CAT_INFO_OBJECT(s.category, s.element, "%s into %s: %s (%s)%s%s",
			    pixelFormatName(s.format), targetName(s),
			    executionPathKindName(path.kind()), importRouteName(route),
			    *path.reason() ? ": " : "", path.reason());
}

// Waits for the frame's acquire point in slices (so a flush or a state change interrupts it),
// counting the wait; posts the element error when it does not signal within `timeout`.
Acquired waitAcquire(Downloader &s, const Frame &frame, WaitDuration timeout)
{
	if (frame.acquire().isNoop())
		return Acquired::Yes;
	Result<bool> signaled = frame.acquire().isSignaled();
	if (signaled.ok() && *signaled)
		return Acquired::Yes;
	std::chrono::nanoseconds waited{ 0 };
	std::optional<Error> why;
	const SlicedWait done = waitSliced(frame.acquire(), timeout, s.flushing, waited, why);
	if (done == SlicedWait::Flushing)
		return Acquired::Flushing;
	s.stats.countFenceWait(waited);
	if (done == SlicedWait::Failed) {
		const Error error = why ? *why
					: Error::format(ErrorCode::Timeout, "acquire",
							"The %s fence did not signal in time.",
							syncKindName(frame.acquire().kind()));
		GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, BUSY,
					(_("A frame's fence did not signal in time.")), error);
		return Acquired::Failed;
	}
	return Acquired::Yes;
}

GstFlowReturn flowOf(Acquired acquired)
{
	switch (acquired) {
	case Acquired::Yes: return GST_FLOW_OK;
	case Acquired::Flushing: return GST_FLOW_FLUSHING;
	case Acquired::Failed: break;
	}
	return GST_FLOW_ERROR;
}

// The bytes of a frame gpuhandleupload wrapped from a native GStreamer memory (GLMemory,
// VulkanImage, ...) that the frame's backend cannot map (it maps what it allocated or imported):
// the native buffer, kept as the input's GstParentBufferMeta, is mapped by its own allocator,
// which downloads it. False when the input has no parent or either side does not map.
bool copyParentInto(Downloader &s, GstBuffer *inbuf, GstBuffer *out)
{
	GstParentBufferMeta *parent = gst_buffer_get_parent_buffer_meta(inbuf);
	if (!parent)
		return false;
	GstVideoFrame src, dst;
	if (!gst_video_frame_map(&src, &s.info, parent->buffer, GST_MAP_READ))
		return false;
	if (!gst_video_frame_map(&dst, &s.info, out, GST_MAP_WRITE)) {
		gst_video_frame_unmap(&src);
		return false;
	}
	const bool copied = gst_video_frame_copy(&dst, &src) != FALSE;
	gst_video_frame_unmap(&dst);
	gst_video_frame_unmap(&src);
	return copied;
}

// Maps `frame` (through its backend) and copies its rows into `out`, a buffer of the negotiated
// caps that maps for writing (system memory, or GLMemory, which uploads on unmap). Posts the
// element error and returns false when either side does not map.
bool copyFrameInto(Downloader &s, GstBuffer *inbuf, const Frame &frame, const BackendRef &backend,
		   GstBuffer *out, WaitDuration timeout)
{
	Result<CpuMapping> src = backend ? backend->map(frame, MapAccess::Read, timeout)
					 : mapFrame(frame, MapAccess::Read, timeout);
	if (!src.ok() && src.error().code() != ErrorCode::Timeout &&
	    copyParentInto(s, inbuf, out)) {
		GST_CAT_LOG_OBJECT(s.category, s.element, "read through GStreamer's own memory: %s",
				   src.error().message().c_str());
		return true;
	}
	GstVideoFrame dst;
	Result<const PixelFormatInfo *> formatInfo = pixelFormatInfo(s.format);
	if (!src.ok() || !formatInfo.ok() ||
	    !gst_video_frame_map(&dst, &s.info, out, GST_MAP_WRITE)) {
		const Error error = !src.ok()          ? src.error()
				    : !formatInfo.ok() ? formatInfo.error()
						       : Error(ErrorCode::Io, "buffer",
							       "The output buffer did not map.");
		GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, READ,
					(_("Could not read a gpuhandle frame.")), error);
		return false;
	}
	uint8_t *dstPlanes[4]{};
	const uint8_t *srcPlanes[4]{};
	uint32_t dstStrides[4]{}, srcStrides[4]{};
	for (uint32_t p = 0; p < src->numPlanes() && p < 4; ++p) {
		dstPlanes[p] = static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&dst, p));
		dstStrides[p] = static_cast<uint32_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&dst, p));
		srcPlanes[p] = src->data(p);
		srcStrides[p] = src->stride(p);
	}
	copyPlaneRows(dstPlanes, dstStrides, srcPlanes, srcStrides, **formatInfo,
		      static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&s.info)),
		      static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&s.info)));
	gst_video_frame_unmap(&dst);
	return true;
}

} // namespace gpuhandle::gst::download
