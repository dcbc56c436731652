// Test fixture for the GL and Vulkan conversions: GStreamer GL contexts and Vulkan devices made
// per test, GL buffers and one-buffer vulkanupload/vulkandownload pipelines, video patterns.
#pragma once

#include <gpuhandle/format_mappings.h>
#include <gpuhandle/pixel_format.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/video/video.h>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gl/gstglfuncs.h>
#include <gst/gpuhandle/gstgpuhandlegl.hpp>
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>
#endif

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"

namespace gpuhandle::test {

// GStreamer's cast and field macros are C casts; their expansions would land in the tests.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
inline GstQuery *probeQuery(GstPadProbeInfo *info)
{
	return GST_PAD_PROBE_INFO_QUERY(info);
}
inline GstBuffer *probeBuffer(GstPadProbeInfo *info)
{
	return GST_PAD_PROBE_INFO_BUFFER(info);
}
inline bool isContextQuery(GstQuery *query)
{
	return GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT;
}
inline GstMessageType messageType(GstMessage *message)
{
	return GST_MESSAGE_TYPE(message);
}
inline GstBin *asBin(GstElement *element)
{
	return GST_BIN(element);
}
#pragma GCC diagnostic pop

struct Size {
	uint32_t width = 0;
	uint32_t height = 0;
};

inline GstVideoInfo videoInfo(GstVideoFormat format, Size size)
{
	GstVideoInfo info;
	gst_video_info_init(&info);
	gst_video_info_set_format(&info, format, size.width, size.height);
	return info;
}

inline PixelFormat pixelFormatOf(GstVideoFormat format)
{
	return *fromApiFormat(FormatApi::GStreamer, static_cast<uint32_t>(format));
}

inline const char *formatName(GstVideoFormat format)
{
	return gst_video_format_to_string(format);
}

// Checks every pixel byte of every plane of a mapped video frame against patternByte(), at the
// rows gpuhandle's format counts (padding is not looked at): empty, else the first difference.
inline std::string checkVideoFrame(const GstVideoFrame &video, PixelFormat format, uint32_t seed)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	const uint32_t width = GST_VIDEO_INFO_WIDTH(&video.info);
	const uint32_t height = GST_VIDEO_INFO_HEIGHT(&video.info);
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const auto *base = static_cast<const uint8_t *>(video.data[p]);
		const auto stride = static_cast<uint32_t>(video.info.stride[p]);
		for (uint32_t y = 0; y < info.planes[p].rows(height); y++)
			for (uint64_t x = 0; x < info.planes[p].rowBytes(width); x++) {
				const uint8_t got = base[uint64_t{ stride } * y + x];
				if (got != patternByte(seed, p, y, x)) {
					char where[160];
					std::snprintf(where, sizeof where,
						      "%s %ux%u plane %u row %u byte %llu: %u, "
						      "expected %u",
						      pixelFormatName(format), width, height, p, y,
						      static_cast<unsigned long long>(x), got,
						      patternByte(seed, p, y, x));
					return where;
				}
			}
	}
	return {};
}

// Maps `buffer` as `info` for reading (GStreamer downloads GPU memory for it) and checks the
// pattern: empty when every byte matches.
inline std::string checkBuffer(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed)
{
	GstVideoInfo layout = info;
	GstVideoFrame video;
	if (!gst_video_frame_map(&video, &layout, buffer, GST_MAP_READ))
		return std::string("gst_video_frame_map of a ") +
		       formatName(GST_VIDEO_INFO_FORMAT(&info)) + " buffer for reading failed";
	std::string checked =
		checkVideoFrame(video, pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info)), seed);
	gst_video_frame_unmap(&video);
	return checked;
}

// The pattern in memory p of `buffer` for plane p (one memory per plane), rows strideOf(p)
// bytes apart: written (false when a memory does not map or is too small), or checked (empty,
// else the first difference or what failed).
template<typename StrideOf>
bool fillPlaneMemories(GstBuffer *buffer, PixelFormat format, Size size, uint32_t seed,
		       StrideOf strideOf)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	if (gst_buffer_n_memory(buffer) != info.numPlanes)
		return false;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const uint32_t rows = info.planes[p].rows(size.height);
		const uint64_t rowBytes = info.planes[p].rowBytes(size.width);
		const uint64_t stride = strideOf(p);
		GstMapInfo map;
		if (!gst_memory_map(gst_buffer_peek_memory(buffer, p), &map, GST_MAP_WRITE))
			return false;
		const bool fits = stride * (rows - 1) + rowBytes <= map.size;
		for (uint32_t y = 0; fits && y < rows; y++)
			for (uint64_t x = 0; x < rowBytes; x++)
				map.data[stride * y + x] = patternByte(seed, p, y, x);
		gst_memory_unmap(gst_buffer_peek_memory(buffer, p), &map);
		if (!fits)
			return false;
	}
	return true;
}

