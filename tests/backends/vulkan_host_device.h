// Test fixture: a host's own lavapipe device that makes, fills and reads images and buffers with
// its own commands (as GStreamer's Vulkan elements do), and the gpuhandle backend inside it.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/format_mappings.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "lavapipe_device.h"

#include "check_helpers.h"

namespace gpuhandle::test {

// One image or buffer of the host with its memory; destroyed when the last frame over it goes
// (it is the resource's anchor). Counts how many are alive, to prove each is released once.
class HostObject final : public KeepAlive
{
public:
	HostObject(VkDevice device, int *alive) : device_(device), alive_(alive) { ++*alive_; }
	HostObject(const HostObject &) = delete;
	HostObject &operator=(const HostObject &) = delete;
	~HostObject() override
	{
		if (image)
			vkDestroyImage(device_, image, nullptr);
		if (buffer)
			vkDestroyBuffer(device_, buffer, nullptr);
		if (memory)
			vkFreeMemory(device_, memory, nullptr);
		--*alive_;
	}

	VkImage image = VK_NULL_HANDLE;
	VkBuffer buffer = VK_NULL_HANDLE;
	VkDeviceMemory memory = VK_NULL_HANDLE;
	uint32_t rowPitch = 0; // of a linear image

private:
	VkDevice device_;
	int *alive_;
};
using HostObjectRef = std::shared_ptr<HostObject>;

class VulkanHost
{
public:
	VulkanHost() = default;
	VulkanHost(const VulkanHost &) = delete;
	VulkanHost &operator=(const VulkanHost &) = delete;
	~VulkanHost()
	{
		if (pool_)
			vkDestroyCommandPool(device_.device, pool_, nullptr);
		if (device_.device)
			vkDestroyDevice(device_.device, nullptr);
		if (device_.instance)
			vkDestroyInstance(device_.instance, nullptr);
	}

	// Empty on success, else why lavapipe is not usable. With `exportable`, the device enables
	// VK_KHR_external_memory_fd (GStreamer 1.22 opens its devices without it).
	std::string create(bool exportable)
	{
		VkApplicationInfo app{};
		app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
		app.apiVersion = VK_API_VERSION_1_2;
		VkInstanceCreateInfo instanceInfo{};
		instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
		instanceInfo.pApplicationInfo = &app;
		if (VkResult r = vkCreateInstance(&instanceInfo, nullptr, &device_.instance);
		    r != VK_SUCCESS)
			return "vkCreateInstance failed (" + std::to_string(r) + ")";
		uint32_t count = 0;
		vkEnumeratePhysicalDevices(device_.instance, &count, nullptr);
		std::vector<VkPhysicalDevice> devices(count);
		vkEnumeratePhysicalDevices(device_.instance, &count, devices.data());
		for (VkPhysicalDevice candidate : devices) {
			VkPhysicalDeviceProperties properties{};
			vkGetPhysicalDeviceProperties(candidate, &properties);
			if (std::strstr(properties.deviceName, "llvmpipe") &&
			    properties.apiVersion >= VK_API_VERSION_1_2)
				device_.physical = candidate;
		}
		if (!device_.physical)
			return "no lavapipe (llvmpipe) device with Vulkan 1.2 among " +
			       std::to_string(count) + " devices";
		float priority = 1.0f;
		VkDeviceQueueCreateInfo queueInfo{};
		queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		queueInfo.queueCount = 1; // family 0: lavapipe has one, with graphics and compute
		queueInfo.pQueuePriorities = &priority;
		VkDeviceCreateInfo deviceInfo{};
		deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
		deviceInfo.queueCreateInfoCount = 1;
		deviceInfo.pQueueCreateInfos = &queueInfo;
		deviceInfo.enabledExtensionCount = exportable ? 1 : 0;
		deviceInfo.ppEnabledExtensionNames = &kExtensions;
		if (VkResult r =
			    vkCreateDevice(device_.physical, &deviceInfo, nullptr, &device_.device);
		    r != VK_SUCCESS)
			return "vkCreateDevice failed (" + std::to_string(r) + ")";
		vkGetDeviceQueue(device_.device, 0, 0, &device_.queue);
		VkCommandPoolCreateInfo info{ VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr,
					      VK_COMMAND_POOL_CREATE_TRANSIENT_BIT, 0 };
		if (VkResult r = vkCreateCommandPool(device_.device, &info, nullptr, &pool_);
		    r != VK_SUCCESS)
			return "vkCreateCommandPool failed (" + std::to_string(r) + ")";
		exportable_ = exportable;
		return {};
	}

	VkDevice device() const { return device_.device; }
	VkQueue queue() const { return device_.queue; }
	int alive() const { return alive_; }

