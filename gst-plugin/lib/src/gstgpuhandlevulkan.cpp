// GStreamer's Vulkan device as a gpuhandle Vulkan backend, and the instance and device elements
// share; the queue and identity the Vulkan image memory conversions build on.
#include "gstgpuhandlegpushared.h"
#include "gstgpuhandlevulkaninternal.h"

#include <cstring>
#include <memory>
#include <mutex>

#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>

GST_DEBUG_CATEGORY(gst_gpu_handle_vulkan_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_vulkan_debug

using namespace gpuhandle;

namespace gpuhandle::gst::detail {

void initVulkanDebug()
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

namespace {

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

} // namespace

GstVulkanQueue *firstQueue(GstVulkanDevice *device)
{
	GstVulkanQueue *queue = nullptr;
	gst_vulkan_device_foreach_queue(device, pickQueue, &queue);
	return queue;
}

const VulkanDispatch *functionsOf(GstVulkanDevice *device)
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-vulkan-functions");
	using Held = std::shared_ptr<const VulkanDeviceFunctions>;
	auto *object = reinterpret_cast<GObject *>(device);
	if (auto *held = static_cast<Held *>(g_object_get_qdata(object, quark)))
		return &(*held)->table;
	VulkanDeviceDispatch dispatch;
	dispatch.device = device->device;
	dispatch.getDeviceProcAddr =
		gst_vulkan_instance_get_proc_address(device->instance, "vkGetDeviceProcAddr");
	const VulkanPhysicalDeviceDispatch physical{
		device->instance->instance, gst_vulkan_device_get_physical_device(device),
		gst_vulkan_instance_get_proc_address(device->instance, "vkGetInstanceProcAddr")
	};
	Result<Held> loaded = loadVulkanDeviceFunctions(dispatch, physical);
	if (!loaded) {
		GST_WARNING_OBJECT(device, "%s", loaded.error().message().c_str());
		return nullptr;
	}
	// Two first callers may both load one: the first stored stays (the table lives as long
	// as the device; it holds no reference to it).
	static std::mutex mutex;
	std::lock_guard<std::mutex> lock(mutex);
	if (auto *held = static_cast<Held *>(g_object_get_qdata(object, quark)))
		return &(*held)->table;
	auto *held = new Held(std::move(*loaded));
	g_object_set_qdata_full(object, quark, held,
				[](gpointer data) { delete static_cast<Held *>(data); });
	return &(*held)->table;
}

Identity identityOf(GstVulkanDevice *device)
{
	const VulkanDispatch *api = functionsOf(device);
	auto properties2 = api ? api->GetPhysicalDeviceProperties2 : nullptr;
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

} // namespace gpuhandle::gst::detail

using namespace gpuhandle::gst::detail;

namespace {

// The device extensions gpuhandle's Vulkan backend looks for, told to it when GStreamer enabled
// them (it cannot see extensions without entry points, such as the DMA-BUF handle type).
constexpr const char *kBackendExtensions[] = {
	"VK_KHR_external_memory",           "VK_KHR_external_memory_fd",
	"VK_KHR_external_semaphore",        "VK_KHR_external_semaphore_fd",
	"VK_EXT_external_memory_host",      "VK_EXT_external_memory_dma_buf",
	"VK_EXT_image_drm_format_modifier", "VK_EXT_queue_family_foreign",
	"VK_KHR_timeline_semaphore",
};

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

GQuark backendQuark()
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-vulkan-backend");
	return quark;
}

} // namespace

namespace gpuhandle::gst {

Result<BackendRef> vulkanBackendFor(GstVulkanDevice *device)
{
	initVulkanDebug();
	if (!device)
		return Error(ErrorCode::NullHandle, "device", "The GstVulkanDevice is null.");
	if (!isVulkanDevice(device))
		return Error(ErrorCode::InvalidArgument, "device",
			     "The object given as the Vulkan device is not a GstVulkanDevice.");
	if (!device->device)
		return Error(ErrorCode::InvalidState, "device",
			     "The GstVulkanDevice is not open yet (gst_vulkan_device_open).");
	auto *object = reinterpret_cast<GObject *>(device);
	if (BackendRef cached = cachedBackend(object, backendQuark()))
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
	// GStreamer's elements submit on this queue too, under its submit lock: so does gpuhandle.
	// The context's anchor holds the queue, so the pointer outlives every submission.
	native.queueLock = [queue](bool lock) {
		if (lock)
			gst_vulkan_queue_submit_lock(queue);
		else
			gst_vulkan_queue_submit_unlock(queue);
	};
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
	return cacheBackend(object, backendQuark(), std::move(*opened));
}

Status ensureVulkanDevice(GstElement *element, GstVulkanInstance **instance,
			  GstVulkanDevice **device)
{
	initVulkanDebug();
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
