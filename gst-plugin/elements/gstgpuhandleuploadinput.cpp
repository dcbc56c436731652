// gpuhandleupload's input: native memories wrapped as frames, system memory copied into pooled
// frames.
#include "gstgpuhandleupload.h"

#define GST_CAT_DEFAULT gst_gpu_handle_upload_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::upload {

// The input as a frame, without a copy, through its memory type's adapter; its backend is where
// the memory lives (for system memory: the backend the element chose).
Result<Frame> wrapInput(GstBaseTransform *trans, GstBuffer *inbuf, BackendRef &backend)
{
	UploadState &s = stateOf(trans);
	if (!s.inputAdapter)
		return Error::format(ErrorCode::NotSupported, "buffer", "%s input is not built in.",
				     bufferMemoryName(s.input));
	backend = s.backend;
	InputBuffer in;
	in.buffer = inbuf;
	in.info = &s.info;
	in.modifier = s.modifier;
	in.devices = &s.devices;
	return s.inputAdapter->frameFromBuffer(GST_ELEMENT_CAST(trans), in, backend);
}

// System memory into a pooled frame of the backend: one CPU copy.
GstFlowReturn copyIntoPool(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &input,
			   GstBuffer **outbuf)
{
	UploadState &s = stateOf(trans);
	WaitDuration timeout;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		timeout = timeoutFromNs(s.timeoutNs);
	}
	// The input's fence (its sync meta), waited in slices that a flush ends.
	if (!input.acquire().isNoop()) {
		std::chrono::nanoseconds waited{ 0 };
		std::optional<Error> why;
		switch (waitSliced(input.acquire(), timeout, s.flushing, waited, why)) {
		case SlicedWait::Signaled: break;
		case SlicedWait::Flushing: return GST_FLOW_FLUSHING;
		case SlicedWait::Failed:
			GPUHANDLE_ELEMENT_ERROR(
				trans, RESOURCE, BUSY,
				(_("A frame's fence did not signal in time.")),
				why ? *why
				    : Error::format(ErrorCode::Timeout, "acquire",
						    "The input's %s fence did not signal in time.",
						    syncKindName(input.acquire().kind())));
			return GST_FLOW_ERROR;
		}
	}
	GstBuffer *out = nullptr;
	GstFlowReturn ret = gst_buffer_pool_acquire_buffer(s.pool, &out, nullptr);
	if (ret != GST_FLOW_OK) {
		postPoolError(GST_ELEMENT_CAST(trans), s.pool, ret);
		return ret;
	}
	Result<Frame> frame = frameFromBuffer(out);
	Result<CpuMapping> dst = frame.ok() ? s.backend->map(*frame, MapAccess::Write, timeout)
					    : Result<CpuMapping>(frame.error());
	Result<CpuMapping> src = mapFrame(input, MapAccess::Read, timeout);
	Result<const PixelFormatInfo *> formatInfo = pixelFormatInfo(s.format);
	if (!dst.ok() || !src.ok() || !formatInfo.ok()) {
		const Error &why = !dst.ok()   ? dst.error()
				   : !src.ok() ? src.error()
					       : formatInfo.error();
		gst_buffer_unref(out);
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, WRITE,
					(_("Could not write the frame into gpuhandle memory.")),
					why);
		return GST_FLOW_ERROR;
	}
	uint8_t *dstPlanes[4]{};
	const uint8_t *srcPlanes[4]{};
	uint32_t dstStrides[4]{}, srcStrides[4]{};
	for (uint32_t p = 0; p < dst->numPlanes(); ++p) {
		dstPlanes[p] = dst->data(p);
		dstStrides[p] = dst->stride(p);
		srcPlanes[p] = src->data(p);
		srcStrides[p] = src->stride(p);
	}
	copyPlaneRows(dstPlanes, dstStrides, srcPlanes, srcStrides, **formatInfo,
		      static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&s.info)),
		      static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&s.info)));
	Status ended = dst->unmap();
	if (!ended.ok()) {
		gst_buffer_unref(out);
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, WRITE,
					(_("Could not write the frame into gpuhandle memory.")),
					ended.error());
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, out, inbuf);
	s.stats.count(ExecutionPath::Kind::CpuCopy);
	*outbuf = out;
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::upload
