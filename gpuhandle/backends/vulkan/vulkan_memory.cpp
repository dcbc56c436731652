// Exportable Vulkan buffers and images (OPAQUE_FD export) and their import into another VkDevice.
// No libvulkan link: device functions come from the host's vkGetDeviceProcAddr, physical-device
// queries from its vkGetInstanceProcAddr.
#define VK_NO_PROTOTYPES
#include <gpuhandle/backends/vulkan_memory.h>
#include <gpuhandle/format_mappings.h>

#include "validation.h"

#include <cinttypes>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include <vulkan/vulkan.h>

namespace gpuhandle {

namespace {

using MaybeError = std::optional<Error>;
constexpr VkExternalMemoryHandleTypeFlagBits kOpaqueFd =
	VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

Error vulkanError(const char *fn, const char *call, VkResult result)
{
	ErrorCode code = result == VK_ERROR_DEVICE_LOST ? ErrorCode::DeviceLost
							: ErrorCode::Backend;
	return Error::format(code, "device", "%s: %s failed with VkResult %d.", fn, call,
			     static_cast<int>(result));
}

// Every entry point used here, looked up once per call; members are named after them.
// clang-format off
#define DEVICE_FUNCTIONS(X)                                                                        \
	X(CreateBuffer) X(DestroyBuffer) X(CreateImage) X(DestroyImage)                            \
	X(GetBufferMemoryRequirements) X(GetImageMemoryRequirements) X(GetImageSubresourceLayout)  \
	X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(BindImageMemory) X(GetMemoryFdKHR)
#define INSTANCE_FUNCTIONS(X)                                                                      \
	X(GetPhysicalDeviceProperties2) X(GetPhysicalDeviceMemoryProperties)                       \
	X(GetPhysicalDeviceExternalBufferProperties) X(GetPhysicalDeviceImageFormatProperties2)
// clang-format on
#define DECLARE(name) PFN_vk##name name = nullptr;
struct Api {
	VkDevice device = VK_NULL_HANDLE;
	VkPhysicalDevice physical = VK_NULL_HANDLE;
	DEVICE_FUNCTIONS(DECLARE)
	INSTANCE_FUNCTIONS(DECLARE)
};
#undef DECLARE

// Checks the handles and resolves every entry point (the instance ones are Vulkan 1.1 core).
MaybeError loadApi(const char *fn, const VulkanDeviceDispatch &dispatch,
		   const VulkanPhysicalDeviceDispatch &physical, Api &api)
{
	const std::pair<const char *, const void *> handles[] = {
		{ "device", dispatch.device },
		{ "getDeviceProcAddr", dispatch.getDeviceProcAddr },
		{ "instance", physical.instance },
		{ "physicalDevice", physical.physicalDevice },
		{ "getInstanceProcAddr", physical.getInstanceProcAddr },
	};
	for (const auto &[field, handle] : handles)
		if (auto e = detail::requireHandle(fn, field, handle))
			return e;
	api.device = static_cast<VkDevice>(dispatch.device);
	api.physical = static_cast<VkPhysicalDevice>(physical.physicalDevice);
	auto getDevice = reinterpret_cast<PFN_vkGetDeviceProcAddr>(dispatch.getDeviceProcAddr);
	auto getInstance =
		reinterpret_cast<PFN_vkGetInstanceProcAddr>(physical.getInstanceProcAddr);
	auto instance = static_cast<VkInstance>(physical.instance);
	const char *absent = nullptr;
	const char *field = "getDeviceProcAddr";
#define LOAD_DEVICE(name)                                                                          \
	api.name = reinterpret_cast<PFN_vk##name>(getDevice(api.device, "vk" #name));              \
	absent = !absent && !api.name ? "vk" #name : absent;
#define LOAD_INSTANCE(name)                                                                        \
	api.name = reinterpret_cast<PFN_vk##name>(getInstance(instance, "vk" #name));              \
	if (!absent && !api.name) {                                                                \
		absent = "vk" #name;                                                               \
		field = "getInstanceProcAddr";                                                     \
	}
	DEVICE_FUNCTIONS(LOAD_DEVICE)
	INSTANCE_FUNCTIONS(LOAD_INSTANCE)
#undef LOAD_DEVICE
#undef LOAD_INSTANCE
	if (absent)
		return Error::format(
			ErrorCode::NotSupported, field,
			"%s: the driver offers no %s; memory export and import need Vulkan 1.1 and a device created with VK_KHR_external_memory_fd.",
			fn, absent);
	return std::nullopt;
}

// The buffer or image and its memory; the anchor of every copy of the Resource. Destroys what
// it holds exactly once, object before memory, then lets the owner (the device) go.
class BoundObject final : public KeepAlive
{
public:
	BoundObject(const Api &api, KeepAliveRef owner) : api_(api), owner_(std::move(owner)) {}
	BoundObject(const BoundObject &) = delete;
	BoundObject &operator=(const BoundObject &) = delete;
	~BoundObject() override
	{
		if (buffer)
			api_.DestroyBuffer(api_.device, buffer, nullptr);
		if (image)
			api_.DestroyImage(api_.device, image, nullptr);
		if (memory)
			api_.FreeMemory(api_.device, memory, nullptr);
	}

