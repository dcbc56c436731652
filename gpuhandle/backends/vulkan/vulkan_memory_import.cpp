// Importing memory into a VkDevice: another device's OPAQUE_FD export, or host bytes through
// VK_EXT_external_memory_host. No libvulkan link (see vulkan_memory_internal.h).
#define VK_NO_PROTOTYPES
#include "vulkan_memory_internal.h"

namespace gpuhandle {

using namespace detail;

// Only the device and driver that exported an opaque fd can read it, so both UUIDs must match.
// The fd is duplicated: Vulkan owns the one it imports, and `exported` keeps its own.
Result<VulkanBoundMemory> detail::importMemoryFd(const Api &api, const VulkanMemoryFd &exported,
						 KeepAliveRef owner)
{
	const char *fn = "importVulkanMemoryFd";
	if (auto e = requireExtension(fn, reinterpret_cast<const void *>(api.GetMemoryFdKHR),
				      "vkGetMemoryFdKHR", VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
		return std::move(*e);
	const VulkanMemoryFdDesc &d = exported.desc();
	const VulkanExportDesc &x = d.exportDesc;
	if (!d.deviceUuid || !d.driverUuid)
		return Error::format(
			ErrorCode::InvalidArgument, "deviceUuid",
			"%s: the export carries no %s; an opaque fd imports only on the device and driver that made it, so the import cannot be checked.",
			fn, d.deviceUuid ? "driverUuid" : "deviceUuid");
	Identity identity = identityOf(api);
	if (*d.deviceUuid != identity.device || *d.driverUuid != identity.driver) {
		bool device = *d.deviceUuid != identity.device;
		return Error::format(
			ErrorCode::DeviceMismatch, device ? "deviceUuid" : "driverUuid",
			"%s: the memory was exported by another %s (its %s differs from the importing device's); an opaque fd is meaningful only to the device and driver that made it.",
			fn, device ? "physical device" : "driver build",
			device ? "deviceUuid" : "driverUuid");
	}
	if (x.tiling == VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT)
		return Error::format(
			ErrorCode::NotSupported, "exportDesc.tiling",
			"%s: the export is a DRM-modifier image, whose modifier and plane layouts an opaque-fd export does not carry.",
			fn);

	auto object = std::make_shared<BoundObject>(api, std::move(owner));
	MaybeError created = exported.isImage()
				     ? createImage(fn, api, *object, x)
				     : createBuffer(fn, api, *object, x.allocationSize, x.usage);
	if (created)
		return std::move(*created);
	if (!(object->requirements.memoryTypeBits & (1u << x.memoryTypeIndex)))
		return Error::format(
			ErrorCode::InvalidArgument, "exportDesc.memoryTypeIndex",
			"%s: memory type %u is not allowed for the rebuilt object (allowed bits 0x%x).",
			fn, x.memoryTypeIndex, object->requirements.memoryTypeBits);
	if (object->requirements.size > x.allocationSize)
		return Error::format(ErrorCode::OutOfRange, "exportDesc.allocationSize",
				     "%s: the rebuilt object needs %" PRIu64
				     " bytes but the export holds %" PRIu64 ".",
				     fn, static_cast<uint64_t>(object->requirements.size),
				     x.allocationSize);

	UniqueFd fd = d.fd.dup();
	if (!fd.isValid())
		return Error::format(ErrorCode::InvalidArgument, "fd",
				     "%s: fd %d could not be duplicated (is it still open?).", fn,
				     d.fd.get());
	VkImportMemoryFdInfoKHR importInfo{ VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, nullptr,
					    kOpaqueFd, fd.get() };
	if (auto e = allocateAndBind(fn, api, *object, x.allocationSize, x.memoryTypeIndex,
				     x.dedicated, &importInfo)) {
		// A failed import leaves the fd with us (closed by `fd`) unless the memory exists.
		if (object->memory)
			(void)fd.release();
		return std::move(*e);
	}
	(void)fd.release(); // the VkDeviceMemory owns it now
	return wrap(fn, api, std::move(object), x.allocationSize, x.memoryTypeIndex, identity,
		    x.tiling == VK_IMAGE_TILING_LINEAR);
}

// The driver reads and writes the host pages in place, so they must stay valid until the
// VkDeviceMemory is freed: the bound object holds the bytes' anchor and drops it only after
// destroying the buffer and freeing the memory. Pointer and size are checked against the
// driver's import alignment here, because a misaligned import is undefined behaviour, not an
// error the driver reports.
Result<VulkanBoundMemory> detail::importHostMemory(const Api &api, const CpuBytes &bytes,
						   uint32_t usage, KeepAliveRef owner)
{
	const char *fn = "importHostMemoryIntoVulkan";
	constexpr VkExternalMemoryHandleTypeFlagBits kHost =
		VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
	if (auto e = requireExtension(
		    fn, reinterpret_cast<const void *>(api.GetMemoryHostPointerPropertiesEXT),
		    "vkGetMemoryHostPointerPropertiesEXT",
		    VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME))
		return std::move(*e);
	if (auto e = requireNonZero(fn, "usage", usage))
		return std::move(*e);
	const CpuBytesDesc &d = bytes.desc();

	VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{};
	host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &host;
	api.GetPhysicalDeviceProperties2(api.physical, &properties);
	const uint64_t alignment = host.minImportedHostPointerAlignment;
	if (alignment == 0)
		return Error::format(
			ErrorCode::NotSupported, "physicalDevice",
			"%s: the physical device reports no minImportedHostPointerAlignment (does it offer VK_EXT_external_memory_host?).",
			fn);
	if (reinterpret_cast<uintptr_t>(d.data) % alignment != 0)
		return Error::format(
			ErrorCode::InvalidArgument, "data",
			"%s: the host pointer %p is not aligned to minImportedHostPointerAlignment (%" PRIu64
			" bytes).",
			fn, d.data, alignment);
	if (d.size % alignment != 0)
		return Error::format(
			ErrorCode::InvalidArgument, "size",
			"%s: the size (%" PRIu64
			" bytes) is not a multiple of minImportedHostPointerAlignment (%" PRIu64
			" bytes).",
			fn, d.size, alignment);

	VkPhysicalDeviceExternalBufferInfo query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO, nullptr, 0, usage, kHost
	};
	VkExternalBufferProperties answer{};
	answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
	api.GetPhysicalDeviceExternalBufferProperties(api.physical, &query, &answer);
	if (!(answer.externalMemoryProperties.externalMemoryFeatures &
	      VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "usage",
			"%s: the driver cannot import host memory for a buffer with usage 0x%x (VkExternalBufferProperties does not list it as importable).",
			fn, usage);

	VkMemoryHostPointerPropertiesEXT pointer{};
	pointer.sType = VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT;
	if (VkResult r = api.GetMemoryHostPointerPropertiesEXT(api.device, kHost, d.data, &pointer);
	    r != VK_SUCCESS)
		return r == VK_ERROR_INVALID_EXTERNAL_HANDLE
			       ? Error::format(ErrorCode::InvalidArgument, "data",
					       "%s: the driver cannot import the host pointer %p.",
					       fn, d.data)
			       : vulkanError(fn, "vkGetMemoryHostPointerPropertiesEXT", r);

	auto object = std::make_shared<BoundObject>(api, std::move(owner));
	object->source = d.anchor;
	if (auto e = createBuffer(fn, api, *object, d.size, usage, kHost))
		return std::move(*e);
	const uint32_t bits = object->requirements.memoryTypeBits & pointer.memoryTypeBits;
	// Host-visible first, so that the caller can also map what it imported.
	std::optional<uint32_t> type =
		pickMemoryType(api, bits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
	if (!type)
		type = pickMemoryType(api, bits, 0);
	if (!type)
		return Error::format(
			ErrorCode::NotSupported, "usage",
			"%s: no memory type is allowed both for the buffer (bits 0x%x) and for the host pointer (bits 0x%x).",
			fn, object->requirements.memoryTypeBits, pointer.memoryTypeBits);
	if (object->requirements.size > d.size)
		return Error::format(ErrorCode::OutOfRange, "size",
				     "%s: the buffer needs %" PRIu64
				     " bytes but the host range holds %" PRIu64 ".",
				     fn, static_cast<uint64_t>(object->requirements.size), d.size);
	VkImportMemoryHostPointerInfoEXT importInfo{
		VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT, nullptr, kHost, d.data
	};
	if (auto e = allocateAndBind(fn, api, *object, d.size, *type, false, &importInfo))
		return std::move(*e);
	return wrap(fn, api, std::move(object), d.size, *type, identityOf(api), false);
}

// The public calls: the entry points resolved from the caller's handles, once per call.
Result<VulkanBoundMemory> importVulkanMemoryFd(const VulkanDeviceDispatch &dispatch,
					       const VulkanPhysicalDeviceDispatch &physical,
					       const VulkanMemoryFd &exported, KeepAliveRef owner)
{
	Api api;
	if (auto e = loadApi("importVulkanMemoryFd", dispatch, physical, api))
		return std::move(*e);
	return importMemoryFd(api, exported, std::move(owner));
}

Result<VulkanBoundMemory> importHostMemoryIntoVulkan(const VulkanDeviceDispatch &dispatch,
						     const VulkanPhysicalDeviceDispatch &physical,
						     const CpuBytes &bytes, uint32_t usage,
						     KeepAliveRef owner)
{
	Api api;
	if (auto e = loadApi("importHostMemoryIntoVulkan", dispatch, physical, api))
		return std::move(*e);
	return importHostMemory(api, bytes, usage, std::move(owner));
}

} // namespace gpuhandle
