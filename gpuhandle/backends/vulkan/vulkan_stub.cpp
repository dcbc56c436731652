// Vulkan in a build without its headers: openVulkanBackend and every call answer notBuilt().
#include <gpuhandle/backends/vulkan_memory.h>
#include <gpuhandle/backends/vulkan_sync.h>

#include "common/backend_internal.h"

namespace gpuhandle {

namespace {
constexpr MissingApi kVulkan{ "Vulkan", "vulkan/vulkan.h, libvulkan-dev" };
} // namespace

Result<BackendRef> openVulkanBackend(const BackendOpenOptions &)
{
	return notBuilt(kVulkan, "openBackend", "kind");
}

Result<std::shared_ptr<const VulkanDeviceFunctions>>
loadVulkanDeviceFunctions(const VulkanDeviceDispatch &, const VulkanPhysicalDeviceDispatch &)
{
	return notBuilt(kVulkan, "loadVulkanDeviceFunctions", "");
}

Result<SyncPoint> importVulkanSemaphore(const VulkanSemaphoreSync &, const VulkanDeviceDispatch &,
					KeepAliveRef)
{
	return notBuilt(kVulkan, "importVulkanSemaphore", "");
}

Result<SyncPoint> importVulkanSemaphore(const SyncPoint &, const VulkanDeviceDispatch &,
					KeepAliveRef)
{
	return notBuilt(kVulkan, "importVulkanSemaphore", "");
}

Result<bool> vulkanCanExportSemaphoreFd(const VulkanPhysicalDeviceDispatch &, VulkanSemaphoreKind,
					VulkanSemaphoreFdType)
{
	return notBuilt(kVulkan, "vulkanCanExportSemaphoreFd", "");
}

Result<SharedFd> exportVulkanSemaphoreFd(const VulkanSemaphoreSync &, const VulkanDeviceDispatch &,
					 const VulkanPhysicalDeviceDispatch &,
					 VulkanSemaphoreFdType)
{
	return notBuilt(kVulkan, "exportVulkanSemaphoreFd", "");
}

Result<VulkanExportedMemory> allocateExportableVulkanBuffer(const VulkanDeviceDispatch &,
							    const VulkanPhysicalDeviceDispatch &,
							    uint64_t, uint32_t, uint32_t,
							    KeepAliveRef)
{
	return notBuilt(kVulkan, "allocateExportableVulkanBuffer", "");
}

Result<VulkanExportedMemory> allocateExportableVulkanImage(const VulkanDeviceDispatch &,
							   const VulkanPhysicalDeviceDispatch &,
							   PlaneFormat, uint32_t, uint32_t,
							   uint32_t, uint32_t, KeepAliveRef)
{
	return notBuilt(kVulkan, "allocateExportableVulkanImage", "");
}

Result<VulkanBoundMemory> importVulkanMemoryFd(const VulkanDeviceDispatch &,
					       const VulkanPhysicalDeviceDispatch &,
					       const VulkanMemoryFd &, KeepAliveRef)
{
	return notBuilt(kVulkan, "importVulkanMemoryFd", "");
}

Result<VulkanBoundMemory> importHostMemoryIntoVulkan(const VulkanDeviceDispatch &,
						     const VulkanPhysicalDeviceDispatch &,
						     const CpuBytes &, uint32_t, KeepAliveRef)
{
	return notBuilt(kVulkan, "importHostMemoryIntoVulkan", "");
}

} // namespace gpuhandle