template<typename StrideOf>
std::string checkPlaneMemories(GstBuffer *buffer, PixelFormat format, Size size, uint32_t seed,
			       StrideOf strideOf)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	if (gst_buffer_n_memory(buffer) != info.numPlanes)
		return "the buffer does not hold one memory per plane";
	std::string failed;
	for (uint32_t p = 0; p < info.numPlanes && failed.empty(); p++) {
		const uint32_t rows = info.planes[p].rows(size.height);
		const uint64_t rowBytes = info.planes[p].rowBytes(size.width);
		const uint64_t stride = strideOf(p);
		GstMapInfo map;
		if (!gst_memory_map(gst_buffer_peek_memory(buffer, p), &map, GST_MAP_READ))
			return "memory " + std::to_string(p) + " did not map for reading";
		if (stride * (rows - 1) + rowBytes > map.size)
			failed = "memory " + std::to_string(p) + " is too small for its plane";
		for (uint32_t y = 0; failed.empty() && y < rows; y++)
			for (uint64_t x = 0; failed.empty() && x < rowBytes; x++)
				if (map.data[stride * y + x] != patternByte(seed, p, y, x)) {
					char where[160];
					std::snprintf(where, sizeof where,
						      "%s %ux%u plane %u row %u byte %llu: %u, "
						      "expected %u",
						      pixelFormatName(format), size.width,
						      size.height, p, y,
						      static_cast<unsigned long long>(x),
						      map.data[stride * y + x],
						      patternByte(seed, p, y, x));
					failed = where;
				}
		gst_memory_unmap(gst_buffer_peek_memory(buffer, p), &map);
	}
	return failed;
}

inline Size sizeOf(const GstVideoInfo &info)
{
	return { static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info)),
		 static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)) };
}

inline GstCaps *capsOf(const GstVideoInfo &info, const char *feature)
{
	GstCaps *caps = gst_video_info_to_caps(&info);
	if (feature)
		gst_caps_set_features(caps, 0, gst_caps_features_new(feature, nullptr));
	return caps;
}

#if GPUHANDLE_GST_HAVE_GL

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
inline GstGLSyncMeta *glSyncMeta(GstBuffer *buffer)
{
	return gst_buffer_get_gl_sync_meta(buffer);
}
#pragma GCC diagnostic pop

// A GStreamer GL display and a context on it (the display's own GL thread), made per test.
struct GlObjects {
	GstGLDisplay *display = nullptr;
	GstGLContext *context = nullptr;

	GlObjects() = default;
	GlObjects(const GlObjects &) = delete;
	GlObjects &operator=(const GlObjects &) = delete;
	~GlObjects()
	{
		if (context)
			gst_object_unref(context);
		if (display)
			gst_object_unref(display);
	}

	// Empty on success, else why there is no GL context.
	std::string create()
	{
		display = gst_gl_display_new();
		if (!display)
			return "gst_gl_display_new made no display";
		context = newContext(nullptr);
		return context ? std::string() : "gst_gl_display_create_context failed";
	}

	// Another context on the display, sharing objects with `shareWith` (null: with none).
	// Transfer full.
	GstGLContext *newContext(GstGLContext *shareWith) const
	{
		GstGLContext *made = nullptr;
		GError *error = nullptr;
		if (!gst_gl_display_create_context(display, shareWith, &made, &error)) {
			std::fprintf(stderr, "GL context: %s\n", error ? error->message : "?");
			g_clear_error(&error);
			return nullptr;
		}
		return made;
	}
};

inline void runWork(GstGLContext *, gpointer work)
{
	(*static_cast<std::function<void()> *>(work))();
}

// Runs `work` on the context's GL thread and returns once it ran.
inline void onGlThread(GstGLContext *context, std::function<void()> work)
{
	gst_gl_context_thread_add(context, runWork, &work);
}

