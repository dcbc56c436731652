// gpuhandledownload into system memory: wrapped in place, or mapped and copied.
#include "gstgpuhandledownload.h"

#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_download_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::download {

// Waits for the frame's acquire point in slices (so a flush or a state change interrupts it),
// counting the wait; posts the element error when it does not signal within `timeout`.
Acquired waitAcquire(GstBaseTransform *trans, const Frame &frame, WaitDuration timeout)
{
	DownloadState &s = stateOf(trans);
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
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, BUSY,
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

// Whether a consumer that ignores GstVideoMeta reads a system-memory wrap of `frame` right: one
// CPU range laid out as GStreamer lays out `info` by default.
bool frameHasDefaultLayout(const Frame &frame, const GstVideoInfo &info)
{
	if (frame.numResources() != 1)
		return false;
	const ResourceKind kind = frame.resource(0).kind();
	if (kind != ResourceKind::CpuBytes && kind != ResourceKind::ShmFd &&
	    !(kind == ResourceKind::CpuPlanes && frame.numPlanes() == 1))
		return false;
	for (uint32_t p = 0; p < frame.numPlanes(); ++p)
		if (frame.plane(p).offset != GST_VIDEO_INFO_PLANE_OFFSET(&info, p) ||
		    frame.plane(p).stride !=
			    static_cast<uint32_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, p)))
			return false;
	return true;
}

// Whether `inbuf` (the GpuHandle buffer gpuhandleupload made over `source`) says nothing that
// `source` does not: the same timestamps, offsets and flags, and no metas but the ones upload
// adds (video, sync, parent). Then `source` itself can go downstream, with no new buffer.
bool sameMetadata(GstBuffer *source, GstBuffer *inbuf)
{
	if (GST_BUFFER_PTS(source) != GST_BUFFER_PTS(inbuf) ||
	    GST_BUFFER_DTS(source) != GST_BUFFER_DTS(inbuf) ||
	    GST_BUFFER_DURATION(source) != GST_BUFFER_DURATION(inbuf) ||
	    GST_BUFFER_OFFSET(source) != GST_BUFFER_OFFSET(inbuf) ||
	    GST_BUFFER_OFFSET_END(source) != GST_BUFFER_OFFSET_END(inbuf))
		return false;
	const guint flags = GST_BUFFER_FLAGS(source) ^ GST_BUFFER_FLAGS(inbuf);
	if ((flags & ~static_cast<guint>(GST_BUFFER_FLAG_TAG_MEMORY)) != 0)
		return false;
	gpointer state = nullptr;
	while (GstMeta *meta = gst_buffer_iterate_meta(inbuf, &state)) {
		const GType api = meta->info->api;
		if (api != GST_VIDEO_META_API_TYPE && api != GST_GPU_HANDLE_SYNC_META_API_TYPE &&
		    api != GST_PARENT_BUFFER_META_API_TYPE)
			return false;
	}
	state = nullptr;
	while (GstMeta *meta = gst_buffer_iterate_meta(source, &state))
		if (meta->info->api != GST_VIDEO_META_API_TYPE)
			return false;
	return true;
}

gboolean keepOnlyVideoMeta(GstBuffer *, GstMeta **meta, gpointer)
{
	if ((*meta)->info->api != GST_VIDEO_META_API_TYPE)
		*meta = nullptr; // removed
	return TRUE;
}

