// Factories of the Vulkan resources: VulkanImage, VulkanBuffer, VulkanMemoryFd.
#include <gpuhandle/vulkan_resources.h>

#include "validation.h"

#include <cinttypes>
#include <sys/stat.h>

namespace gpuhandle {

namespace {
constexpr uint32_t kMaxMemoryTypes = 32;            // VK_MAX_MEMORY_TYPES
constexpr uint32_t kTilingOptimal = 0;              // VK_IMAGE_TILING_OPTIMAL
constexpr uint32_t kTilingLinear = 1;               // VK_IMAGE_TILING_LINEAR
constexpr uint32_t kTilingDrmModifier = 1000158000; // VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT
} // namespace

Result<VulkanImage> VulkanImage::create(Desc desc)
{
	if (auto e = detail::requireHandle("VulkanImage", "image", desc.image))
		return std::move(*e);
	if (auto e = detail::requireHandle("VulkanImage", "device", desc.device))
		return std::move(*e);
	// Vulkan's multi-planar formats have two or three planes (VK_IMAGE_ASPECT_PLANE_0..2_BIT).
	if (desc.planes < 1 || desc.planes > 3)
		return Error::format(ErrorCode::OutOfRange, "planes",
				     "VulkanImage: planes is %u; an image holds 1 plane, or 2 or 3 "
				     "planes of a multi-planar VkFormat.",
				     desc.planes);
	if (desc.planes > 1 && desc.rowPitch != 0)
		return Error(ErrorCode::InvalidArgument, "rowPitch",
			     "VulkanImage: a multi-planar image has a row pitch per plane; give "
			     "them in the frame's plane views, and rowPitch 0.");
	return VulkanImage(std::move(desc));
}

Result<VulkanBuffer> VulkanBuffer::create(Desc desc)
{
	if (auto e = detail::requireHandle("VulkanBuffer", "buffer", desc.buffer))
		return std::move(*e);
	if (auto e = detail::requireHandle("VulkanBuffer", "device", desc.device))
		return std::move(*e);
	if (auto e = detail::requireNonZero("VulkanBuffer", "size", desc.size))
		return std::move(*e);
	return VulkanBuffer(std::move(desc));
}

namespace {

std::optional<Error> checkExportDesc(const VulkanExportDesc &x)
{
	constexpr const char *kType = "VulkanMemoryFd";
	if (auto e = detail::requireNonZero(kType, "exportDesc.allocationSize", x.allocationSize))
		return e;
	if (x.memoryTypeIndex >= kMaxMemoryTypes)
		return Error::format(
			ErrorCode::OutOfRange, "exportDesc.memoryTypeIndex",
			"VulkanMemoryFd: exportDesc.memoryTypeIndex is %u; Vulkan has at most %u memory types.",
			x.memoryTypeIndex, kMaxMemoryTypes);
	if (!x.usage)
		return Error(
			ErrorCode::InvalidArgument, "exportDesc.usage",
			"VulkanMemoryFd: exportDesc.usage is 0; an export needs the usage it was created with.");
	if (x.tiling != kTilingOptimal && x.tiling != kTilingLinear &&
	    x.tiling != kTilingDrmModifier)
		return Error::format(
			ErrorCode::InvalidArgument, "exportDesc.tiling",
			"VulkanMemoryFd: exportDesc.tiling is %u; it must be 0 (optimal), 1 (linear) or %u (DRM modifier).",
			x.tiling, kTilingDrmModifier);
	if (x.format == 0) {
		// A buffer export: an extent without a format is a caller's mix-up.
		if (x.width || x.height || x.depth)
			return Error::format(
				ErrorCode::InvalidArgument, "exportDesc.format",
				"VulkanMemoryFd: exportDesc has an extent (%ux%ux%u) but format 0; an image export needs its VkFormat.",
				x.width, x.height, x.depth);
		return std::nullopt;
	}
	if (auto e = detail::requireNonZero(kType, "exportDesc.width", x.width))
		return e;
	if (auto e = detail::requireNonZero(kType, "exportDesc.height", x.height))
		return e;
	return std::nullopt;
}

} // namespace

Result<VulkanMemoryFd> VulkanMemoryFd::create(Desc desc)
{
	if (auto e = detail::requireOpenFd("VulkanMemoryFd", "fd", desc.fd))
		return std::move(*e);
	if (auto e = checkExportDesc(desc.exportDesc))
		return std::move(*e);
	// Drivers that export a memfd (lavapipe) report its size; an allocation larger than the
	// file cannot be what the fd holds.
	struct stat st = {};
	if (fstat(desc.fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    static_cast<uint64_t>(st.st_size) < desc.exportDesc.allocationSize)
		return Error::format(ErrorCode::OutOfRange, "exportDesc.allocationSize",
				     "VulkanMemoryFd: exportDesc.allocationSize (%" PRIu64
				     ") is larger than fd %d (%" PRIu64 " bytes).",
				     desc.exportDesc.allocationSize, desc.fd.get(),
				     static_cast<uint64_t>(st.st_size));
	return VulkanMemoryFd(std::move(desc));
}

} // namespace gpuhandle