	// The gpuhandle Vulkan backend inside this device, submitting on the host's queue (under
	// `queueLock`, the host's lock of it, when one is given).
	BackendRef backend(std::function<void(bool lock)> queueLock = {}) const
	{
		VulkanContext native;
		native.instance = device_.instance;
		native.physicalDevice = device_.physical;
		native.device = device_.device;
		native.queue = device_.queue;
		native.queueFamilyIndex = 0;
		native.getInstanceProcAddr = reinterpret_cast<void *>(&vkGetInstanceProcAddr);
		native.enabledDeviceExtensions = { exportable_ ? kExtensions : "VK_KHR_swapchain" };
		native.queueLock = std::move(queueLock);
		auto context = Context::create(std::move(native));
		ck_assert_ok(context);
		BackendOpenOptions options;
		options.context = *context;
		auto opened = openBackend(BackendKind::Vulkan, options);
		ck_assert_ok(opened);
		return *opened;
	}

	// Records with `record` and runs it on the host's queue, waited for (at most 10 s).
	void run(const std::function<void(VkCommandBuffer)> &record) const
	{
		VkCommandBufferAllocateInfo info{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
						  nullptr, pool_, VK_COMMAND_BUFFER_LEVEL_PRIMARY,
						  1 };
		VkCommandBuffer commands = VK_NULL_HANDLE;
		ck_assert_int_eq(vkAllocateCommandBuffers(device_.device, &info, &commands),
				 VK_SUCCESS);
		VkCommandBufferBeginInfo begin{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
						nullptr,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
						nullptr };
		ck_assert_int_eq(vkBeginCommandBuffer(commands, &begin), VK_SUCCESS);
		record(commands);
		const VkMemoryBarrier toHost{ VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
					      VK_ACCESS_MEMORY_WRITE_BIT,
					      VK_ACCESS_HOST_READ_BIT | VK_ACCESS_MEMORY_READ_BIT };
		vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
				     VK_PIPELINE_STAGE_HOST_BIT |
					     VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
				     0, 1, &toHost, 0, nullptr, 0, nullptr);
		ck_assert_int_eq(vkEndCommandBuffer(commands), VK_SUCCESS);
		VkFenceCreateInfo fenceInfo{ VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0 };
		VkFence fence = VK_NULL_HANDLE;
		ck_assert_int_eq(vkCreateFence(device_.device, &fenceInfo, nullptr, &fence),
				 VK_SUCCESS);
		VkSubmitInfo submit{};
		submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submit.commandBufferCount = 1;
		submit.pCommandBuffers = &commands;
		ck_assert_int_eq(vkQueueSubmit(device_.queue, 1, &submit, fence), VK_SUCCESS);
		ck_assert_int_eq(vkWaitForFences(device_.device, 1, &fence, VK_TRUE,
						 10'000'000'000),
				 VK_SUCCESS);
		vkDestroyFence(device_.device, fence, nullptr);
		vkFreeCommandBuffers(device_.device, pool_, 1, &commands);
	}

	// A buffer of `size` bytes in host-visible, coherent memory.
	HostObjectRef makeBuffer(uint64_t size) const
	{
		auto object = std::make_shared<HostObject>(device_.device, &alive_);
		VkBufferCreateInfo info{};
		info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
		info.size = size;
		info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
		ck_assert_int_eq(vkCreateBuffer(device_.device, &info, nullptr, &object->buffer),
				 VK_SUCCESS);
		VkMemoryRequirements needs{};
		vkGetBufferMemoryRequirements(device_.device, object->buffer, &needs);
		object->memory = allocate(needs, kHostMemory);
		ck_assert_int_eq(vkBindBufferMemory(device_.device, object->buffer, object->memory,
						    0),
				 VK_SUCCESS);
		return object;
	}

	// A `format` image (one plane), moved to GENERAL by the host's own commands.
	HostObjectRef makeImage(VkFormat format, uint32_t width, uint32_t height, bool linear) const
	{
		auto object = std::make_shared<HostObject>(device_.device, &alive_);
		VkImageCreateInfo info{};
		info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
		info.imageType = VK_IMAGE_TYPE_2D;
		info.format = format;
		info.extent = { width, height, 1 };
		info.mipLevels = 1;
		info.arrayLayers = 1;
		info.samples = VK_SAMPLE_COUNT_1_BIT;
		info.tiling = linear ? VK_IMAGE_TILING_LINEAR : VK_IMAGE_TILING_OPTIMAL;
		info.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
			     VK_IMAGE_USAGE_SAMPLED_BIT;
		info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
		ck_assert_int_eq(vkCreateImage(device_.device, &info, nullptr, &object->image),
				 VK_SUCCESS);
		VkMemoryRequirements needs{};
		vkGetImageMemoryRequirements(device_.device, object->image, &needs);
		object->memory = allocate(needs, linear ? kHostMemory : 0);
		ck_assert_int_eq(vkBindImageMemory(device_.device, object->image, object->memory,
						   0),
				 VK_SUCCESS);
		if (linear) {
			const VkImageSubresource color{ VK_IMAGE_ASPECT_COLOR_BIT, 0, 0 };
			VkSubresourceLayout layout{};
			vkGetImageSubresourceLayout(device_.device, object->image, &color, &layout);
			object->rowPitch = static_cast<uint32_t>(layout.rowPitch);
		}
		run([&](VkCommandBuffer commands) {
			VkImageMemoryBarrier barrier = generalBarrier(object->image);
			barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
			vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
					     VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
					     nullptr, 1, &barrier);
		});
		return object;
	}

