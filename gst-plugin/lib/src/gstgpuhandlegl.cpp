// GStreamer's GL context as a gpuhandle OpenGL backend, and the GL display and context elements
// share; the GL thread and context references the GLMemory conversions build on.
#include "gstgpuhandleglinternal.h"
#include "gstgpuhandlegpushared.h"

#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include <EGL/egl.h>
#include <gst/gpuhandle/gstgpuhandlegl.hpp>

GST_DEBUG_CATEGORY(gst_gpu_handle_gl_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_gl_debug

using namespace gpuhandle;

namespace gpuhandle::gst::detail {

void initGlDebug()
{
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_gl_debug, "gpuhandlegl", 0,
					"gpuhandle GL memory and backend");
	});
}

// GObject's type-check macros cast C-style; their expansions land here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
bool isGlContext(gpointer object)
{
	return object && GST_IS_GL_CONTEXT(object);
}
#pragma GCC diagnostic pop

namespace {

gpointer unrefOnOwnThread(gpointer context)
{
	gst_object_unref(context);
	return nullptr;
}

void runWork(GstGLContext *, gpointer work)
{
	(*static_cast<std::function<void()> *>(work))();
}

} // namespace

GlContextHold::~GlContextHold()
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
	if (GThread *other =
		    g_thread_try_new("gpuhandle-gl-unref", unrefOnOwnThread, context, &error)) {
		g_thread_unref(other);
		return;
	}
	GST_WARNING("The GL context %p is kept (leaked) rather than finalized on its own GL "
		    "thread, where it would wait for itself: no thread could be started (%s).",
		    static_cast<void *>(context), error ? error->message : "unknown");
	g_clear_error(&error);
}

void onGlThread(GstGLContext *context, std::function<void()> work)
{
	gst_gl_context_thread_add(context, runWork, &work);
}

GlExecutor glExecutorOf(GlContextHoldRef hold)
{
	return [hold = std::move(hold)](std::function<void()> work) {
		onGlThread(hold->context, std::move(work));
	};
}

void *eglContextOf(GstGLContext *context)
{
	return reinterpret_cast<void *>(gst_gl_context_get_gl_context(context));
}

} // namespace gpuhandle::gst::detail

using namespace gpuhandle::gst::detail;

namespace {

// GST_OBJECT_LOCK's mutex, without the macro's C cast.
GMutex *objectLock(gpointer object)
{
	return &static_cast<GstObject *>(object)->lock;
}

GQuark backendQuark()
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-gl-backend");
	return quark;
}

} // namespace

namespace gpuhandle::gst {

Result<BackendRef> glBackendFor(GstGLContext *context)
{
	initGlDebug();
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
	if (BackendRef cached = cachedBackend(object, backendQuark()))
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
	options.glExecutor = glExecutorOf(hold);
	Result<BackendRef> opened = openBackend(BackendKind::OpenGL, options);
	if (!opened)
		return std::move(opened).error();
	GST_DEBUG("gpuhandle OpenGL backend opened in GL context %p: %s",
		  static_cast<void *>(context), (*opened)->deviceInfo().toString().c_str());
	return cacheBackend(object, backendQuark(), std::move(*opened));
}

Status ensureGlContext(GstElement *element, GstPadDirection direction, GstGLDisplay **display,
		       GstGLContext **otherContext, GstGLContext **context)
{
	initGlDebug();
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