	const Api &api() const { return api_; }

	VkBuffer buffer = VK_NULL_HANDLE;
	VkImage image = VK_NULL_HANDLE;
	VkDeviceMemory memory = VK_NULL_HANDLE;
	VkMemoryRequirements requirements{};
	uint64_t bufferSize = 0; // VkBufferCreateInfo::size

private:
	Api api_;
	KeepAliveRef owner_;
};

struct Identity {
	Uuid device{};
	Uuid driver{};
};

Identity identityOf(const Api &api)
{
	VkPhysicalDeviceIDProperties id{};
	id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &id;
	api.GetPhysicalDeviceProperties2(api.physical, &properties);
	Identity identity;
	std::memcpy(identity.device.data(), id.deviceUUID, VK_UUID_SIZE);
	std::memcpy(identity.driver.data(), id.driverUUID, VK_UUID_SIZE);
	return identity;
}

// The first type allowed by `bits` that has every flag of `wanted`.
std::optional<uint32_t> pickMemoryType(const Api &api, uint32_t bits, uint32_t wanted)
{
	VkPhysicalDeviceMemoryProperties properties{};
	api.GetPhysicalDeviceMemoryProperties(api.physical, &properties);
	for (uint32_t i = 0; i < properties.memoryTypeCount; i++)
		if ((bits & (1u << i)) &&
		    (properties.memoryTypes[i].propertyFlags & wanted) == wanted)
			return i;
	return std::nullopt;
}

// Allocates `size` bytes of type `typeIndex` with `handleInfo` (export or import struct) first
// in the chain, dedicated to the object when asked, and binds it.
MaybeError allocateAndBind(const char *fn, BoundObject &object, uint64_t size, uint32_t typeIndex,
			   bool dedicated, void *handleInfo)
{
	const Api &api = object.api();
	VkMemoryDedicatedAllocateInfo dedicatedInfo{
		.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO,
		.pNext = nullptr,
		.image = object.image,
		.buffer = object.buffer,
	};
	static_cast<VkBaseOutStructure *>(handleInfo)->pNext =
		dedicated ? reinterpret_cast<VkBaseOutStructure *>(&dedicatedInfo) : nullptr;
	VkMemoryAllocateInfo info{ VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, handleInfo, size,
				   typeIndex };
	if (VkResult r = api.AllocateMemory(api.device, &info, nullptr, &object.memory);
	    r != VK_SUCCESS) {
		object.memory = VK_NULL_HANDLE;
		return vulkanError(fn, "vkAllocateMemory", r);
	}
	VkResult r = object.buffer
			     ? api.BindBufferMemory(api.device, object.buffer, object.memory, 0)
			     : api.BindImageMemory(api.device, object.image, object.memory, 0);
	if (r != VK_SUCCESS)
		return vulkanError(fn, object.buffer ? "vkBindBufferMemory" : "vkBindImageMemory",
				   r);
	return std::nullopt;
}

MaybeError createBuffer(const char *fn, BoundObject &object, uint64_t size, uint32_t usage)
{
	const Api &api = object.api();
	VkExternalMemoryBufferCreateInfo external{
		VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, nullptr, kOpaqueFd
	};
	VkBufferCreateInfo info{};
	info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
	info.pNext = &external;
	info.size = size;
	info.usage = usage;
	info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	if (VkResult r = api.CreateBuffer(api.device, &info, nullptr, &object.buffer);
	    r != VK_SUCCESS) {
		object.buffer = VK_NULL_HANDLE;
		return vulkanError(fn, "vkCreateBuffer", r);
	}
	api.GetBufferMemoryRequirements(api.device, object.buffer, &object.requirements);
	object.bufferSize = size;
	return std::nullopt;
}

MaybeError createImage(const char *fn, BoundObject &object, const VulkanExportDesc &x)
{
	const Api &api = object.api();
	VkExternalMemoryImageCreateInfo external{
		VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO, nullptr, kOpaqueFd
	};
	VkImageCreateInfo info{};
	info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
	info.pNext = &external;
	info.imageType = VK_IMAGE_TYPE_2D;
	info.format = static_cast<VkFormat>(x.format);
	info.extent = { x.width, x.height, x.depth ? x.depth : 1 };
	info.mipLevels = 1;
	info.arrayLayers = 1;
	info.samples = VK_SAMPLE_COUNT_1_BIT;
	info.tiling = static_cast<VkImageTiling>(x.tiling);
	info.usage = x.usage;
	info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	// Linear contents written by the host (or by the exporter) stay defined only from
	// PREINITIALIZED; an optimal image's contents are opaque anyway.
	info.initialLayout = info.tiling == VK_IMAGE_TILING_LINEAR ? VK_IMAGE_LAYOUT_PREINITIALIZED
								   : VK_IMAGE_LAYOUT_UNDEFINED;
	if (VkResult r = api.CreateImage(api.device, &info, nullptr, &object.image);
	    r != VK_SUCCESS) {
		object.image = VK_NULL_HANDLE;
		return vulkanError(fn, "vkCreateImage", r);
	}
	api.GetImageMemoryRequirements(api.device, object.image, &object.requirements);
	return std::nullopt;
}

// The Resource over `object`, anchored by it; linear images report their row pitch.
Result<VulkanBoundMemory> wrap(const char *fn, std::shared_ptr<BoundObject> object,
			       uint64_t allocationSize, uint32_t typeIndex,
			       const Identity &identity, bool linear)
{
	const Api &api = object->api();
	VulkanBoundMemory bound;
	bound.memory = reinterpret_cast<uint64_t>(object->memory);
	bound.allocationSize = allocationSize;
	bound.memoryTypeIndex = typeIndex;
	if (object->buffer) {
		VulkanBufferDesc desc;
		desc.buffer = reinterpret_cast<uint64_t>(object->buffer);
		desc.device = api.device;
		desc.size = object->bufferSize;
		desc.deviceUuid = identity.device;
		desc.anchor = std::move(object);
		auto buffer = VulkanBuffer::create(std::move(desc));
		if (!buffer)
			return std::move(buffer).error();
		bound.native = std::move(*buffer);
		return bound;
	}
	VulkanImageDesc desc;
	desc.image = reinterpret_cast<uint64_t>(object->image);
	desc.device = api.device;
	desc.deviceUuid = identity.device;
	if (linear) {
		VkImageSubresource subresource{ VK_IMAGE_ASPECT_COLOR_BIT, 0, 0 };
		VkSubresourceLayout layout{};
		api.GetImageSubresourceLayout(api.device, object->image, &subresource, &layout);
		if (layout.rowPitch > UINT32_MAX)
			return Error::format(ErrorCode::OutOfRange, "width",
					     "%s: the image's row pitch (%" PRIu64
					     " bytes) does not fit in 32 bits.",
					     fn, static_cast<uint64_t>(layout.rowPitch));
		desc.rowPitch = static_cast<uint32_t>(layout.rowPitch);
	}
	desc.anchor = std::move(object);
	auto image = VulkanImage::create(std::move(desc));
	if (!image)
		return std::move(image).error();
	bound.native = std::move(*image);
	return bound;
}

// Allocates exportable memory for `object` (already created), binds and exports it.
Result<VulkanExportedMemory> allocateAndExport(const char *fn, std::shared_ptr<BoundObject> object,
					       VulkanExportDesc x, uint32_t wanted)
{
	const Api &api = object->api();
	std::optional<uint32_t> type =
		pickMemoryType(api, object->requirements.memoryTypeBits, wanted);
	if (!type)
		return Error::format(
			ErrorCode::NotSupported, "memoryProperties",
			"%s: no memory type allowed for this object (bits 0x%x) has properties 0x%x.",
			fn, object->requirements.memoryTypeBits, wanted);
	VkExportMemoryAllocateInfo exportInfo{ VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
					       nullptr, kOpaqueFd };
	if (auto e = allocateAndBind(fn, *object, object->requirements.size, *type, x.dedicated,
				     &exportInfo))
		return std::move(*e);

	VkMemoryGetFdInfoKHR fdInfo{ VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, nullptr,
				     object->memory, kOpaqueFd };
	int raw = -1;
	if (VkResult r = api.GetMemoryFdKHR(api.device, &fdInfo, &raw); r != VK_SUCCESS)
		return vulkanError(fn, "vkGetMemoryFdKHR", r);
	SharedFd fd{ UniqueFd(raw) }; // ours from here: closed on every path below

	Identity identity = identityOf(api);
	x.allocationSize = object->requirements.size;
	x.memoryTypeIndex = *type;
	auto exported =
		VulkanMemoryFd::create({ std::move(fd), x, identity.device, identity.driver });
	if (!exported)
		return std::move(exported).error();
	auto bound = wrap(fn, std::move(object), x.allocationSize, *type, identity,
			  x.tiling == VK_IMAGE_TILING_LINEAR);
	if (!bound)
		return std::move(bound).error();
	return VulkanExportedMemory{ std::move(*bound), std::move(*exported) };
}

} // namespace

// NotSupported unless VkExternalBufferProperties lists the usage as exportable; dedicated
// memory where the driver requires it.
Result<VulkanExportedMemory>
allocateExportableVulkanBuffer(const VulkanDeviceDispatch &dispatch,
			       const VulkanPhysicalDeviceDispatch &physical, uint64_t size,
			       uint32_t usage, uint32_t memoryProperties, KeepAliveRef owner)
{
	const char *fn = "allocateExportableVulkanBuffer";
	Api api;
	if (auto e = loadApi(fn, dispatch, physical, api))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "size", size))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "usage", usage))
		return std::move(*e);

	VkPhysicalDeviceExternalBufferInfo query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO, nullptr, 0, usage, kOpaqueFd
	};
	VkExternalBufferProperties answer{};
	answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
	api.GetPhysicalDeviceExternalBufferProperties(api.physical, &query, &answer);
	VkExternalMemoryFeatureFlags features =
		answer.externalMemoryProperties.externalMemoryFeatures;
	if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "usage",
			"%s: the driver cannot export a buffer with usage 0x%x as an opaque fd (VkExternalBufferProperties does not list it as exportable).",
			fn, usage);

	auto object = std::make_shared<BoundObject>(api, std::move(owner));
	if (auto e = createBuffer(fn, *object, size, usage))
		return std::move(*e);
	VulkanExportDesc x;
	x.dedicated = (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
	x.usage = usage;
	return allocateAndExport(fn, std::move(object), x, memoryProperties);
}

