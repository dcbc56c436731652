// Vulkan resources: a VkImage, a VkBuffer, and device memory exported as an opaque fd.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/uuid.h>
#include <gpuhandle/validated.h>

#include <cstdint>
#include <optional>

namespace GPUHANDLE_API gpuhandle {

// A borrowed VkImage on `device`. The producer keeps both alive through `anchor`.
// An image of a single-plane VkFormat holds one plane of a frame. An image of a multi-planar
// VkFormat (VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, as FFmpeg 6.1+ and GStreamer 1.24+ make them)
// holds `planes` planes: its subresource i is the aspect VK_IMAGE_ASPECT_PLANE_i_BIT, with the
// size and texel of the pixel format's plane i.
struct VulkanImageDesc {
	uint64_t image = 0;               // VkImage (non-dispatchable: a 64-bit value)
	void *device = nullptr;           // VkDevice
	std::optional<Uuid> deviceUuid{}; // VkPhysicalDeviceIDProperties::deviceUUID
	uint32_t rowPitch = 0; // bytes per row of a linear single-plane image; 0 when opaque
	// The producer's keep-alive for the image and device; may be null
	KeepAliveRef anchor{};
	uint32_t planes = 1; // 1, or 2..3 for a multi-planar VkFormat
};
// The VkImageAspectFlags of plane `plane` of an image holding `planes` planes: the colour aspect
// (VK_IMAGE_ASPECT_COLOR_BIT) of a single-plane image, VK_IMAGE_ASPECT_PLANE_i_BIT (0x10 << i) of
// a multi-planar one. Written with Vulkan's values so that callers need no Vulkan header here.
constexpr uint32_t vulkanPlaneAspect(uint32_t planes, uint32_t plane)
{
	return planes > 1 ? uint32_t{ 0x10 } << plane : uint32_t{ 0x1 };
}

// A checked VulkanImageDesc.
class VulkanImage : public Validated<VulkanImageDesc>
{
public:
	// Checks desc: NullHandle for a zero image or a null device, OutOfRange for planes outside
	// 1..3, InvalidArgument for a rowPitch on a multi-planar image.
	static Result<VulkanImage> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed VkBuffer of `size` bytes on `device`.
struct VulkanBufferDesc {
	uint64_t buffer = 0;    // VkBuffer
	void *device = nullptr; // VkDevice
	uint64_t size = 0;      // bytes
	// VkPhysicalDeviceIDProperties.deviceUUID of the device, when known
	std::optional<Uuid> deviceUuid{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the buffer and device; may be null
};
// A checked VulkanBufferDesc.
class VulkanBuffer : public Validated<VulkanBufferDesc>
{
public:
	// Checks desc: NullHandle for a zero buffer or a null device, ZeroSize for a zero size.
	static Result<VulkanBuffer> create(Desc desc);

private:
	using Validated::Validated;
};

// What an importer needs to rebuild an exported allocation (the exporter's VkMemoryAllocateInfo
// and VkImageCreateInfo). A buffer export leaves the image fields zero (VK_FORMAT_UNDEFINED).
struct VulkanExportDesc {
	uint64_t allocationSize = 0;  // VkMemoryAllocateInfo::allocationSize
	uint32_t memoryTypeIndex = 0; // < VK_MAX_MEMORY_TYPES (32)
	bool dedicated = false;       // allocated with VkMemoryDedicatedAllocateInfo
	uint32_t format = 0;          // VkFormat; 0 (UNDEFINED) for a buffer
	uint32_t width = 0;           // VkExtent3D of the image
	// The image's height; width and height are non-zero for an image
	uint32_t height = 0;
	uint32_t depth = 0;  // 0 is read as 1
	uint32_t tiling = 0; // VkImageTiling: 0 optimal, 1 linear, 1000158000 DRM modifier
	uint32_t usage = 0;  // VkImageUsageFlags or VkBufferUsageFlags; never 0
	std::optional<uint64_t> acquireTimelineValue{}; // timeline value to wait for before reading
};

// Device memory exported with VK_KHR_external_memory_fd as an OPAQUE_FD. Owns (or borrows) the fd.
struct VulkanMemoryFdDesc {
	SharedFd fd{};                    // open (BadFd otherwise); owned or borrowed
	VulkanExportDesc exportDesc{};    // how the exporter allocated it
	std::optional<Uuid> deviceUuid{}; // an opaque fd imports only on the same device ...
	std::optional<Uuid> driverUuid{}; // ... and the same driver
};
// A checked VulkanMemoryFdDesc; copies share its fd.
class VulkanMemoryFd : public Validated<VulkanMemoryFdDesc>
{
public:
	// Checks desc: BadFd for an fd that is not open; ZeroSize, OutOfRange or InvalidArgument
	// for an exportDesc field outside the bounds above (an extent without a format, say);
	// OutOfRange for an allocationSize larger than the fd's own size where the kernel reports
	// one (a memfd's).
	static Result<VulkanMemoryFd> create(Desc desc);
	// An image export (exportDesc.format is set), not a buffer's.
	bool isImage() const { return d_.exportDesc.format != 0; }

private:
	using Validated::Validated;
};

} // namespace gpuhandle
