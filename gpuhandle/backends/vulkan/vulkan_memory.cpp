// Exportable Vulkan buffers and images (OPAQUE_FD export); their import is in
// vulkan_memory_import.cpp. No libvulkan link: device functions come from the host's
// vkGetDeviceProcAddr, physical-device queries from its vkGetInstanceProcAddr.
#define VK_NO_PROTOTYPES
#include <gpuhandle/format_mappings.h>

#include "vulkan_memory_internal.h"

namespace gpuhandle {

using namespace detail;

namespace {

// Allocates exportable memory for `object` (already created), binds and exports it.
Result<VulkanExportedMemory> allocateAndExport(const char *fn, const Api &api,
					       std::shared_ptr<BoundObject> object,
					       VulkanExportDesc x, uint32_t wanted)
{
	std::optional<uint32_t> type =
		pickMemoryType(api, object->requirements.memoryTypeBits, wanted);
	if (!type)
		return Error::format(
			ErrorCode::NotSupported, "memoryProperties",
			"%s: no memory type allowed for this object (bits 0x%x) has properties 0x%x.",
			fn, object->requirements.memoryTypeBits, wanted);
	VkExportMemoryAllocateInfo exportInfo{ VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
					       nullptr, kOpaqueFd };
	if (auto e = allocateAndBind(fn, api, *object, object->requirements.size, *type,
				     x.dedicated, &exportInfo))
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
	auto bound = wrap(fn, api, std::move(object), x.allocationSize, *type, identity,
			  x.tiling == VK_IMAGE_TILING_LINEAR);
	if (!bound)
		return std::move(bound).error();
	return VulkanExportedMemory{ std::move(*bound), std::move(*exported) };
}

} // namespace

// NotSupported unless VkExternalBufferProperties lists the usage as exportable; dedicated
// memory where the driver requires it.
Result<VulkanExportedMemory> detail::allocateExportableBuffer(const Api &api, uint64_t size,
							      uint32_t usage,
							      uint32_t memoryProperties,
							      KeepAliveRef owner)
{
	const char *fn = "allocateExportableVulkanBuffer";
	if (auto e = requireExtension(fn, reinterpret_cast<const void *>(api.GetMemoryFdKHR),
				      "vkGetMemoryFdKHR", VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
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
	if (auto e = createBuffer(fn, api, *object, size, usage))
		return std::move(*e);
	VulkanExportDesc x;
	x.dedicated = (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT) != 0;
	x.usage = usage;
	return allocateAndExport(fn, api, std::move(object), x, memoryProperties);
}

namespace {

// Moves a new image from UNDEFINED to GENERAL on the dispatch's queue and waits (bounded), so
// that host writes through a mapping are defined (a linear image allows host access only in
// GENERAL or PREINITIALIZED, and an image on external memory cannot start PREINITIALIZED).
MaybeError moveToGeneral(const char *fn, const Api &api, const VulkanDeviceDispatch &dispatch,
			 VkImage image)
{
	VkCommandPoolCreateInfo poolInfo{ VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr, 0,
					  dispatch.queueFamily };
	VkCommandPool pool = VK_NULL_HANDLE;
	if (VkResult r = api.CreateCommandPool(api.device, &poolInfo, nullptr, &pool);
	    r != VK_SUCCESS)
		return vulkanError(fn, "vkCreateCommandPool", r);
	VkFence fence = VK_NULL_HANDLE;
	bool submitted = false, stillRunning = false;
	MaybeError failed;
	auto step = [&](const char *call, VkResult r) {
		if (r != VK_SUCCESS && !failed)
			failed = vulkanError(fn, call, r);
		return !failed;
	};
	VkCommandBufferAllocateInfo allocInfo{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					       nullptr, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
	VkCommandBuffer commands = VK_NULL_HANDLE;
	VkCommandBufferBeginInfo begin{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr,
					VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, nullptr };
	VkFenceCreateInfo fenceInfo{ VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0 };
	if (step("vkAllocateCommandBuffers",
		 api.AllocateCommandBuffers(api.device, &allocInfo, &commands)) &&
	    step("vkBeginCommandBuffer", api.BeginCommandBuffer(commands, &begin))) {
		VkImageMemoryBarrier barrier{};
		barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
		barrier.dstAccessMask = VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_HOST_READ_BIT |
					VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
		barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
		barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
		barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
		barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
		barrier.image = image;
		barrier.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
		api.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
				       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
				       nullptr, 1, &barrier);
		VkSubmitInfo submit{};
		submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submit.commandBufferCount = 1;
		submit.pCommandBuffers = &commands;
		if (step("vkEndCommandBuffer", api.EndCommandBuffer(commands)) &&
		    step("vkCreateFence",
			 api.CreateFence(api.device, &fenceInfo, nullptr, &fence))) {
			if (dispatch.lockQueue)
				dispatch.lockQueue(dispatch.queueLockUserData,
						   dispatch.queueFamily);
			VkResult r = api.QueueSubmit(static_cast<VkQueue>(dispatch.queue), 1,
						     &submit, fence);
			if (dispatch.unlockQueue)
				dispatch.unlockQueue(dispatch.queueLockUserData,
						     dispatch.queueFamily);
			submitted = step("vkQueueSubmit", r);
		}
	}
	// A barrier alone: 10 s is the library's default bound for any wait.
	if (submitted) {
		VkResult r = api.WaitForFences(api.device, 1, &fence, VK_TRUE, 10'000'000'000ull);
		if (r == VK_TIMEOUT)
			failed =
				Error::format(ErrorCode::Timeout, "queue",
					      "%s: moving the new image to VK_IMAGE_LAYOUT_GENERAL "
					      "did not finish within 10 s.",
					      fn);
		else
			step("vkWaitForFences", r);
		stillRunning = r != VK_SUCCESS;
	}
	// A submission that may still run keeps its pool and fence (a bounded leak; a freed pool
	// in use is not).
	if (!stillRunning) {
		if (fence != VK_NULL_HANDLE)
			api.DestroyFence(api.device, fence, nullptr);
		api.DestroyCommandPool(api.device, pool, nullptr);
	}
	return failed;
}

} // namespace

// NotSupported (naming the format) unless vkGetPhysicalDeviceImageFormatProperties2 lists the
// linear image as exportable.
Result<VulkanExportedMemory>
detail::allocateExportableImage(const Api &api, const VulkanDeviceDispatch &dispatch,
				PlaneFormat format, uint32_t width, uint32_t height, uint32_t usage,
				uint32_t memoryProperties, KeepAliveRef owner)
{
	const char *fn = "allocateExportableVulkanImage";
	if (auto e = requireExtension(fn, reinterpret_cast<const void *>(api.GetMemoryFdKHR),
				      "vkGetMemoryFdKHR", VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME))
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
	if (auto e = createImage(fn, api, *object, x))
		return std::move(*e);
	const VkImage image = object->image;
	auto made = allocateAndExport(fn, api, std::move(object), x, memoryProperties);
	if (made && dispatch.queue)
		if (auto e = moveToGeneral(fn, api, dispatch, image)) {
			// A barrier still running on the image keeps it: leaked, not freed under
			// it.
			if (e->code() == ErrorCode::Timeout)
				static_cast<void>(new VulkanExportedMemory(std::move(*made)));
			return std::move(*e);
		}
	return made;
}

// The public calls: the entry points resolved from the caller's handles, once per call.
Result<VulkanExportedMemory>
allocateExportableVulkanBuffer(const VulkanDeviceDispatch &dispatch,
			       const VulkanPhysicalDeviceDispatch &physical, uint64_t size,
			       uint32_t usage, uint32_t memoryProperties, KeepAliveRef owner)
{
	Api api;
	if (auto e = loadApi("allocateExportableVulkanBuffer", dispatch, physical, api))
		return std::move(*e);
	return allocateExportableBuffer(api, size, usage, memoryProperties, std::move(owner));
}

Result<VulkanExportedMemory>
allocateExportableVulkanImage(const VulkanDeviceDispatch &dispatch,
			      const VulkanPhysicalDeviceDispatch &physical, PlaneFormat format,
			      uint32_t width, uint32_t height, uint32_t usage,
			      uint32_t memoryProperties, KeepAliveRef owner)
{
	Api api;
	if (auto e = loadApi("allocateExportableVulkanImage", dispatch, physical, api))
		return std::move(*e);
	return allocateExportableImage(api, dispatch, format, width, height, usage,
				       memoryProperties, std::move(owner));
}

} // namespace gpuhandle
