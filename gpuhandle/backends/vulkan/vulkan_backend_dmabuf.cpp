// The Vulkan backend's DMA-BUFs (VK_EXT_external_memory_dma_buf): import as buffers (linear) or
// as images with the DMA-BUF's modifier (VK_EXT_image_drm_format_modifier), and export of
// memory allocated DMA-BUF-exportable as LINEAR DMA-BUFs.
#include <gpuhandle/format_mappings.h>

#include "vulkan_backend_internal.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <string>
#include <sys/stat.h>

namespace gpuhandle {

using namespace vulkan;
using detail::Identity;

namespace {

constexpr const char *kImportDmaBuf = "vulkan: importFrame(DmaBuf)";

std::string fourccName(uint32_t fourcc)
{
	std::string name;
	for (int i = 0; i < 4; i++) {
		char c = static_cast<char>((fourcc >> (8 * i)) & 0xff);
		name += (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	return name;
}

// The driver's modifiers for `format` (VK_EXT_image_drm_format_modifier).
std::vector<VkDrmFormatModifierPropertiesEXT> modifiersOf(const VulkanDevice &s, VkFormat format)
{
	VkDrmFormatModifierPropertiesListEXT list{};
	list.sType = VK_STRUCTURE_TYPE_DRM_FORMAT_MODIFIER_PROPERTIES_LIST_EXT;
	VkFormatProperties2 properties{ VK_STRUCTURE_TYPE_FORMAT_PROPERTIES_2, &list, {} };
	s.api.GetPhysicalDeviceFormatProperties2(s.physical, format, &properties);
	std::vector<VkDrmFormatModifierPropertiesEXT> out(list.drmFormatModifierCount);
	list.pDrmFormatModifierProperties = out.data();
	s.api.GetPhysicalDeviceFormatProperties2(s.physical, format, &properties);
	out.resize(list.drmFormatModifierCount);
	return out;
}

// Imports a dup of `object`'s fd as the memory of `o` (a buffer or image already created with
// the DMA_BUF handle type) and binds it; the memory type chosen. Vulkan owns the dup only once
// the memory exists.
Result<uint32_t> importObjectMemory(const VulkanDevice &s, detail::BoundObject &o,
				    const DmaBufObject &object, bool dedicated)
{
	VkMemoryFdPropertiesKHR fdProperties{};
	fdProperties.sType = VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR;
	if (VkResult r = s.api.GetMemoryFdPropertiesKHR(s.device, kDmaBufHandle, object.fd.get(),
							&fdProperties);
	    r != VK_SUCCESS)
		return r == VK_ERROR_INVALID_EXTERNAL_HANDLE
			       ? Error::format(ErrorCode::InvalidArgument, "fd",
					       "%s: the driver does not take fd %d as a DMA-BUF.",
					       kImportDmaBuf, object.fd.get())
			       : detail::vulkanError(kImportDmaBuf, "vkGetMemoryFdPropertiesKHR",
						     r);
	const uint32_t bits = o.requirements.memoryTypeBits & fdProperties.memoryTypeBits;
	// Host-visible first, so that map() reads the memory in place.
	std::optional<uint32_t> type = detail::pickMemoryType(s.api, bits, kHostMemory);
	if (!type)
		type = detail::pickMemoryType(s.api, bits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
	if (!type)
		type = detail::pickMemoryType(s.api, bits, 0);
	if (!type)
		return Error::format(
			ErrorCode::NotSupported, "fd",
			"%s: no memory type is allowed both for the object (bits 0x%x) "
			"and for the DMA-BUF fd %d (bits 0x%x).",
			kImportDmaBuf, o.requirements.memoryTypeBits, object.fd.get(),
			fdProperties.memoryTypeBits);
	const uint64_t size = o.requirements.size;
	struct stat st = {};
	if (fstat(object.fd.get(), &st) == 0 && st.st_size > 0 &&
	    size > static_cast<uint64_t>(st.st_size))
		return Error::format(ErrorCode::OutOfRange, "size",
				     "%s: the object needs %" PRIu64 " bytes but the DMA-BUF fd %d "
				     "holds %" PRIu64 ".",
				     kImportDmaBuf, size, object.fd.get(),
				     static_cast<uint64_t>(st.st_size));
	UniqueFd fd = object.fd.dup();
	if (!fd.isValid())
		return Error::format(ErrorCode::Io, "fd", "%s: duplicating fd %d failed: %s.",
				     kImportDmaBuf, object.fd.get(), std::strerror(errno));
	VkImportMemoryFdInfoKHR importInfo{ VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, nullptr,
					    kDmaBufHandle, fd.get() };
	if (auto e = detail::allocateAndBind(kImportDmaBuf, s.api, o, size, *type, dedicated,
					     &importInfo)) {
		if (o.memory)
			(void)fd.release(); // the memory took it; freeing the memory closes it
		return std::move(*e);
	}
	(void)fd.release(); // the VkDeviceMemory owns it now
	return *type;
}

} // namespace

namespace vulkan {

std::vector<uint64_t> dmaBufModifiers(const VulkanDevice &s)
{
	std::vector<uint64_t> out{ kDrmModifierLinear };
	if (!s.ext.drmModifier || !s.api.GetPhysicalDeviceFormatProperties2)
		return out;
	for (const PlaneMapping &m : planeMappings(PlaneApi::VkFormat))
		for (const VkDrmFormatModifierPropertiesEXT &p :
		     modifiersOf(s, static_cast<VkFormat>(m.value)))
			if (p.drmFormatModifierPlaneCount == 1 &&
			    (p.drmFormatModifierTilingFeatures & kTransferFeatures) ==
				    kTransferFeatures &&
			    std::find(out.begin(), out.end(), p.drmFormatModifier) == out.end())
				out.push_back(p.drmFormatModifier);
	return out;
}

} // namespace vulkan

// Linear: every format, as buffers. Tiled: one image per plane with the DMA-BUF's modifier, so
// each plane's VkFormat must offer it with transfer support, with one memory plane unless the
// format has one plane (importDmaBufImage's rule).
std::vector<uint64_t> VulkanBackend::dmaBufImportModifiers(PixelFormat format) const
{
	const VulkanDevice &s = *state_;
	Result<const PixelFormatInfo *> info = pixelFormatInfo(format);
	if (!s.ext.dmaBuf || !s.api.GetMemoryFdPropertiesKHR || !info)
		return {};
	std::vector<uint64_t> out{ kDrmModifierLinear };
	if (!s.ext.drmModifier || !s.api.GetPhysicalDeviceFormatProperties2)
		return out;
	std::vector<uint64_t> tiled;
	for (uint32_t p = 0; p < (*info)->numPlanes; p++) {
		Result<PlaneMapping> mapping =
			toPlaneApiFormat(PlaneApi::VkFormat, (*info)->planes[p].format);
		if (!mapping)
			return out;
		std::vector<uint64_t> plane;
		for (const VkDrmFormatModifierPropertiesEXT &m :
		     modifiersOf(s, static_cast<VkFormat>(mapping->value)))
			if ((m.drmFormatModifierTilingFeatures & kTransferFeatures) ==
				    kTransferFeatures &&
			    (m.drmFormatModifierPlaneCount == 1 || (*info)->numPlanes == 1) &&
			    m.drmFormatModifier != kDrmModifierLinear &&
			    m.drmFormatModifier != kDrmModifierInvalid)
				plane.push_back(m.drmFormatModifier);
		if (p == 0)
			tiled = std::move(plane);
		else
			tiled.erase(std::remove_if(tiled.begin(), tiled.end(),
						   [&](uint64_t m) {
							   return std::find(plane.begin(),
									    plane.end(),
									    m) == plane.end();
						   }),
				    tiled.end());
	}
	for (uint64_t m : tiled)
		if (std::find(out.begin(), out.end(), m) == out.end())
			out.push_back(m);
	return out;
}

// Linear (or implicit) DMA-BUFs import as one buffer per object, the planes where the frame
// says; other modifiers as one image per plane (VK_EXT_image_drm_format_modifier).
Result<Frame> VulkanBackend::importDmaBuf(const Frame &frame)
{
	const VulkanDevice &s = *state_;
	if (!s.ext.dmaBuf || !s.api.GetMemoryFdPropertiesKHR)
		return routeNotSupported(
			kName, ImportRoute::DmaBuf,
			"the device does not offer VK_EXT_external_memory_dma_buf.");
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info)
		return std::move(info).error();
	const Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, frame.format());
	bool images = false;
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		const DmaBuf *dmabuf = frame.resource(r).get<DmaBuf>();
		if (!dmabuf) {
			std::string why = "resource " + std::to_string(r) + " is a " +
					  resourceKindName(frame.resource(r).kind()) +
					  ", not a DmaBuf.";
			return routeNotSupported(kName, ImportRoute::DmaBuf, why.c_str());
		}
		const DmaBufDesc &d = dmabuf->desc();
		if (fourcc && *fourcc != d.fourcc)
			return Error::format(
				ErrorCode::FormatMismatch, "fourcc",
				"vulkan: the DMA-BUF's fourcc is %s (0x%08x) but a %s frame's "
				"is %s (0x%08x).",
				fourccName(d.fourcc).c_str(), d.fourcc,
				pixelFormatName(frame.format()), fourccName(*fourcc).c_str(),
				*fourcc);
		if (d.modifier == kDrmModifierLinear || d.modifier == kDrmModifierInvalid)
			continue;
		if (!s.ext.drmModifier || !s.api.GetPhysicalDeviceFormatProperties2)
			return Error::format(
				ErrorCode::NotSupported, "modifier",
				"vulkan: the DMA-BUF's modifier 0x%016" PRIx64 " is not "
				"linear; importing it as an image needs "
				"VK_EXT_image_drm_format_modifier, which %s does not offer.",
				d.modifier, info_.name.c_str());
		images = true;
	}
	FrameDesc desc = frame.desc();
	if (images) {
		if (frame.numResources() != 1)
			return Error::format(
				ErrorCode::NotSupported, "resources",
				"vulkan: a tiled DMA-BUF imports from one DmaBuf resource, "
				"not %u.",
				frame.numResources());
		const DmaBufDesc &d = frame.resource(0).get<DmaBuf>()->desc();
		desc.numResources = desc.numPlanes = (*info)->numPlanes;
		std::vector<VulkanAllocation *> acquired;
		std::vector<KeepAliveRef> keep;
		for (uint32_t p = 0; p < (*info)->numPlanes; p++) {
			auto allocation = importDmaBufImage(frame, p, d);
			if (!allocation)
				return std::move(allocation).error();
			acquired.push_back(allocation->get());
			keep.push_back(*allocation);
			auto resource = anchoredResource(user_, std::move(*allocation));
			if (!resource)
				return std::move(resource).error();
			desc.resources[p] = std::move(*resource);
			desc.planes[p] = PlaneView{ p, 0, 0, 0 };
		}
		if (Status taken = acquireImported(acquired, std::move(keep)); !taken)
			return std::move(taken).error();
		return Frame::create(std::move(desc));
	}
	// Every object of every resource in order: plane (r, object o) -> resource base[r] + o.
	std::array<uint32_t, 4> base{};
	uint32_t count = 0;
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		const DmaBufDesc &d = frame.resource(r).get<DmaBuf>()->desc();
		base[r] = count;
		if (count + d.numObjects > 4)
			return Error::format(
				ErrorCode::NotSupported, "resources",
				"vulkan: the frame's DMA-BUFs hold more than 4 objects, one "
				"buffer each.");
		for (uint32_t o = 0; o < d.numObjects; o++) {
			auto allocation = importDmaBufObject(d.objects[o], frame.resource(r));
			if (!allocation)
				return std::move(allocation).error();
			auto resource = anchoredResource(user_, std::move(*allocation));
			if (!resource)
				return std::move(resource).error();
			desc.resources[count++] = std::move(*resource);
		}
	}
	desc.numResources = count;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		desc.planes[p] = PlaneView{ base[view.resource] + view.subresource, 0, view.offset,
					    view.stride };
	}
	return Frame::create(std::move(desc));
}

