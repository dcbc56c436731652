// Exportable Vulkan buffers and images (OPAQUE_FD export); their import is in
// vulkan_memory_import.cpp. No libvulkan link: device functions come from the host's
// vkGetDeviceProcAddr, physical-device queries from its vkGetInstanceProcAddr.
#define VK_NO_PROTOTYPES
#include <gpuhandle/format_mappings.h>

#include "vulkan_memory_internal.h"

namespace gpuhandle {

using namespace detail;

namespace {

// Allocates exportable memory for `object` (already created), binds and exports it.
Result<VulkanExportedMemory> allocateAndExport(const char *fn, std::shared_ptr<BoundObject> object,
					       VulkanExportDesc x, uint32_t wanted)
{
	const Api &api = object->api();
	std::optional<uint32_t> type =
		pickMemoryType(api, object->requirements.memoryTypeBits, wanted);
	if (!type)
		return Error::format(
			ErrorCode::NotSupported, "memoryProperties",
			"%s: no memory type allowed for this object (bits 0x%x) has properties 0x%x.",
			fn, object->requirements.memoryTypeBits, wanted);
	VkExportMemoryAllocateInfo exportInfo{ VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
					       nullptr, kOpaqueFd };
	if (auto e = allocateAndBind(fn, *object, object->requirements.size, *type, x.dedicated,
				     &exportInfo))
		return std::move(*e);

	VkMemoryGetFdInfoKHR fdInfo{ VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, nullptr,
				     object->memory, kOpaqueFd };
	int raw = -1;
	if (VkResult r = api.GetMemoryFdKHR(api.device, &fdInfo, &raw); r != VK_SUCCESS)
		return vulkanError(fn, "vkGetMemoryFdKHR", r);
	SharedFd fd{ UniqueFd(raw) }; // ours from here: closed on every path below

	Identity identity = identityOf(api);
	x.allocationSize = object->requirements.size;
	x.memoryTypeIndex = *type;
	auto exported =
		VulkanMemoryFd::create({ std::move(fd), x, identity.device, identity.driver });
	if (!exported)
		return std::move(exported).error();
	auto bound = wrap(fn, std::move(object), x.allocationSize, *type, identity,
			  x.tiling == VK_IMAGE_TILING_LINEAR);
	if (!bound)
		return std::move(bound).error();
	return VulkanExportedMemory{ std::move(*bound), std::move(*exported) };
}

} // namespace

// NotSupported unless VkExternalBufferProperties lists the usage as exportable; dedicated
// memory where the driver requires it.
Result<VulkanExportedMemory>
allocateExportableVulkanBuffer(const VulkanDeviceDispatch &dispatch,
			       const VulkanPhysicalDeviceDispatch &physical, uint64_t size,
			       uint32_t usage, uint32_t memoryProperties, KeepAliveRef owner)
{
	const char *fn = "allocateExportableVulkanBuffer";
	Api api;
	if (auto e = loadApi(fn, dispatch, physical, api))
		return std::move(*e);
	if (auto e = requireExtension(fn, reinterpret_cast<const void *>(api.GetMemoryFdKHR),
				      "vkGetMemoryFdKHR", VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "size", size))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "usage", usage))
		return std::move(*e);

	VkPhysicalDeviceExternalBufferInfo query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO, nullptr, 0, usage, kOpaqueFd
	};
	VkExternalBufferProperties answer{};
	answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
	api.GetPhysicalDeviceExternalBufferProperties(api.physical, &query, &answer);
	VkExternalMemoryFeatureFlags features =
		answer.externalMemoryProperties.externalMemoryFeatures;
	if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "usage",
			"%s: the driver cannot export a buffer with usage 0x%x as an opaque fd (VkExternalBufferProperties does not list it as exportable).",
			fn, usage);

	auto object = std::make_shared<BoundObject>(api, std::move(owner));
	if (auto e = createBuffer(fn, *object, size, usage))
		return std::move(*e);
	VulkanExportDesc x;
	x.dedicated = (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
	x.usage = usage;
	return allocateAndExport(fn, std::move(object), x, memoryProperties);
}

// NotSupported (naming the format) unless vkGetPhysicalDeviceImageFormatProperties2 lists the
// linear image as exportable.
Result<VulkanExportedMemory>
allocateExportableVulkanImage(const VulkanDeviceDispatch &dispatch,
			      const VulkanPhysicalDeviceDispatch &physical, PlaneFormat format,
			      uint32_t width, uint32_t height, uint32_t usage,
			      uint32_t memoryProperties, KeepAliveRef owner)
{
	const char *fn = "allocateExportableVulkanImage";
	Api api;
	if (auto e = loadApi(fn, dispatch, physical, api))
		return std::move(*e);
	if (auto e = requireExtension(fn, reinterpret_cast<const void *>(api.GetMemoryFdKHR),
				      "vkGetMemoryFdKHR", VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "width", width))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "height", height))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "usage", usage))
		return std::move(*e);
	Result<PlaneMapping> mapping = toPlaneApiFormat(PlaneApi::VkFormat, format);
	if (!mapping)
		return std::move(mapping).error();

	VkPhysicalDeviceExternalImageFormatInfo externalQuery{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO, nullptr, kOpaqueFd
	};
	VkPhysicalDeviceImageFormatInfo2 query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
		&externalQuery,
		static_cast<VkFormat>(mapping->value),
		VK_IMAGE_TYPE_2D,
		VK_IMAGE_TILING_LINEAR,
		usage,
		0
	};
	VkExternalImageFormatProperties externalAnswer{};
	externalAnswer.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
	VkImageFormatProperties2 answer{};
	answer.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
	answer.pNext = &externalAnswer;
	VkResult r = api.GetPhysicalDeviceImageFormatProperties2(api.physical, &query, &answer);
	if (r != VK_SUCCESS || !(externalAnswer.externalMemoryProperties.externalMemoryFeatures &
				 VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "format",
			"%s: the driver cannot make a linear %s image with usage 0x%x exportable as an opaque fd (vkGetPhysicalDeviceImageFormatProperties2 answered %d).",
			fn, mapping->name, usage, static_cast<int>(r));
	VkExtent3D max = answer.imageFormatProperties.maxExtent;
	if (width > max.width || height > max.height)
		return Error::format(
			ErrorCode::OutOfRange, "width",
			"%s: %ux%u is larger than the driver's largest linear %s image (%ux%u).",
			fn, width, height, mapping->name, max.width, max.height);

	// Dedicated: the image owns its memory, so an importer rebuilds exactly this image on it.
	VulkanExportDesc x{ .dedicated = true,
			    .format = mapping->value,
			    .width = width,
			    .height = height,
			    .depth = 1,
			    .tiling = VK_IMAGE_TILING_LINEAR,
			    .usage = usage };
	auto object = std::make_shared<BoundObject>(api, std::move(owner));
	if (auto e = createImage(fn, *object, x))
		return std::move(*e);
	return allocateAndExport(fn, std::move(object), x, memoryProperties);
}

} // namespace gpuhandle