// NotSupported (naming the format) unless vkGetPhysicalDeviceImageFormatProperties2 lists the
// linear image as exportable.
Result<VulkanExportedMemory>
allocateExportableVulkanImage(const VulkanDeviceDispatch &dispatch,
			      const VulkanPhysicalDeviceDispatch &physical, PlaneFormat format,
			      uint32_t width, uint32_t height, uint32_t usage,
			      uint32_t memoryProperties, KeepAliveRef owner)
{
	const char *fn = "allocateExportableVulkanImage";
	Api api;
	if (auto e = loadApi(fn, dispatch, physical, api))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "width", width))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "height", height))
		return std::move(*e);
	if (auto e = detail::requireNonZero(fn, "usage", usage))
		return std::move(*e);
	Result<PlaneMapping> mapping = toPlaneApiFormat(PlaneApi::VkFormat, format);
	if (!mapping)
		return std::move(mapping).error();

	VkPhysicalDeviceExternalImageFormatInfo externalQuery{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO, nullptr, kOpaqueFd
	};
	VkPhysicalDeviceImageFormatInfo2 query{
		VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
		&externalQuery,
		static_cast<VkFormat>(mapping->value),
		VK_IMAGE_TYPE_2D,
		VK_IMAGE_TILING_LINEAR,
		usage,
		0
	};
	VkExternalImageFormatProperties externalAnswer{};
	externalAnswer.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
	VkImageFormatProperties2 answer{};
	answer.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
	answer.pNext = &externalAnswer;
	VkResult r = api.GetPhysicalDeviceImageFormatProperties2(api.physical, &query, &answer);
	if (r != VK_SUCCESS || !(externalAnswer.externalMemoryProperties.externalMemoryFeatures &
				 VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "format",
			"%s: the driver cannot make a linear %s image with usage 0x%x exportable as an opaque fd (vkGetPhysicalDeviceImageFormatProperties2 answered %d).",
			fn, mapping->name, usage, static_cast<int>(r));
	VkExtent3D max = answer.imageFormatProperties.maxExtent;
	if (width > max.width || height > max.height)
		return Error::format(
			ErrorCode::OutOfRange, "width",
			"%s: %ux%u is larger than the driver's largest linear %s image (%ux%u).",
			fn, width, height, mapping->name, max.width, max.height);

	// Dedicated: the image owns its memory, so an importer rebuilds exactly this image on it.
	VulkanExportDesc x{ .dedicated = true,
			    .format = mapping->value,
			    .width = width,
			    .height = height,
			    .depth = 1,
			    .tiling = VK_IMAGE_TILING_LINEAR,
			    .usage = usage };
	auto object = std::make_shared<BoundObject>(api, std::move(owner));
	if (auto e = createImage(fn, *object, x))
		return std::move(*e);
	return allocateAndExport(fn, std::move(object), x, memoryProperties);
}

// Only the device and driver that exported an opaque fd can read it, so both UUIDs must match.
// The fd is duplicated: Vulkan owns the one it imports, and `exported` keeps its own.
Result<VulkanBoundMemory> importVulkanMemoryFd(const VulkanDeviceDispatch &dispatch,
					       const VulkanPhysicalDeviceDispatch &physical,
					       const VulkanMemoryFd &exported, KeepAliveRef owner)
{
	const char *fn = "importVulkanMemoryFd";
	Api api;
	if (auto e = loadApi(fn, dispatch, physical, api))
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
				     ? createImage(fn, *object, x)
				     : createBuffer(fn, *object, x.allocationSize, x.usage);
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
	if (auto e = allocateAndBind(fn, *object, x.allocationSize, x.memoryTypeIndex, x.dedicated,
				     &importInfo)) {
		// A failed import leaves the fd with us (closed by `fd`) unless the memory exists.
		if (object->memory)
			(void)fd.release();
		return std::move(*e);
	}
	(void)fd.release(); // the VkDeviceMemory owns it now
	return wrap(fn, std::move(object), x.allocationSize, x.memoryTypeIndex, identity,
		    x.tiling == VK_IMAGE_TILING_LINEAR);
}

} // namespace gpuhandle