Result<std::shared_ptr<VulkanAllocation>>
VulkanBackend::importDmaBufObject(const DmaBufObject &object, const Resource &source)
{
	const VulkanDevice &s = *state_;
	VkPhysicalDeviceExternalBufferInfo query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO, nullptr, 0, kBufferUsage,
		kDmaBufHandle
	};
	VkExternalBufferProperties answer{};
	answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
	s.api.GetPhysicalDeviceExternalBufferProperties(s.physical, &query, &answer);
	const VkExternalMemoryFeatureFlags features =
		answer.externalMemoryProperties.externalMemoryFeatures;
	if (!(features & VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT))
		return Error::format(ErrorCode::NotSupported, "route",
				     "%s: %s cannot import a DMA-BUF as a buffer with usage 0x%x.",
				     kImportDmaBuf, info_.name.c_str(), kBufferUsage);
	auto o = std::make_shared<detail::BoundObject>(s.api, state_);
	if (auto e = detail::createBuffer(kImportDmaBuf, s.api, *o, object.size, kBufferUsage,
					  kDmaBufHandle))
		return std::move(*e);
	Result<uint32_t> type = importObjectMemory(
		s, *o, object, (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0);
	if (!type)
		return std::move(type).error();
	Identity identity{ s.deviceUuid, s.driverUuid };
	auto bound =
		detail::wrap(kImportDmaBuf, s.api, o, o->requirements.size, *type, identity, false);
	if (!bound)
		return std::move(bound).error();
	auto allocation = adoptBound(state_, std::move(*bound));
	if (allocation)
		(*allocation)->source = source;
	return allocation;
}

