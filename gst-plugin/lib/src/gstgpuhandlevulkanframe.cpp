// Vulkan image memory buffers as gpuhandle frames of their images, without a copy
// (frameFromVulkanBuffer): the images are handed over in the GENERAL layout.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>

#include "gstgpuhandlegpushared.h"
#include "gstgpuhandlevulkaninternal.h"

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_vulkan_debug

using namespace gpuhandle;
using namespace gpuhandle::gst::detail;

namespace {

using gpuhandle::gst::detail::BufferAnchor;

// The access mask of a VkImageMemoryBarrier from the one GStreamer's barrier state records:
// GStreamer 1.24 made it 64 bits (VkAccessFlags2), whose low 32 bits are VkAccessFlags' own; a
// synchronization2-only bit above them is covered by MEMORY_READ | MEMORY_WRITE.
VkAccessFlags legacyAccessMask(guint64 flags)
{
	auto low = static_cast<VkAccessFlags>(flags & 0xffffffffu);
	return (flags >> 32) ? low | VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT : low;
}

// Hands `images` to whoever reads the frame next: one submission on `queue`, after everything
// submitted there before (GStreamer's elements submit on it too), moves them to GENERAL (the
// layout gpuhandle keeps shared images in) and makes prior writes visible; waited for on the CPU.
// GStreamer 1.22's image memories carry no semaphore, so this wait is the frame's acquire.
Status settleImages(GstVulkanDevice *device, GstVulkanQueue *queue,
		    const std::vector<GstVulkanImageMemory *> &images, WaitDuration timeout)
{
	const VulkanDispatch *api = functionsOf(device);
	auto begin = api ? api->BeginCommandBuffer : nullptr;
	auto end = api ? api->EndCommandBuffer : nullptr;
	auto barrier = api ? api->CmdPipelineBarrier : nullptr;
	auto submit = api ? api->QueueSubmit : nullptr;
	auto waitFences = api ? api->WaitForFences : nullptr;
	if (!begin || !end || !barrier || !submit || !waitFences)
		return Error(
			ErrorCode::NotSupported, "device",
			"GStreamer's Vulkan device resolves no command buffer, submit or fence "
			"entry points.");
	std::vector<VkImageMemoryBarrier> barriers;
	for (GstVulkanImageMemory *image : images) {
		VkImageMemoryBarrier b{};
		b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
		b.srcAccessMask = legacyAccessMask(image->barrier.parent.access_flags);
		b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
		b.oldLayout = image->barrier.image_layout;
		b.newLayout = VK_IMAGE_LAYOUT_GENERAL;
		b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
		b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
		b.image = image->image;
		b.subresourceRange = image->barrier.subresource_range;
		barriers.push_back(b);
	}
	GError *error = nullptr;
	GstVulkanCommandPool *pool = gst_vulkan_queue_create_command_pool(queue, &error);
	GstVulkanCommandBuffer *commands = pool ? gst_vulkan_command_pool_create(pool, &error)
						: nullptr;
	GstVulkanFence *fence = commands ? gst_vulkan_device_create_fence(device, &error) : nullptr;
	VkResult r = VK_ERROR_INITIALIZATION_FAILED;
	if (fence) {
		const VkCommandBufferBeginInfo info{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
						     nullptr,
						     VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
						     nullptr };
		const VkMemoryBarrier all{ VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
					   VK_ACCESS_MEMORY_WRITE_BIT,
					   VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT };
		gst_vulkan_command_pool_lock(pool);
		r = begin(commands->cmd, &info);
		if (r == VK_SUCCESS) {
			barrier(commands->cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
				VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0,
				1, &all, 0, nullptr, static_cast<uint32_t>(barriers.size()),
				barriers.data());
			r = end(commands->cmd);
		}
		gst_vulkan_command_pool_unlock(pool);
		VkSubmitInfo submitInfo{};
		submitInfo.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submitInfo.commandBufferCount = 1;
		submitInfo.pCommandBuffers = &commands->cmd;
		if (r == VK_SUCCESS) {
			gst_vulkan_queue_submit_lock(queue);
			r = submit(queue->queue, 1, &submitInfo, fence->fence);
			gst_vulkan_queue_submit_unlock(queue);
		}
	}
	std::string why = error ? error->message : "";
	g_clear_error(&error);
	bool submitted = fence && r == VK_SUCCESS;
	if (submitted) {
		// A driver may wake before the deadline with VK_TIMEOUT: wait out the whole budget.
		const Deadline deadline = Deadline::after(timeout);
		r = VK_TIMEOUT;
		while (r == VK_TIMEOUT && !deadline.expired()) {
			const auto left =
				deadline.isNever()
					? UINT64_MAX
					: static_cast<uint64_t>(deadline.remaining().count());
			r = waitFences(device->device, 1, &fence->fence, VK_TRUE, left);
		}
		if (r == VK_TIMEOUT) {
			// The commands may still run: they, their pool and the fence are left
			// alive.
			GST_WARNING("The layout change of %zu image(s) did not finish in time; its "
				    "command buffer and fence are kept (leaked) rather than freed "
				    "while in use.",
				    images.size());
			return Error::format(
				ErrorCode::Timeout, "buffer",
				"GStreamer's queue did not finish the work before the "
				"buffer's images within %lld ms.",
				static_cast<long long>(
					std::chrono::duration_cast<std::chrono::milliseconds>(
						timeout)
						.count()));
		}
	}
	if (fence)
		gst_vulkan_fence_unref(fence);
	if (commands)
		gst_vulkan_command_buffer_unref(commands);
	if (pool)
		gst_object_unref(pool);
	if (!submitted || r != VK_SUCCESS)
		return Error::format(
			ErrorCode::Backend, "buffer",
			"Moving the buffer's images to the GENERAL layout on GStreamer's "
			"queue failed (VkResult %d%s%s).",
			static_cast<int>(r), why.empty() ? "" : ": ", why.c_str());
	for (GstVulkanImageMemory *image : images) {
		image->barrier.image_layout = VK_IMAGE_LAYOUT_GENERAL;
		image->barrier.parent.pipeline_stages = VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT;
		image->barrier.parent.access_flags = 0;
	}
	return {};
}

} // namespace

