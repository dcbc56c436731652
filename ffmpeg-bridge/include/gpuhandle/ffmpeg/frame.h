// AVFrame <-> gpuhandle Frame: software frames without a copy, other frames through the planner.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/execution_path.h>
#include <gpuhandle/ffmpeg/export.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <cstdint>

extern "C" {
#include <libavutil/rational.h>
}

struct AVFrame;
struct AVBufferRef;

namespace GPUHANDLE_FFMPEG_API gpuhandle {
namespace ffmpeg {

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
	// AVFrame.crop_*: pixels to drop at each edge; 0: none.
	uint64_t cropTop = 0;
	uint64_t cropBottom = 0; // pixels dropped at the bottom edge
	uint64_t cropLeft = 0;   // pixels dropped at the left edge
	uint64_t cropRight = 0;  // pixels dropped at the right edge
};

// The properties of `frame` (AVFrame.duration from lavu 57.30, pkt_duration before).
GPUHANDLE_FFMPEG_API FrameProperties framePropertiesOf(const AVFrame *frame) noexcept;
// Sets pts, duration, time_base, sample_aspect_ratio and crop_* on `frame`. Errors:
// NullHandle, OutOfRange (a crop larger than the frame).
GPUHANDLE_FFMPEG_API Status applyFrameProperties(AVFrame *frame, const FrameProperties &properties);

// How frameFromAVFrame() describes hardware frames.
struct FrameFromAvOptions {
	// AV_PIX_FMT_VULKAN: false gives the AVVkFrame's VkImages as VulkanImage resources (usable
	// by a backend on FFmpeg's VkDevice: backendForHwDevice()); true exports their memory as
	// opaque fds (VulkanMemoryFd: other Vulkan devices of the same driver, OpenGL through
	// GL_EXT_memory_object_fd), which needs memory FFmpeg allocated exportable (one
	// VkDeviceMemory per image). Other formats ignore it.
	bool exportVulkanMemory = false;
	// Bounds the work frameFromAVFrame() waits for: the submission that moves a Vulkan frame's
	// images to the GENERAL layout, the map of a VA-API surface to DRM_PRIME.
	WaitDuration timeout = kDefaultWaitTimeout;
};

// A Frame over an AVFrame without a copy. Either way the Frame keeps references to the AVFrame's
// buffers (buf[], extended_buf[], hw_frames_ctx), so the caller may free its AVFrame at once.
// Format through the core's FFmpeg table (a hardware frame's is its frames context's sw_format),
// colour through colorimetryOf() (full range for a yuvj* frame that says nothing); `properties`,
// when given, receives framePropertiesOf().
//
// Software frames: one CpuPlanes resource whose planes are data[]/linesize[]; no acquire point
// (a software AVFrame is complete when it is handed over).
// Hardware frames (see docs/ffmpeg.md for each):
// - AV_PIX_FMT_VULKAN: one resource per AVVkFrame image (see FrameFromAvOptions), on FFmpeg's
//   device; following the AVVkFrame protocol (5.1: sem_value; later: lock_frame/unlock_frame
//   around it), one submission waits for sem[i] at sem_value[i], moves the images to GENERAL and
//   signals sem_value[i] + 1, which becomes the frame's acquire point (a timeline semaphore).
// - AV_PIX_FMT_DRM_PRIME: one DmaBuf resource over the AVDRMFrameDescriptor's objects (fds
//   dup'd), whether it has one layer with every plane or one layer per plane.
// - AV_PIX_FMT_VAAPI: mapped to DRM_PRIME (av_hwframe_map, read) and described as above.
// - AV_PIX_FMT_CUDA: one CudaPitched2D over the planes' device pointers (data[]/linesize[]) when
//   they lie in one allocation, else one CudaBuffer per plane; the frames context's CUcontext.
// - AV_PIX_FMT_OPENCL: one OpenClMem per plane (the cl_mem images in data[]) with the device's
//   command queue.
// Other hardware formats: NotSupported naming the format.
// Errors: NullHandle (no frame, a missing data[] plane), InvalidArgument (an unknown format, a
// hardware format without hw_frames_ctx, an AVFrame whose data is not reference-counted, a
// malformed AVDRMFrameDescriptor), NotSupported (see above; a software format gpuhandle does
// not map; a negative linesize, which is a bottom-up picture a CPU plane cannot describe),
// ZeroSize, OutOfRange (a crop larger than the frame), Timeout, Backend (an API call failed)
// and the core's validation errors (a linesize smaller than a row).
GPUHANDLE_FFMPEG_API Result<Frame> frameFromAVFrame(const AVFrame *frame,
						    FrameProperties *properties = nullptr,
						    const FrameFromAvOptions &options = {});

// How avFrameFromFrame() builds the AVFrame: where a frame may be read from, whether it may be
// copied, and the frames context to place it in.
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
	// A frames context (AVBufferRef of an initialised AVHWFramesContext) of type VULKAN, CUDA,
	// OPENCL or DRM: the result is a hardware frame of it. The frame is imported by the planner
	// into backendForHwDevice() of the context's device (Direct, without a copy, when it is
	// already there; DRM: a DmaBuf through the fd backend) and wrapped: AVVkFrame images with a
	// new timeline semaphore at value 0; CUDA device pointers; cl_mem images; an
	// AVDRMFrameDescriptor over dup'd fds. Its width, height and sw_format must match the
	// frame. Null: a software frame.
	AVBufferRef *hwFrames = nullptr;
};

// An AVFrame over `frame`: a hardware frame of options.hwFrames when it is set, else a software
// frame. Software: CpuBytes, CpuPlanes, ShmFd and linear DmaBuf resources are
// mapped (mapFrame) and wrapped without a copy; any other frame (GPU memory, a CpuSharedSlot) is
// copied into host memory by the path planner (importFrame into the cpu backend, with
// options.source), and then wrapped. Either way the acquire point is waited for (bounded by
// options.timeout) before this returns. The AVFrame's buffers are read-only
// (AV_BUFFER_FLAG_READONLY: av_frame_make_writable() copies) and each holds the mapping and a
// copy of the Frame; when the last one is freed the mapping ends and the frame's release gate is
// signalled. `path`, when given, receives how the bytes got there (ZeroCopy, or the planner's
// CpuCopy / GpuCopy with its reason). The caller frees the result with av_frame_free().
// Hardware: as AvFrameOptions::hwFrames says; the acquire point is waited for on the CPU
// (bounded by options.timeout) before wrapping, and the release gate is signalled when FFmpeg
// frees the last buffer (at once when the planner copied).
// Errors: NotSupported (a format FFmpeg or this libavutil lacks; copies needed but not allowed
// or not possible: the planner's reasons; a frames context of another type), InvalidArgument (a
// frames context whose size or sw_format differs from the frame's), Timeout (the acquire
// point), OutOfMemory, and the errors of mapFrame() and importFrame().
GPUHANDLE_FFMPEG_API Result<AVFrame *> avFrameFromFrame(const Frame &frame,
							const AvFrameOptions &options = {},
							ExecutionPath *path = nullptr);

} // namespace ffmpeg
} // namespace gpuhandle
