// Vulkan fence waiters when Vulkan headers were not found: every call answers NotSupported.
#include <gpuhandle/backends/vulkan_sync.h>

namespace gpuhandle {

namespace {

Error notBuilt(const char *call)
{
	return Error::format(
		ErrorCode::NotSupported, "",
		"%s: gpuhandle was built without Vulkan (its headers, libvulkan-dev, were not found).",
		call);
}

} // namespace

Result<SyncPoint> importVulkanSemaphore(const VulkanSemaphoreSync &, const VulkanDeviceDispatch &,
					KeepAliveRef)
{
	return notBuilt("importVulkanSemaphore");
}

Result<SyncPoint> importVulkanSemaphore(const SyncPoint &, const VulkanDeviceDispatch &,
					KeepAliveRef)
{
	return notBuilt("importVulkanSemaphore");
}

Result<bool> vulkanCanExportSemaphoreFd(const VulkanPhysicalDeviceDispatch &, VulkanSemaphoreKind,
					VulkanSemaphoreFdType)
{
	return notBuilt("vulkanCanExportSemaphoreFd");
}

Result<SharedFd> exportVulkanSemaphoreFd(const VulkanSemaphoreSync &, const VulkanDeviceDispatch &,
					 const VulkanPhysicalDeviceDispatch &,
					 VulkanSemaphoreFdType)
{
	return notBuilt("exportVulkanSemaphoreFd");
}

} // namespace gpuhandle
