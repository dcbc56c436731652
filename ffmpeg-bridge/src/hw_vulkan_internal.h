// Private to libgpuhandle-ffmpeg: an FFmpeg Vulkan device's entry points, for the Vulkan files.
#pragma once

#include <gpuhandle/error.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_waiter.h>
#include <gpuhandle/uuid.h>

#include "hw_device_internal.h" // lockWithin
#include "vulkan_dispatch.h"    // gpuhandle/backends/shared: VulkanDispatch

#include <memory>
#include <mutex>
#include <string>

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/version.h>
}

// FFmpeg 6.1 (lavu 58.29.100) has AVVulkanDeviceContext.lock_queue/unlock_queue and
// AVVulkanFramesContext.lock_frame/unlock_frame and AVVkFrame.queue_family[]; lock_queue is
// deprecated without replacement since lavu 60 and goes at lavu 62. 5.1 has none of them.
#define GPUHANDLE_FFMPEG_VK_LOCKS (LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 29, 100))
#define GPUHANDLE_FFMPEG_VK_LOCK_QUEUE (GPUHANDLE_FFMPEG_VK_LOCKS && LIBAVUTIL_VERSION_MAJOR < 62)
// FFmpeg 7.1 lists the device's queue families in AVVulkanDeviceContext.qf[] and deprecates the
// fixed queue_family_*_index fields (FF_API_VULKAN_FIXED_QUEUES, gone at lavu 61): reading or
// writing those would fail a -Werror build there, and any build from lavu 61.
#if defined(FF_API_VULKAN_FIXED_QUEUES) || LIBAVUTIL_VERSION_MAJOR >= 61
#define GPUHANDLE_FFMPEG_VK_QF 1
#else
#define GPUHANDLE_FFMPEG_VK_QF 0
#endif
// AV_VK_FRAME_FLAG_CONTIGUOUS_MEMORY exists while FF_API_VULKAN_CONTIGUOUS_MEMORY is set (the
// macro itself goes with the flag at a major bump; before FFmpeg 6.1 there is no macro).
#ifdef FF_API_VULKAN_CONTIGUOUS_MEMORY
#define GPUHANDLE_FFMPEG_VK_CONTIGUOUS FF_API_VULKAN_CONTIGUOUS_MEMORY
#else
#define GPUHANDLE_FFMPEG_VK_CONTIGUOUS (LIBAVUTIL_VERSION_MAJOR < 59)
#endif

namespace gpuhandle::ffmpeg::detail {

// The device functions the Vulkan bridge calls: the one table of gpuhandle's Vulkan code
// (gpuhandle/backends/shared/vulkan_dispatch.h), resolved through the device context's
// get_proc_addr (libvulkan is never linked). Null where the device does not resolve them.
using VkDeviceFns = VulkanDispatch;

// The functions of an initialised Vulkan device context, resolved the first time the bridge
// meets the device and kept (FFmpeg's device context has no slot for them: a process-wide cache
// read without a lock); a semaphore import takes the same table. Errors: NotSupported (no
// get_proc_addr, or a function every use needs is missing, named).
Result<std::shared_ptr<const VulkanDeviceFunctions>>
loadDeviceFunctions(const AVHWDeviceContext &device);

// The physical device's VkPhysicalDeviceIDProperties UUIDs.
struct VkDeviceUuids {
	Uuid device{};
	Uuid driver{};
};
VkDeviceUuids deviceUuidsOf(const VkDeviceFns &fns);

// Whether the device context lists `name` among its enabled device extensions.
bool hasDeviceExtension(const AVVulkanDeviceContext &hw, const char *name);

// The queue family the bridge submits on and hands to Contexts: the device's transfer family
// (a graphics or compute family when none is flagged transfer); -1 when it has none.
int transferQueueFamily(const AVVulkanDeviceContext &hw);

// How many VkImages the frames' AVVkFrames have: one per plane of the sw_format (`planes`), or
// (FFmpeg 6.1 and later, unless AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE) one multi-planar image of
// format[0], whose plane i is its aspect VK_IMAGE_ASPECT_PLANE_i_BIT.
int imagesPerFrame(const AVVulkanFramesContext &fhw, int planes);

// FFmpeg's lock of queue 0 of `family` (AVVulkanDeviceContext.lock_queue, where the FFmpeg version
// has it and the device sets it): taken when `take`, else released. FFmpeg's own submissions take
// it, gpuhandle's submission lock does not stand in for it.
void ffmpegQueueLock(AVHWDeviceContext *device, uint32_t family, bool take);

// "VkResult N" for messages.
std::string vkResultText(VkResult result);

} // namespace gpuhandle::ffmpeg::detail