// Maps `frame` (through its backend) and copies its rows into `out`, a buffer of the negotiated
// caps that maps for writing (system memory, or GLMemory, which uploads on unmap). Posts the
// element error and returns false when either side does not map.
// The bytes of a frame gpuhandleupload wrapped from a native GStreamer memory (GLMemory,
// VulkanImage, ...) that the frame's backend cannot map (it maps what it allocated or imported):
// the native buffer, kept as the input's GstParentBufferMeta, is mapped by its own allocator,
// which downloads it. False when the input has no parent or either side does not map.
bool copyParentInto(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *out)
{
	DownloadState &s = stateOf(trans);
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

bool copyFrameInto(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		   const BackendRef &backend, GstBuffer *out, WaitDuration timeout)
{
	DownloadState &s = stateOf(trans);
	Result<CpuMapping> src = backend ? backend->map(frame, MapAccess::Read, timeout)
					 : mapFrame(frame, MapAccess::Read, timeout);
	if (!src.ok() && src.error().code() != ErrorCode::Timeout &&
	    copyParentInto(trans, inbuf, out)) {
		GST_LOG_OBJECT(trans, "read through GStreamer's own memory: %s",
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
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, READ,
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

// A system-memory wrap of a frame in the default layout, as the peer reads it: with its
// GstVideoMeta when downstream asked for one, else trimmed to the caps' frame size (a memfd is
// page-rounded: 348,160 bytes for a 345,600-byte 640x360 I420 frame) without the meta.
GstFlowReturn pushWrapped(GstBaseTransform *trans, GstBuffer *out, GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	if (!s.downstreamVideoMeta) {
		Result<GstBuffer *> trimmed = toDefaultLayout(out, s.info);
		if (!trimmed) {
			GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, READ,
						(_("Could not read a gpuhandle frame.")),
						trimmed.error());
			return GST_FLOW_ERROR;
		}
		out = *trimmed;
	}
	notePath(trans, ExecutionPath::zeroCopy(), ImportRoute::Direct);
	*outbuf = out;
	return GST_FLOW_OK;
}

// Into system memory: the frame's own bytes wrapped when they are CPU memory and downstream can
// read their layout; otherwise mapped through the backend and copied into a pooled buffer.
GstFlowReturn toSystem(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	const WaitDuration timeout = timeoutOf(s);
	if (GstFlowReturn ret = flowOf(waitAcquire(trans, frame, timeout)); ret != GST_FLOW_OK)
		return ret;
	// A frame gpuhandleupload made over system memory leaves as that memory, when downstream
	// reads its layout.
	if (GstBuffer *source = sourceBufferOf(frame)) {
		if (s.downstreamVideoMeta || hasDefaultLayout(source, s.info)) {
			// The source buffer itself when nothing changed on the way (per buffer,
			// this saves a buffer and its metadata copy); else a buffer sharing its
			// memories.
			GstBuffer *out = source;
			if (!sameMetadata(source, inbuf)) {
				out = gst_buffer_copy(source); // shares the memories and video meta
				gst_buffer_unref(source);
				// The metadata is the input's alone: upstream's metas came onto it
				// through gpuhandleupload (once, not twice), and elements in
				// between may have added or removed theirs.
				gst_buffer_foreach_meta(out, keepOnlyVideoMeta, nullptr);
				copyMetadata(trans, out, inbuf);
			}
			return pushWrapped(trans, out, outbuf);
		}
		gst_buffer_unref(source);
	}
	// Decided before wrapping: a wrap that is dropped would signal the frame's release gate
	// while the copy below still reads the frame.
	if (s.downstreamVideoMeta || frameHasDefaultLayout(frame, s.info)) {
		Result<GstBuffer *> wrapped = systemBufferFromFrame(frame, false, timeout);
		if (wrapped.ok()) {
			// Pooled frames stay out of the pool meanwhile.
			keepInputAlive(*wrapped, inbuf);
			copyMetadata(trans, *wrapped, inbuf);
			return pushWrapped(trans, *wrapped, outbuf);
		}
		GST_DEBUG_OBJECT(trans, "not wrapped as system memory: %s",
				 wrapped.error().message().c_str());
	} else {
		GST_DEBUG_OBJECT(trans,
				 "the frame's layout is not GStreamer's default, and downstream "
				 "takes no GstVideoMeta: copying");
	}
	if (!allowCopyOf(s)) {
		GST_ELEMENT_ERROR(
			trans, CORE, NEGOTIATION,
			(_("No zero-copy path into %s, and allow-copy is false."), targetName(s)),
			("%s frames of %s need a CPU copy%s", pixelFormatName(s.format),
			 backend ? backendKindName(backend->kind()) : "CPU memory",
			 s.downstreamVideoMeta ? "" : " (downstream takes no GstVideoMeta)"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	GstFlowReturn ret = parentClass()->prepare_output_buffer(trans, inbuf, outbuf);
	if (ret != GST_FLOW_OK)
		return ret;
	if (!copyFrameInto(trans, inbuf, frame, backend, *outbuf, timeout)) {
		gst_clear_buffer(outbuf);
		return GST_FLOW_ERROR;
	}
	notePath(trans, ExecutionPath::cpuCopy("mapped and copied into system memory"),
		 ImportRoute::CpuCopy);
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::download
