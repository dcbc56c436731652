// AVHWDeviceContext <-> gpuhandle Context: FFmpeg devices inside the host's device, and back.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/context.h>
#include <gpuhandle/ffmpeg/export.h>
#include <gpuhandle/result.h>

struct AVBufferRef;

namespace GPUHANDLE_FFMPEG_API gpuhandle {
namespace ffmpeg {

// An FFmpeg device (an AVBufferRef of an initialised AVHWDeviceContext) inside the host's
// existing device, so that decoding, filtering and rendering share one device and its memory
// needs no import: Vulkan (AV_HWDEVICE_TYPE_VULKAN over the VkInstance, VkPhysicalDevice and
// VkDevice, with the context's extension lists and its queue family as every FFmpeg queue
// family), CUDA (the CUcontext and stream), OpenCL (the cl_context and device) and VA-API (the
// VADisplay). The device borrows the context's objects and holds `context` (and so its anchor)
// until FFmpeg frees it. The caller unrefs the result with av_buffer_unref().
// Errors: NullHandle (no context), NotSupported (a backend FFmpeg has no device type for, a type
// this libavutil was built without, a Vulkan context that does not list its enabled extensions),
// Backend (av_hwdevice_ctx_init failed: FFmpeg's error text).
GPUHANDLE_FFMPEG_API Result<AVBufferRef *> hwDeviceFromContext(const ContextRef &context);

// An FFmpeg device described as a gpuhandle Context with its DeviceId: Vulkan (with deviceUUID
// and driverUUID queried from the physical device, the enabled extensions, a queue of the
// transfer family, and, where FFmpeg has them (libavutil 58.x+), its lock_queue/unlock_queue as
// the queueLock), CUDA (cuda_ctx, stream, ordinal and UUID of the context's device), OpenCL
// (context, device id, a new in-order command queue) and VA-API (display). The Context holds a
// reference to `device`. Errors: NullHandle, NotSupported (another device type, named).
//
// FFmpeg 5.1 takes no lock around its own vkQueueSubmit calls: where FFmpeg (decoding,
// filtering, av_hwframe_transfer_data) and a gpuhandle backend opened in this Context may
// submit on the same queue at the same time, hold HwDeviceLock around the FFmpeg calls; the
// Context's queueLock takes the same lock around gpuhandle's submissions.
GPUHANDLE_FFMPEG_API Result<ContextRef> contextFromHwDevice(const AVBufferRef *device);

// The gpuhandle backend working inside an FFmpeg device (openBackend() with
// contextFromHwDevice()), opened once per device and shared while any holder keeps it alive.
// Errors: those of contextFromHwDevice() and openBackend().
GPUHANDLE_FFMPEG_API Result<BackendRef> backendForHwDevice(const AVBufferRef *device);

// Asks a Vulkan frames context (an AVBufferRef from av_hwframe_ctx_alloc, before
// av_hwframe_ctx_init) for one VkImage per plane (AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE), the shape
// FFmpeg made before 6.1. From FFmpeg 6.1 a frames context makes one multi-planar image per frame
// where the driver has the format; gpuhandle reads and writes those as they are, but exports
// memory (FrameFromAvOptions::exportVulkanMemory, to another device or to GL) per plane image
// only. A no-op before FFmpeg 6.1. Errors: NullHandle (no frames), InvalidArgument (not a Vulkan
// frames context), NotSupported (built without Vulkan headers).
GPUHANDLE_FFMPEG_API Status requestVulkanPlaneImages(AVBufferRef *hwFrames);

// Serialises queue submissions on an FFmpeg Vulkan device between FFmpeg 5.1 (which takes no
// lock) and gpuhandle (which takes this lock through the Context's queueLock). A no-op for other
// device types. Recursive for one thread. Scoped: the lock is held while the object lives.
// Bounded like every wait: when another thread holds it for longer than kDefaultWaitTimeout the
// lock is not taken and held() is false.
class HwDeviceLock
{
public:
	// Takes the lock of `device` (an AVHWDeviceContext's buffer; nullable), waiting at most
	// kDefaultWaitTimeout.
	explicit HwDeviceLock(const AVBufferRef *device);
	~HwDeviceLock();
	// False when the lock was not taken (no device, not Vulkan, or the timeout passed).
	bool held() const noexcept { return lock_ != nullptr; }
	HwDeviceLock(const HwDeviceLock &) = delete;
	HwDeviceLock &operator=(const HwDeviceLock &) = delete;

private:
	void *lock_ = nullptr;
};

} // namespace ffmpeg
} // namespace gpuhandle
