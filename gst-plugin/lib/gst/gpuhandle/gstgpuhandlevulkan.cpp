// GstVulkanImageMemory <-> gpuhandle frames; GStreamer's Vulkan device as a gpuhandle backend.
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>

#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_vulkan_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_vulkan_debug

using namespace gpuhandle;

namespace {

// What gpuhandle's Vulkan backend makes its images with, and so what wrapped memories say.
constexpr VkImageUsageFlags kWrappedUsage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
					    VK_IMAGE_USAGE_TRANSFER_DST_BIT |
					    VK_IMAGE_USAGE_SAMPLED_BIT;

// The device extensions gpuhandle's Vulkan backend looks for, told to it when GStreamer enabled
// them (it cannot see extensions without entry points, such as the DMA-BUF handle type).
constexpr const char *kBackendExtensions[] = {
	"VK_KHR_external_memory",           "VK_KHR_external_memory_fd",
	"VK_KHR_external_semaphore",        "VK_KHR_external_semaphore_fd",
	"VK_EXT_external_memory_host",      "VK_EXT_external_memory_dma_buf",
	"VK_EXT_image_drm_format_modifier", "VK_EXT_queue_family_foreign",
	"VK_KHR_timeline_semaphore",
};

// The formats gst_vulkan_format_from_video_info() of GStreamer 1.22 knows: it asserts on any
// other (later versions answer VK_FORMAT_UNDEFINED, which is refused too).
constexpr std::string_view kVulkanMemoryFormats[] = {
	"RGBA", "RGBx", "BGRA", "BGRx", "ARGB",  "xRGB",      "ABGR",  "xBGR",
	"RGB",  "BGR",  "AYUV", "YUY2", "UYVY",  "NV12",      "NV21",  "Y444",
	"Y42B", "Y41B", "I420", "YV12", "GRAY8", "GRAY16_LE", "RGB16", "BGR16",
};

void initDebug()
{
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_vulkan_debug, "gpuhandlevulkan", 0,
					"gpuhandle Vulkan memory and backend");
	});
}

// GObject's type-check macros cast C-style; their expansions land here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
bool isVulkanDevice(gpointer object)
{
	return object && GST_IS_VULKAN_DEVICE(object);
}
#pragma GCC diagnostic pop

const char *videoFormatName(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	return name ? name : "unknown";
}

bool isVulkanMemoryFormat(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	if (!name)
		return false;
	for (std::string_view known : kVulkanMemoryFormats)
		if (known == name)
			return true;
	return false;
}

// References on GStreamer's device and the queue gpuhandle submits on, for a backend's Context.
struct DeviceHold final : KeepAlive {
	DeviceHold(GstVulkanDevice *d, GstVulkanQueue *q)
		: device(static_cast<GstVulkanDevice *>(gst_object_ref(d))), queue(q)
	{
	}
	DeviceHold(const DeviceHold &) = delete;
	DeviceHold &operator=(const DeviceHold &) = delete;
	~DeviceHold() override
	{
		gst_object_unref(queue);
		gst_object_unref(device);
	}

	GstVulkanDevice *const device;
	GstVulkanQueue *const queue; // owned
};

// The anchor of frames over Vulkan image memories: a buffer reference.
struct BufferAnchor final : KeepAlive {
	explicit BufferAnchor(GstBuffer *b) : buffer(gst_buffer_ref(b)) {}
	BufferAnchor(const BufferAnchor &) = delete;
	BufferAnchor &operator=(const BufferAnchor &) = delete;
	~BufferAnchor() override { gst_buffer_unref(buffer); }

	GstBuffer *const buffer;
};

gboolean pickQueue(GstVulkanDevice *device, GstVulkanQueue *queue, gpointer picked)
{
	const VkQueueFlags flags =
		device->physical_device->queue_family_props[queue->family].queueFlags;
	if (!(flags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)))
		return TRUE; // go on looking
	*static_cast<GstVulkanQueue **>(picked) =
		static_cast<GstVulkanQueue *>(gst_object_ref(queue));
	return FALSE;
}

