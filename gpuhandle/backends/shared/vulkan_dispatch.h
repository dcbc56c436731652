// One Vulkan dispatch table: a device's and its instance's entry points, resolved once, used by
// the Vulkan backend, the semaphore imports, the GStreamer library and the FFmpeg bridge alike.
// A private interface (gpuhandle/backends/shared/, never installed): header-only, so that no
// library's ABI depends on whether Vulkan's headers were found.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <gpuhandle/backends/vulkan_sync.h> // VulkanDeviceDispatch, VulkanPhysicalDeviceDispatch
#include <gpuhandle/result.h>

#include <utility>

#include <vulkan/vulkan.h>

// The entry points, named as members after the function without "vk". Core ones (Vulkan 1.1)
// must all be there. Optional ones (an extension's, or Vulkan 1.2's) may be null: the calls that
// need one check it; X(name, alias) tries the extension's spelling second.
// clang-format off
#define GPUHANDLE_VK_DEVICE_FUNCTIONS(X)                                                           \
	X(CreateBuffer) X(DestroyBuffer) X(CreateImage) X(DestroyImage)                            \
	X(GetBufferMemoryRequirements) X(GetImageMemoryRequirements)                               \
	X(GetImageSubresourceLayout) X(AllocateMemory) X(FreeMemory) X(BindBufferMemory)          \
	X(BindImageMemory) X(MapMemory) X(UnmapMemory) X(FlushMappedMemoryRanges)                 \
	X(InvalidateMappedMemoryRanges) X(CreateCommandPool) X(DestroyCommandPool)                 \
	X(AllocateCommandBuffers) X(FreeCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer)  \
	X(CmdCopyBuffer) X(CmdCopyImage) X(CmdCopyBufferToImage) X(CmdCopyImageToBuffer)           \
	X(CmdPipelineBarrier) X(QueueSubmit) X(CreateFence) X(DestroyFence) X(WaitForFences)       \
	X(GetFenceStatus) X(DeviceWaitIdle) X(DestroyDevice) X(GetDeviceQueue)                     \
	X(CreateSemaphore) X(DestroySemaphore)
#define GPUHANDLE_VK_OPTIONAL_DEVICE_FUNCTIONS(X)                                                  \
	X(GetMemoryFdKHR, GetMemoryFdKHR) X(GetMemoryFdPropertiesKHR, GetMemoryFdPropertiesKHR)    \
	X(GetMemoryHostPointerPropertiesEXT, GetMemoryHostPointerPropertiesEXT)                    \
	X(GetImageMemoryRequirements2, GetImageMemoryRequirements2KHR)                             \
	X(WaitSemaphores, WaitSemaphoresKHR)                                                       \
	X(GetSemaphoreCounterValue, GetSemaphoreCounterValueKHR)                                   \
	X(GetSemaphoreFdKHR, GetSemaphoreFdKHR) X(CmdPipelineBarrier2, CmdPipelineBarrier2KHR)       \
	X(QueueSubmit2, QueueSubmit2KHR)
#define GPUHANDLE_VK_INSTANCE_FUNCTIONS(X)                                                         \
	X(GetPhysicalDeviceProperties2) X(GetPhysicalDeviceMemoryProperties)                       \
	X(GetPhysicalDeviceFormatProperties) X(GetPhysicalDeviceExternalBufferProperties)          \
	X(GetPhysicalDeviceImageFormatProperties2)
#define GPUHANDLE_VK_OPTIONAL_INSTANCE_FUNCTIONS(X)                                                \
	X(GetPhysicalDeviceFormatProperties2, GetPhysicalDeviceFormatProperties2KHR)               \
	X(GetPhysicalDeviceFeatures2, GetPhysicalDeviceFeatures2KHR)                               \
	X(GetPhysicalDeviceExternalSemaphoreProperties,                                            \
	  GetPhysicalDeviceExternalSemaphorePropertiesKHR)
// clang-format on

