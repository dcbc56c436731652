// GstGLMemory <-> gpuhandle frames; GStreamer's GL context as a gpuhandle OpenGL backend.
#include <gst/gpuhandle/gstgpuhandlegl.hpp>

#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>

#include <algorithm>
#include <array>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <string_view>

#include <EGL/egl.h>
#include <gst/gl/gstglfuncs.h>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_gl_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_gl_debug

using namespace gpuhandle;

namespace {

constexpr uint32_t kGlTexture2D = 0x0DE1;
constexpr uint32_t kGlTextureRectangle = 0x84F5;
constexpr uint32_t kGlTextureExternalOes = 0x8D65;
constexpr uint32_t kGlUnsignedByte = 0x1401;
constexpr uint32_t kGlSyncGpuCommandsComplete = 0x9117;

void initDebug()
{
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_gl_debug, "gpuhandlegl", 0,
					"gpuhandle GL memory and backend");
	});
}

// GObject's type-check and meta macros cast C-style; their expansions land here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
bool isGlContext(gpointer object)
{
	return object && GST_IS_GL_CONTEXT(object);
}

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

// GST_OBJECT_LOCK's mutex, without the macro's C cast.
GMutex *objectLock(gpointer object)
{
	return &static_cast<GstObject *>(object)->lock;
}

gpointer unrefOnOwnThread(gpointer context)
{
	gst_object_unref(context);
	return nullptr;
}

// A reference on a GstGLContext held by gpuhandle objects (a backend's Context, frame anchors,
// executors). A context's last unref finalizes it, which waits for its GL thread to end: when
// that would happen on the GL thread itself, the unref is handed to a short-lived thread.
class GlContextHold final : public KeepAlive
{
public:
	explicit GlContextHold(GstGLContext *c)
		: context(static_cast<GstGLContext *>(gst_object_ref(c)))
	{
	}
	GlContextHold(const GlContextHold &) = delete;
	GlContextHold &operator=(const GlContextHold &) = delete;
	~GlContextHold() override
	{
		GThread *glThread = gst_gl_context_get_thread(context);
		const bool onGlThread = glThread == g_thread_self();
		if (glThread)
			g_thread_unref(glThread);
		if (!onGlThread) {
			gst_object_unref(context);
			return;
		}
		GError *error = nullptr;
		if (GThread *other = g_thread_try_new("gpuhandle-gl-unref", unrefOnOwnThread,
						      context, &error)) {
			g_thread_unref(other);
			return;
		}
		GST_WARNING(
			"The GL context %p is kept (leaked) rather than finalized on its own GL "
			"thread, where it would wait for itself: no thread could be started (%s).",
			static_cast<void *>(context), error ? error->message : "unknown");
		g_clear_error(&error);
	}

	GstGLContext *const context;
};
using GlContextHoldRef = std::shared_ptr<GlContextHold>;

void runWork(GstGLContext *, gpointer work)
{
	(*static_cast<std::function<void()> *>(work))();
}

// Runs `work` on the context's GL thread and returns once it ran (inline when called there).
void onGlThread(GstGLContext *context, std::function<void()> work)
{
	gst_gl_context_thread_add(context, runWork, &work);
}

// gst_gl_context_thread_add as a GlExecutor: blocking, and inline on the GL thread (as
// gl_sync.h requires of a blocking executor). It keeps the context alive.
GlExecutor executorOf(GlContextHoldRef hold)
{
	return [hold = std::move(hold)](std::function<void()> work) {
		onGlThread(hold->context, std::move(work));
	};
}

void *eglContextOf(GstGLContext *context)
{
	return reinterpret_cast<void *>(gst_gl_context_get_gl_context(context));
}

// The anchor of frames over GLMemory: the buffer, then the context it was made in.
struct GlBufferAnchor final : KeepAlive {
	GlBufferAnchor(GstBuffer *b, GlContextHoldRef h)
		: buffer(gst_buffer_ref(b)), hold(std::move(h))
	{
	}
	GlBufferAnchor(const GlBufferAnchor &) = delete;
	GlBufferAnchor &operator=(const GlBufferAnchor &) = delete;
	// The buffer first: its memories then never drop the context's last reference.
	~GlBufferAnchor() override { gst_buffer_unref(buffer); }

