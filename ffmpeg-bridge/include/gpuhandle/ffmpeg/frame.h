// AVFrame <-> gpuhandle Frame: software frames without a copy, other frames through the planner.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/execution_path.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <cstdint>

extern "C" {
#include <libavutil/rational.h>
}

struct AVFrame;

namespace gpuhandle::ffmpeg {

// What an AVFrame says about timing and geometry that a gpuhandle Frame has no field for; it
// travels beside the Frame.
// Crop is carried, not applied: the Frame covers the whole width x height buffer and the crop_*
// values say which part is visible. Applying it would move plane pointers to the crop origin,
// which subsampled chroma cannot do at odd offsets and hardware frames cannot do at all. A
// caller that wants only the visible part of a software frame runs av_frame_apply_cropping()
// first.
struct FrameProperties {
	int64_t pts = INT64_MIN;              // AV_NOPTS_VALUE: unknown
	int64_t duration = 0;                 // in timeBase units; 0: unknown (pkt_duration in 5.1)
	AVRational timeBase{ 0, 1 };          // AVFrame.time_base; 0/1: not set
	AVRational sampleAspectRatio{ 0, 1 }; // 0/1: unknown
	uint64_t cropTop = 0;
	uint64_t cropBottom = 0;
	uint64_t cropLeft = 0;
	uint64_t cropRight = 0;
};

// The properties of `frame` (AVFrame.duration from lavu 57.30, pkt_duration before).
FrameProperties framePropertiesOf(const AVFrame *frame) noexcept;
// Sets pts, duration, time_base, sample_aspect_ratio and crop_* on `frame`. Errors:
// NullHandle, OutOfRange (a crop larger than the frame).
Status applyFrameProperties(AVFrame *frame, const FrameProperties &properties);

// A Frame over a software AVFrame without a copy: one CpuPlanes resource whose planes are
// data[]/linesize[], anchored by references to the AVFrame's buffers (buf[], extended_buf[]),
// so the caller may free its AVFrame at once. Format through the core's FFmpeg table, colour
// through colorimetryOf() (full range for a yuvj* frame that says nothing); `properties`, when
// given, receives framePropertiesOf(). No acquire point: a software AVFrame is complete when it
// is handed over.
// Errors: NullHandle (no frame, a missing data[] plane), InvalidArgument (an unknown format, a
// hardware format without hw_frames_ctx, an AVFrame whose data is not reference-counted),
// NotSupported (a hardware format, named: AV_PIX_FMT_VULKAN and the others come in a later
// version; a software format gpuhandle does not map; a negative linesize, which is a bottom-up
// picture a CPU plane cannot describe), ZeroSize, OutOfRange (a crop larger than the frame) and
// the core's validation errors (a linesize smaller than a row).
Result<Frame> frameFromAVFrame(const AVFrame *frame, FrameProperties *properties = nullptr);

struct AvFrameOptions {
	// The backend holding a frame that is neither CPU nor fd memory (a Vulkan, GL, OpenCL
	// frame): the planner maps or exports it through this backend to copy it to host memory.
	BackendRef source{};
	// False: only zero-copy; a frame that needs a copy fails with NotSupported.
	bool allowCopies = true;
	// Bounds the wait for the frame's acquire point (and the copy's waits).
	WaitDuration timeout = kDefaultWaitTimeout;
	// Applied with applyFrameProperties() when given.
	const FrameProperties *properties = nullptr;
};

// A software AVFrame over `frame`. CpuBytes, CpuPlanes, ShmFd and linear DmaBuf resources are
// mapped (mapFrame) and wrapped without a copy; any other frame (GPU memory, a CpuSharedSlot) is
// copied into host memory by the path planner (importFrame into the cpu backend, with
// options.source), and then wrapped. Either way the acquire point is waited for (bounded by
// options.timeout) before this returns. The AVFrame's buffers are read-only
// (AV_BUFFER_FLAG_READONLY: av_frame_make_writable() copies) and each holds the mapping and a
// copy of the Frame; when the last one is freed the mapping ends and the frame's release gate is
// signalled. `path`, when given, receives how the bytes got there (ZeroCopy, or the planner's
// CpuCopy / GpuCopy with its reason). The caller frees the result with av_frame_free().
// Errors: NotSupported (a format FFmpeg or this libavutil lacks; copies needed but not allowed
// or not possible: the planner's reasons), Timeout (the acquire point), OutOfMemory, and the
// errors of mapFrame() and importFrame().
Result<AVFrame *> avFrameFromFrame(const Frame &frame, const AvFrameOptions &options = {},
				   ExecutionPath *path = nullptr);

} // namespace gpuhandle::ffmpeg
