// gpuhandledownload into system memory: wrapped in place, or mapped and copied.
#include "gstgpuhandledownload.h"

#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_download_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::download {

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

// A system-memory wrap of a frame in the default layout, as the peer reads it: with its
// GstVideoMeta when downstream asked for one, else trimmed to the caps' frame size (a memfd is
// page-rounded: 348,160 bytes for a 345,600-byte 640x360 I420 frame) without the meta.
GstFlowReturn pushWrapped(Downloader &s, GstBuffer *out, GstBuffer **outbuf)
{
	if (!s.downstreamVideoMeta) {
		Result<GstBuffer *> trimmed = toDefaultLayout(out, s.info);
		if (!trimmed) {
			GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, READ,
						(_("Could not read a gpuhandle frame.")),
						trimmed.error());
			return GST_FLOW_ERROR;
		}
		out = *trimmed;
	}
	notePath(s, ExecutionPath::zeroCopy(), ImportRoute::Direct);
	*outbuf = out;
	return GST_FLOW_OK;
}

// Into system memory: the frame's own bytes wrapped when they are CPU memory and downstream can
// read their layout; otherwise mapped through the backend and copied into a pooled buffer.
GstFlowReturn toSystem(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf)
{
	Downloader &s = stateOf(trans);
	const WaitDuration timeout = timeoutOf(s);
	if (GstFlowReturn ret = flowOf(waitAcquire(s, frame, timeout)); ret != GST_FLOW_OK)
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
				copyMetadata(s, out, inbuf);
			}
			return pushWrapped(s, out, outbuf);
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
			copyMetadata(s, *wrapped, inbuf);
			return pushWrapped(s, *wrapped, outbuf);
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
	if (!copyFrameInto(s, inbuf, frame, backend, *outbuf, timeout)) {
		gst_clear_buffer(outbuf);
		return GST_FLOW_ERROR;
	}
	notePath(s, ExecutionPath::cpuCopy("mapped and copied into system memory"),
		 ImportRoute::CpuCopy);
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::download
