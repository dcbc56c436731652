// GLMemory buffers as gpuhandle frames of their textures, without a copy (frameFromGlBuffer).
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>

#include "gstgpuhandleglinternal.h"
#include "gstgpuhandlegpushared.h"

#include <memory>
#include <utility>

#include <gst/gl/gstglfuncs.h>
#include <gst/gpuhandle/gstgpuhandlegl.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_gl_debug

using namespace gpuhandle;
using namespace gpuhandle::gst::detail;

namespace {

// GStreamer's meta getter casts C-style; its expansion lands here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
GstGLSyncMeta *glSyncMetaOf(GstBuffer *buffer)
{
	return gst_buffer_get_gl_sync_meta(buffer);
}
#pragma GCC diagnostic pop

// GST_MAP_GL lies past GstMapFlags' named values, as GStreamer defines it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
GstMapFlags glReadMap()
{
	return static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_GL);
}
#pragma GCC diagnostic pop

Colorimetry colorimetryOfInfo(const GstVideoInfo &info)
{
	const GstVideoColorimetry &c = info.colorimetry;
	Result<Colorimetry> mapped = fromGstColorimetry(GstColorimetry{
		static_cast<uint32_t>(c.range), static_cast<uint32_t>(c.matrix),
		static_cast<uint32_t>(c.transfer), static_cast<uint32_t>(c.primaries) });
	return mapped ? *mapped : Colorimetry{};
}

// The frame's acquire point after a GstGLSyncMeta: the context's GPU stream waits for the
// producer (gst_gl_sync_meta_wait), then a GLsync set after that wait is the point. Without
// sync objects the producer is waited for on the CPU instead.
Result<SyncPoint> acquireAfterSyncMeta(GstBuffer *buffer, const GlContextHoldRef &hold)
{
	GstGLSyncMeta *meta = glSyncMetaOf(buffer);
	if (!meta)
		return SyncPoint::noop();
	GstGLContext *context = hold->context;
	void *sync = nullptr;
	onGlThread(context, [&] {
		gst_gl_sync_meta_wait(meta, context);
		const GstGLFuncs *gl = context->gl_vtable;
		if (gl->FenceSync && gl->DeleteSync) {
			sync = gl->FenceSync(kGlSyncGpuCommandsComplete, 0);
			gl->Flush();
		}
	});
	if (!sync) {
		gst_gl_sync_meta_wait_cpu(meta, context);
		return SyncPoint::noop();
	}
	Result<SyncPoint> point =
		importGlSync(GlSyncSync{ sync, eglContextOf(context), GlFlavour::Egl },
			     glExecutorOf(hold), hold);
	if (!point) {
		// Nothing was adopted: the sync is still ours to delete.
		onGlThread(context,
			   [&] { context->gl_vtable->DeleteSync(static_cast<GLsync>(sync)); });
		gst_gl_sync_meta_wait_cpu(meta, context);
		return SyncPoint::noop();
	}
	return point;
}

// The sized internal format GStreamer made the texture of `memory` with: its GstGLFormat may be
// unsized (gst_gl_memory_setup_buffer gives gst_gl_format_from_video_info's), and GStreamer
// sizes it for the context when it creates the texture, as here.
uint32_t textureInternalFormat(GstGLMemory *memory)
{
	GstGLFormat unsized{};
	guint type = 0;
	gst_gl_format_type_from_sized_gl_format(gst_gl_memory_get_texture_format(memory), &unsized,
						&type);
	return gst_gl_sized_gl_format_from_gl_format_type(memory->mem.context, unsized, type);
}

} // namespace