namespace gpuhandle {

#define GPUHANDLE_VK_MEMBER(name, ...) PFN_vk##name name = nullptr;
struct VulkanDispatch {
	VkInstance instance = VK_NULL_HANDLE;
	VkPhysicalDevice physical = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;
	PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
	PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;
	GPUHANDLE_VK_DEVICE_FUNCTIONS(GPUHANDLE_VK_MEMBER)
	GPUHANDLE_VK_OPTIONAL_DEVICE_FUNCTIONS(GPUHANDLE_VK_MEMBER)
	GPUHANDLE_VK_INSTANCE_FUNCTIONS(GPUHANDLE_VK_MEMBER)
	GPUHANDLE_VK_OPTIONAL_INSTANCE_FUNCTIONS(GPUHANDLE_VK_MEMBER)
};
#undef GPUHANDLE_VK_MEMBER

// The table behind vulkan_sync.h's opaque VulkanDeviceFunctions (loadVulkanDeviceFunctions), which
// a VulkanDeviceDispatch carries so that semaphore imports look nothing up.
class VulkanDeviceFunctions
{
public:
	VulkanDispatch table;
};

// What loadVulkanDispatch insists on: every handle and core function (the backend, the memory
// helpers), or nothing (each caller checks the functions it calls, and a side whose handles are
// not given is not resolved: semaphore imports have only the device's).
enum class VulkanRequire { Core, Nothing };

// Resolves every entry point of `device` through its vkGetDeviceProcAddr, and of the instance
// through `physical`'s vkGetInstanceProcAddr. Without an instance side (all of `physical` null)
// the instance functions stay null and are not required. Errors, named after `caller`: NullHandle
// for a missing handle (its field), NotSupported for the first core function the driver lacks
// ("gpuhandle's Vulkan calls need Vulkan 1.1"). Every
// user keeps the table it loaded (the backend from its opening, the FFmpeg bridge per device
// context, the GStreamer library through the backend of GStreamer's device): no entry point is
// looked up on a per-frame path.
inline Result<VulkanDispatch> loadVulkanDispatch(const char *caller,
						 const VulkanDeviceDispatch &device,
						 const VulkanPhysicalDeviceDispatch &physical,
						 VulkanRequire require = VulkanRequire::Core)
{
	const bool core = require == VulkanRequire::Core;
	const bool deviceSide = core || (device.device && device.getDeviceProcAddr);
	const bool instanceSide = core || (physical.instance && physical.physicalDevice &&
					   physical.getInstanceProcAddr);
	const std::pair<const char *, const void *> handles[] = {
		{ "device", device.device },
		{ "getDeviceProcAddr", device.getDeviceProcAddr },
		{ "instance", physical.instance },
		{ "physicalDevice", physical.physicalDevice },
		{ "getInstanceProcAddr", physical.getInstanceProcAddr },
	};
	for (const auto &[field, handle] : handles)
		if (core && !handle)
			return Error::format(ErrorCode::NullHandle, field,
					     "%s: %s is null; a valid handle is required.", caller,
					     field);
	VulkanDispatch api;
	const char *absent = nullptr;
	const char *field = "getDeviceProcAddr";
	auto getDevice = [&](const char *name) { return api.getDeviceProcAddr(api.device, name); };
#define LOAD_DEVICE(name)                                                                          \
	api.name = reinterpret_cast<PFN_vk##name>(getDevice("vk" #name));                          \
	absent = !absent && !api.name ? "vk" #name : absent;
#define LOAD_OPTIONAL_DEVICE(name, alias)                                                          \
	api.name = reinterpret_cast<PFN_vk##name>(getDevice("vk" #name));                          \
	if (!api.name)                                                                             \
		api.name = reinterpret_cast<PFN_vk##name>(getDevice("vk" #alias));
	if (deviceSide) {
		api.device = static_cast<VkDevice>(device.device);
		api.getDeviceProcAddr =
			reinterpret_cast<PFN_vkGetDeviceProcAddr>(device.getDeviceProcAddr);
		GPUHANDLE_VK_DEVICE_FUNCTIONS(LOAD_DEVICE)
		GPUHANDLE_VK_OPTIONAL_DEVICE_FUNCTIONS(LOAD_OPTIONAL_DEVICE)
	}
#undef LOAD_DEVICE
#undef LOAD_OPTIONAL_DEVICE
	if (instanceSide) {
		api.instance = static_cast<VkInstance>(physical.instance);
		api.physical = static_cast<VkPhysicalDevice>(physical.physicalDevice);
		api.getInstanceProcAddr =
			reinterpret_cast<PFN_vkGetInstanceProcAddr>(physical.getInstanceProcAddr);
		auto getInstance = [&](const char *name) {
			return api.getInstanceProcAddr(api.instance, name);
		};
#define LOAD_INSTANCE(name)                                                                        \
	api.name = reinterpret_cast<PFN_vk##name>(getInstance("vk" #name));                        \
	if (!absent && !api.name) {                                                                \
		absent = "vk" #name;                                                               \
		field = "getInstanceProcAddr";                                                     \
	}
#define LOAD_OPTIONAL_INSTANCE(name, alias)                                                        \
	api.name = reinterpret_cast<PFN_vk##name>(getInstance("vk" #name));                        \
	if (!api.name)                                                                             \
		api.name = reinterpret_cast<PFN_vk##name>(getInstance("vk" #alias));
		GPUHANDLE_VK_INSTANCE_FUNCTIONS(LOAD_INSTANCE)
		GPUHANDLE_VK_OPTIONAL_INSTANCE_FUNCTIONS(LOAD_OPTIONAL_INSTANCE)
#undef LOAD_INSTANCE
#undef LOAD_OPTIONAL_INSTANCE
	}
	if (core && absent)
		return Error::format(
			ErrorCode::NotSupported, field,
			"%s: the driver offers no %s; gpuhandle's Vulkan calls need Vulkan 1.1.",
			caller, absent);
	return api;
}

} // namespace gpuhandle
