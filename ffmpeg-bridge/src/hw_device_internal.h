// Private to libgpuhandle-ffmpeg: AVHWDeviceContext <-> Context for each device type.
#pragma once

#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/sync_waiter.h> // WaitDuration

#include <memory>
#include <mutex>
#include <string>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
}

namespace gpuhandle::ffmpeg::detail {

// Per type (hw_device_vulkan.cpp, hw_device_others.cpp): the contracts of hwDeviceFromContext()
// and contextFromHwDevice() in hw_device.h, for a context / device of that type (checked by the
// caller). The *FromContext functions return an initialised device that holds `context`.
Result<AVBufferRef *> vulkanDeviceFromContext(const ContextRef &context);
Result<AVBufferRef *> cudaDeviceFromContext(const ContextRef &context);
Result<AVBufferRef *> openClDeviceFromContext(const ContextRef &context);
Result<AVBufferRef *> vaapiDeviceFromContext(const ContextRef &context);
Result<ContextRef> contextFromVulkanDevice(const AVBufferRef *device);
Result<ContextRef> contextFromCudaDevice(const AVBufferRef *device);
Result<ContextRef> contextFromOpenClDevice(const AVBufferRef *device);
Result<ContextRef> contextFromVaapiDevice(const AVBufferRef *device);
// requestVulkanPlaneImages() for a Vulkan frames context (checked by the caller).
Status requestVulkanPlaneImages(AVHWFramesContext &frames);

// The lock HwDeviceLock takes for `device` (one per AVHWDeviceContext, made on first use); a
// Vulkan Context's queueLock takes it too (hw_device.cpp).
std::shared_ptr<std::recursive_mutex> deviceSubmitLock(const AVHWDeviceContext *device);
// Takes `mutex` unless `timeout` passes first (polled: std::recursive_mutex has no timed lock,
// and the device's lock is a plain one so that FFmpeg-side code can share it). True when taken.
bool lockWithin(std::recursive_mutex &mutex, WaitDuration timeout);

// A KeepAlive holding a reference to an AVBufferRef (a device or frames context): the anchor of
// Contexts made from FFmpeg devices. Null `buffer`: holds nothing.
KeepAliveRef holdAvBuffer(const AVBufferRef *buffer);

// An AVBufferRef of a new AVHWDeviceContext of `type` whose free callback drops a copy of
// `context`: the *FromContext functions fill its hwctx and call initHwDevice(). Null on out of
// memory.
AVBufferRef *allocHwDeviceHolding(AVHWDeviceType type, const ContextRef &context);
// av_hwdevice_ctx_init; on failure unrefs `*device` and returns Backend with FFmpeg's text.
Status initHwDevice(AVBufferRef *&device, const char *what);

} // namespace gpuhandle::ffmpeg::detail
