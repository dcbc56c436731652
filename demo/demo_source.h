// gpuhandle-demo's FFmpeg side: a lavfi clip, encoded and decoded (FFV1), uploaded to Vulkan.
#pragma once

#include <gpuhandle/result.h>

#include <chrono>
#include <cstdint>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavutil/frame.h>
}

namespace gpuhandle::demo {

// What the clip stage did, for the table.
struct ClipStats {
	int64_t generated = 0; // frames out of the lavfi graph
	int64_t encoded = 0;   // packets out of the encoder (FFV1, lossless, in memory)
	int64_t decoded = 0;   // frames out of the FFV1 decoder
	int64_t uploaded = 0;  // frames copied from host memory into FFmpeg's Vulkan frames
	std::chrono::nanoseconds uploadTime{ 0 }; // av_hwframe_transfer_data calls
	std::string vulkanDevice;  // FFmpeg's Vulkan device, or empty when it did not open
	std::string vulkanProblem; // why the frames stay in host memory, when they do
};

// testsrc2 at `width` x `height`, 25 fps, made by libavfilter inside the program (nothing read
// from disk or the network), encoded to FFV1 packets in memory and decoded again by libavcodec;
// each decoded yuv420p frame is then uploaded into a frame of FFmpeg's Vulkan device (what the
// hwupload filter does) when one opens, else handed on as the software frame.
class Clip
{
public:
	Clip() = default;
	~Clip();
	Clip(const Clip &) = delete;
	Clip &operator=(const Clip &) = delete;

	// Errors: Backend (an FFmpeg call failed, with its sentence), NotSupported (this FFmpeg
	// lacks the testsrc2 filter or the FFV1 codec).
	Status open(int width, int height, bool useVulkan);
	// The next frame (the caller frees it with av_frame_free), or null at the end.
	Result<AVFrame *> next();
	const ClipStats &stats() const noexcept { return stats_; }
	// FFmpeg's Vulkan device (borrowed), or null.
	AVBufferRef *vulkanDevice() const noexcept { return device_; }

private:
	Status openGraph(int width, int height);
	Status openCodecs(int width, int height);
	void openVulkan(int width, int height);
	Result<AVFrame *> decoded();
	Result<AVFrame *> upload(AVFrame *software);

	AVFilterGraph *graph_ = nullptr;
	AVFilterContext *sink_ = nullptr;
	AVCodecContext *encoder_ = nullptr;
	AVCodecContext *decoder_ = nullptr;
	AVPacket *packet_ = nullptr;
	AVFrame *generated_ = nullptr;
	AVBufferRef *device_ = nullptr;
	AVBufferRef *frames_ = nullptr;
	bool graphEnded_ = false;
	bool encoderDrained_ = false;
	ClipStats stats_{};
};

// FFmpeg's sentence for an AVERROR code, after `what`, as a Backend error.
Error avError(const std::string &what, int code);

} // namespace gpuhandle::demo
