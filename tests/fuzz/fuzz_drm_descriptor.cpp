// Fuzz harness: DRM_PRIME AVFrames whose AVDRMFrameDescriptor (objects over memfds, layers,
// planes, offsets, pitches, modifiers) comes from the input, imported with frameFromAVFrame.
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "fuzz_input.h"

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_drm.h>
}

#include <array>

using namespace gpuhandle;

namespace {

constexpr std::array<PixelFormat, 4> kFormats{ PixelFormat::NV12, PixelFormat::YUV420P,
					       PixelFormat::P010LE, PixelFormat::RGBA };

// One DRM frames context per software format, made once (FFmpeg opens no DRM node for fd -1).
AVBufferRef *framesFor(size_t index)
{
	static std::array<AVBufferRef *, kFormats.size()> frames{};
	if (frames[index])
		return frames[index];
	AVBufferRef *device = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_DRM);
	if (!device)
		return nullptr;
	auto *hw = reinterpret_cast<AVHWDeviceContext *>(device->data);
	static_cast<AVDRMDeviceContext *>(hw->hwctx)->fd = -1;
	AVBufferRef *ref = av_hwdevice_ctx_init(device) >= 0 ? av_hwframe_ctx_alloc(device)
							     : nullptr;
	av_buffer_unref(&device);
	if (!ref)
		return nullptr;
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(ref->data);
	ctx->format = AV_PIX_FMT_DRM_PRIME;
	ctx->sw_format = ffmpeg::toAvPixelFormat(kFormats[index]).value();
	ctx->width = 64;
	ctx->height = 64;
	if (av_hwframe_ctx_init(ref) < 0)
		av_buffer_unref(&ref);
	return frames[index] = ref;
}

void freeNothing(void *, uint8_t *)
{
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz::FuzzInput in(data, size);
	AVBufferRef *frames = framesFor(in.take<uint8_t>() % kFormats.size());
	if (!frames)
		return 0;
	AVDRMFrameDescriptor d{};
	std::array<UniqueFd, AV_DRM_MAX_PLANES> fds; // the descriptor's objects, closed here
	d.nb_objects = in.take<int8_t>();
	for (size_t i = 0; i < fds.size(); ++i) {
		const auto fileSize = in.take<uint16_t>();
		fds[i] = fuzz::fuzzFd(false, fileSize);
		d.objects[i].fd = in.take<uint8_t>() & 1 ? fds[i].get() : in.take<int8_t>();
		d.objects[i].size = in.take<uint8_t>() & 1 ? fileSize : in.take<uint32_t>();
		d.objects[i].format_modifier = in.take<uint8_t>() & 1 ? in.take<uint64_t>() : 0;
	}
	d.nb_layers = in.take<int8_t>();
	for (AVDRMLayerDescriptor &layer : d.layers) {
		layer.format = in.take<uint32_t>();
		layer.nb_planes = in.take<int8_t>();
		for (AVDRMPlaneDescriptor &plane : layer.planes) {
			plane.object_index = in.take<int8_t>();
			plane.offset = in.take<int32_t>();
			plane.pitch = in.take<int32_t>();
		}
	}
	AVFrame *frame = av_frame_alloc();
	if (!frame)
		return 0;
	frame->format = AV_PIX_FMT_DRM_PRIME;
	frame->width = in.take<uint8_t>();
	frame->height = in.take<uint8_t>();
	frame->data[0] = reinterpret_cast<uint8_t *>(&d);
	frame->buf[0] = av_buffer_create(frame->data[0], sizeof d, freeNothing, nullptr, 0);
	frame->hw_frames_ctx = av_buffer_ref(frames);
	if (frame->buf[0] && frame->hw_frames_ctx)
		// Fds dup'd: ours close here.
		fuzz::report("frame", ffmpeg::frameFromAVFrame(frame));
	av_frame_free(&frame);
	return 0;
}
