// What the Vulkan semaphore imports (vulkan_sync.cpp) and exports (vulkan_sync_export.cpp) share:
// the device and its entry points, input checks, and errors named after the VkResult.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <gpuhandle/backends/vulkan_sync.h>

#include "../shared/vulkan_dispatch.h"

#include <optional>

#include <vulkan/vulkan.h>

namespace gpuhandle::vksync {

// The host's device and its entry points: the table the caller loaded once
// (VulkanDeviceDispatch::functions), else the one table resolved for this call. Waiters copy the
// few pointers they call.
struct Device {
	VkDevice device = VK_NULL_HANDLE;
	VulkanDispatch api{};
};

// DEVICE_LOST gets its own code because the pipeline must restart; anything else is the driver's.
Error vulkanError(VkResult result, const char *call);
// Checks what both import and export need; on success fills `device`.
std::optional<Error> checkInput(const char *type, const VulkanSemaphoreSync &raw,
				const VulkanDeviceDispatch &dispatch, Device &device);
VkSemaphore semaphoreOf(const VulkanSemaphoreSync &raw);

} // namespace gpuhandle::vksync