inline GstGLMemory *glMemoryOf(GstBuffer *buffer, guint index)
{
	GstMemory *mem = gst_buffer_peek_memory(buffer, index);
	return gst_is_gl_memory(mem) ? reinterpret_cast<GstGLMemory *>(mem) : nullptr;
}

// GStreamer 1.22's CPU transfers of GLMemory (its PBO upload and download) place planes after
// the first at GstVideoInfo's offsets, which round a 4:2:0 luma plane up to an even height,
// while each memory holds stride x component-height bytes: for odd heights they run out of the
// PBO (GL_INVALID_OPERATION) and leave chroma untouched. So the tests write the textures with
// glTexSubImage2D and read them with gst_gl_memory_read_pixels(), GStreamer's own read of a
// GLMemory (its texture, format, row length and size), instead.

// A buffer of GLMemory as GStreamer's GL elements allocate it (gst_gl_memory_setup_buffer with
// the context's default allocator), its textures holding the pattern in each plane's texels.
// Transfer full; null on failure.
inline GstBuffer *glPatternBuffer(GstGLContext *context, const GstVideoInfo &info, uint32_t seed)
{
	constexpr unsigned kTexture2D = 0x0DE1, kUnpackAlignment = 0x0CF5,
			   kUnpackRowLength = 0x0CF2;
	GstGLMemoryAllocator *allocator = gst_gl_memory_allocator_get_default(context);
	GstGLVideoAllocationParams *params = gst_gl_video_allocation_params_new(
		context, nullptr, &info, 0, nullptr, GST_GL_TEXTURE_TARGET_2D, GST_GL_RGBA);
	GstBuffer *buffer = gst_buffer_new();
	bool ok = gst_gl_memory_setup_buffer(allocator, buffer, params, nullptr, nullptr, 0);
	gst_gl_allocation_params_free(&params->parent);
	gst_object_unref(allocator);
	const PixelFormat format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	const PixelFormatInfo &pixels = **pixelFormatInfo(format);
	const Size size = sizeOf(info);
	for (uint32_t p = 0; ok && p < pixels.numPlanes; p++) {
		GstGLMemory *gl = glMemoryOf(buffer, p);
		const uint32_t rows = pixels.planes[p].rows(size.height);
		const uint64_t rowBytes = pixels.planes[p].rowBytes(size.width);
		std::vector<uint8_t> bytes(rowBytes * rows);
		for (uint32_t y = 0; y < rows; y++)
			for (uint64_t x = 0; x < rowBytes; x++)
				bytes[rowBytes * y + x] = patternByte(seed, p, y, x);
		GstGLFormat unsized{};
		guint type = 0;
		gst_gl_format_type_from_sized_gl_format(gst_gl_memory_get_texture_format(gl),
							&unsized, &type);
		onGlThread(context, [&] {
			const GstGLFuncs *f = context->gl_vtable;
			f->BindTexture(kTexture2D, gl->tex_id);
			f->PixelStorei(kUnpackAlignment, 1);
			f->PixelStorei(kUnpackRowLength, 0);
			f->TexSubImage2D(kTexture2D, 0, 0, 0, gst_gl_memory_get_texture_width(gl),
					 gst_gl_memory_get_texture_height(gl), unsized, type,
					 bytes.data());
			f->BindTexture(kTexture2D, 0);
			ok = f->GetError() == 0;
		});
	}
	if (!ok) {
		gst_buffer_unref(buffer);
		return nullptr;
	}
	return buffer;
}

// Reads every GLMemory of `buffer` with gst_gl_memory_read_pixels() (rows at the info's
// strides, as GStreamer lays a plane out) and checks the pattern: empty when every byte matches.
inline std::string readGlMemories(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed)
{
	const PixelFormat format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	const PixelFormatInfo &pixels = **pixelFormatInfo(format);
	const Size size = sizeOf(info);
	if (gst_buffer_n_memory(buffer) != pixels.numPlanes)
		return "the buffer does not hold one GLMemory per plane";
	for (uint32_t p = 0; p < pixels.numPlanes; p++) {
		GstGLMemory *gl = glMemoryOf(buffer, p);
		if (!gl)
			return "memory " + std::to_string(p) + " is not a GLMemory";
		const uint64_t stride = static_cast<uint64_t>(info.stride[p]);
		const uint32_t rows = pixels.planes[p].rows(size.height);
		std::vector<uint8_t> bytes(stride * rows);
		bool read = false;
		onGlThread(gl->mem.context,
			   [&] { read = gst_gl_memory_read_pixels(gl, bytes.data()); });
		if (!read)
			return "gst_gl_memory_read_pixels of memory " + std::to_string(p) +
			       " failed";
		for (uint32_t y = 0; y < rows; y++)
			for (uint64_t x = 0; x < pixels.planes[p].rowBytes(size.width); x++)
				if (bytes[stride * y + x] != patternByte(seed, p, y, x)) {
					char where[160];
					std::snprintf(where, sizeof where,
						      "%s %ux%u plane %u row %u byte %llu: %u, "
						      "expected %u",
						      pixelFormatName(format), size.width,
						      size.height, p, y,
						      static_cast<unsigned long long>(x),
						      bytes[stride * y + x],
						      patternByte(seed, p, y, x));
					return where;
				}
	}
	return {};
}

