// VulkanImage memory in the memory-type table: GStreamer's Vulkan images to frames of the device's
// Vulkan backend and back, and the instance and device shared with Vulkan neighbours (as input,
// an instance whose devices export memory). Built with gstreamer-vulkan-1.0.
#include "memorytypes_internal.h"

#include <mutex>

#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_vulkan_memory_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_vulkan_memory_debug

namespace gpuhandle::gst::detail {

namespace {

// GStreamer 1.22 opens Vulkan devices with no external-memory extension, so its images could only
// leave through the CPU. The instance gpuhandleupload shares makes devices that export memory
// (a handler connected first, e.g. by the application, still wins: the signal takes the first
// device returned).
GstVulkanDevice *createExportingDevice(GstVulkanInstance *instance, gpointer)
{
	GstVulkanDevice *device = gst_vulkan_device_new_with_index(instance, 0);
	for (const char *name : { "VK_KHR_external_memory", "VK_KHR_external_memory_fd" })
		if (!gst_vulkan_device_enable_extension(device, name))
			GST_INFO_OBJECT(device,
					"%s is not offered: Vulkan images leave through a copy",
					name);
	return device;
}

void exportDevicesOf(GstVulkanInstance *instance)
{
	static const char *kConnected = "gpuhandle-exporting-devices";
	if (g_object_get_data(G_OBJECT(instance), kConnected))
		return;
	g_object_set_data(G_OBJECT(instance), kConnected, GINT_TO_POINTER(1));
	g_signal_connect(instance, "create-device", G_CALLBACK(createExportingDevice), nullptr);
}

class VulkanAdapter final : public MemoryAdapter
{
public:
	VulkanAdapter(const MemoryTypeInfo &info, MemoryRole role) : MemoryAdapter(info, role)
	{
		static std::once_flag once;
		std::call_once(once, [] {
			GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_vulkan_memory_debug,
						"gpuhandlevulkanmemory", 0,
						"gpuhandle's VulkanImage memory type");
		});
	}
	~VulkanAdapter() override { release(); }

	bool answerContextQuery(GstElement *element, GstQuery *query) override
	{
		return role() == MemoryRole::Input ? answerInstanceQuery(element, query)
						   : answerWithDevice(element, query);
	}

	void setContext(GstElement *element, GstContext *context) override
	{
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		gst_vulkan_handle_set_context(element, context, nullptr, &instance_);
	}

	Result<Frame> frameFromBuffer(GstElement *, const InputBuffer &in,
				      BackendRef &backend) override
	{
		if (auto bad = incompleteInput(in))
			return *bad;
		GstMemory *mem = gst_buffer_peek_memory(in.buffer, 0);
		if (auto wrong = wrongMemory(info(), mem, gst_is_vulkan_image_memory(mem)))
			return *wrong;
		return frameOnDevice(
			vulkanBackendFor(reinterpret_cast<GstVulkanImageMemory *>(mem)->device),
			backend, [&] { return frameFromVulkanBuffer(in.buffer, *in.info); });
	}

	Result<BackendRef> openOutput(GstElement *element, DevicesSlot &) override
	{
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		Status found = ensureVulkanDevice(element, &instance_, &device_);
		if (!found.ok())
			return found.error();
		return vulkanBackendFor(device_);
	}

	// The streaming thread alone replaces device_, so it reads it without the lock.
	Result<GstBuffer *> bufferFromFrame(const Frame &frame, const GstVideoInfo &info,
					    WaitDuration timeout, const BackendRef &) override
	{
		return vulkanBufferFromFrame(frame, device_, info, timeout);
	}

	void release() override
	{
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		gst_clear_object(&device_);
		gst_clear_object(&instance_);
	}

private:
	// Output: the instance and device, referenced under the lock (set_context may replace
	// them meanwhile).
	bool answerWithDevice(GstElement *element, GstQuery *query)
	{
		GstVulkanInstance *instance = nullptr;
		GstVulkanDevice *device = nullptr;
		{
			std::lock_guard<std::recursive_mutex> lock(mutex_);
			instance = refOrNull(instance_);
			device = refOrNull(device_);
		}
		const bool answered =
			gst_vulkan_handle_context_query(element, query, nullptr, instance, device);
		gst_clear_object(&instance);
		gst_clear_object(&device);
		return answered;
	}

	// Input: a Vulkan neighbour (vulkanupload) asks for the pipeline's instance before it
	// makes its device: answered with one whose devices export memory, made now if the
	// pipeline has none yet.
	bool answerInstanceQuery(GstElement *element, GstQuery *query)
	{
		const gchar *type = nullptr;
		if (!gst_query_parse_context_type(query, &type) ||
		    g_strcmp0(type, GST_VULKAN_INSTANCE_CONTEXT_TYPE_STR) != 0)
			return false;
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		if (!instance_) {
			GstVulkanInstance *instance = gst_vulkan_instance_new();
			GError *error = nullptr;
			if (!gst_vulkan_instance_open(instance, &error)) {
				GST_INFO_OBJECT(element, "no Vulkan instance: %s",
						error ? error->message : "?");
				g_clear_error(&error);
				gst_object_unref(instance);
				return false;
			}
			instance_ = instance;
		}
		exportDevicesOf(instance_);
		return gst_vulkan_handle_context_query(element, query, nullptr, instance_, nullptr);
	}

	std::recursive_mutex mutex_{}; // guards the objects below against other threads' queries
	GstVulkanInstance *instance_ = nullptr;
	GstVulkanDevice *device_ = nullptr; // output only
};

} // namespace

std::unique_ptr<MemoryAdapter> vulkanAdapter(const MemoryTypeInfo &info, MemoryRole role)
{
	return std::make_unique<VulkanAdapter>(info, role);
}

} // namespace gpuhandle::gst::detail
