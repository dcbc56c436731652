// Vulkan sync and memory calls without Vulkan headers: every call answers NotSupported.
#include <gpuhandle/backends/vulkan_memory.h>
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

Result<VulkanExportedMemory> allocateExportableVulkanBuffer(const VulkanDeviceDispatch &,
							    const VulkanPhysicalDeviceDispatch &,
							    uint64_t, uint32_t, uint32_t,
							    KeepAliveRef)
{
	return notBuilt("allocateExportableVulkanBuffer");
}

Result<VulkanExportedMemory> allocateExportableVulkanImage(const VulkanDeviceDispatch &,
							   const VulkanPhysicalDeviceDispatch &,
							   PlaneFormat, uint32_t, uint32_t,
							   uint32_t, uint32_t, KeepAliveRef)
{
	return notBuilt("allocateExportableVulkanImage");
}

Result<VulkanBoundMemory> importVulkanMemoryFd(const VulkanDeviceDispatch &,
					       const VulkanPhysicalDeviceDispatch &,
					       const VulkanMemoryFd &, KeepAliveRef)
{
	return notBuilt("importVulkanMemoryFd");
}

Result<VulkanBoundMemory> importHostMemoryIntoVulkan(const VulkanDeviceDispatch &,
						     const VulkanPhysicalDeviceDispatch &,
						     const CpuBytes &, uint32_t, KeepAliveRef)
{
	return notBuilt("importHostMemoryIntoVulkan");
}

} // namespace gpuhandle
