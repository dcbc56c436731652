// GstBuffer <-> AVFrame through gpuhandle Frames: both directions without a copy where possible.
#pragma once

#include <gpuhandle/execution_path.h>
#include <gpuhandle/ffmpeg/export.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/result.h>

#include <gst/video/video.h>

struct AVFrame;

namespace GPUHANDLE_FFMPEG_API gpuhandle {
namespace ffmpeg {

// A software AVFrame over `buffer` (described by `info`). The buffer's frame comes from
// gst::frameFromBuffer for GpuHandle memory (its memories' backend becomes options.source when
// that is unset), gst::frameFromFdBuffer for fd and DMA-BUF memory and gst::frameFromSystemBuffer
// for any other mappable memory, and then goes through avFrameFromFrame(). pts and duration are
// taken from the buffer in nanoseconds (time_base 1/1000000000) unless options.properties is
// given, which then wins. The AVFrame holds the buffer (through the Frame), so the caller may
// unref its buffer at once. Errors: NullHandle (no buffer), NotSupported (GL, Vulkan, CUDA, VA
// or mixed memories), and the errors of the functions above (InvalidArgument for a buffer too
// small for `info`).
GPUHANDLE_FFMPEG_API Result<AVFrame *> avFrameFromGstBuffer(GstBuffer *buffer,
							    const GstVideoInfo &info,
							    const AvFrameOptions &options = {},
							    ExecutionPath *path = nullptr);

// A read-only system-memory GstBuffer (with a GstVideoMeta) over a software AVFrame, without a
// copy: frameFromAVFrame() then gst::systemBufferFromFrame(). PTS and duration are the frame's,
// rescaled to nanoseconds from its time_base (GST_CLOCK_TIME_NONE when unknown or without a
// time base). The buffer holds references to the AVFrame's buffers: the caller may free the
// AVFrame at once. Caps are the caller's (capsOfAVFrame()).
// Errors: those of frameFromAVFrame() and gst::systemBufferFromFrame().
GPUHANDLE_FFMPEG_API Result<GstBuffer *> gstBufferFromAVFrame(const AVFrame *frame);

// video/x-raw caps for the buffers gstBufferFromAVFrame() makes of `frame` (format, size,
// colorimetry, pixel aspect ratio when known). Errors: those of frameFromAVFrame(), NotSupported
// (a format without a GstVideoFormat), OutOfMemory.
GPUHANDLE_FFMPEG_API Result<GstCaps *> capsOfAVFrame(const AVFrame *frame);

} // namespace ffmpeg
} // namespace gpuhandle