#endif // GPUHANDLE_GST_HAVE_GL

#if GPUHANDLE_GST_HAVE_VULKAN

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

struct Capture {
	std::mutex mutex;
	GstBuffer *buffer = nullptr;
};

inline GstPadProbeReturn captureBuffer(GstPad *, GstPadProbeInfo *info, gpointer data)
{
	auto *capture = static_cast<Capture *>(data);
	std::lock_guard<std::mutex> lock(capture->mutex);
	if (!capture->buffer)
		capture->buffer = gst_buffer_ref(probeBuffer(info));
	return GST_PAD_PROBE_OK;
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

// Runs "appsrc ! element ! capsfilter ! fakesink" on `vk`'s device for one buffer and returns
// what reached the sink (transfer full), or null with `why`.
inline GstBuffer *throughElement(const char *name, GstBuffer *input, GstCaps *inCaps,
				 GstCaps *outCaps, VulkanObjects &vk, std::string &why)
{
	GstElement *pipeline = gst_pipeline_new(nullptr);
	GstElement *src = gst_element_factory_make("appsrc", nullptr);
	GstElement *element = gst_element_factory_make(name, nullptr);
	GstElement *filter = gst_element_factory_make("capsfilter", nullptr);
	GstElement *sink = gst_element_factory_make("fakesink", nullptr);
	if (!src || !element || !filter || !sink) {
		why = std::string("an element is missing (appsrc, ") + name +
		      ", capsfilter, fakesink)";
		gst_object_unref(pipeline);
		return nullptr;
	}
	g_object_set(src, "caps", inCaps, "format", GST_FORMAT_TIME, nullptr);
	g_object_set(filter, "caps", outCaps, nullptr);
	g_object_set(sink, "sync", FALSE, nullptr);
	gst_bin_add_many(asBin(pipeline), src, element, filter, sink, nullptr);
	gst_element_link_many(src, element, filter, sink, nullptr);
	GstPad *srcPad = gst_element_get_static_pad(src, "src");
	gst_pad_add_probe(srcPad, GST_PAD_PROBE_TYPE_QUERY_UPSTREAM, answerVulkanQuery, &vk,
			  nullptr);
	gst_object_unref(srcPad);
	Capture capture;
	GstPad *sinkPad = gst_element_get_static_pad(sink, "sink");
	gst_pad_add_probe(sinkPad, GST_PAD_PROBE_TYPE_BUFFER, captureBuffer, &capture, nullptr);
	gst_object_unref(sinkPad);
	GstFlowReturn flow = GST_FLOW_OK;
	g_signal_emit_by_name(src, "push-buffer", input, &flow);
	g_signal_emit_by_name(src, "end-of-stream", &flow);
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *message = gst_bus_timed_pop_filtered(
		bus, 30 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	if (!message) {
		why = "the pipeline reached no end within 30 s";
	} else if (messageType(message) == GST_MESSAGE_ERROR) {
		GError *error = nullptr;
		gst_message_parse_error(message, &error, nullptr);
		why = std::string(name) + ": " + (error ? error->message : "error");
		g_clear_error(&error);
	}
	if (message)
		gst_message_unref(message);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	if (why.empty() && !capture.buffer)
		why = std::string(name) + " passed no buffer on";
	if (!why.empty() && capture.buffer) {
		gst_buffer_unref(capture.buffer);
		capture.buffer = nullptr;
	}
	return capture.buffer;
}

#endif // GPUHANDLE_GST_HAVE_VULKAN

} // namespace gpuhandle::test
