// Test fixture for the Vulkan conversions: a GStreamer Vulkan instance and device made per test,
// patterns in VulkanBuffer memory, and one-buffer vulkanupload/vulkandownload pipelines.
#pragma once

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#if GPUHANDLE_GST_HAVE_VULKAN
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>
#endif

#include <string>

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "gl_vulkan_fixture.h"

#if GPUHANDLE_GST_HAVE_VULKAN

namespace gpuhandle::test {

// A GStreamer Vulkan instance and device (index 0: lavapipe here), made per test.
struct VulkanObjects {
	GstVulkanInstance *instance = nullptr;
	GstVulkanDevice *device = nullptr;

	VulkanObjects() = default;
	VulkanObjects(const VulkanObjects &) = delete;
	VulkanObjects &operator=(const VulkanObjects &) = delete;
	~VulkanObjects()
	{
		if (device)
			gst_object_unref(device);
		if (instance)
			gst_object_unref(instance);
	}

	std::string create()
	{
		GError *error = nullptr;
		instance = gst_vulkan_instance_new();
		if (!gst_vulkan_instance_open(instance, &error)) {
			std::string why = std::string("gst_vulkan_instance_open: ") +
					  (error ? error->message : "?");
			g_clear_error(&error);
			return why;
		}
		device = gst_vulkan_device_new_with_index(instance, 0);
		if (!device || !gst_vulkan_device_open(device, &error)) {
			std::string why = std::string("gst_vulkan_device_open: ") +
					  (error ? error->message : "no device 0");
			g_clear_error(&error);
			return why;
		}
		return {};
	}
};

// GStreamer 1.22's vulkanupload and vulkandownload copy each plane between its own VulkanBuffer
// memory and its image with rows of exactly the plane's width (bufferRowLength), whatever
// strides the caps imply: buffers are written and read that way here.
inline uint64_t tightStride(PixelFormat format, Size size, uint32_t plane)
{
	return (*pixelFormatInfo(format))->planes[plane].rowBytes(size.width);
}

// A buffer of host-visible VulkanBuffer memories, one per plane, holding the pattern in tight
// rows: what vulkanupload copies into images. Transfer full; null on failure.
inline GstBuffer *vulkanPatternBuffer(GstVulkanDevice *device, const GstVideoInfo &info,
				      uint32_t seed)
{
	const PixelFormat format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	const PixelFormatInfo &pixels = **pixelFormatInfo(format);
	const Size size = sizeOf(info);
	GstBuffer *buffer = gst_buffer_new();
	for (uint32_t p = 0; p < pixels.numPlanes; p++) {
		const uint64_t bytes =
			tightStride(format, size, p) * pixels.planes[p].rows(size.height);
		GstMemory *mem = gst_vulkan_buffer_memory_alloc(
			device, bytes,
			VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
			VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
		if (!mem) {
			gst_buffer_unref(buffer);
			return nullptr;
		}
		gst_buffer_append_memory(buffer, mem);
	}
	if (!fillPlaneMemories(buffer, format, size, seed,
			       [&](uint32_t p) { return tightStride(format, size, p); })) {
		gst_buffer_unref(buffer);
		return nullptr;
	}
	return buffer;
}

// Checks what vulkandownload gave: one memory per plane, tight rows (see tightStride).
inline std::string checkDownloaded(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed)
{
	const PixelFormat format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	const Size size = sizeOf(info);
	return checkPlaneMemories(buffer, format, size, seed,
				  [&](uint32_t p) { return tightStride(format, size, p); });
}

// Answers the Vulkan elements' instance and device context queries with the test's own, so
// that they work on the device the test's frames live on.
inline GstPadProbeReturn answerVulkanQuery(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
	GstQuery *query = probeQuery(info);
	if (!query || !isContextQuery(query))
		return GST_PAD_PROBE_OK;
	auto *vk = static_cast<VulkanObjects *>(data);
	GstElement *element = gst_pad_get_parent_element(pad);
	const bool answered =
		gst_vulkan_instance_handle_context_query(element, query, vk->instance) ||
		gst_vulkan_device_handle_context_query(element, query, vk->device);
	gst_object_unref(element);
	return answered ? GST_PAD_PROBE_HANDLED : GST_PAD_PROBE_OK;
}

// throughElement on `vk`'s instance and device.
inline GstBuffer *throughVulkanElement(const char *name, GstBuffer *input, GstCaps *inCaps,
				       GstCaps *outCaps, VulkanObjects &vk, std::string &why)
{
	return throughElement(name, input, inCaps, outCaps, answerVulkanQuery, &vk, why);
}

} // namespace gpuhandle::test

#endif // GPUHANDLE_GST_HAVE_VULKAN
