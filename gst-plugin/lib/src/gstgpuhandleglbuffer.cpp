// GLMemory buffers wrapping gpuhandle frames' textures, laid out as GStreamer's GL buffer pool
// lays out its own (glBufferFromFrame).
#include <gpuhandle/format_mappings.h>

#include "gstgpuhandleglinternal.h"
#include "gstgpuhandlegpushared.h"

#include <array>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include <gst/gl/gstglfuncs.h>
#include <gst/gpuhandle/gstgpuhandlegl.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_gl_debug

using namespace gpuhandle;
using namespace gpuhandle::gst::detail;

namespace {

constexpr uint32_t kGlTexture2D = 0x0DE1;
constexpr uint32_t kGlTextureRectangle = 0x84F5;
constexpr uint32_t kGlTextureExternalOes = 0x8D65;
constexpr uint32_t kGlUnsignedByte = 0x1401;

// Whether GstGLMemory holds `format` (GST_GL_MEMORY_VIDEO_FORMATS_STR of the installed
// headers): gst_gl_format_from_video_info() asserts on any other.
bool isGlMemoryFormat(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	if (!name || format == GST_VIDEO_FORMAT_UNKNOWN)
		return false;
	const std::string_view list = GST_GL_MEMORY_VIDEO_FORMATS_STR;
	const std::string_view wanted = name;
	size_t at = 0;
	while ((at = list.find(wanted, at)) != std::string_view::npos) {
		const size_t end = at + wanted.size();
		const bool startsToken = at == 0 || list[at - 1] == ' ' || list[at - 1] == '{';
		const bool endsToken = end == list.size() || list[end] == ',' || list[end] == '}' ||
				       list[end] == ' ';
		if (startsToken && endsToken)
			return true;
		at = end;
	}
	return false;
}

// GStreamer's texture size of `plane`: the plane's component size (RGB and gray formats: the
// frame's), which is what gpuhandle's texel counts give for the formats both describe alike.
std::array<uint32_t, 2> glPlaneSize(const GstVideoInfo &info, uint32_t plane)
{
	if (!GST_VIDEO_INFO_IS_YUV(&info))
		return { static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info)),
			 static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)) };
	gint components[GST_VIDEO_MAX_COMPONENTS] = {};
	gst_video_format_info_component(info.finfo, plane, components);
	return { static_cast<uint32_t>(GST_VIDEO_INFO_COMP_WIDTH(&info, components[0])),
		 static_cast<uint32_t>(GST_VIDEO_INFO_COMP_HEIGHT(&info, components[0])) };
}

// `info` laid out as GStreamer's GL buffer pool lays out its GLMemory (gstglbufferpool.c's
// set_config): no padding between planes, each plane's offset the sum of the memories before it
// (gst_gl_get_plane_data_size: stride x component height). GLMemory's CPU transfers place a
// plane at gst_gl_get_plane_start(), the info's offset less those sizes, inside its memory: with
// gst_video_info_set_format()'s offsets, which round a 4:2:0 luma plane up to an even height,
// chroma of an odd-height frame would start a row into a memory holding exactly its rows, and
// the transfers would run a row past it: out of the PBO (glReadPixels fails, chroma is left
// zero) or past the memory's CPU copy (glTexSubImage2D reads beyond it).
GstVideoInfo glMemoryLayout(const GstVideoInfo &info)
{
	GstVideoInfo layout = info;
	layout.size = 0;
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&layout); p++) {
		layout.offset[p] = layout.size;
		layout.size += gst_gl_get_plane_data_size(&layout, nullptr, p);
	}
	return layout;
}