	GstBuffer *const buffer;
	const GlContextHoldRef hold;
};

// One backend per context, found through a weak reference in the context's qdata (the backend
// holds the context: a strong reference there would be a cycle). Opening runs GL work on the
// context's thread, so it is not done under the lock: two first callers may both open one, and
// the first to store it wins.
std::mutex gCacheMutex;

GQuark backendQuark()
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-gl-backend");
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

const char *videoFormatName(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	return name ? name : "unknown";
}

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

Colorimetry colorimetryOfInfo(const GstVideoInfo &info)
{
	const GstVideoColorimetry &c = info.colorimetry;
	Result<Colorimetry> mapped = fromGstColorimetry(GstColorimetry{
		static_cast<uint32_t>(c.range), static_cast<uint32_t>(c.matrix),
		static_cast<uint32_t>(c.transfer), static_cast<uint32_t>(c.primaries) });
	return mapped ? *mapped : Colorimetry{};
}

// GStreamer's texture size of `plane`: the plane's component size (RGB and gray formats: the
// frame's), which is what gpuhandle's texel counts give for the formats both describe alike.
std::array<uint32_t, 2> glPlaneSize(const GstVideoInfo &info, uint32_t plane)
{
	if (!GST_VIDEO_INFO_IS_YUV(&info))
		return { GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info) };
	gint components[GST_VIDEO_MAX_COMPONENTS] = {};
	gst_video_format_info_component(info.finfo, plane, components);
	return { static_cast<uint32_t>(GST_VIDEO_INFO_COMP_WIDTH(&info, components[0])),
		 static_cast<uint32_t>(GST_VIDEO_INFO_COMP_HEIGHT(&info, components[0])) };
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
	Result<SyncPoint> point = importGlSync(
		GlSyncSync{ sync, eglContextOf(context), GlFlavour::Egl }, executorOf(hold), hold);
	if (!point) {
		// Nothing was adopted: the sync is still ours to delete.
		onGlThread(context,
			   [&] { context->gl_vtable->DeleteSync(static_cast<GLsync>(sync)); });
		gst_gl_sync_meta_wait_cpu(meta, context);
		return SyncPoint::noop();
	}
	return point;
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
				executorOf(hold), hold);
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

Result<BackendRef> glBackendFor(GstGLContext *context)
{
	initDebug();
	if (!context)
		return Error(ErrorCode::NullHandle, "context", "The GstGLContext is null.");
	if (!isGlContext(context))
		return Error(ErrorCode::InvalidArgument, "context",
			     "The object given as the GL context is not a GstGLContext.");
	const GstGLPlatform platform = gst_gl_context_get_gl_platform(context);
	if (!(platform & GST_GL_PLATFORM_EGL)) {
		gchar *name = gst_gl_platform_to_string(platform);
		Error error = Error::format(
			ErrorCode::NotSupported, "context",
			"The GstGLContext runs on the %s platform; gpuhandle's OpenGL backend "
			"works in EGL contexts (GST_GL_PLATFORM=egl).",
			name ? name : "unknown");
		g_free(name);
		return error;
	}
	auto *object = reinterpret_cast<GObject *>(context);
	if (BackendRef cached = cachedBackend(object))
		return cached;
	void *eglContext = eglContextOf(context);
	if (!eglContext)
		return Error(ErrorCode::InvalidState, "context",
			     "The GstGLContext has no EGL context yet: create it first "
			     "(gst_gl_display_create_context or gst_gl_context_create).");
	// The display the context is current on, asked where it is current: exactly the EGLDisplay
	// its objects belong to, whatever kind of GstGLDisplay made it (EGL, EGL device, GBM).
	void *display = nullptr;
	void *current = nullptr;
	onGlThread(context, [&] {
		display = eglGetCurrentDisplay();
		current = eglGetCurrentContext();
	});
	if (!display || current != eglContext)
		return Error::format(
			ErrorCode::InvalidState, "context",
			"The GstGLContext's EGL context %p is not current on its GL thread "
			"(found %p there).",
			eglContext, current);
	auto hold = std::make_shared<GlContextHold>(context);
	GlContext native;
	native.display = display;
	native.context = eglContext;
	native.flavour = GlFlavour::Egl;
	Result<ContextRef> made = Context::create(std::move(native), hold);
	if (!made)
		return std::move(made).error();
	BackendOpenOptions options;
	options.context = std::move(*made);
	options.glExecutor = executorOf(hold);
	Result<BackendRef> opened = openBackend(BackendKind::OpenGL, options);
	if (!opened)
		return std::move(opened).error();
	GST_DEBUG("gpuhandle OpenGL backend opened in GL context %p: %s",
		  static_cast<void *>(context), (*opened)->deviceInfo().toString().c_str());
	return cacheBackend(object, std::move(*opened));
}