// The first queue of a graphics or compute family (transfers included), which GStreamer's
// Vulkan elements pick too. Transfer full; null when the device has none.
GstVulkanQueue *firstQueue(GstVulkanDevice *device)
{
	GstVulkanQueue *queue = nullptr;
	gst_vulkan_device_foreach_queue(device, pickQueue, &queue);
	return queue;
}

template<typename F>
F deviceFn(GstVulkanDevice *device, const char *name)
{
	return reinterpret_cast<F>(gst_vulkan_device_get_proc_address(device, name));
}

struct Identity {
	std::optional<Uuid> device{};
	std::optional<Uuid> driver{};
};

// VkPhysicalDeviceIDProperties of the device (Vulkan 1.1), when the instance resolves the query.
Identity identityOf(GstVulkanDevice *device)
{
	auto properties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
		gst_vulkan_instance_get_proc_address(device->instance,
						     "vkGetPhysicalDeviceProperties2"));
	if (!properties2 || device->physical_device->properties.apiVersion < VK_API_VERSION_1_1)
		return {};
	VkPhysicalDeviceIDProperties id{};
	id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &id;
	properties2(gst_vulkan_device_get_physical_device(device), &properties);
	Identity out;
	out.device.emplace();
	out.driver.emplace();
	std::memcpy(out.device->data(), id.deviceUUID, VK_UUID_SIZE);
	std::memcpy(out.driver->data(), id.driverUUID, VK_UUID_SIZE);
	return out;
}

// One backend per device through a weak reference in its qdata (see gstgpuhandlegl.cpp).
std::mutex gCacheMutex;

GQuark backendQuark()
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-vulkan-backend");
	return quark;
}

void deleteWeakBackend(gpointer weak)
{
	delete static_cast<std::weak_ptr<Backend> *>(weak);
}

BackendRef cachedBackend(GObject *object)
{
	std::lock_guard<std::mutex> lock(gCacheMutex);
	auto *weak =
		static_cast<std::weak_ptr<Backend> *>(g_object_get_qdata(object, backendQuark()));
	return weak ? weak->lock() : nullptr;
}

BackendRef cacheBackend(GObject *object, BackendRef backend)
{
	std::lock_guard<std::mutex> lock(gCacheMutex);
	auto *weak =
		static_cast<std::weak_ptr<Backend> *>(g_object_get_qdata(object, backendQuark()));
	if (weak)
		if (BackendRef existing = weak->lock())
			return existing;
	g_object_set_qdata_full(object, backendQuark(), new std::weak_ptr<Backend>(backend),
				deleteWeakBackend);
	return backend;
}

Result<PixelFormat> pixelFormatOfInfo(const GstVideoInfo &info)
{
	const GstVideoFormat format = GST_VIDEO_INFO_FORMAT(&info);
	Result<PixelFormat> mapped =
		fromApiFormat(FormatApi::GStreamer, static_cast<uint32_t>(format));
	if (!mapped)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "The GstVideoFormat %s has no gpuhandle format.",
				     videoFormatName(format));
	return mapped;
}