	// Copies `rows` rows of `texels` between an image in GENERAL and tight host bytes, with the
	// host's own commands.
	void upload(const HostObject &image, uint32_t texels, uint32_t rows,
		    const std::vector<uint8_t> &bytes) const
	{
		HostObjectRef staging = makeBuffer(bytes.size());
		std::memcpy(mapped(*staging), bytes.data(), bytes.size());
		vkUnmapMemory(device_.device, staging->memory);
		run([&](VkCommandBuffer commands) {
			const VkBufferImageCopy region = regionOf(texels, rows);
			vkCmdCopyBufferToImage(commands, staging->buffer, image.image,
					       VK_IMAGE_LAYOUT_GENERAL, 1, &region);
		});
	}
	std::vector<uint8_t> download(const HostObject &image, uint32_t texels, uint32_t rows,
				      uint32_t rowBytes) const
	{
		HostObjectRef staging = makeBuffer(uint64_t{ rowBytes } * rows);
		run([&](VkCommandBuffer commands) {
			const VkBufferImageCopy region = regionOf(texels, rows);
			vkCmdCopyImageToBuffer(commands, image.image, VK_IMAGE_LAYOUT_GENERAL,
					       staging->buffer, 1, &region);
		});
		const uint8_t *data = mapped(*staging);
		std::vector<uint8_t> out(data, data + uint64_t{ rowBytes } * rows);
		vkUnmapMemory(device_.device, staging->memory);
		return out;
	}

	// The host's mapping of a host-visible object (unmapped with vkUnmapMemory).
	uint8_t *mapped(const HostObject &object) const
	{
		void *data = nullptr;
		ck_assert_int_eq(vkMapMemory(device_.device, object.memory, 0, VK_WHOLE_SIZE, 0,
					     &data),
				 VK_SUCCESS);
		return static_cast<uint8_t *>(data);
	}

private:
	static constexpr VkMemoryPropertyFlags kHostMemory = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
							     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	static constexpr const char *kExtensions = "VK_KHR_external_memory_fd";

	static VkImageMemoryBarrier generalBarrier(VkImage image)
	{
		VkImageMemoryBarrier barrier{};
		barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
		barrier.srcAccessMask = 0;
		barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
		barrier.oldLayout = VK_IMAGE_LAYOUT_GENERAL;
		barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
		barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
		barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
		barrier.image = image;
		barrier.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
		return barrier;
	}

	static VkBufferImageCopy regionOf(uint32_t texels, uint32_t rows)
	{
		VkBufferImageCopy region{};
		region.bufferRowLength = texels;
		region.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 };
		region.imageExtent = { texels, rows, 1 };
		return region;
	}

	VkDeviceMemory allocate(const VkMemoryRequirements &needs,
				VkMemoryPropertyFlags wanted) const
	{
		VkPhysicalDeviceMemoryProperties properties{};
		vkGetPhysicalDeviceMemoryProperties(device_.physical, &properties);
		uint32_t type = UINT32_MAX;
		for (uint32_t i = 0; i < properties.memoryTypeCount && type == UINT32_MAX; i++)
			if ((needs.memoryTypeBits & (1u << i)) &&
			    (properties.memoryTypes[i].propertyFlags & wanted) == wanted)
				type = i;
		ck_assert_uint_ne(type, UINT32_MAX);
		VkMemoryAllocateInfo info{ VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, nullptr,
					   needs.size, type };
		VkDeviceMemory memory = VK_NULL_HANDLE;
		ck_assert_int_eq(vkAllocateMemory(device_.device, &info, nullptr, &memory),
				 VK_SUCCESS);
		return memory;
	}

	struct {
		VkInstance instance = VK_NULL_HANDLE;
		VkPhysicalDevice physical = VK_NULL_HANDLE;
		VkDevice device = VK_NULL_HANDLE;
		VkQueue queue = VK_NULL_HANDLE;
	} device_;
	VkCommandPool pool_ = VK_NULL_HANDLE;
	bool exportable_ = false;
	mutable int alive_ = 0;
};

// For test::probeInChild: empty when a lavapipe host device can be made (naming lavapipe's
// ICD when the default loader search finds none), else why not.
inline std::string probeVulkanHost()
{
	std::string why = VulkanHost().create(false);
	if (!why.empty() && nameLavapipeIcd())
		why = VulkanHost().create(false);
	return why.empty() ? why : "no lavapipe host device: " + why;
}

} // namespace gpuhandle::test
