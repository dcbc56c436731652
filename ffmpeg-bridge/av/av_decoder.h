// An FFmpeg video decoder, on a hardware device the way ffmpeg's -hwaccel decodes: what
// gpuhandle-avbridge and gpuhandleavdec share.
#pragma once

#include <gpuhandle/result.h>

#include <cstdarg>
#include <cstdint> // UINT64_C, which libavutil/common.h needs in C++
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace gpuhandle::av {

class VideoDecoder
{
public:
	VideoDecoder() = default;
	~VideoDecoder();
	VideoDecoder(const VideoDecoder &) = delete;
	VideoDecoder &operator=(const VideoDecoder &) = delete;

	// The context of `codec`, from a stream's `parameters`, its packets' times in `timeBase`.
	// Errors: OutOfMemory, Backend (the decoder refused the parameters).
	Status create(const AVCodec *codec, const AVCodecParameters *parameters,
		      AVRational timeBase);
	// Decodes on a new device of `type` ("vulkan", "vaapi", "cuda", ...), as ffmpeg's -hwaccel
	// (`device`, when given, as -hwaccel_device: a path or an index):
	// the decoder's frames are that device's hardware frames, or (where the decoder does not
	// offer them for a stream) software ones, which fallbackFormat() then names. Call between
	// create() and open(). Errors: InvalidArgument (an unknown type, listing the known ones),
	// NotSupported (this decoder cannot decode on the type), createHwDevice's.
	Status useHardware(const std::string &type, const std::string &device = {});
	// FFmpeg's messages about this decoder (its context and its threads' copies, any level)
	// go to `sink` instead of FFmpeg's log, from whichever thread logs them, until the decoder
	// is destroyed: how an element counts what a damaged stream costs. Installs a process-wide
	// av_log callback at the first call (messages of other contexts still go to FFmpeg's own
	// log, as before). Call before open().
	using LogSink = void (*)(void *user, int level, const char *line);
	void setLogSink(LogSink sink, void *user);
	// Errors: Backend (FFmpeg's reason).
	Status open();

	AVCodecContext *context() const noexcept { return context_; }
	AVBufferRef *device() const noexcept { return device_; } // null without hardware
	AVPixelFormat hwFormat() const noexcept { return hwFormat_; }
	// The software format the decoder fell back to, or AV_PIX_FMT_NONE while it has not.
	AVPixelFormat fallbackFormat() const noexcept { return fallback_; }

private:
	static AVPixelFormat pickFormat(AVCodecContext *context, const AVPixelFormat *formats);

	const AVCodec *codec_ = nullptr;
	AVCodecContext *context_ = nullptr;
	AVBufferRef *device_ = nullptr;
	AVPixelFormat hwFormat_ = AV_PIX_FMT_NONE;
	AVPixelFormat fallback_ = AV_PIX_FMT_NONE;
	LogSink sink_ = nullptr;
	void *sinkUser_ = nullptr;

	friend void routeLog(void *, int, const char *, va_list);
};

} // namespace gpuhandle::av
