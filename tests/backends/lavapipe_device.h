// Test fixture: a Mesa lavapipe Vulkan 1.2 device with timeline semaphores, and its helpers.
#pragma once

#include <gpuhandle/backends/vulkan_sync.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include <vulkan/vulkan.h>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test {

inline constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

// Bounds a wait that another thread's vkSignalSemaphore ends. Khronos's validation layer (1.3.239,
// Debian 12) can stall such a wait for its own 10 s internal timeout: the waiter's record of
// vkWaitSemaphores waits for the signal's record, which waits for the waiter's lock
// (UNASSIGNED-VkSemaphore-state-timeout, "most likely a validation bug", suppressed in
// tests/validation/suppressions.txt; KhronosGroup/Vulkan-ValidationLayers#4649). The wait still
// ends as soon as the signal lands; only the bound is wider than the layer's stall.
inline constexpr std::chrono::seconds kWaitAcrossHostSignal{ 30 };

// Points the Vulkan loader at lavapipe's ICD when nobody named one and the file is there; true
// if it did, so that a probe the loader failed is worth repeating.
inline bool nameLavapipeIcd()
{
	if (std::getenv("VK_ICD_FILENAMES") || access(kLavapipeIcd, R_OK) != 0)
		return false;
	setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
	return true;
}

inline uint64_t handleOf(VkSemaphore semaphore)
{
	return reinterpret_cast<uint64_t>(semaphore);
}

inline VulkanSemaphoreSync timelineAt(VkSemaphore semaphore, uint64_t value)
{
	return { handleOf(semaphore), VulkanSemaphoreKind::Timeline, value, nullptr };
}

// A lavapipe instance and device with Vulkan 1.2 timeline semaphores, made per test (Check forks
// each test, and a Vulkan device must not cross a fork).
class LavapipeDevice
{
public:
	LavapipeDevice() = default;
	LavapipeDevice(const LavapipeDevice &) = delete;
	LavapipeDevice &operator=(const LavapipeDevice &) = delete;

	~LavapipeDevice()
	{
		if (device)
			vkDestroyDevice(device, nullptr);
		if (instance)
			vkDestroyInstance(instance, nullptr);
	}

	// Empty on success, else why lavapipe is not usable.
	std::string create()
	{
		VkApplicationInfo app{};
		app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
		app.apiVersion = VK_API_VERSION_1_2;
		VkInstanceCreateInfo instanceInfo{};
		instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
		instanceInfo.pApplicationInfo = &app;
		if (VkResult r = vkCreateInstance(&instanceInfo, nullptr, &instance);
		    r != VK_SUCCESS)
			return "vkCreateInstance failed (" + std::to_string(r) + ")";

		uint32_t count = 0;
		vkEnumeratePhysicalDevices(instance, &count, nullptr);
		std::vector<VkPhysicalDevice> devices(count);
		vkEnumeratePhysicalDevices(instance, &count, devices.data());
		for (VkPhysicalDevice candidate : devices) {
			VkPhysicalDeviceProperties properties{};
			vkGetPhysicalDeviceProperties(candidate, &properties);
			if (std::strstr(properties.deviceName, "llvmpipe") &&
			    properties.apiVersion >= VK_API_VERSION_1_2)
				physical = candidate;
		}
		if (!physical)
			return "no lavapipe (llvmpipe) device with Vulkan 1.2 among " +
			       std::to_string(count) + " devices";

		VkPhysicalDeviceVulkan12Features supported{};
		supported.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
		VkPhysicalDeviceFeatures2 features{};
		features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
		features.pNext = &supported;
		vkGetPhysicalDeviceFeatures2(physical, &features);
		if (!supported.timelineSemaphore)
			return "lavapipe does not offer timelineSemaphore";

		float priority = 1.0f;
		VkDeviceQueueCreateInfo queueInfo{};
		queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		queueInfo.queueCount = 1; // family 0: lavapipe has one, with graphics and compute
		queueInfo.pQueuePriorities = &priority;
		VkPhysicalDeviceVulkan12Features enabled{};
		enabled.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
		enabled.timelineSemaphore = VK_TRUE;
		VkDeviceCreateInfo deviceInfo{};
		deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
		deviceInfo.pNext = &enabled;
		deviceInfo.queueCreateInfoCount = 1;
		deviceInfo.pQueueCreateInfos = &queueInfo;
		if (VkResult r = vkCreateDevice(physical, &deviceInfo, nullptr, &device);
		    r != VK_SUCCESS)
			return "vkCreateDevice failed (" + std::to_string(r) + ")";
		vkGetDeviceQueue(device, 0, 0, &queue);
		return {};
	}

	VulkanDeviceDispatch dispatch(bool withQueue = false) const
	{
		VulkanDeviceDispatch d;
		d.device = device;
		d.getDeviceProcAddr = reinterpret_cast<void *>(&vkGetDeviceProcAddr);
		if (withQueue)
			d.queue = queue;
		return d;
	}

	VulkanPhysicalDeviceDispatch physicalDispatch() const
	{
		return { instance, physical, reinterpret_cast<void *>(&vkGetInstanceProcAddr) };
	}

	VkSemaphore makeSemaphore(VkSemaphoreType type, uint64_t initial = 0) const
	{
		VkSemaphoreTypeCreateInfo typeInfo{ VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
						    nullptr, type, initial };
		VkSemaphoreCreateInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &typeInfo, 0 };
		VkSemaphore semaphore = VK_NULL_HANDLE;
		ck_assert_int_eq(vkCreateSemaphore(device, &info, nullptr, &semaphore), VK_SUCCESS);
		return semaphore;
	}

	void hostSignal(VkSemaphore semaphore, uint64_t value) const
	{
		VkSemaphoreSignalInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, nullptr,
					    semaphore, value };
		ck_assert_int_eq(vkSignalSemaphore(device, &info), VK_SUCCESS);
	}

	// A point at `value` on a timeline semaphore, through this device.
	SyncPoint pointAt(VkSemaphore semaphore, uint64_t value) const
	{
		return importVulkanSemaphore(timelineAt(semaphore, value), dispatch()).value();
	}

	// An empty submission that signals `semaphore` (to `value` when it is a timeline).
	void queueSignal(VkSemaphore semaphore, uint64_t value) const
	{
		VkTimelineSemaphoreSubmitInfo timeline{
			VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
			nullptr,
			0,
			nullptr,
			1,
			&value
		};
		VkSubmitInfo submit{};
		submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submit.pNext = &timeline;
		submit.signalSemaphoreCount = 1;
		submit.pSignalSemaphores = &semaphore;
		ck_assert_int_eq(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
	}

	VkInstance instance = VK_NULL_HANDLE;
	VkPhysicalDevice physical = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;
	VkQueue queue = VK_NULL_HANDLE;
};

// Why no lavapipe device opens here (empty when one does): the loader's choice first, then
// lavapipe's ICD named, where the loader did not offer it.
inline std::string whyNoLavapipe()
{
	std::string why = LavapipeDevice().create();
	if (!why.empty() && nameLavapipeIcd())
		why = LavapipeDevice().create();
	return why;
}

} // namespace gpuhandle::test

// In a test: a ready lavapipe device, or the test fails saying why.
#define LAVAPIPE(name)                                                                             \
	gpuhandle::test::LavapipeDevice name;                                                      \
	do {                                                                                       \
		std::string why_ = name.create();                                                  \
		ck_assert_msg(why_.empty(), "lavapipe: %s", why_.c_str());                         \
	} while (0)
