// Exportable Vulkan buffers and images (OPAQUE_FD) and their import into another VkDevice.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/backends/vulkan_sync.h>
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/resource.h>
#include <gpuhandle/vulkan_resources.h>

#include <cstdint>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// A VkBuffer or VkImage bound to its own VkDeviceMemory. `native` (a VulkanBuffer or VulkanImage)
// anchors both: they are destroyed exactly once, when the last copy of `native` (or of anything
// holding its anchor) goes. `memory` is borrowed: valid while a copy of `native` lives (for
// vkMapMemory on a host-visible type).
struct VulkanBoundMemory {
	Resource native;             // VulkanBuffer or VulkanImage; its anchor owns both
	uint64_t memory = 0;         // VkDeviceMemory
	uint64_t allocationSize = 0; // bytes
	// The memory type it was allocated from (an index into the physical device's memory types).
	uint32_t memoryTypeIndex = 0;
};

// What an allocation gives: the object on the allocating device and its export. The fd is a
// separate handle to the same memory: it stays valid after `bound` goes, until it is closed.
struct VulkanExportedMemory {
	VulkanBoundMemory bound; // the objects on the allocating device
	VulkanMemoryFd exported; // the memory's OPAQUE_FD (owned) and what an importer needs
};

// Allocates a VkBuffer of `size` bytes with `usage` (VkBufferUsageFlags) on memory exportable as
// OPAQUE_FD, of the first type allowed for the buffer that has all of `memoryProperties`
// (VkMemoryPropertyFlags; 0 takes the first allowed type), binds it, and exports it with
// vkGetMemoryFdKHR. The device needs VK_KHR_external_memory_fd; `physical` is its physical device
// (for the exportability query and the UUIDs). `owner` is kept alive as long as the objects.
GPUHANDLE_INTEROP_API Result<VulkanExportedMemory> allocateExportableVulkanBuffer(
	const VulkanDeviceDispatch &dispatch, const VulkanPhysicalDeviceDispatch &physical,
	uint64_t size, uint32_t usage, uint32_t memoryProperties = 0, KeepAliveRef owner = {});

// The same for a linear 2D VkImage of one plane format (through the PlaneApi::VkFormat table),
// on a dedicated allocation. Vulkan creates an image on external memory in
// VK_IMAGE_LAYOUT_UNDEFINED, and the host may write a linear image only in GENERAL (or
// PREINITIALIZED): when `dispatch.queue` is set, the image is moved to GENERAL on that queue
// (under lockQueue/unlockQueue when given) and the call waits for it (Timeout after 10 s), so it
// comes back ready for host writes; without a queue it comes back UNDEFINED, and the caller moves
// it before the first host access. The VulkanImage carries the row pitch of its subresource.
GPUHANDLE_INTEROP_API Result<VulkanExportedMemory>
allocateExportableVulkanImage(const VulkanDeviceDispatch &dispatch,
			      const VulkanPhysicalDeviceDispatch &physical, PlaneFormat format,
			      uint32_t width, uint32_t height, uint32_t usage,
			      uint32_t memoryProperties = 0, KeepAliveRef owner = {});

// Imports the export into `dispatch`'s device (VK_KHR_external_memory_fd needed): a dup of the fd
// becomes a VkDeviceMemory (Vulkan owns the fd it imports), bound to a new VkBuffer or VkImage
// built from exported.exportDesc. Refuses with DeviceMismatch when the export's device or driver
// UUID is not the importing device's (an opaque fd means nothing elsewhere). The import does not
// keep `exported` alive: the memory lives on in the imported VkDeviceMemory.
GPUHANDLE_INTEROP_API Result<VulkanBoundMemory>
importVulkanMemoryFd(const VulkanDeviceDispatch &dispatch,
		     const VulkanPhysicalDeviceDispatch &physical, const VulkanMemoryFd &exported,
		     KeepAliveRef owner = {});

// Wraps host bytes as a VkBuffer with `usage` (VkBufferUsageFlags) through
// VK_EXT_external_memory_host, without a copy: the device reads and writes the pages in place.
// bytes.data and bytes.size must be multiples of the physical device's
// minImportedHostPointerAlignment (InvalidArgument naming "data" or "size" otherwise). The
// buffer's anchor keeps bytes' anchor (and `owner`) alive until the buffer and memory are gone.
GPUHANDLE_INTEROP_API Result<VulkanBoundMemory>
importHostMemoryIntoVulkan(const VulkanDeviceDispatch &dispatch,
			   const VulkanPhysicalDeviceDispatch &physical, const CpuBytes &bytes,
			   uint32_t usage, KeepAliveRef owner = {});

} // namespace gpuhandle
