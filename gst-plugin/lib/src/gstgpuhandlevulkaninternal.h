// What the Vulkan backend-in-device and the two Vulkan image memory conversions share (not
// installed).
#pragma once

#include <gpuhandle/uuid.h>

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

// A device entry point of GStreamer's device (null when it resolves none).
template<typename F>
F deviceFn(GstVulkanDevice *device, const char *name)
{
	return reinterpret_cast<F>(gst_vulkan_device_get_proc_address(device, name));
}

struct Identity {
	std::optional<Uuid> device{};
	std::optional<Uuid> driver{};
};

// VkPhysicalDeviceIDProperties of the device (Vulkan 1.1), when the instance resolves the query.
Identity identityOf(GstVulkanDevice *device);

} // namespace gpuhandle::gst::detail