namespace gpuhandle::gst {

Result<Frame> frameFromVulkanBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	initVulkanDebug();
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const guint memories = gst_buffer_n_memory(buffer);
	std::vector<GstVulkanImageMemory *> images;
	for (guint i = 0; i < memories; i++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		if (!gst_is_vulkan_image_memory(mem))
			return Error::format(ErrorCode::WrongKind, "buffer.memory",
					     "Memory %u of the buffer is a %s memory, not a "
					     "GstVulkanImageMemory.",
					     i,
					     mem->allocator && mem->allocator->mem_type
						     ? mem->allocator->mem_type
						     : "typeless");
		images.push_back(reinterpret_cast<GstVulkanImageMemory *>(mem));
	}
	const uint32_t planes = GST_VIDEO_INFO_N_PLANES(&info);
	// One image per plane, or (GStreamer 1.24 and later, where the device has the format)
	// one image of a multi-planar VkFormat holding every plane as an aspect.
	const bool multiPlanar = memories == 1 && planes > 1;
	if (memories == 0 || (memories != planes && !multiPlanar))
		return Error::format(
			ErrorCode::InvalidArgument, "buffer.memory",
			"The buffer has %u Vulkan image memories, but %s has %u planes: "
			"one image per plane, or one multi-planar image, is expected.",
			memories, videoFormatName(GST_VIDEO_INFO_FORMAT(&info)), planes);
	Result<PixelFormat> format = pixelFormatOfInfo(info);
	if (!format)
		return std::move(format).error();
	Result<PlaneMappings> expected = planeApiFormats(PlaneApi::VkFormat, *format);
	if (!expected)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "gpuhandle has no per-plane VkFormats for %s: %s",
				     pixelFormatName(*format), expected.error().message().c_str());
	const PixelFormatInfo &pixels = **pixelFormatInfo(*format);
	GstVulkanDevice *device = images[0]->device;
	const Identity identity = identityOf(device);
	const VulkanDispatch *api = functionsOf(device);
	auto subresourceLayout = api ? api->GetImageSubresourceLayout : nullptr;
	FrameDesc desc;
	desc.format = *format;
	desc.width = GST_VIDEO_INFO_WIDTH(&info);
	desc.height = GST_VIDEO_INFO_HEIGHT(&info);
	const GstVideoColorimetry &c = info.colorimetry;
	Result<Colorimetry> colorimetry = fromGstColorimetry(GstColorimetry{
		static_cast<uint32_t>(c.range), static_cast<uint32_t>(c.matrix),
		static_cast<uint32_t>(c.transfer), static_cast<uint32_t>(c.primaries) });
	desc.colorimetry = colorimetry ? *colorimetry : Colorimetry{};
	desc.numResources = memories;
	desc.numPlanes = planes;
	if (multiPlanar) {
		const VkImageCreateInfo &create = images[0]->create_info;
		Result<uint32_t> whole = toApiFormat(FormatApi::VkFormat, *format);
		// Multi-planar formats with subsampled chroma have even extents: GStreamer rounds
		// the image up, the frame is its top-left part.
		if (!whole || static_cast<uint32_t>(create.format) != *whole ||
		    create.extent.width < desc.width || create.extent.height < desc.height)
			return Error::format(
				ErrorCode::NotSupported, "buffer.memory",
				"GStreamer holds a %ux%u %s frame as one %ux%u image of VkFormat %d; "
				"gpuhandle's multi-planar %s is VkFormat %d, so the image has no "
				"gpuhandle equivalent.",
				desc.width, desc.height,
				videoFormatName(GST_VIDEO_INFO_FORMAT(&info)), create.extent.width,
				create.extent.height, static_cast<int>(create.format),
				pixelFormatName(*format), whole ? static_cast<int>(*whole) : 0);
	}
	std::array<uint32_t, GST_VIDEO_MAX_PLANES> pitches{};
	for (uint32_t p = 0; p < planes; p++) {
		const GstVulkanImageMemory &image = *images[multiPlanar ? 0 : p];
		const VkImageCreateInfo &create = image.create_info;
		const PlaneInfo &plane = pixels.planes[p];
		if (image.device != device)
			return Error::format(
				ErrorCode::InvalidArgument, "buffer.memory",
				"Memory %u of the buffer is on another GstVulkanDevice than "
				"memory 0.",
				p);
		if (!multiPlanar &&
		    (static_cast<uint32_t>(create.format) != expected->planes[p].value ||
		     create.extent.width != plane.rowTexels(desc.width) ||
		     create.extent.height != plane.rows(desc.height)))
			return Error::format(
				ErrorCode::NotSupported, "buffer.memory",
				"GStreamer holds plane %u of a %ux%u %s frame as a %ux%u image of "
				"VkFormat %d; gpuhandle's %s plane is %ux%u %s (%u), so the image "
				"has no gpuhandle equivalent.",
				p, desc.width, desc.height,
				videoFormatName(GST_VIDEO_INFO_FORMAT(&info)), create.extent.width,
				create.extent.height, static_cast<int>(create.format),
				pixelFormatName(*format), plane.rowTexels(desc.width),
				plane.rows(desc.height), expected->planes[p].name,
				expected->planes[p].value);
		if (create.tiling == VK_IMAGE_TILING_LINEAR) {
			if (!subresourceLayout)
				return Error(
					ErrorCode::NotSupported, "device",
					"GStreamer's Vulkan device resolves no "
					"vkGetImageSubresourceLayout for a linear image's pitch.");
			const VkImageSubresource subresource{
				vulkanPlaneAspect(multiPlanar ? planes : 1, p), 0, 0
			};
			VkSubresourceLayout layout{};
			subresourceLayout(device->device, image.image, &subresource, &layout);
			pitches[p] = static_cast<uint32_t>(layout.rowPitch);
		} else if (create.tiling != VK_IMAGE_TILING_OPTIMAL) {
			return Error::format(
				ErrorCode::NotSupported, "buffer.memory",
				"Plane %u's image has tiling %d; gpuhandle describes linear "
				"and optimal images.",
				p, static_cast<int>(create.tiling));
		}
	}
	GstVulkanQueue *queue = firstQueue(device);
	if (!queue)
		return Error(ErrorCode::NotSupported, "device",
			     "GStreamer's Vulkan device has no graphics or compute queue.");
	Status settled = settleImages(device, queue, images, kDefaultWaitTimeout);
	gst_object_unref(queue);
	if (!settled)
		return std::move(settled).error();
	auto anchor = std::make_shared<BufferAnchor>(buffer);
	for (uint32_t r = 0; r < memories; r++) {
		VulkanImageDesc made{ reinterpret_cast<uint64_t>(images[r]->image), device->device,
				      identity.device, multiPlanar ? 0 : pitches[r], anchor };
		made.planes = multiPlanar ? planes : 1;
		Result<VulkanImage> image = VulkanImage::create(std::move(made));
		if (!image)
			return std::move(image).error();
		desc.resources[r] = std::move(*image);
	}
	for (uint32_t p = 0; p < planes; p++)
		desc.planes[p] = multiPlanar ? PlaneView{ 0, p, 0, pitches[p] }
					     : PlaneView{ p, 0, 0, pitches[p] };
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle::gst
