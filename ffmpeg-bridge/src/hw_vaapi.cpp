// VAAPI AVFrames -> Frames: the surface mapped to DRM_PRIME (av_hwframe_map), then a DmaBuf.
#include "hw_drm.h"

#if GPUHANDLE_FFMPEG_HAVE_VA_H
#include <chrono>
#include <cstdint>
#include <dlfcn.h>
#include <memory>

extern "C" {
#include <libavutil/hwcontext_vaapi.h>
}
#endif

namespace gpuhandle::ffmpeg::detail {

#if GPUHANDLE_FFMPEG_HAVE_VA_H

namespace {

using SyncSurface2Fn = VAStatus (*)(VADisplay, VASurfaceID, uint64_t);

// vaSyncSurface2 (libva 2.15) from the libva FFmpeg already loaded; null on an older libva.
SyncSurface2Fn syncSurface2()
{
	static const SyncSurface2Fn fn =
		reinterpret_cast<SyncSurface2Fn>(dlsym(RTLD_DEFAULT, "vaSyncSurface2"));
	return fn;
}

// Waits for the surface's decode, bounded: av_hwframe_map then calls vaSyncSurface, which has
// no timeout, on a surface already complete. Without vaSyncSurface2 the map's wait is unbounded.
Status waitForSurface(const HwImport &in)
{
	const SyncSurface2Fn sync = syncSurface2();
	if (!sync)
		return {};
	const AVHWFramesContext *frames = framesOf(in.frame);
	const auto *device = static_cast<const AVVAAPIDeviceContext *>(frames->device_ctx->hwctx);
	const auto surface =
		static_cast<VASurfaceID>(reinterpret_cast<uintptr_t>(in.frame->data[3]));
	const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(in.options.timeout);
	const VAStatus status = sync(device->display, surface,
				     static_cast<uint64_t>(ns.count() > 0 ? ns.count() : 0));
	// A driver without it: av_hwframe_map's unbounded vaSyncSurface is all there is.
	if (status == VA_STATUS_ERROR_UNIMPLEMENTED)
		return {};
	if (status == VA_STATUS_ERROR_TIMEDOUT)
		return Error::format(ErrorCode::Timeout, "frame",
				     "VA surface %u was not complete within the timeout "
				     "(vaSyncSurface2).",
				     surface);
	if (status != VA_STATUS_SUCCESS)
		return Error::format(ErrorCode::Backend, "frame",
				     "vaSyncSurface2 on VA surface %u failed with VAStatus 0x%x.",
				     surface, static_cast<unsigned>(status));
	return {};
}

} // namespace

Result<Frame> frameFromVaapiAVFrame(const HwImport &in)
{
	if (Status waited = waitForSurface(in); !waited)
		return std::move(waited).error();
	std::unique_ptr<AVFrame, AvFrameFree> mapped(av_frame_alloc());
	if (!mapped)
		return Error(ErrorCode::OutOfMemory, "frame", "av_frame_alloc() failed.");
	mapped->format = AV_PIX_FMT_DRM_PRIME;
	const int ret = av_hwframe_map(mapped.get(), in.frame, AV_HWFRAME_MAP_READ);
	if (ret < 0)
		return Error::format(ErrorCode::Backend, "frame",
				     "Mapping the VAAPI frame to DRM_PRIME failed (av_hwframe_map: "
				     "%s); the driver may not export its surfaces.",
				     avErrorText(ret).c_str());
	// The mapping's buffers (which reference the VAAPI frame) join the frame's anchor: the
	// mapped fds and the surface stay while the Frame lives.
	Result<std::shared_ptr<AvBuffersAnchor>> anchor = anchorBuffers(mapped.get());
	if (!anchor)
		return std::move(anchor).error();
	HwImport drm = in;
	drm.frame = mapped.get();
	for (AVBufferRef *buffer : in.frame->buf)
		if (buffer && !(*anchor)->add(buffer))
			return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	if (in.frame->hw_frames_ctx && !(*anchor)->add(in.frame->hw_frames_ctx))
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	drm.anchor = std::move(*anchor);
	return frameFromDrmDescriptor(
		drm, reinterpret_cast<const AVDRMFrameDescriptor *>(mapped->data[0]));
}

#else

Result<Frame> frameFromVaapiAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame",
		     "libgpuhandle-ffmpeg was built without VA-API headers (va/va.h), so VAAPI "
		     "frames cannot be described.");
}

#endif

} // namespace gpuhandle::ffmpeg::detail
