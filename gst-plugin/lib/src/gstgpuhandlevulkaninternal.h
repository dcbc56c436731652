// What the Vulkan backend-in-device and the two Vulkan image memory conversions share (not
// installed).
#pragma once

#include <gpuhandle/uuid.h>

#include "vulkan_dispatch.h" // gpuhandle/backends/shared: VulkanDispatch

#include <optional>

#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_vulkan_debug);

namespace gpuhandle::gst::detail {

// Registers the "gpuhandlevulkan" debug category, once (after gst_init()).
void initVulkanDebug();

// Whether `object` is a GstVulkanDevice (null is not).
bool isVulkanDevice(gpointer object);

// The first queue of a graphics or compute family (transfers included), which GStreamer's
// Vulkan elements pick too. Transfer full; null when the device has none.
GstVulkanQueue *firstQueue(GstVulkanDevice *device);

// The one dispatch table (gpuhandle/backends/shared/vulkan_dispatch.h) of GStreamer's device:
// resolved the first time, then kept on the device, so per-frame calls look nothing up. Null
// when the device resolves no vkGetDeviceProcAddr; a function it lacks is null in the table.
const VulkanDispatch *functionsOf(GstVulkanDevice *device);

struct Identity {
	std::optional<Uuid> device{};
	std::optional<Uuid> driver{};
};

// VkPhysicalDeviceIDProperties of the device (Vulkan 1.1), when the instance resolves the query.
Identity identityOf(GstVulkanDevice *device);

} // namespace gpuhandle::gst::detail