// What the memories of a buffer made by glBufferFromFrame share: the frame (its textures and
// what they come from) and the context. When the last memory goes, GStreamer's GL work on the
// textures is behind a GLsync of the context, and the frame's release gate is signalled with it.
struct KeptFrame {
	KeptFrame(Frame f, GlContextHoldRef h) : frame(std::move(f)), hold(std::move(h)) {}
	KeptFrame(const KeptFrame &) = delete;
	KeptFrame &operator=(const KeptFrame &) = delete;
	~KeptFrame()
	{
		if (frame.release().isNone())
			return;
		GstGLContext *context = hold->context;
		void *sync = nullptr;
		onGlThread(context, [&] {
			const GstGLFuncs *gl = context->gl_vtable;
			if (gl->FenceSync && gl->DeleteSync) {
				sync = gl->FenceSync(kGlSyncGpuCommandsComplete, 0);
				gl->Flush();
			} else {
				gl->Finish();
			}
		});
		SyncPoint done;
		if (sync) {
			Result<SyncPoint> point = importGlSync(
				GlSyncSync{ sync, eglContextOf(context), GlFlavour::Egl },
				glExecutorOf(hold), hold);
			if (point) {
				done = std::move(*point);
			} else {
				onGlThread(context, [&] {
					context->gl_vtable->DeleteSync(static_cast<GLsync>(sync));
					context->gl_vtable->Finish();
				});
			}
		}
		if (Status signalled = frame.release().signal(std::move(done)); !signalled)
			GST_WARNING("Signalling the release gate of a %s frame failed: %s",
				    pixelFormatName(frame.format()),
				    signalled.error().message().c_str());
	}

	Frame frame;
	GlContextHoldRef hold;
};

void dropKeptFrame(gpointer kept)
{
	delete static_cast<std::shared_ptr<KeptFrame> *>(kept);
}

bool glTargetOf(uint32_t target, GstGLTextureTarget &out)
{
	switch (target) {
	case kGlTexture2D: out = GST_GL_TEXTURE_TARGET_2D; return true;
	case kGlTextureRectangle: out = GST_GL_TEXTURE_TARGET_RECTANGLE; return true;
	case kGlTextureExternalOes: out = GST_GL_TEXTURE_TARGET_EXTERNAL_OES; return true;
	default: return false;
	}
}

// Whether textures of `texture`'s context can be used in `context`: the same EGL context, or a
// GStreamer context the frame came from (frameFromGlBuffer) that shares with it.
bool usableIn(const GlTexture &texture, GstGLContext *context)
{
	if (texture.desc().context == eglContextOf(context))
		return true;
	const auto *anchor = dynamic_cast<const GlBufferAnchor *>(texture.desc().anchor.get());
	return anchor && gst_gl_context_can_share(context, anchor->hold->context);
}

} // namespace