Result<Frame> frameFromGlBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	initDebug();
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

Result<GstBuffer *> glBufferFromFrame(const Frame &frame, GstGLContext *context,
				      const GstVideoInfo &info, WaitDuration timeout)
{
	initDebug();
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
	GstGLMemoryAllocator *allocator = gst_gl_memory_allocator_get_default(context);
	GstBuffer *buffer = gst_buffer_new();
	for (uint32_t p = 0; p < planes; p++) {
		auto *user = new std::shared_ptr<KeptFrame>(kept);
		GstGLVideoAllocationParams *params =
			gst_gl_video_allocation_params_new_wrapped_texture(
				context, nullptr, &info, p, nullptr, targets[p], texFormats[p],
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
	// Offsets counted across the memories, as GstVideoMeta defines them: a GL memory holds
	// stride x component-height bytes, so info.offset (which rounds NV12's luma height up to
	// even) would point past plane 0's memory for odd heights.
	std::array<gsize, GST_VIDEO_MAX_PLANES> offsets{};
	std::array<gint, GST_VIDEO_MAX_PLANES> strides{};
	gsize at = 0;
	for (uint32_t p = 0; p < planes; p++) {
		offsets[p] = at;
		at += gst_buffer_peek_memory(buffer, p)->size;
	}
	std::copy(std::begin(info.stride), std::end(info.stride), strides.begin());
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, videoFormat,
				       GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info),
				       planes, offsets.data(), strides.data());
	// GL consumers wait on the GPU for whatever runs in the context before the buffer is out.
	GstGLSyncMeta *meta = gst_buffer_add_gl_sync_meta(context, buffer);
	if (meta)
		gst_gl_sync_meta_set_sync_point(meta, context);
	return buffer;
}

Status ensureGlContext(GstElement *element, GstPadDirection direction, GstGLDisplay **display,
		       GstGLContext **otherContext, GstGLContext **context)
{
	initDebug();
	if (!element || !display || !otherContext || !context)
		return Error(ErrorCode::NullHandle, "element",
			     "ensureGlContext needs the element and its display, other-context and "
			     "context fields.");
	if (!gst_gl_ensure_element_data(element, display, otherContext) || !*display)
		return Error(ErrorCode::NotSupported, "display",
			     "No GL display was shared with the element and none could be made.");
	if (!*context)
		gst_gl_query_local_gl_context(element, direction, context);
	if (*context)
		return {};
	// Any context of the display's (one per thread), else a new one sharing with the
	// application's: GStreamer's GL elements do the same, so neighbours end up sharing.
	GError *error = nullptr;
	g_mutex_lock(objectLock(*display));
	do {
		if (*context) {
			gst_object_unref(*context);
			*context = nullptr;
		}
		*context = gst_gl_display_get_gl_context_for_thread(*display, nullptr);
		if (!*context &&
		    !gst_gl_display_create_context(*display, *otherContext, context, &error))
			break;
	} while (!gst_gl_display_add_context(*display, *context));
	g_mutex_unlock(objectLock(*display));
	if (!*context || error) {
		Error failed = Error::format(ErrorCode::Backend, "context",
					     "GStreamer could not create a GL context: %s",
					     error ? error->message : "no reason given");
		g_clear_error(&error);
		if (*context) {
			gst_object_unref(*context);
			*context = nullptr;
		}
		return failed;
	}
	return {};
}

} // namespace gpuhandle::gst