// Plane `plane` of the frame as an image with the DMA-BUF's modifier: one memory plane taken
// from the frame's plane view, or (a one-plane format whose modifier adds planes, such as a
// compression plane) every plane of the DMA-BUF, all in one object.
Result<std::shared_ptr<VulkanAllocation>>
VulkanBackend::importDmaBufImage(const Frame &frame, uint32_t plane, const DmaBufDesc &d)
{
	const VulkanDevice &s = *state_;
	const PixelFormatInfo *info = *pixelFormatInfo(frame.format());
	const PlaneInfo &planeInfo = info->planes[plane];
	Result<PlaneMapping> mapping = toPlaneApiFormat(PlaneApi::VkFormat, planeInfo.format);
	if (!mapping)
		return std::move(mapping).error();
	const VkFormat format = static_cast<VkFormat>(mapping->value);
	std::optional<VkDrmFormatModifierPropertiesEXT> modifier;
	for (const VkDrmFormatModifierPropertiesEXT &m : modifiersOf(s, format))
		if (m.drmFormatModifier == d.modifier)
			modifier = m;
	if (!modifier ||
	    (modifier->drmFormatModifierTilingFeatures & kTransferFeatures) != kTransferFeatures)
		return Error::format(ErrorCode::NotSupported, "modifier",
				     "vulkan: %s offers no modifier 0x%016" PRIx64 " with transfer "
				     "support for %s images.",
				     info_.name.c_str(), d.modifier, mapping->name);
	const uint32_t memoryPlanes = modifier->drmFormatModifierPlaneCount;
	std::array<VkSubresourceLayout, 4> layouts{};
	uint32_t object = frame.plane(plane).subresource;
	if (memoryPlanes == 1) {
		layouts[0] = { frame.plane(plane).offset, 0, frame.plane(plane).stride, 0, 0 };
	} else if (info->numPlanes == 1 && memoryPlanes == d.numPlanes && memoryPlanes <= 4) {
		object = d.planes[0].objectIndex;
		for (uint32_t i = 0; i < memoryPlanes; i++) {
			if (d.planes[i].objectIndex != object)
				return Error::format(
					ErrorCode::NotSupported, "planes",
					"vulkan: the planes of modifier 0x%016" PRIx64
					" must share one object (disjoint images are not "
					"imported).",
					d.modifier);
			layouts[i] = { d.planes[i].offset, 0, d.planes[i].pitch, 0, 0 };
		}
	} else {
		return Error::format(
			ErrorCode::NotSupported, "modifier",
			"vulkan: modifier 0x%016" PRIx64 " has %u memory planes for %s; "
			"the backend imports such a modifier only for one-plane formats "
			"with that many DMA-BUF planes (a %s frame has %u planes, the "
			"DMA-BUF %u).",
			d.modifier, memoryPlanes, mapping->name, pixelFormatName(frame.format()),
			info->numPlanes, d.numPlanes);
	}
	const uint32_t width = planeInfo.rowTexels(frame.width());
	const uint32_t height = planeInfo.rows(frame.height());

	// Transfer and sampling where the driver allows it, else transfer only (all map() and
	// copyFrame() need).
	VkImageDrmFormatModifierExplicitCreateInfoEXT explicitInfo{
		VK_STRUCTURE_TYPE_IMAGE_DRM_FORMAT_MODIFIER_EXPLICIT_CREATE_INFO_EXT, nullptr,
		d.modifier, memoryPlanes, layouts.data()
	};
	VkExternalMemoryImageCreateInfo external{
		VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO, &explicitInfo, kDmaBufHandle
	};
	VkImageCreateInfo create{};
	create.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
	create.pNext = &external;
	create.imageType = VK_IMAGE_TYPE_2D;
	create.format = format;
	create.extent = { width, height, 1 };
	create.mipLevels = 1;
	create.arrayLayers = 1;
	create.samples = VK_SAMPLE_COUNT_1_BIT;
	create.tiling = VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT;
	create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	create.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED; // external memory images must start so
	VkExternalMemoryFeatureFlags features = 0;
	for (VkImageUsageFlags usage :
	     { kImageUsage, VkImageUsageFlags{ VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
					       VK_IMAGE_USAGE_TRANSFER_DST_BIT } }) {
		VkPhysicalDeviceImageDrmFormatModifierInfoEXT modifierQuery{
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_DRM_FORMAT_MODIFIER_INFO_EXT,
			nullptr,
			d.modifier,
			VK_SHARING_MODE_EXCLUSIVE,
			0,
			nullptr
		};
		VkPhysicalDeviceExternalImageFormatInfo externalQuery{
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO,
			&modifierQuery, kDmaBufHandle
		};
		VkPhysicalDeviceImageFormatInfo2 query{
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
			&externalQuery,
			format,
			VK_IMAGE_TYPE_2D,
			VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT,
			usage,
			0
		};
		VkExternalImageFormatProperties externalAnswer{};
		externalAnswer.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
		VkImageFormatProperties2 answer{};
		answer.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
		answer.pNext = &externalAnswer;
		if (s.api.GetPhysicalDeviceImageFormatProperties2(s.physical, &query, &answer) ==
			    VK_SUCCESS &&
		    (externalAnswer.externalMemoryProperties.externalMemoryFeatures &
		     VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT)) {
			create.usage = usage;
			features = externalAnswer.externalMemoryProperties.externalMemoryFeatures;
			break;
		}
	}
	if (!create.usage)
		return Error::format(ErrorCode::NotSupported, "modifier",
				     "vulkan: %s cannot import a %ux%u %s image with modifier "
				     "0x%016" PRIx64 " from a DMA-BUF.",
				     info_.name.c_str(), width, height, mapping->name, d.modifier);

	auto o = std::make_shared<detail::BoundObject>(s.api, state_);
	if (VkResult r = s.api.CreateImage(s.device, &create, nullptr, &o->image);
	    r != VK_SUCCESS) {
		o->image = VK_NULL_HANDLE;
		return detail::vulkanError(kImportDmaBuf, "vkCreateImage", r);
	}
	s.api.GetImageMemoryRequirements(s.device, o->image, &o->requirements);
	bool dedicated = (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
	if (s.api.GetImageMemoryRequirements2) {
		VkMemoryDedicatedRequirements wants{};
		wants.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS;
		VkMemoryRequirements2 requirements{ VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2,
						    &wants,
						    {} };
		VkImageMemoryRequirementsInfo2 which{
			VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2, nullptr, o->image
		};
		s.api.GetImageMemoryRequirements2(s.device, &which, &requirements);
		dedicated |= wants.prefersDedicatedAllocation || wants.requiresDedicatedAllocation;
	}
	if (object >= d.numObjects)
		return Error::format(ErrorCode::InvalidArgument, "planes",
				     "vulkan: plane %u names object %u of a DMA-BUF of %u.", plane,
				     object, d.numObjects);
	Result<uint32_t> type = importObjectMemory(s, *o, d.objects[object], dedicated);
	if (!type)
		return std::move(type).error();
	Identity identity{ s.deviceUuid, s.driverUuid };
	auto bound =
		detail::wrap(kImportDmaBuf, s.api, o, o->requirements.size, *type, identity, false);
	if (!bound)
		return std::move(bound).error();
	auto allocation = adoptBound(state_, std::move(*bound));
	if (!allocation)
		return allocation;
	VulkanAllocation &a = **allocation;
	a.source = frame.resource(0);
	a.optimal = true; // the tiling is the modifier's: the CPU reads it through a staging copy
	a.planeFormat = planeInfo.format;
	a.width = width;
	a.height = height;
	// The producer left it in GENERAL (the convention for shared images); importDmaBuf acquires
	// it from outside (acquireImported), which keeps its contents.
	a.layout = VK_IMAGE_LAYOUT_GENERAL;
	a.externalFamily = s.ext.queueFamilyForeign ? VK_QUEUE_FAMILY_FOREIGN_EXT
						    : VK_QUEUE_FAMILY_EXTERNAL;
	return allocation;
}

// Buffers and linear images allocated DMA-BUF-exportable: one object per allocation, LINEAR.
Result<Frame> VulkanBackend::exportDmaBuf(const Frame &frame,
					  const std::array<VulkanAllocation *, 4> &allocations)
{
	const VulkanDevice &s = *state_;
	if (!s.ext.dmaBuf)
		return Error::format(ErrorCode::NotSupported, "kind",
				     "vulkan: DMA-BUF export needs VK_EXT_external_memory_dma_buf, "
				     "which %s does not offer.",
				     info_.name.c_str());
	if (std::find(caps_.exports.begin(), caps_.exports.end(), ResourceKind::DmaBuf) ==
	    caps_.exports.end())
		return Error::format(
			ErrorCode::NotSupported, "kind",
			"vulkan: %s imports DMA-BUFs but exports none beside an opaque "
			"fd (VK_EXT_external_memory_dma_buf without the exportable "
			"bit for them).",
			info_.name.c_str());
	Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, frame.format());
	if (!fourcc)
		return Error::format(ErrorCode::NotSupported, "format",
				     "vulkan: %s has no DRM fourcc, so it cannot be described as a "
				     "DMA-BUF.",
				     pixelFormatName(frame.format()));
	for (uint32_t i = 0; i < frame.numResources(); i++)
		if (!(allocations[i]->handleTypes & kDmaBufHandle))
			return Error::format(
				ErrorCode::NotSupported, "frame",
				"vulkan: resource %u is not exportable as a DMA-BUF: %s.", i,
				allocations[i]->image && allocations[i]->optimal
					? "an optimal-tiled image has no DRM format modifier "
					  "(allocate a Buffer or a LinearImage)"
					: "it was allocated with exportable false, imported, "
					  "or the driver cannot export it as a DMA-BUF and "
					  "an opaque fd at once");
	// A DMA-BUF's consumer need not be a Vulkan device: the foreign family where the device
	// has it.
	if (Status shared = shareImages(frame, allocations,
					s.ext.queueFamilyForeign ? VK_QUEUE_FAMILY_FOREIGN_EXT
								 : VK_QUEUE_FAMILY_EXTERNAL);
	    !shared)
		return std::move(shared).error();
	DmaBufDesc desc;
	desc.fourcc = *fourcc;
	desc.modifier = kDrmModifierLinear;
	desc.width = frame.width();
	desc.height = frame.height();
	desc.numObjects = frame.numResources();
	for (uint32_t i = 0; i < frame.numResources(); i++) {
		const VulkanAllocation &a = *allocations[i];
		VkMemoryGetFdInfoKHR fdInfo{ VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, nullptr,
					     a.memory, kDmaBufHandle };
		int raw = -1;
		if (VkResult r = s.api.GetMemoryFdKHR(s.device, &fdInfo, &raw); r != VK_SUCCESS)
			return detail::vulkanError("vulkan: exportFrame(DmaBuf)",
						   "vkGetMemoryFdKHR", r);
		desc.objects[i] = DmaBufObject{ SharedFd(UniqueFd(raw)), a.allocationSize };
	}
	desc.numPlanes = frame.numPlanes();
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		const VulkanAllocation &a = *allocations[view.resource];
		desc.planes[p] = DmaBufPlane{ view.resource, a.imageOffset + view.offset,
					      a.image ? a.rowPitch : view.stride };
	}
	Result<DmaBuf> dmabuf = DmaBuf::create(std::move(desc));
	if (!dmabuf)
		return std::move(dmabuf).error();
	Result<Frame> exported = Frame::wrap(frame.format(), frame.width(), frame.height(),
					     frame.colorimetry(), Resource(std::move(*dmabuf)));
	if (!exported)
		return exported;
	exported->setAcquire(frame.acquire());
	exported->setRelease(frame.release());
	return exported;
}

} // namespace gpuhandle
