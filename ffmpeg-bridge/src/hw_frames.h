// Private to libgpuhandle-ffmpeg: each hardware AVFrame kind to a Frame and back, and what they
// share.
#pragma once

#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/keep_alive.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
}

namespace gpuhandle::ffmpeg::detail {

// References to every buffer of an AVFrame (buf[], extended_buf[], hw_frames_ctx): the data
// stays valid while any copy of the Frame lives, whatever the caller does with its AVFrame.
class AvBuffersAnchor : public KeepAlive
{
public:
	AvBuffersAnchor() = default;
	AvBuffersAnchor(const AvBuffersAnchor &) = delete;
	AvBuffersAnchor &operator=(const AvBuffersAnchor &) = delete;
	~AvBuffersAnchor() override;

	// False when av_buffer_ref failed (out of memory).
	bool add(AVBufferRef *buffer);

private:
	// In place for the usual frame (its planes' buffers and a frames context), so that a
	// frame per AVFrame costs no block here; more go on the heap.
	std::array<AVBufferRef *, 10> inPlace_{};
	size_t count_ = 0;
	std::vector<AVBufferRef *> more_{};
};
// Errors: OutOfMemory.
Result<std::shared_ptr<AvBuffersAnchor>> anchorBuffers(const AVFrame *frame);

// The frames context of a hardware AVFrame (checked non-null by the caller).
inline const AVHWFramesContext *framesOf(const AVFrame *frame)
{
	return reinterpret_cast<const AVHWFramesContext *>(frame->hw_frames_ctx->data);
}
inline const AVHWFramesContext *framesOf(const AVBufferRef *frames)
{
	return reinterpret_cast<const AVHWFramesContext *>(frames->data);
}

// What every hardware import shares, checked and computed once by frameFromAVFrame(): the
// frame's sw_format as a PixelFormat, its size and colour, and the anchor of its buffers.
struct HwImport {
	const AVFrame *frame = nullptr;
	PixelFormat format = PixelFormat::Unknown;
	uint32_t width = 0;
	uint32_t height = 0;
	Colorimetry colorimetry{};
	std::shared_ptr<AvBuffersAnchor> anchor{};
	FrameFromAvOptions options{};
};

// AVFrame -> Frame, one per hardware format (hw_*_import.cpp).
Result<Frame> frameFromVulkanAVFrame(const HwImport &in);
Result<Frame> frameFromDrmAVFrame(const HwImport &in);
Result<Frame> frameFromVaapiAVFrame(const HwImport &in);
Result<Frame> frameFromCudaAVFrame(const HwImport &in);
Result<Frame> frameFromOpenClAVFrame(const HwImport &in);

// Signals `release` (when the frame has one) as FFmpeg frees the last buffer over a frame: a
// failure can only be logged there (av_log, warning).
void signalRelease(const ReleaseGate &release) noexcept;

// A Frame kept for the buffers of an AVFrame made over it: when the last buffer is freed the
// frame's release gate (when it has one) is signalled.
struct HeldFrame {
	explicit HeldFrame(Frame f) : frame(std::move(f)) {}
	HeldFrame(const HeldFrame &) = delete;
	HeldFrame &operator=(const HeldFrame &) = delete;
	~HeldFrame();
	Frame frame;
	// Set by a wrapper that copied `frame` on the device into memory of the frames context's
	// own (a multi-planar Vulkan pool frame): the reason, for the caller's ExecutionPath.
	const char *copiedBecause = nullptr;
};
// An AVBufferRef over `data` (`size` bytes) holding `held` until FFmpeg frees it; `onFree`, when
// set, runs first (destroys what the wrap created for this buffer, an AVVkFrame's semaphores).
// Null on out of memory.
AVBufferRef *bufferHolding(std::shared_ptr<HeldFrame> held, uint8_t *data, size_t size,
			   std::function<void(uint8_t *)> onFree = {});

// Frame -> hardware AVFrame (hw_*_export.cpp): `held->frame` is already in the memory of the
// frames context's device (imported there by avFrameFromFrame(), its acquire point waited for).
// They fill `out` (format, data[], buf[], hw_frames_ctx; width, height and colour are set).
// Errors: WrongKind (resources of another kind or device), NotSupported, OutOfMemory, Backend.
Status wrapVulkanAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames,
			 AVFrame *out);
Status wrapCudaAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames, AVFrame *out);
Status wrapOpenClAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames,
			 AVFrame *out);
Status wrapDrmAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames, AVFrame *out);

// FFmpeg's error text for an AVERROR code.
std::string avErrorText(int code);

// Frees an AVFrame (and its buffer references) on an early return.
struct AvFrameFree {
	void operator()(AVFrame *frame) const noexcept { av_frame_free(&frame); }
};

} // namespace gpuhandle::ffmpeg::detail
