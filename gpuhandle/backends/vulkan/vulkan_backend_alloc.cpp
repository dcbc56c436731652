// The Vulkan backend's allocations: which formats it makes, buffers and images on their own
// memory (exportable when asked), and the VulkanAllocation anchor that finds them back.
#include <gpuhandle/format_mappings.h>

#include "vulkan_backend_internal.h"

namespace gpuhandle {

using namespace vulkan;
using detail::Identity;

namespace {

VkImageCreateInfo imageInfo(const VulkanExportDesc &x, const void *next)
{
	VkImageCreateInfo info{};
	info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
	info.pNext = next;
	info.imageType = VK_IMAGE_TYPE_2D;
	info.format = static_cast<VkFormat>(x.format);
	info.extent = { x.width, x.height, 1 };
	info.mipLevels = 1;
	info.arrayLayers = 1;
	info.samples = VK_SAMPLE_COUNT_1_BIT;
	info.tiling = static_cast<VkImageTiling>(x.tiling);
	info.usage = x.usage;
	info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	// UNDEFINED whatever the tiling: an image on external memory must start there
	// (VUID-VkImageCreateInfo-pNext-01443), and allocateImage() moves every linear image to
	// GENERAL before the host can write it.
	info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
	return info;
}

// What the driver says about exporting `x` (a buffer when x.format is 0) as `type`.
VkExternalMemoryProperties exportProperties(const VulkanDevice &s, const VulkanExportDesc &x,
					    VkExternalMemoryHandleTypeFlagBits type)
{
	const detail::Api &api = s.api;
	if (x.format == 0) {
		VkPhysicalDeviceExternalBufferInfo query{
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO, nullptr, 0, x.usage,
			type
		};
		VkExternalBufferProperties answer{};
		answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
		api.GetPhysicalDeviceExternalBufferProperties(api.physical, &query, &answer);
		return answer.externalMemoryProperties;
	}
	VkPhysicalDeviceExternalImageFormatInfo external{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO, nullptr, type
	};
	VkPhysicalDeviceImageFormatInfo2 query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
		&external,
		static_cast<VkFormat>(x.format),
		VK_IMAGE_TYPE_2D,
		static_cast<VkImageTiling>(x.tiling),
		x.usage,
		0
	};
	VkExternalImageFormatProperties externalAnswer{};
	externalAnswer.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
	VkImageFormatProperties2 answer{};
	answer.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
	answer.pNext = &externalAnswer;
	if (api.GetPhysicalDeviceImageFormatProperties2(api.physical, &query, &answer) !=
	    VK_SUCCESS)
		return {};
	return externalAnswer.externalMemoryProperties;
}

// OPAQUE_FD, plus DMA_BUF for a buffer or linear image where the device has the extension and
// both export from one allocation (optimal tiling has no DRM modifier to describe it with).
// Sets x.dedicated when either type needs a dedicated allocation.
Result<VkExternalMemoryHandleTypeFlags> exportHandleTypes(const VulkanDevice &s,
							  VulkanExportDesc &x)
{
	const VkExternalMemoryProperties opaque = exportProperties(s, x, detail::kOpaqueFd);
	if (!(opaque.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "format",
			"vulkan: allocate: the driver cannot export a %s (VkFormat %u, "
			"usage 0x%x) as an opaque fd.",
			x.format ? "image" : "buffer", x.format, x.usage);
	VkExternalMemoryHandleTypeFlags types = detail::kOpaqueFd;
	x.dedicated |= (opaque.externalMemoryFeatures &
			VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
	if (!s.ext.dmaBuf || (x.format != 0 && x.tiling != VK_IMAGE_TILING_LINEAR))
		return types;
	const VkExternalMemoryProperties dmaBuf = exportProperties(s, x, kDmaBufHandle);
	if ((dmaBuf.externalMemoryFeatures & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT) &&
	    (opaque.compatibleHandleTypes & kDmaBufHandle) &&
	    (dmaBuf.compatibleHandleTypes & detail::kOpaqueFd)) {
		types |= kDmaBufHandle;
		x.dedicated |= (dmaBuf.externalMemoryFeatures &
				VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
	}
	return types;
}

} // namespace

namespace vulkan {

bool exportsDmaBufBuffers(const VulkanDevice &state)
{
	VulkanExportDesc buffer;
	buffer.usage = kBufferUsage;
	Result<VkExternalMemoryHandleTypeFlags> types = exportHandleTypes(state, buffer);
	return types && (*types & kDmaBufHandle);
}

VulkanAllocation::~VulkanAllocation()
{
	if (mapped_)
		state->api.UnmapMemory(state->device, memory);
}

Result<uint8_t *> VulkanAllocation::mapped(const char *fn)
{
	std::lock_guard lock(mapMutex_);
	if (mapped_)
		return mapped_;
	if (foreign)
		return Error::format(
			ErrorCode::NotSupported, "frame",
			"vulkan: %s: the resource is the host's, not memory this backend "
			"allocated; it is read through a copy.",
			fn);
	if (!state->hasMemoryFlags(memoryTypeIndex, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "frame",
			"vulkan: %s: memory type %u is not host-visible, so it cannot be mapped.",
			fn, memoryTypeIndex);
	void *data = nullptr;
	if (VkResult r = state->api.MapMemory(state->device, memory, 0, VK_WHOLE_SIZE, 0, &data);
	    r != VK_SUCCESS)
		return detail::vulkanError(fn, "vkMapMemory", r);
	mapped_ = static_cast<uint8_t *>(data);
	return mapped_;
}

std::shared_ptr<VulkanAllocation> allocationOf(const Resource &resource)
{
	const KeepAliveRef *anchor = nullptr;
	if (const VulkanBuffer *buffer = resource.get<VulkanBuffer>())
		anchor = &buffer->desc().anchor;
	else if (const VulkanImage *image = resource.get<VulkanImage>())
		anchor = &image->desc().anchor;
	const auto *ours = anchor ? dynamic_cast<const ResourceAnchor *>(anchor->get()) : nullptr;
	return ours ? ours->allocation : nullptr;
}

Result<Resource> anchoredResource(const std::shared_ptr<DeviceUser> &user,
				  std::shared_ptr<VulkanAllocation> allocation)
{
	if (const VulkanBuffer *buffer = allocation->bound.get<VulkanBuffer>()) {
		VulkanBufferDesc desc = buffer->desc();
		desc.anchor = std::make_shared<ResourceAnchor>(user, std::move(allocation));
		auto made = VulkanBuffer::create(std::move(desc));
		if (!made)
			return std::move(made).error();
		return Resource(std::move(*made));
	}
	const VulkanImage *image = allocation->bound.get<VulkanImage>();
	if (!image)
		return Error(ErrorCode::Fatal, "bound",
			     "vulkan: an allocation holds neither a buffer nor an image.");
	VulkanImageDesc desc = image->desc();
	desc.anchor = std::make_shared<ResourceAnchor>(user, std::move(allocation));
	auto made = VulkanImage::create(std::move(desc));
	if (!made)
		return std::move(made).error();
	return Resource(std::move(*made));
}

Result<std::shared_ptr<VulkanAllocation>> adoptBound(const std::shared_ptr<VulkanDevice> &state,
						     VulkanBoundMemory bound)
{
	auto a = std::make_shared<VulkanAllocation>(state);
	a->memory = reinterpret_cast<VkDeviceMemory>(bound.memory);
	a->allocationSize = bound.allocationSize;
	a->memoryTypeIndex = bound.memoryTypeIndex;
	if (const VulkanBuffer *buffer = bound.native.get<VulkanBuffer>()) {
		a->buffer = reinterpret_cast<VkBuffer>(buffer->desc().buffer);
		a->bufferSize = buffer->desc().size;
	} else if (const VulkanImage *image = bound.native.get<VulkanImage>()) {
		a->image = reinterpret_cast<VkImage>(image->desc().image);
		a->rowPitch = image->desc().rowPitch;
		if (a->rowPitch) {
			VkImageSubresource subresource{ VK_IMAGE_ASPECT_COLOR_BIT, 0, 0 };
			VkSubresourceLayout layout{};
			state->api.GetImageSubresourceLayout(state->device, a->image, &subresource,
							     &layout);
			a->imageOffset = layout.offset;
		}
	} else {
		return Error(ErrorCode::Fatal, "bound",
			     "vulkan: the memory call returned neither a buffer nor an image.");
	}
	a->bound = std::move(bound.native);
	return a;
}

Result<std::shared_ptr<detail::BoundObject>>
createObject(const VulkanDevice &state, KeepAliveRef owner, VulkanExportDesc &x,
	     VkMemoryPropertyFlags wanted, std::optional<VulkanMemoryFd> *exported,
	     VkExternalMemoryHandleTypeFlags *handleTypes)
{
	const char *fn = "vulkan: allocate";
	const detail::Api &api = state.api;
	auto object = std::make_shared<detail::BoundObject>(api, std::move(owner));
	VkExternalMemoryHandleTypeFlags handles = 0;
	// Images with an export are dedicated: the importer rebuilds exactly this image on them.
	x.dedicated = x.format != 0 && exported;
	if (exported) {
		Result<VkExternalMemoryHandleTypeFlags> types = exportHandleTypes(state, x);
		if (!types)
			return std::move(types).error();
		handles = *types;
	}
	if (handleTypes)
		*handleTypes = handles;
	if (x.format == 0) {
		if (auto e = detail::createBuffer(
			    fn, api, *object, x.allocationSize, x.usage,
			    static_cast<VkExternalMemoryHandleTypeFlagBits>(handles)))
			return std::move(*e);
	} else {
		VkExternalMemoryImageCreateInfo external{
			VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO, nullptr, handles
		};
		VkImageCreateInfo info = imageInfo(x, exported ? &external : nullptr);
		if (VkResult r = api.CreateImage(api.device, &info, nullptr, &object->image);
		    r != VK_SUCCESS) {
			object->image = VK_NULL_HANDLE;
			return detail::vulkanError(fn, "vkCreateImage", r);
		}
		api.GetImageMemoryRequirements(api.device, object->image, &object->requirements);
	}
	std::optional<uint32_t> type =
		detail::pickMemoryType(api, object->requirements.memoryTypeBits, wanted);
	if (!type)
		type = detail::pickMemoryType(api, object->requirements.memoryTypeBits, 0);
	if (!type)
		return Error::format(ErrorCode::NotSupported, "format",
				     "%s: no memory type is allowed for the object (bits 0x%x).",
				     fn, object->requirements.memoryTypeBits);
	// Either handle struct starts the chain; flags 0 asks nothing of a plain allocation.
	VkExportMemoryAllocateInfo exportInfo{ VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
					       nullptr, handles };
	VkMemoryAllocateFlagsInfo plainInfo{ VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO, nullptr,
					     0, 0 };
	x.allocationSize = object->requirements.size;
	x.memoryTypeIndex = *type;
	if (auto e = detail::allocateAndBind(fn, api, *object, x.allocationSize, *type, x.dedicated,
					     exported ? static_cast<void *>(&exportInfo)
						      : static_cast<void *>(&plainInfo)))
		return std::move(*e);
	if (!exported)
		return object;
	VkMemoryGetFdInfoKHR fdInfo{ VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, nullptr,
				     object->memory, detail::kOpaqueFd };
	int raw = -1;
	if (VkResult r = api.GetMemoryFdKHR(api.device, &fdInfo, &raw); r != VK_SUCCESS)
		return detail::vulkanError(fn, "vkGetMemoryFdKHR", r);
	auto memoryFd = VulkanMemoryFd::create(
		{ SharedFd(UniqueFd(raw)), x, state.deviceUuid, state.driverUuid });
	if (!memoryFd)
		return std::move(memoryFd).error();
	*exported = std::move(*memoryFd);
	return object;
}

} // namespace vulkan

// Bytes past the frame in an exportable buffer (see allocate()).
constexpr uint64_t kExportHeadroom = 256;

Result<std::shared_ptr<VulkanAllocation>> VulkanBackend::allocateBuffer(uint64_t size,
									bool exportable)
{
	const VulkanDevice &s = *state_;
	// The shared helper exports opaque fds only; with DMA-BUF createObject adds that type.
	if (exportable && s.ext.memoryFd && !s.ext.dmaBuf) {
		auto made = detail::allocateExportableBuffer(s.api, size, kBufferUsage, kHostMemory,
							     state_);
		if (!made)
			return std::move(made).error();
		auto allocation = adoptBound(state_, std::move(made->bound));
		if (allocation) {
			(*allocation)->exported = std::move(made->exported);
			(*allocation)->handleTypes = detail::kOpaqueFd;
		}
		return allocation;
	}
	VulkanExportDesc x;
	x.allocationSize = size;
	x.usage = kBufferUsage;
	std::optional<VulkanMemoryFd> exported;
	VkExternalMemoryHandleTypeFlags handles = 0;
	auto object = createObject(s, state_, x, kHostMemory,
				   exportable && s.ext.memoryFd ? &exported : nullptr, &handles);
	if (!object)
		return std::move(object).error();
	Identity identity{ s.deviceUuid, s.driverUuid };
	auto bound = detail::wrap("vulkan: allocate", s.api, *object, x.allocationSize,
				  x.memoryTypeIndex, identity, false);
	if (!bound)
		return std::move(bound).error();
	auto allocation = adoptBound(state_, std::move(*bound));
	if (allocation) {
		(*allocation)->exported = std::move(exported);
		(*allocation)->handleTypes = handles;
	}
	return allocation;
}

Result<std::shared_ptr<VulkanAllocation>>
VulkanBackend::allocateImage(PlaneFormat format, uint32_t width, uint32_t height, bool optimal,
			     bool exportable)
{
	const VulkanDevice &s = *state_;
	std::optional<VulkanMemoryFd> exported;
	VkExternalMemoryHandleTypeFlags handles = 0;
	VulkanBoundMemory bound;
	if (!optimal && exportable && s.ext.memoryFd && !s.ext.dmaBuf) {
		auto made = detail::allocateExportableImage(
			s.api, s.dispatch, format, width, height, kImageUsage, kHostMemory, state_);
		if (!made)
			return std::move(made).error();
		bound = std::move(made->bound);
		exported = std::move(made->exported);
		handles = detail::kOpaqueFd;
	} else {
		Result<PlaneMapping> mapping = toPlaneApiFormat(PlaneApi::VkFormat, format);
		if (!mapping)
			return std::move(mapping).error();
		VulkanExportDesc x;
		x.format = mapping->value;
		x.width = width;
		x.height = height;
		x.depth = 1;
		x.tiling = optimal ? VK_IMAGE_TILING_OPTIMAL : VK_IMAGE_TILING_LINEAR;
		x.usage = kImageUsage;
		auto object = createObject(
			s, state_, x,
			optimal ? VkMemoryPropertyFlags{ VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT }
				: kHostMemory,
			exportable && s.ext.memoryFd ? &exported : nullptr, &handles);
		if (!object)
			return std::move(object).error();
		Identity identity{ s.deviceUuid, s.driverUuid };
		auto wrapped = detail::wrap("vulkan: allocate", s.api, *object, x.allocationSize,
					    x.memoryTypeIndex, identity, !optimal);
		if (!wrapped)
			return std::move(wrapped).error();
		bound = std::move(*wrapped);
	}
	auto allocation = adoptBound(state_, std::move(bound));
	if (!allocation)
		return allocation;
	VulkanAllocation &a = **allocation;
	a.exported = std::move(exported);
	a.handleTypes = handles;
	a.optimal = optimal;
	a.planeFormat = format;
	a.width = width;
	a.height = height;
	a.layout = VK_IMAGE_LAYOUT_UNDEFINED;
	if (!optimal) {
		// The host writes linear images through mappings, which is defined only in GENERAL
		// (or PREINITIALIZED, which an exportable image cannot start in): moved there once,
		// on the queue, before the frame is handed out. Pools allocate once, so this is not
		// per frame.
		const VulkanDevice &ds = *state_;
		Status moved = state_->submit(
			"vulkan: allocate",
			[&](VkCommandBuffer commands) {
				VkImageMemoryBarrier barrier = generalBarrier(
					a, VK_IMAGE_LAYOUT_UNDEFINED, VK_QUEUE_FAMILY_IGNORED,
					VK_QUEUE_FAMILY_IGNORED, 0,
					VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
				ds.api.CmdPipelineBarrier(commands,
							  VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
							  VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr,
							  0, nullptr, 1, &barrier);
			},
			[&] { a.layout = VK_IMAGE_LAYOUT_GENERAL; }, kDefaultWaitTimeout,
			{ *allocation });
		if (!moved)
			return std::move(moved).error();
	}
	return allocation;
}

bool VulkanBackend::supportsFormat(PixelFormat format, FrameStorage storage) const
{
	if (!pixelFormatInfo(format).ok())
		return false;
	if (storage == FrameStorage::Buffer)
		return true;
	if (storage != FrameStorage::LinearImage && storage != FrameStorage::OptimalImage)
		return false;
	Result<PlaneMappings> planes = planeApiFormats(PlaneApi::VkFormat, format);
	if (!planes)
		return false;
	for (uint32_t i = 0; i < planes->count; i++) {
		VkFormatProperties properties{};
		state_->api.GetPhysicalDeviceFormatProperties(
			state_->physical, static_cast<VkFormat>(planes->planes[i].value),
			&properties);
		VkFormatFeatureFlags features = storage == FrameStorage::LinearImage
							? properties.linearTilingFeatures
							: properties.optimalTilingFeatures;
		if ((features & kTransferFeatures) != kTransferFeatures)
			return false;
	}
	return true;
}

Result<Frame> VulkanBackend::allocate(const AllocateRequest &request)
{
	Result<FrameLayout> layout = layoutForRequest(request, 64, kName);
	if (!layout)
		return std::move(layout).error();
	if (!supportsFormat(request.format, request.storage))
		return Error::format(
			ErrorCode::NotSupported, "format",
			"vulkan: %s cannot be allocated as a %s on %s (a plane has no "
			"VkFormat, or the format lacks transfer support with that tiling).",
			pixelFormatName(request.format), frameStorageName(request.storage),
			info_.name.c_str());
	// The frame's charge, held by its first allocation.
	Result<BudgetReservation> charged = charge(request);
	if (!charged)
		return std::move(charged).error();
	if (request.storage == FrameStorage::Buffer) {
		// Exportable buffers get a little headroom past the last plane: llvmpipe (and so
		// any GL that imports through GL_EXT_memory_object_fd on Mesa's software stack)
		// refuses buffer storage that fills the whole memory object.
		const uint64_t size = layout->size + (request.exportable ? kExportHeadroom : 0);
		auto allocation = allocateBuffer(size, request.exportable);
		if (!allocation)
			return std::move(allocation).error();
		(*allocation)->charge = std::move(*charged);
		auto resource = anchoredResource(user_, std::move(*allocation));
		if (!resource)
			return std::move(resource).error();
		return frameOverBuffer(request, *layout, std::move(*resource));
	}
	// One image per plane, in plane-sized texels.
	const PixelFormatInfo *format = *pixelFormatInfo(request.format);
	FrameDesc desc;
	desc.format = request.format;
	desc.width = request.width;
	desc.height = request.height;
	desc.colorimetry = request.colorimetry;
	desc.numResources = desc.numPlanes = format->numPlanes;
	const bool optimal = request.storage == FrameStorage::OptimalImage;
	for (uint32_t i = 0; i < format->numPlanes; i++) {
		const PlaneInfo &plane = format->planes[i];
		auto allocation = allocateImage(plane.format, plane.rowTexels(request.width),
						plane.rows(request.height), optimal,
						request.exportable);
		if (!allocation)
			return std::move(allocation).error();
		uint32_t pitch = (*allocation)->rowPitch;
		if (i == 0)
			(*allocation)->charge = std::move(*charged);
		auto resource = anchoredResource(user_, std::move(*allocation));
		if (!resource)
			return std::move(resource).error();
		desc.resources[i] = std::move(*resource);
		desc.planes[i] = PlaneView{ i, 0, 0, optimal ? 0 : pitch };
	}
	return Frame::create(std::move(desc));
}

Result<std::array<VulkanAllocation *, 4>> VulkanBackend::allocationsOf(const Frame &frame,
								       const char *operation) const
{
	std::array<VulkanAllocation *, 4> out{};
	for (uint32_t i = 0; i < frame.numResources(); i++) {
		out[i] = allocationOf(frame.resource(i)).get();
		if (!out[i] || out[i]->state != state_)
			return notThisBackendsFrame(kName, operation);
	}
	return out;
}

} // namespace gpuhandle
