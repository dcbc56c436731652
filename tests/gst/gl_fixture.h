// Test fixture for the GL conversions: a GStreamer GL display and contexts made per test, GLMemory
// from GStreamer's own GL buffer pool, and reads of GLMemory as GStreamer's GL download does them.
#pragma once

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gl/gstglfuncs.h>
#include <gst/gpuhandle/gstgpuhandlegl.hpp>
#endif

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "gl_vulkan_fixture.h"

#if GPUHANDLE_GST_HAVE_GL

namespace gpuhandle::test {

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

// A buffer from GStreamer's own GL buffer pool (gst_gl_buffer_pool_new, configured for `info`
// with a GstVideoMeta, as GL elements configure theirs): its GLMemory, its plane offsets and
// memory sizes are what GStreamer makes for the info. Transfer full; null on failure. The pool
// is deactivated here and frees the buffer when it comes back.
inline GstBuffer *glPoolBuffer(GstGLContext *context, const GstVideoInfo &info)
{
	GstBufferPool *pool = gst_gl_buffer_pool_new(context);
	GstStructure *config = gst_buffer_pool_get_config(pool);
	GstCaps *caps = capsOf(info, GST_CAPS_FEATURE_MEMORY_GL_MEMORY);
	gst_buffer_pool_config_set_params(config, caps, static_cast<guint>(info.size), 0, 0);
	gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
	gst_caps_unref(caps);
	GstBuffer *buffer = nullptr;
	if (gst_buffer_pool_set_config(pool, config) && gst_buffer_pool_set_active(pool, TRUE)) {
		if (gst_buffer_pool_acquire_buffer(pool, &buffer, nullptr) != GST_FLOW_OK)
			buffer = nullptr;
		gst_buffer_pool_set_active(pool, FALSE);
	}
	gst_object_unref(pool);
	return buffer;
}

// A buffer of GStreamer's GL buffer pool holding the pattern, written through a CPU map (the
// textures are uploaded from it when the memory is next mapped for GL). Transfer full; null on
// failure.
inline GstBuffer *glPatternBuffer(GstGLContext *context, const GstVideoInfo &info, uint32_t seed)
{
	GstBuffer *buffer = glPoolBuffer(context, info);
	if (buffer && !fillBuffer(buffer, info, seed)) {
		gst_buffer_unref(buffer);
		return nullptr;
	}
	return buffer;
}

// Empty when `buffer` is laid out as GStreamer's GL buffer pool lays out a buffer of `info`
// (each memory's size, the GstVideoMeta's offsets and strides), else the first difference.
inline std::string checkPoolLayout(GstGLContext *context, GstBuffer *buffer,
				   const GstVideoInfo &info)
{
	GstBuffer *pooled = glPoolBuffer(context, info);
	if (!pooled)
		return "GStreamer's GL buffer pool gave no buffer";
	const GstVideoMeta *ours = gst_buffer_get_video_meta(buffer);
	const GstVideoMeta *theirs = gst_buffer_get_video_meta(pooled);
	std::string differs;
	if (!ours || !theirs || gst_buffer_n_memory(buffer) != gst_buffer_n_memory(pooled) ||
	    ours->n_planes != theirs->n_planes)
		differs = "the buffers differ in their video metas or memory counts";
	for (guint p = 0; differs.empty() && p < gst_buffer_n_memory(buffer); p++) {
		const gsize size = gst_buffer_peek_memory(buffer, p)->size;
		const gsize pooledSize = gst_buffer_peek_memory(pooled, p)->size;
		char what[160];
		if (size != pooledSize || ours->offset[p] != theirs->offset[p] ||
		    ours->stride[p] != theirs->stride[p]) {
			std::snprintf(what, sizeof what,
				      "%s plane %u: memory of %zu bytes at offset %zu, stride %d; "
				      "GStreamer's pool: %zu bytes at %zu, stride %d",
				      formatName(GST_VIDEO_INFO_FORMAT(&info)), p, size,
				      ours->offset[p], ours->stride[p], pooledSize,
				      theirs->offset[p], theirs->stride[p]);
			differs = what;
		}
	}
	gst_buffer_unref(pooled);
	return differs;
}

// What gldownload (GStreamer 1.22, to system memory) does to a GLMemory buffer before a CPU
// consumer maps it: a wait for its GstGLSyncMeta, and each memory's texture read into its PBO
// (gst_gl_memory_pbo_download_transfer). Then the buffer is mapped and checked as that consumer
// would (checkBuffer): empty when every byte matches.
inline std::string checkGlDownload(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed)
{
	GstGLMemory *first = glMemoryOf(buffer, 0);
	if (!first)
		return "memory 0 is not a GLMemory";
	if (GstGLSyncMeta *meta = glSyncMeta(buffer))
		gst_gl_sync_meta_wait(meta, first->mem.context);
	for (guint p = 0; p < gst_buffer_n_memory(buffer); p++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, p);
		if (gst_is_gl_memory_pbo(mem))
			gst_gl_memory_pbo_download_transfer(
				reinterpret_cast<GstGLMemoryPBO *>(mem));
	}
	return checkBuffer(buffer, info, seed);
}

// Answers the GL elements' display and context queries with the test's own display and
// context, so that they work in the context the test's textures live in.
inline GstPadProbeReturn answerGlQuery(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
	GstQuery *query = probeQuery(info);
	if (!query || !isContextQuery(query))
		return GST_PAD_PROBE_OK;
	auto *gl = static_cast<GlObjects *>(data);
	GstElement *element = gst_pad_get_parent_element(pad);
	const bool answered =
		gst_gl_handle_context_query(element, query, gl->display, gl->context, gl->context);
	gst_object_unref(element);
	return answered ? GST_PAD_PROBE_HANDLED : GST_PAD_PROBE_OK;
}

// Runs `buffer` (GLMemory of `gl`'s context) through GStreamer's gldownload to system memory
// and checks what a CPU consumer then maps (checkBuffer): empty when every byte matches.
inline std::string checkThroughGlDownload(GstBuffer *buffer, const GstVideoInfo &info,
					  uint32_t seed, GlObjects &gl)
{
	GstCaps *textures = capsOf(info, GST_CAPS_FEATURE_MEMORY_GL_MEMORY);
	GstCaps *system = capsOf(info, nullptr);
	std::string why;
	GstBuffer *downloaded =
		throughElement("gldownload", buffer, textures, system, answerGlQuery, &gl, why);
	gst_caps_unref(system);
	gst_caps_unref(textures);
	if (!downloaded)
		return why;
	std::string checked = checkBuffer(downloaded, info, seed);
	gst_buffer_unref(downloaded);
	return checked;
}

// Reads every GLMemory of `buffer`'s texture with gst_gl_memory_read_pixels() alone (rows at the
// info's strides, as GStreamer lays a plane out), not through its CPU map, and checks the
// pattern: empty when every byte matches.
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

} // namespace gpuhandle::test

#endif // GPUHANDLE_GST_HAVE_GL
