// GstBuffer <-> AVFrame: the buffer's memory kind picks the gst-plugin conversion, Frames between.
#include <gpuhandle/ffmpeg/gst_buffer.h>

#include <cstdint>

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/mathematics.h>
}

namespace gpuhandle::ffmpeg {

namespace {

// GST_CLOCK_TIME_NONE and GST_SECOND without their old-style casts (-Wold-style-cast).
constexpr GstClockTime kNoTime = static_cast<GstClockTime>(-1);
constexpr AVRational kNanoseconds{ 1, 1000000000 };

Result<Frame> frameOfBuffer(GstBuffer *buffer, const GstVideoInfo &info, BackendRef &source)
{
	const gst::BufferMemory memory = gst::bufferMemoryOf(buffer);
	switch (memory) {
	case gst::BufferMemory::GpuHandle:
		if (!source && gst_buffer_n_memory(buffer) > 0)
			source = gst::memoryBackend(gst_buffer_peek_memory(buffer, 0));
		return gst::frameFromBuffer(buffer);
	case gst::BufferMemory::Fd:
	case gst::BufferMemory::DmaBuf: return gst::frameFromFdBuffer(buffer, info);
	case gst::BufferMemory::System: return gst::frameFromSystemBuffer(buffer, info);
	default:
		return Error::format(ErrorCode::NotSupported, "buffer",
				     "A buffer of %s memory cannot become an AVFrame here; "
				     "download it to system memory first.",
				     gst::bufferMemoryName(memory));
	}
}

// Nanoseconds of `value` in `base`, or kNoTime when either is unknown.
GstClockTime toNanoseconds(int64_t value, AVRational base)
{
	if (value == INT64_MIN || value < 0 || base.num <= 0 || base.den <= 0)
		return kNoTime;
	return static_cast<GstClockTime>(av_rescale_q(value, base, kNanoseconds));
}

} // namespace

Result<AVFrame *> avFrameFromGstBuffer(GstBuffer *buffer, const GstVideoInfo &info,
				       const AvFrameOptions &options, ExecutionPath *path)
{
	if (!buffer)
		return Error::format(ErrorCode::NullHandle, "buffer", "No GstBuffer was given.");
	AvFrameOptions own = options;
	Result<Frame> frame = frameOfBuffer(buffer, info, own.source);
	if (!frame)
		return frame.error();
	FrameProperties properties{};
	if (!own.properties) {
		constexpr GstClockTime kLargest = static_cast<GstClockTime>(INT64_MAX);
		if (buffer->pts != kNoTime && buffer->pts <= kLargest)
			properties.pts = static_cast<int64_t>(buffer->pts);
		if (buffer->duration != kNoTime && buffer->duration <= kLargest)
			properties.duration = static_cast<int64_t>(buffer->duration);
		properties.timeBase = kNanoseconds;
		own.properties = &properties;
	}
	return avFrameFromFrame(*frame, own, path);
}

Result<GstBuffer *> gstBufferFromAVFrame(const AVFrame *frame)
{
	FrameProperties properties{};
	Result<Frame> converted = frameFromAVFrame(frame, &properties);
	if (!converted)
		return converted.error();
	Result<GstBuffer *> buffer = gst::systemBufferFromFrame(*converted);
	if (!buffer)
		return buffer.error();
	(*buffer)->pts = toNanoseconds(properties.pts, properties.timeBase);
	(*buffer)->duration = properties.duration > 0
				      ? toNanoseconds(properties.duration, properties.timeBase)
				      : kNoTime;
	return buffer;
}

Result<GstCaps *> capsOfAVFrame(const AVFrame *frame)
{
	FrameProperties properties{};
	Result<Frame> converted = frameFromAVFrame(frame, &properties);
	if (!converted)
		return converted.error();
	Result<GstVideoInfo> info = gst::videoInfoOf(*converted);
	if (!info)
		return info.error();
	if (properties.sampleAspectRatio.num > 0 && properties.sampleAspectRatio.den > 0) {
		info->par_n = properties.sampleAspectRatio.num;
		info->par_d = properties.sampleAspectRatio.den;
	}
	GstCaps *caps = gst_video_info_to_caps(&*info);
	if (!caps)
		return Error::format(ErrorCode::OutOfMemory, "caps",
				     "gst_video_info_to_caps failed for the AVFrame's video info.");
	return caps;
}

} // namespace gpuhandle::ffmpeg