// Hands `images` to whoever reads the frame next: one submission on `queue`, after everything
// submitted there before (GStreamer's elements submit on it too), moves them to GENERAL (the
// layout gpuhandle keeps shared images in) and makes prior writes visible; waited for on the CPU.
// GStreamer 1.22's image memories carry no semaphore, so this wait is the frame's acquire.
Status settleImages(GstVulkanDevice *device, GstVulkanQueue *queue,
		    const std::vector<GstVulkanImageMemory *> &images, WaitDuration timeout)
{
	auto begin = deviceFn<PFN_vkBeginCommandBuffer>(device, "vkBeginCommandBuffer");
	auto end = deviceFn<PFN_vkEndCommandBuffer>(device, "vkEndCommandBuffer");
	auto barrier = deviceFn<PFN_vkCmdPipelineBarrier>(device, "vkCmdPipelineBarrier");
	auto submit = deviceFn<PFN_vkQueueSubmit>(device, "vkQueueSubmit");
	auto waitFences = deviceFn<PFN_vkWaitForFences>(device, "vkWaitForFences");
	if (!begin || !end || !barrier || !submit || !waitFences)
		return Error(
			ErrorCode::NotSupported, "device",
			"GStreamer's Vulkan device resolves no command buffer, submit or fence "
			"entry points.");
	std::vector<VkImageMemoryBarrier> barriers;
	for (GstVulkanImageMemory *image : images) {
		VkImageMemoryBarrier b{};
		b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
		b.srcAccessMask = image->barrier.parent.access_flags;
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

// Each memory of a buffer made by vulkanBufferFromFrame holds one of these.
void dropFrame(gpointer frame)
{
	delete static_cast<std::shared_ptr<const Frame> *>(frame);
}

} // namespace

namespace gpuhandle::gst {

Result<BackendRef> vulkanBackendFor(GstVulkanDevice *device)
{
	initDebug();
	if (!device)
		return Error(ErrorCode::NullHandle, "device", "The GstVulkanDevice is null.");
	if (!isVulkanDevice(device))
		return Error(ErrorCode::InvalidArgument, "device",
			     "The object given as the Vulkan device is not a GstVulkanDevice.");
	if (!device->device)
		return Error(ErrorCode::InvalidState, "device",
			     "The GstVulkanDevice is not open yet (gst_vulkan_device_open).");
	auto *object = reinterpret_cast<GObject *>(device);
	if (BackendRef cached = cachedBackend(object))
		return cached;
	GstVulkanQueue *queue = firstQueue(device);
	if (!queue)
		return Error(ErrorCode::NotSupported, "device",
			     "GStreamer's Vulkan device has no queue of a graphics or compute "
			     "family for gpuhandle's transfers.");
	auto hold = std::make_shared<DeviceHold>(device, queue);
	VulkanContext native;
	native.instance = device->instance->instance;
	native.physicalDevice = gst_vulkan_device_get_physical_device(device);
	native.device = device->device;
	native.queue = queue->queue;
	native.queueFamilyIndex = queue->family;
	native.getInstanceProcAddr =
		gst_vulkan_instance_get_proc_address(device->instance, "vkGetInstanceProcAddr");
	for (const char *name : kBackendExtensions)
		if (gst_vulkan_device_is_extension_enabled(device, name))
			native.enabledDeviceExtensions.emplace_back(name);
	const Identity identity = identityOf(device);
	native.deviceUuid = identity.device;
	native.driverUuid = identity.driver;
	Result<ContextRef> made = Context::create(std::move(native), hold);
	if (!made)
		return std::move(made).error();
	BackendOpenOptions options;
	options.context = std::move(*made);
	Result<BackendRef> opened = openBackend(BackendKind::Vulkan, options);
	if (!opened)
		return std::move(opened).error();
	GST_DEBUG("gpuhandle Vulkan backend opened on GStreamer's device %p: %s",
		  static_cast<void *>(device), (*opened)->deviceInfo().toString().c_str());
	return cacheBackend(object, std::move(*opened));
}

Result<Frame> frameFromVulkanBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	initDebug();
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
	if (memories == 0 || memories != planes)
		return Error::format(
			ErrorCode::InvalidArgument, "buffer.memory",
			"The buffer has %u Vulkan image memories, but %s has %u planes: "
			"one image per plane is expected.",
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
	auto subresourceLayout =
		deviceFn<PFN_vkGetImageSubresourceLayout>(device, "vkGetImageSubresourceLayout");
	FrameDesc desc;
	desc.format = *format;
	desc.width = GST_VIDEO_INFO_WIDTH(&info);
	desc.height = GST_VIDEO_INFO_HEIGHT(&info);
	const GstVideoColorimetry &c = info.colorimetry;
	Result<Colorimetry> colorimetry = fromGstColorimetry(GstColorimetry{
		static_cast<uint32_t>(c.range), static_cast<uint32_t>(c.matrix),
		static_cast<uint32_t>(c.transfer), static_cast<uint32_t>(c.primaries) });
	desc.colorimetry = colorimetry ? *colorimetry : Colorimetry{};
	desc.numResources = desc.numPlanes = planes;
	std::array<uint32_t, GST_VIDEO_MAX_PLANES> pitches{};
	for (uint32_t p = 0; p < planes; p++) {
		const GstVulkanImageMemory &image = *images[p];
		const VkImageCreateInfo &create = image.create_info;
		const PlaneInfo &plane = pixels.planes[p];
		if (image.device != device)
			return Error::format(
				ErrorCode::InvalidArgument, "buffer.memory",
				"Memory %u of the buffer is on another GstVulkanDevice than "
				"memory 0.",
				p);
		if (static_cast<uint32_t>(create.format) != expected->planes[p].value ||
		    create.extent.width != plane.rowTexels(desc.width) ||
		    create.extent.height != plane.rows(desc.height))
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
			const VkImageSubresource subresource{ VK_IMAGE_ASPECT_COLOR_BIT, 0, 0 };
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
	for (uint32_t p = 0; p < planes; p++) {
		Result<VulkanImage> image = VulkanImage::create(
			{ reinterpret_cast<uint64_t>(images[p]->image), device->device,
			  identity.device, pitches[p], anchor });
		if (!image)
			return std::move(image).error();
		desc.resources[p] = std::move(*image);
		desc.planes[p] = PlaneView{ p, 0, 0, pitches[p] };
	}
	return Frame::create(std::move(desc));
}

Result<GstBuffer *> vulkanBufferFromFrame(const Frame &frame, GstVulkanDevice *device,
					  const GstVideoInfo &info, WaitDuration timeout)
{
	initDebug();
	if (!device)
		return Error(ErrorCode::NullHandle, "device", "The GstVulkanDevice is null.");
	if (!isVulkanDevice(device))
		return Error(ErrorCode::InvalidArgument, "device",
			     "The object given as the Vulkan device is not a GstVulkanDevice.");
	const GstVideoFormat videoFormat = GST_VIDEO_INFO_FORMAT(&info);
	Result<PixelFormat> format = pixelFormatOfInfo(info);
	if (!format)
		return std::move(format).error();
	if (!isVulkanMemoryFormat(videoFormat))
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "GStreamer's Vulkan image memory has no VkFormat for %s.",
				     videoFormatName(videoFormat));
	const uint32_t planes = GST_VIDEO_INFO_N_PLANES(&info);
	if (frame.format() != *format ||
	    frame.width() != static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info)) ||
	    frame.height() != static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)) ||
	    frame.numPlanes() != planes)
		return Error::format(
			ErrorCode::FormatMismatch, "info",
			"The frame is a %ux%u %s frame of %u planes; the video info says "
			"%dx%d %s.",
			frame.width(), frame.height(), pixelFormatName(frame.format()),
			frame.numPlanes(), GST_VIDEO_INFO_WIDTH(&info),
			GST_VIDEO_INFO_HEIGHT(&info), videoFormatName(videoFormat));
	Result<PlaneMappings> ours = planeApiFormats(PlaneApi::VkFormat, *format);
	if (!ours)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "gpuhandle has no per-plane VkFormats for %s: %s",
				     pixelFormatName(*format), ours.error().message().c_str());
	GstVideoInfo query = info; // gst_vulkan_format_from_video_info takes a mutable pointer
	const PixelFormatInfo &pixels = **pixelFormatInfo(*format);
	std::array<const VulkanImage *, GST_VIDEO_MAX_PLANES> images{};
	for (uint32_t p = 0; p < planes; p++) {
		const PlaneView &view = frame.plane(p);
		const Resource &resource = frame.resource(view.resource);
		images[p] = resource.get<VulkanImage>();
		if (!images[p])
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"Plane %u of the frame lives in a %s resource, not a Vulkan "
				"image.",
				p, resourceKindName(resource.kind()));
		for (uint32_t q = 0; q < p; q++)
			if (frame.plane(q).resource == view.resource)
				return Error::format(
					ErrorCode::FormatMismatch, "frame",
					"Planes %u and %u share one image; GStreamer's "
					"Vulkan memories hold one image per plane.",
					q, p);
		if (images[p]->desc().device != static_cast<void *>(device->device))
			return Error::format(
				ErrorCode::DeviceMismatch, "frame",
				"Plane %u's image belongs to VkDevice %p, not GStreamer's "
				"device %p.",
				p, images[p]->desc().device, static_cast<void *>(device->device));
		const VkFormat theirs = gst_vulkan_format_from_video_info(&query, p);
		if (static_cast<uint32_t>(theirs) != ours->planes[p].value)
			return Error::format(
				ErrorCode::NotSupported, "info.format",
				"GStreamer holds plane %u of %s as VkFormat %d, gpuhandle as "
				"%s (%u): the two do not describe the image alike.",
				p, videoFormatName(videoFormat), static_cast<int>(theirs),
				ours->planes[p].name, ours->planes[p].value);
	}
	// GStreamer 1.22's Vulkan memories carry no semaphore: its elements use them at once.
	if (Status acquired = frame.acquire().wait(timeout); !acquired)
		return std::move(acquired).error();
	auto kept = std::make_shared<const Frame>(frame);
	GstBuffer *buffer = gst_buffer_new();
	for (uint32_t p = 0; p < planes; p++) {
		const PlaneInfo &plane = pixels.planes[p];
		const VulkanImageDesc &d = images[p]->desc();
		const VkImageTiling tiling = d.rowPitch ? VK_IMAGE_TILING_LINEAR
							: VK_IMAGE_TILING_OPTIMAL;
		GstMemory *mem = gst_vulkan_image_memory_wrapped(
			device, reinterpret_cast<VkImage>(d.image),
			static_cast<VkFormat>(ours->planes[p].value),
			plane.rowTexels(frame.width()), plane.rows(frame.height()), tiling,
			kWrappedUsage, new std::shared_ptr<const Frame>(kept), dropFrame);
		// On failure GStreamer has freed the memory it began, and called the notify with
		// it.
		if (!mem) {
			gst_buffer_unref(buffer);
			return Error::format(
				ErrorCode::Backend, "frame",
				"GStreamer made no Vulkan image memory wrapping plane %u.", p);
		}
		// gpuhandle leaves the images it works on in GENERAL (its convention for images
		// shared with other users), with its own work finished: GStreamer starts from
		// there.
		auto *image = reinterpret_cast<GstVulkanImageMemory *>(mem);
		image->barrier.image_layout = VK_IMAGE_LAYOUT_GENERAL;
		gst_buffer_append_memory(buffer, mem);
	}
	return buffer;
}

Status ensureVulkanDevice(GstElement *element, GstVulkanInstance **instance,
			  GstVulkanDevice **device)
{
	initDebug();
	if (!element || !instance || !device)
		return Error(ErrorCode::NullHandle, "element",
			     "ensureVulkanDevice needs the element and its instance and device "
			     "fields.");
	if (!gst_vulkan_ensure_element_data(element, nullptr, instance) || !*instance)
		return Error(ErrorCode::NotSupported, "instance",
			     "No Vulkan instance was shared with the element and none could be "
			     "opened.");
	if (*device)
		return {};
	if (gst_vulkan_device_run_context_query(element, device) && *device)
		return {};
	GError *error = nullptr;
	*device = gst_vulkan_instance_create_device(*instance, &error);
	if (!*device) {
		Error failed = Error::format(ErrorCode::Backend, "device",
					     "GStreamer could not open a Vulkan device: %s",
					     error ? error->message : "no reason given");
		g_clear_error(&error);
		return failed;
	}
	return {};
}

} // namespace gpuhandle::gst