namespace gpuhandle::gst {

Result<Frame> frameFromGlBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	initGlDebug();
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const guint memories = gst_buffer_n_memory(buffer);
	for (guint i = 0; i < memories; i++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		if (!gst_is_gl_memory(mem))
			return Error::format(
				ErrorCode::WrongKind, "buffer.memory",
				"Memory %u of the buffer is a %s memory, not a GstGLMemory.", i,
				mem->allocator && mem->allocator->mem_type
					? mem->allocator->mem_type
					: "typeless");
	}
	const uint32_t planes = GST_VIDEO_INFO_N_PLANES(&info);
	if (memories == 0 || memories != planes)
		return Error::format(
			ErrorCode::InvalidArgument, "buffer.memory",
			"The buffer has %u GL memories, but %s has %u planes: GLMemory "
			"buffers hold one texture per plane.",
			memories, videoFormatName(GST_VIDEO_INFO_FORMAT(&info)), planes);
	Result<PixelFormat> format = pixelFormatOfInfo(info);
	if (!format)
		return std::move(format).error();
	Result<PlaneMappings> expected = planeApiFormats(PlaneApi::GlInternal, *format);
	if (!expected)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "gpuhandle has no GL texture formats for %s: %s",
				     pixelFormatName(*format), expected.error().message().c_str());
	const PixelFormatInfo &pixels = **pixelFormatInfo(*format);
	auto *first = reinterpret_cast<GstGLMemory *>(gst_buffer_peek_memory(buffer, 0));
	auto hold = std::make_shared<GlContextHold>(first->mem.context);
	auto anchor = std::make_shared<GlBufferAnchor>(buffer, hold);
	void *eglContext = eglContextOf(hold->context);
	FrameDesc desc;
	desc.format = *format;
	desc.width = GST_VIDEO_INFO_WIDTH(&info);
	desc.height = GST_VIDEO_INFO_HEIGHT(&info);
	desc.colorimetry = colorimetryOfInfo(info);
	desc.numResources = desc.numPlanes = planes;
	for (uint32_t p = 0; p < planes; p++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, p);
		auto *gl = reinterpret_cast<GstGLMemory *>(mem);
		if (gl->mem.context != hold->context || gl->plane != p)
			return Error::format(
				ErrorCode::InvalidArgument, "buffer.memory",
				"Memory %u of the buffer is plane %u of %s context %p; the "
				"memories must be planes 0..%u in order, of one context.",
				p, gl->plane, gl->mem.context == hold->context ? "its" : "GL",
				static_cast<void *>(gl->mem.context), planes - 1);
		const uint32_t texFormat = textureInternalFormat(gl);
		const PlaneInfo &plane = pixels.planes[p];
		const uint32_t width = static_cast<uint32_t>(gst_gl_memory_get_texture_width(gl));
		const uint32_t height = static_cast<uint32_t>(gst_gl_memory_get_texture_height(gl));
		if (texFormat != expected->planes[p].value ||
		    width != plane.rowTexels(desc.width) || height != plane.rows(desc.height))
			return Error::format(
				ErrorCode::NotSupported, "buffer.memory",
				"GStreamer holds plane %u of a %ux%u %s frame as a %ux%u texture "
				"of GL format 0x%x; gpuhandle's %s plane is %ux%u %s (0x%x), so "
				"the texture has no gpuhandle equivalent.",
				p, desc.width, desc.height,
				videoFormatName(GST_VIDEO_INFO_FORMAT(&info)), width, height,
				texFormat, pixelFormatName(*format), plane.rowTexels(desc.width),
				plane.rows(desc.height), expected->planes[p].name,
				expected->planes[p].value);
		// A GL map uploads what a CPU writer left in the memory, so the texture is current.
		GstMapInfo map;
		if (!gst_memory_map(mem, &map, glReadMap()))
			return Error::format(
				ErrorCode::Backend, "buffer.memory",
				"Mapping GL memory %u for GL (to upload its CPU contents) "
				"failed.",
				p);
		gst_memory_unmap(mem, &map);
		Result<GlTexture> texture = GlTexture::create(
			{ gl->tex_id, gst_gl_texture_target_to_gl(gl->tex_target), texFormat, width,
			  height, eglContext, GlFlavour::Egl, anchor });
		if (!texture)
			return std::move(texture).error();
		desc.resources[p] = std::move(*texture);
		desc.planes[p] = PlaneView{ p, 0, 0, 0 }; // a texture has no CPU stride
	}
	Result<SyncPoint> acquire = acquireAfterSyncMeta(buffer, hold);
	if (!acquire)
		return std::move(acquire).error();
	desc.acquire = std::move(*acquire);
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle::gst