namespace gpuhandle::gst {

Result<GstBuffer *> glBufferFromFrame(const Frame &frame, GstGLContext *context,
				      const GstVideoInfo &info, WaitDuration timeout)
{
	initGlDebug();
	if (!context)
		return Error(ErrorCode::NullHandle, "context", "The GstGLContext is null.");
	if (!isGlContext(context))
		return Error(ErrorCode::InvalidArgument, "context",
			     "The object given as the GL context is not a GstGLContext.");
	const GstVideoFormat videoFormat = GST_VIDEO_INFO_FORMAT(&info);
	Result<PixelFormat> format = pixelFormatOfInfo(info);
	if (!format)
		return std::move(format).error();
	if (!isGlMemoryFormat(videoFormat))
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "GstGLMemory does not hold %s (it is not in "
				     "GST_GL_MEMORY_VIDEO_FORMATS_STR).",
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
	std::array<const GlTexture *, GST_VIDEO_MAX_PLANES> textures{};
	std::array<GstGLFormat, GST_VIDEO_MAX_PLANES> texFormats{};
	std::array<GstGLTextureTarget, GST_VIDEO_MAX_PLANES> targets{};
	for (uint32_t p = 0; p < planes; p++) {
		const PlaneView &view = frame.plane(p);
		const Resource &resource = frame.resource(view.resource);
		textures[p] = resource.get<GlTexture>();
		if (!textures[p])
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"Plane %u of the frame lives in a %s resource, not a GL "
				"texture.",
				p, resourceKindName(resource.kind()));
		for (uint32_t q = 0; q < p; q++)
			if (frame.plane(q).resource == view.resource)
				return Error::format(
					ErrorCode::FormatMismatch, "frame",
					"Planes %u and %u share one texture; GLMemory holds "
					"one texture per plane.",
					q, p);
		const GlTextureDesc &t = textures[p]->desc();
		if (!usableIn(*textures[p], context))
			return Error::format(
				ErrorCode::DeviceMismatch, "frame",
				"Plane %u's texture %u belongs to EGL context %p, which is not "
				"GStreamer's context %p nor one known to share with it.",
				p, t.name, t.context, eglContextOf(context));
		// The memory carries the format as GStreamer's own GLMemory does (often unsized:
		// its CPU transfers are written for those); the texture has the sized one GStreamer
		// would have created for it.
		texFormats[p] = gst_gl_format_from_video_info(context, &info, p);
		const uint32_t sized = gst_gl_sized_gl_format_from_gl_format_type(
			context, texFormats[p], kGlUnsignedByte);
		const std::array<uint32_t, 2> size = glPlaneSize(info, p);
		if (t.internalFormat != sized || t.width != size[0] || t.height != size[1] ||
		    !glTargetOf(t.target, targets[p]))
			return Error::format(
				ErrorCode::FormatMismatch, "frame",
				"Plane %u's texture is %ux%u of GL format 0x%x (target 0x%x); "
				"GStreamer holds plane %u of %dx%d %s in a %ux%u texture of format "
				"0x%x (2D, rectangle or external).",
				p, t.width, t.height, t.internalFormat, t.target, p,
				GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info),
				videoFormatName(videoFormat), size[0], size[1], sized);
	}
	// GL consumers in GStreamer read at once: the producer's work is waited for here.
	if (Status acquired = frame.acquire().wait(timeout); !acquired)
		return std::move(acquired).error();
	auto kept = std::make_shared<KeptFrame>(frame, std::make_shared<GlContextHold>(context));
	GstVideoInfo layout = glMemoryLayout(info); // the meta takes mutable arrays
	GstGLMemoryAllocator *allocator = gst_gl_memory_allocator_get_default(context);
	GstBuffer *buffer = gst_buffer_new();
	for (uint32_t p = 0; p < planes; p++) {
		auto *user = new std::shared_ptr<KeptFrame>(kept);
		GstGLVideoAllocationParams *params =
			gst_gl_video_allocation_params_new_wrapped_texture(
				context, nullptr, &layout, p, nullptr, targets[p], texFormats[p],
				textures[p]->desc().name, user, dropKeptFrame);
		GstGLBaseMemory *mem =
			gst_gl_base_memory_alloc(&allocator->parent, &params->parent);
		gst_gl_allocation_params_free(&params->parent);
		if (!mem) {
			delete user; // GStreamer calls the notify only for a memory it made
			gst_buffer_unref(buffer);
			gst_object_unref(allocator);
			return Error::format(
				ErrorCode::Backend, "frame",
				"GStreamer made no GLMemory wrapping texture %u of plane %u.",
				textures[p]->desc().name, p);
		}
		gst_buffer_append_memory(buffer, &mem->mem);
	}
	gst_object_unref(allocator);
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, videoFormat,
				       GST_VIDEO_INFO_WIDTH(&layout),
				       GST_VIDEO_INFO_HEIGHT(&layout), planes, layout.offset,
				       layout.stride);
	// GStreamer's GL filters sample a GLMemory with the parameters GStreamer gives its own
	// textures (linear filtering, clamped to the edge) and set none themselves: a texture made
	// elsewhere (gpuhandle's GL backend uses nearest filtering) would scale differently.
	// One hop to the GL thread per frame: the sync point is set there too (GStreamer runs
	// set_sync_point inline on its GL thread).
	GstGLSyncMeta *meta = gst_buffer_add_gl_sync_meta(context, buffer);
	auto onContext = [&] {
		const GstGLFuncs *gl = context->gl_vtable;
		for (uint32_t p = 0; p < planes; p++) {
			const GLenum target = gst_gl_texture_target_to_gl(targets[p]);
			GLint bound = 0;
			gl->GetIntegerv(targets[p] == GST_GL_TEXTURE_TARGET_2D
						? GL_TEXTURE_BINDING_2D
					: targets[p] == GST_GL_TEXTURE_TARGET_RECTANGLE
						? GL_TEXTURE_BINDING_RECTANGLE
						: GL_TEXTURE_BINDING_EXTERNAL_OES,
					&bound);
			gl->BindTexture(target, textures[p]->desc().name);
			gl->TexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
			gl->TexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
			gl->TexParameteri(target, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
			gl->TexParameteri(target, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
			gl->BindTexture(target, static_cast<GLuint>(bound));
		}
		// GL consumers wait on the GPU for whatever ran in the context before the buffer
		// is out, these parameter changes included.
		if (meta)
			gst_gl_sync_meta_set_sync_point(meta, context);
	};
	onGlThread(context, std::ref(onContext)); // by reference: no allocation per frame
	return buffer;
}

} // namespace gpuhandle::gst
