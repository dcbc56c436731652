// Private to the Vulkan memory sources: the entry-point table, the owning object and the steps
// that allocation, export and import share. Not installed.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <gpuhandle/backends/vulkan_memory.h>

#include "../shared/vulkan_dispatch.h"
#include "validation.h"

#include <cinttypes>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include <vulkan/vulkan.h>

namespace gpuhandle::detail {

using MaybeError = std::optional<Error>;
inline constexpr VkExternalMemoryHandleTypeFlagBits kOpaqueFd =
	VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

inline Error vulkanError(const char *fn, const char *call, VkResult result)
{
	ErrorCode code = result == VK_ERROR_DEVICE_LOST ? ErrorCode::DeviceLost
							: ErrorCode::Backend;
	return Error::format(code, "device", "%s: %s failed with VkResult %d.", fn, call,
			     static_cast<int>(result));
}

// The one table of the Vulkan entry points (shared/vulkan_dispatch.h). The backend resolves it
// once, when it opens; the public helpers of vulkan_memory.h once per call (they get raw handles).
using Api = VulkanDispatch;

// Resolves the table, or the error naming `fn`.
inline MaybeError loadApi(const char *fn, const VulkanDeviceDispatch &dispatch,
			  const VulkanPhysicalDeviceDispatch &physical, Api &api)
{
	Result<VulkanDispatch> loaded = loadVulkanDispatch(fn, dispatch, physical);
	if (!loaded)
		return std::move(loaded).error();
	api = *loaded;
	return std::nullopt;
}

// The calls of vulkan_memory.h over a table resolved already (the backend's, once per device):
// the public calls resolve one from their handles, then call these.
Result<VulkanExportedMemory> allocateExportableBuffer(const Api &api, uint64_t size, uint32_t usage,
						      uint32_t memoryProperties,
						      KeepAliveRef owner);
Result<VulkanExportedMemory> allocateExportableImage(const Api &api,
						     const VulkanDeviceDispatch &dispatch,
						     PlaneFormat format, uint32_t width,
						     uint32_t height, uint32_t usage,
						     uint32_t memoryProperties, KeepAliveRef owner);
Result<VulkanBoundMemory> importMemoryFd(const Api &api, const VulkanMemoryFd &exported,
					 KeepAliveRef owner);
Result<VulkanBoundMemory> importHostMemory(const Api &api, const CpuBytes &bytes, uint32_t usage,
					   KeepAliveRef owner);

// NotSupported naming `name` when the device was created without `extension`.
inline MaybeError requireExtension(const char *fn, const void *function, const char *name,
				   const char *extension)
{
	if (function)
		return std::nullopt;
	return Error::format(
		ErrorCode::NotSupported, "getDeviceProcAddr",
		"%s: the driver offers no %s; this call needs a device created with %s.", fn, name,
		extension);
}

// The buffer or image and its memory; the anchor of every copy of the Resource. Destroys what
// it holds exactly once, object before memory, then lets `source` (memory it was imported from)
// and the owner (the device) go: members outlive the destructor's body. It keeps only the three
// destroy functions of the table it was made with (every live allocation holds one): the calls
// that create and bind it take the table itself.
class BoundObject final : public KeepAlive
{
public:
	BoundObject(const Api &api, KeepAliveRef owner)
		: device_(api.device), destroyBuffer_(api.DestroyBuffer),
		  destroyImage_(api.DestroyImage), freeMemory_(api.FreeMemory),
		  owner_(std::move(owner))
	{
	}
	BoundObject(const BoundObject &) = delete;
	BoundObject &operator=(const BoundObject &) = delete;
	~BoundObject() override
	{
		if (buffer)
			destroyBuffer_(device_, buffer, nullptr);
		if (image)
			destroyImage_(device_, image, nullptr);
		if (memory)
			freeMemory_(device_, memory, nullptr);
	}

