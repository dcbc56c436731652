// Vulkan semaphore exports: whether the driver can export a semaphore as an fd, and the export
// (vkGetSemaphoreFdKHR). No libvulkan link: every entry point comes from the host's dispatch.
#define VK_NO_PROTOTYPES
#include <gpuhandle/backends/vulkan_sync.h>

#include "validation.h"
#include "vulkan_sync_internal.h"

namespace gpuhandle {

namespace {

constexpr const char *kExportType = "exportVulkanSemaphoreFd";

VkExternalSemaphoreHandleTypeFlagBits handleTypeOf(VulkanSemaphoreFdType type)
{
	return type == VulkanSemaphoreFdType::SyncFd
		       ? VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT
		       : VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
}

const char *fdTypeName(VulkanSemaphoreFdType type)
{
	return type == VulkanSemaphoreFdType::SyncFd ? "SYNC_FD" : "OPAQUE_FD";
}

const char *kindName(VulkanSemaphoreKind kind)
{
	return kind == VulkanSemaphoreKind::Timeline ? "timeline" : "binary";
}

} // namespace

using vksync::checkInput;
using vksync::Device;
using vksync::semaphoreOf;
using vksync::vulkanError;

/**
 * \brief Whether the driver can export a semaphore of \a kind as \a type
 *
 * Asks vkGetPhysicalDeviceExternalSemaphoreProperties (Vulkan 1.1, or its KHR name) for the
 * EXPORTABLE feature. Returns false, not an error, when the driver lists no such export.
 */
Result<bool> vulkanCanExportSemaphoreFd(const VulkanPhysicalDeviceDispatch &physical,
					VulkanSemaphoreKind kind, VulkanSemaphoreFdType type)
{
	const char *fn = "vulkanCanExportSemaphoreFd";
	if (auto e = detail::requireHandle(fn, "instance", physical.instance))
		return std::move(*e);
	if (auto e = detail::requireHandle(fn, "physicalDevice", physical.physicalDevice))
		return std::move(*e);
	if (auto e = detail::requireHandle(fn, "getInstanceProcAddr", physical.getInstanceProcAddr))
		return std::move(*e);
	if (kind != VulkanSemaphoreKind::Binary && kind != VulkanSemaphoreKind::Timeline)
		return Error::format(ErrorCode::InvalidArgument, "kind",
				     "%s: Vulkan semaphore kind %u is neither binary nor timeline.",
				     fn, static_cast<unsigned>(kind));
	if (type != VulkanSemaphoreFdType::SyncFd && type != VulkanSemaphoreFdType::OpaqueFd)
		return Error::format(ErrorCode::InvalidArgument, "type",
				     "%s: fd type %u is neither SyncFd nor OpaqueFd.", fn,
				     static_cast<unsigned>(type));

	Result<VulkanDispatch> api = loadVulkanDispatch(fn, {}, physical, VulkanRequire::Nothing);
	if (!api)
		return std::move(api).error();
	PFN_vkGetPhysicalDeviceExternalSemaphoreProperties query =
		api->GetPhysicalDeviceExternalSemaphoreProperties;
	if (!query)
		return Error::format(
			ErrorCode::NotSupported, "instance",
			"%s: the instance offers no vkGetPhysicalDeviceExternalSemaphoreProperties; it needs Vulkan 1.1 or VK_KHR_external_semaphore_capabilities.",
			fn);

	// Binary semaphores need no type struct, which keeps the query valid on Vulkan 1.1.
	VkSemaphoreTypeCreateInfo typeInfo{};
	typeInfo.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
	typeInfo.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
	VkPhysicalDeviceExternalSemaphoreInfo info{};
	info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
	info.pNext = kind == VulkanSemaphoreKind::Timeline ? &typeInfo : nullptr;
	info.handleType = handleTypeOf(type);
	VkExternalSemaphoreProperties properties{};
	properties.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
	query(static_cast<VkPhysicalDevice>(physical.physicalDevice), &info, &properties);
	return (properties.externalSemaphoreFeatures &
		VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0;
}

/**
 * \brief Exports the semaphore as an fd with vkGetSemaphoreFdKHR
 *
 * Attempted only where vulkanCanExportSemaphoreFd() says exportable; otherwise NotSupported with
 * the reason. SYNC_FD is defined for binary semaphores only, and its export takes the pending
 * signal (copy transference). A SYNC_FD export of an already signalled semaphore may give an
 * empty SharedFd, which Vulkan defines as "already signalled".
 */
Result<SharedFd> exportVulkanSemaphoreFd(const VulkanSemaphoreSync &raw,
					 const VulkanDeviceDispatch &dispatch,
					 const VulkanPhysicalDeviceDispatch &physical,
					 VulkanSemaphoreFdType type)
{
	Device device;
	if (auto e = checkInput(kExportType, raw, dispatch, device))
		return std::move(*e);
	if (type == VulkanSemaphoreFdType::SyncFd && raw.kind == VulkanSemaphoreKind::Timeline)
		return Error::format(
			ErrorCode::NotSupported, "type",
			"%s: Vulkan defines SYNC_FD export for binary semaphores only; export a timeline semaphore as OpaqueFd.",
			kExportType);
	Result<bool> exportable = vulkanCanExportSemaphoreFd(physical, raw.kind, type);
	if (!exportable)
		return std::move(exportable).error();
	if (!*exportable)
		return Error::format(
			ErrorCode::NotSupported, "type",
			"%s: the Vulkan driver cannot export a %s semaphore as %s (VkExternalSemaphoreProperties does not list it as exportable).",
			kExportType, kindName(raw.kind), fdTypeName(type));
	auto getFd = device.api.GetSemaphoreFdKHR;
	if (!getFd)
		return Error::format(
			ErrorCode::NotSupported, "device",
			"%s: the VkDevice offers no vkGetSemaphoreFdKHR; create it with VK_KHR_external_semaphore_fd.",
			kExportType);
	VkSemaphoreGetFdInfoKHR info{};
	info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
	info.semaphore = semaphoreOf(raw);
	info.handleType = handleTypeOf(type);
	int fd = -1;
	VkResult result = getFd(device.device, &info, &fd);
	if (result != VK_SUCCESS)
		return vulkanError(result, "vkGetSemaphoreFdKHR");
	return SharedFd(UniqueFd(fd));
}

} // namespace gpuhandle