	VkBuffer buffer = VK_NULL_HANDLE;
	VkImage image = VK_NULL_HANDLE;
	VkDeviceMemory memory = VK_NULL_HANDLE;
	VkMemoryRequirements requirements{};
	uint64_t bufferSize = 0; // VkBufferCreateInfo::size
	KeepAliveRef source{};   // what imported memory lives in (host bytes); empty otherwise

private:
	VkDevice device_;
	PFN_vkDestroyBuffer destroyBuffer_;
	PFN_vkDestroyImage destroyImage_;
	PFN_vkFreeMemory freeMemory_;
	KeepAliveRef owner_;
};

struct Identity {
	Uuid device{};
	Uuid driver{};
};

inline Identity identityOf(const Api &api)
{
	VkPhysicalDeviceIDProperties id{};
	id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &id;
	api.GetPhysicalDeviceProperties2(api.physical, &properties);
	Identity identity;
	std::memcpy(identity.device.data(), id.deviceUUID, VK_UUID_SIZE);
	std::memcpy(identity.driver.data(), id.driverUUID, VK_UUID_SIZE);
	return identity;
}

// The first type allowed by `bits` that has every flag of `wanted`.
inline std::optional<uint32_t> pickMemoryType(const Api &api, uint32_t bits, uint32_t wanted)
{
	VkPhysicalDeviceMemoryProperties properties{};
	api.GetPhysicalDeviceMemoryProperties(api.physical, &properties);
	for (uint32_t i = 0; i < properties.memoryTypeCount; i++)
		if ((bits & (1u << i)) &&
		    (properties.memoryTypes[i].propertyFlags & wanted) == wanted)
			return i;
	return std::nullopt;
}

// Allocates `size` bytes of type `typeIndex` with `handleInfo` (export or import struct) first
// in the chain, dedicated to the object when asked, and binds it.
inline MaybeError allocateAndBind(const char *fn, const Api &api, BoundObject &object,
				  uint64_t size, uint32_t typeIndex, bool dedicated,
				  void *handleInfo)
{
	VkMemoryDedicatedAllocateInfo dedicatedInfo{
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
		.pNext = nullptr,
		.image = object.image,
		.buffer = object.buffer,
	};
	static_cast<VkBaseOutStructure *>(handleInfo)->pNext =
		dedicated ? reinterpret_cast<VkBaseOutStructure *>(&dedicatedInfo) : nullptr;
	VkMemoryAllocateInfo info{ VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, handleInfo, size,
				   typeIndex };
	if (VkResult r = api.AllocateMemory(api.device, &info, nullptr, &object.memory);
	    r != VK_SUCCESS) {
		object.memory = VK_NULL_HANDLE;
		return vulkanError(fn, "vkAllocateMemory", r);
	}
	VkResult r = object.buffer
			     ? api.BindBufferMemory(api.device, object.buffer, object.memory, 0)
			     : api.BindImageMemory(api.device, object.image, object.memory, 0);
	if (r != VK_SUCCESS)
		return vulkanError(fn, object.buffer ? "vkBindBufferMemory" : "vkBindImageMemory",
				   r);
	return std::nullopt;
}

// A buffer (or image) whose memory will be of external `handleType`.
inline MaybeError createBuffer(const char *fn, const Api &api, BoundObject &object, uint64_t size,
			       uint32_t usage,
			       VkExternalMemoryHandleTypeFlagBits handleType = kOpaqueFd)
{
	VkExternalMemoryBufferCreateInfo external{
		VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, nullptr, handleType
	};
	VkBufferCreateInfo info{};
	info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
	info.pNext = &external;
	info.size = size;
	info.usage = usage;
	info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	if (VkResult r = api.CreateBuffer(api.device, &info, nullptr, &object.buffer);
	    r != VK_SUCCESS) {
		object.buffer = VK_NULL_HANDLE;
		return vulkanError(fn, "vkCreateBuffer", r);
	}
	api.GetBufferMemoryRequirements(api.device, object.buffer, &object.requirements);
	object.bufferSize = size;
	return std::nullopt;
}

inline MaybeError createImage(const char *fn, const Api &api, BoundObject &object,
			      const VulkanExportDesc &x)
{
	VkExternalMemoryImageCreateInfo external{
		VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO, nullptr, kOpaqueFd
	};
	VkImageCreateInfo info{};
	info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
	info.pNext = &external;
	info.imageType = VK_IMAGE_TYPE_2D;
	info.format = static_cast<VkFormat>(x.format);
	info.extent = { x.width, x.height, x.depth ? x.depth : 1 };
	info.mipLevels = 1;
	info.arrayLayers = 1;
	info.samples = VK_SAMPLE_COUNT_1_BIT;
	info.tiling = static_cast<VkImageTiling>(x.tiling);
	info.usage = x.usage;
	info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	// An image on external memory starts UNDEFINED, whatever its tiling
	// (VUID-VkImageCreateInfo-pNext-01443): a new one is moved to GENERAL before the host
	// writes it (moveToGeneral); an imported one is acquired from its exporter in GENERAL.
	info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
	if (VkResult r = api.CreateImage(api.device, &info, nullptr, &object.image);
	    r != VK_SUCCESS) {
		object.image = VK_NULL_HANDLE;
		return vulkanError(fn, "vkCreateImage", r);
	}
	api.GetImageMemoryRequirements(api.device, object.image, &object.requirements);
	return std::nullopt;
}

// The Resource over `object`, anchored by it; linear images report their row pitch.
inline Result<VulkanBoundMemory> wrap(const char *fn, const Api &api,
				      std::shared_ptr<BoundObject> object, uint64_t allocationSize,
				      uint32_t typeIndex, const Identity &identity, bool linear)
{
	VulkanBoundMemory bound;
	bound.memory = reinterpret_cast<uint64_t>(object->memory);
	bound.allocationSize = allocationSize;
	bound.memoryTypeIndex = typeIndex;
	if (object->buffer) {
		VulkanBufferDesc desc;
		desc.buffer = reinterpret_cast<uint64_t>(object->buffer);
		desc.device = api.device;
		desc.size = object->bufferSize;
		desc.deviceUuid = identity.device;
		desc.anchor = std::move(object);
		auto buffer = VulkanBuffer::create(std::move(desc));
		if (!buffer)
			return std::move(buffer).error();
		bound.native = std::move(*buffer);
		return bound;
	}
	VulkanImageDesc desc;
	desc.image = reinterpret_cast<uint64_t>(object->image);
	desc.device = api.device;
	desc.deviceUuid = identity.device;
	if (linear) {
		VkImageSubresource subresource{ VK_IMAGE_ASPECT_COLOR_BIT, 0, 0 };
		VkSubresourceLayout layout{};
		api.GetImageSubresourceLayout(api.device, object->image, &subresource, &layout);
		if (layout.rowPitch > UINT32_MAX)
			return Error::format(ErrorCode::OutOfRange, "width",
					     "%s: the image's row pitch (%" PRIu64
					     " bytes) does not fit in 32 bits.",
					     fn, static_cast<uint64_t>(layout.rowPitch));
		desc.rowPitch = static_cast<uint32_t>(layout.rowPitch);
	}
	desc.anchor = std::move(object);
	auto image = VulkanImage::create(std::move(desc));
	if (!image)
		return std::move(image).error();
	bound.native = std::move(*image);
	return bound;
}

} // namespace gpuhandle::detail
