// The OpenGL backend: opening (host context or own EGL thread), capabilities, allocation, import.
#include <gpuhandle/backends/gl_memory.h>

#include "egl/gl_backend_internal.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <future>
#include <pthread.h>
#include <set>
#include <system_error>

#include <EGL/egl.h>
#include <EGL/eglext.h>

namespace gpuhandle {

namespace {

using namespace gl;

template<typename F>
void resolve(F &function, const char *name)
{
	// eglGetProcAddress returns a generic function pointer; this is its documented use.
	function = reinterpret_cast<F>(eglGetProcAddress(name));
}

bool listHas(const char *list, const std::string &name)
{
	std::string padded = " " + std::string(list ? list : "") + " ";
	return padded.find(" " + name + " ") != std::string::npos;
}

// The context setup on the backend's own thread: a surfaceless display and the newest desktop GL
// 4.x core context, else GLES 3.x. Empty on success, else why (and nothing is left made).
std::string setUpOwnContext(Worker &worker)
{
	const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (!listHas(client, "EGL_EXT_platform_base") ||
	    !listHas(client, "EGL_MESA_platform_surfaceless"))
		return "EGL has no surfaceless platform (EGL_MESA_platform_surfaceless), so the opengl backend "
		       "cannot open a display of its own.";
	PFNEGLGETPLATFORMDISPLAYEXTPROC getPlatformDisplay = nullptr;
	resolve(getPlatformDisplay, "eglGetPlatformDisplayEXT");
	EGLDisplay display = getPlatformDisplay ? getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA,
								     EGL_DEFAULT_DISPLAY, nullptr)
						: EGL_NO_DISPLAY;
	if (display == EGL_NO_DISPLAY || !eglInitialize(display, nullptr, nullptr))
		return "The surfaceless EGL display did not initialize (EGL error " +
		       std::to_string(eglGetError()) + ").";
	const char *extensions = eglQueryString(display, EGL_EXTENSIONS);
	EGLContext context = EGL_NO_CONTEXT;
	if (listHas(extensions, "EGL_KHR_surfaceless_context") &&
	    (listHas(extensions, "EGL_KHR_no_config_context") ||
	     listHas(extensions, "EGL_MESA_configless_context"))) {
		if (eglBindAPI(EGL_OPENGL_API))
			for (EGLint minor = 6; minor >= 0 && context == EGL_NO_CONTEXT; --minor) {
				const EGLint attributes[] = { EGL_CONTEXT_MAJOR_VERSION,
							      4,
							      EGL_CONTEXT_MINOR_VERSION,
							      minor,
							      EGL_CONTEXT_OPENGL_PROFILE_MASK,
							      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
							      EGL_NONE };
				context = eglCreateContext(display, EGL_NO_CONFIG_KHR,
							   EGL_NO_CONTEXT, attributes);
			}
		if (context == EGL_NO_CONTEXT && eglBindAPI(EGL_OPENGL_ES_API))
			for (EGLint minor = 2; minor >= 0 && context == EGL_NO_CONTEXT; --minor) {
				const EGLint attributes[] = { EGL_CONTEXT_MAJOR_VERSION, 3,
							      EGL_CONTEXT_MINOR_VERSION, minor,
							      EGL_NONE };
				context = eglCreateContext(display, EGL_NO_CONFIG_KHR,
							   EGL_NO_CONTEXT, attributes);
			}
	}
	if (context == EGL_NO_CONTEXT ||
	    !eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context)) {
		if (context != EGL_NO_CONTEXT)
			eglDestroyContext(display, context);
		eglTerminate(display);
		eglReleaseThread();
		return "The surfaceless EGL display made no current config-less GL 4.x core or GLES 3.x context.";
	}
	worker.display = display;
	worker.context = context;
	return {};
}

// The own thread's loop: posted work in order until stopped, then what is left, then teardown.
void runOwnThread(const std::shared_ptr<Worker> &worker)
{
	worker->serve();
	eglMakeCurrent(worker->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(worker->display, worker->context);
	eglTerminate(worker->display);
	eglReleaseThread();
}

Status startOwnThread(GlDevice &device)
{
	auto worker = std::make_shared<Worker>();
	std::promise<std::string> started;
	std::future<std::string> result = started.get_future();
	try {
		device.thread = std::thread([worker, &started] {
			worker->id = std::this_thread::get_id();
			// Named, so that a debugger (and test_gst_gl_consumers) tells it apart.
			pthread_setname_np(pthread_self(), "gpuhandle-gl");
			std::string why = setUpOwnContext(*worker);
			bool ok = why.empty();
			started.set_value(std::move(why)); // `started` is gone after this
			if (ok)
				runOwnThread(worker);
		});
	} catch (const std::system_error &e) {
		return Error::format(ErrorCode::Backend, "thread",
				     "opengl: starting the GL thread failed: %s.", e.what());
	}
	std::string why = result.get();
	if (!why.empty()) {
		device.thread.join();
		return Error(ErrorCode::NotSupported, "display", why);
	}
	device.display = worker->display;
	device.context = worker->context;
	device.worker = worker;
	device.glThread.store(worker->id); // set before `started`, which result.get() waited for
	// Posting, so that GlDevice::run bounds its waits by a deadline; inline on the GL thread
	// itself (anchors may be dropped there). Work posted after the loop ended is dropped: the
	// context is gone, and with it everything the work could delete.
	device.executor = [worker](std::function<void()> work) {
		if (std::this_thread::get_id() == worker->id) {
			work();
			return;
		}
		worker->post(std::move(work));
	};
	return {};
}

bool resolveCore(Functions &gl)
{
	resolve(gl.getString, "glGetString");
	resolve(gl.getStringi, "glGetStringi");
	resolve(gl.getIntegerv, "glGetIntegerv");
	resolve(gl.getError, "glGetError");
	resolve(gl.finish, "glFinish");
	resolve(gl.genBuffers, "glGenBuffers");
	resolve(gl.deleteBuffers, "glDeleteBuffers");
	resolve(gl.bindBuffer, "glBindBuffer");
	resolve(gl.bufferData, "glBufferData");
	resolve(gl.mapBufferRange, "glMapBufferRange");
	resolve(gl.getBufferParameteriv, "glGetBufferParameteriv");
	resolve(gl.unmapBuffer, "glUnmapBuffer");
	resolve(gl.copyBufferSubData, "glCopyBufferSubData");
	resolve(gl.genTextures, "glGenTextures");
	resolve(gl.deleteTextures, "glDeleteTextures");
	resolve(gl.bindTexture, "glBindTexture");
	resolve(gl.texStorage2D, "glTexStorage2D");
	resolve(gl.texParameteri, "glTexParameteri");
	resolve(gl.texSubImage2D, "glTexSubImage2D");
	resolve(gl.pixelStorei, "glPixelStorei");
	resolve(gl.readPixels, "glReadPixels");
	resolve(gl.genFramebuffers, "glGenFramebuffers");
	resolve(gl.deleteFramebuffers, "glDeleteFramebuffers");
	resolve(gl.bindFramebuffer, "glBindFramebuffer");
	resolve(gl.framebufferTexture2D, "glFramebufferTexture2D");
	resolve(gl.checkFramebufferStatus, "glCheckFramebufferStatus");
	return gl.getString && gl.getStringi && gl.getIntegerv && gl.getError && gl.finish &&
	       gl.genBuffers && gl.deleteBuffers && gl.bindBuffer && gl.bufferData &&
	       gl.mapBufferRange && gl.unmapBuffer && gl.getBufferParameteriv &&
	       gl.copyBufferSubData && gl.genTextures && gl.deleteTextures && gl.bindTexture &&
	       gl.texStorage2D && gl.texParameteri && gl.texSubImage2D && gl.pixelStorei &&
	       gl.readPixels && gl.genFramebuffers && gl.deleteFramebuffers && gl.bindFramebuffer &&
	       gl.framebufferTexture2D && gl.checkFramebufferStatus;
}

// On the GL thread: the version, the extensions and the entry points they bring. Mesa hands out
// a stub for any name, so availability follows the version and extension list, never a pointer.
std::optional<Error> queryFeatures(GlDevice &device)
{
	Functions &gl = device.gl;
	Features &f = device.features;
	const char *version = reinterpret_cast<const char *>(gl.getString(kVersion));
	const char *renderer = reinterpret_cast<const char *>(gl.getString(kRenderer));
	const char *vendor = reinterpret_cast<const char *>(gl.getString(kVendor));
	f.version = version ? version : "";
	f.renderer = renderer ? renderer : "";
	f.vendor = vendor ? vendor : "";
	f.desktop = f.version.rfind("OpenGL ES", 0) != 0;
	gl.getIntegerv(kMajorVersion, &f.major);
	gl.getIntegerv(kMinorVersion, &f.minor);
	std::set<std::string> ext;
	GLint count = 0;
	gl.getIntegerv(kNumExtensions, &count);
	for (GLint i = 0; i < count; ++i)
		if (const auto *name = reinterpret_cast<const char *>(
			    gl.getStringi(kExtensions, static_cast<GLuint>(i))))
			ext.insert(name);
	auto has = [&ext](const char *name) { return ext.count(name) != 0; };
	int at = f.major * 10 + f.minor;
	if (f.desktop ? (at < 42 && !has("GL_ARB_texture_storage")) : at < 30)
		return Error::format(
			ErrorCode::NotSupported, "context",
			"opengl: the context is %s; the backend needs GL 4.2 (or GL_ARB_texture_storage) "
			"or GLES 3.0.",
			f.version.c_str());

	if (f.desktop && (at >= 44 || has("GL_ARB_buffer_storage")))
		resolve(gl.bufferStorage, "glBufferStorage");
	else if (!f.desktop && has("GL_EXT_buffer_storage"))
		resolve(gl.bufferStorage, "glBufferStorageEXT");
	if ((f.desktop && (at >= 43 || has("GL_ARB_copy_image"))) || (!f.desktop && at >= 32))
		resolve(gl.copyImageSubData, "glCopyImageSubData");
	else if (!f.desktop && has("GL_EXT_copy_image"))
		resolve(gl.copyImageSubData, "glCopyImageSubDataEXT");
	else if (!f.desktop && has("GL_OES_copy_image"))
		resolve(gl.copyImageSubData, "glCopyImageSubDataOES");
	if (f.desktop)
		resolve(gl.getTexImage, "glGetTexImage");
	f.norm16 = f.desktop || has("GL_EXT_texture_norm16");
	f.bgra8 = !f.desktop && has("GL_EXT_texture_format_BGRA8888");
	f.semaphoreFd = has("GL_EXT_semaphore") && has("GL_EXT_semaphore_fd");

	if (has("GL_EXT_memory_object") && has("GL_EXT_memory_object_fd")) {
		resolve(gl.getUnsignedBytev, "glGetUnsignedBytevEXT");
		resolve(gl.getUnsignedBytei, "glGetUnsignedBytei_vEXT");
		resolve(gl.createMemoryObjects, "glCreateMemoryObjectsEXT");
		resolve(gl.deleteMemoryObjects, "glDeleteMemoryObjectsEXT");
		resolve(gl.memoryObjectParameteriv, "glMemoryObjectParameterivEXT");
		resolve(gl.importMemoryFd, "glImportMemoryFdEXT");
		resolve(gl.texStorageMem2D, "glTexStorageMem2DEXT");
		f.memoryObjectFd = gl.getUnsignedBytev && gl.getUnsignedBytei &&
				   gl.createMemoryObjects && gl.deleteMemoryObjects &&
				   gl.memoryObjectParameteriv && gl.importMemoryFd &&
				   gl.texStorageMem2D;
		GLint devices = 0;
		if (f.memoryObjectFd)
			gl.getIntegerv(kNumDeviceUuids, &devices);
		if (devices > 0) {
			Uuid uuid{};
			gl.getUnsignedBytei(kDeviceUuid, 0, uuid.data());
			f.deviceUuid = uuid;
			gl.getUnsignedBytev(kDriverUuid, uuid.data());
			f.driverUuid = uuid;
		}
	}
	const char *egl = eglQueryString(device.display, EGL_EXTENSIONS);
	if (listHas(egl, "EGL_EXT_image_dma_buf_import") && listHas(egl, "EGL_KHR_image_base") &&
	    (has("GL_OES_EGL_image") || has("GL_OES_EGL_image_external"))) {
		resolve(gl.eglImageTargetTexture2D, "glEGLImageTargetTexture2DOES");
		resolve(gl.eglCreateImage, "eglCreateImageKHR");
		resolve(gl.eglDestroyImage, "eglDestroyImageKHR");
		f.dmaBufImport = gl.eglImageTargetTexture2D && gl.eglCreateImage &&
				 gl.eglDestroyImage;
		f.dmaBufModifiers = listHas(egl, "EGL_EXT_image_dma_buf_import_modifiers");
		if (f.dmaBufModifiers)
			f.planeModifiers = queryPlaneModifiers(device.display);
	}
	takeError(gl); // glGetIntegerv of an unknown name on an old context
	enableDebugOutput(f, (f.desktop ? at >= 43 : at >= 32) || has("GL_KHR_debug"));
	return std::nullopt;
}

// EGL_EXT_device_drm_render_node: the render node of the display's device, when it has one
// (a software device has none).
std::optional<DrmNode> renderNodeOf(void *display)
{
	if (!listHas(eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS), "EGL_EXT_device_query"))
		return std::nullopt;
	PFNEGLQUERYDISPLAYATTRIBEXTPROC queryDisplay = nullptr;
	PFNEGLQUERYDEVICESTRINGEXTPROC queryDevice = nullptr;
	resolve(queryDisplay, "eglQueryDisplayAttribEXT");
	resolve(queryDevice, "eglQueryDeviceStringEXT");
	EGLAttrib device = 0;
	if (!queryDisplay || !queryDevice || !queryDisplay(display, EGL_DEVICE_EXT, &device) ||
	    !device)
		return std::nullopt;
	auto eglDevice = reinterpret_cast<EGLDeviceEXT>(device);
	if (!listHas(queryDevice(eglDevice, EGL_EXTENSIONS), "EGL_EXT_device_drm_render_node"))
		return std::nullopt;
	const char *path = queryDevice(eglDevice, EGL_DRM_RENDER_NODE_FILE_EXT);
	if (!path)
		return std::nullopt;
	auto node = DrmNode::fromPath(path);
	return node.ok() ? std::optional<DrmNode>(*node) : std::nullopt;
}

// GL names its vendor only in words: the PCI ids of the ones that say who they are.
std::optional<uint32_t> vendorIdOf(const std::string &vendor, bool software)
{
	if (vendor.find("NVIDIA") != std::string::npos)
		return 0x10de;
	if (vendor.find("AMD") != std::string::npos || vendor.find("ATI") != std::string::npos)
		return 0x1002;
	if (vendor.find("Intel") != std::string::npos)
		return 0x8086;
	if (software && vendor.find("Mesa") != std::string::npos)
		return 0x10005; // Khronos vendor id of Mesa, as lavapipe reports it
	return std::nullopt;
}

BackendCapabilities capabilitiesOf(const Features &f)
{
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::GlBuffer, ResourceKind::GlTexture };
	caps.routes = { ImportRoute::Direct };
	if (f.memoryObjectFd) {
		caps.imports.push_back(ResourceKind::VulkanMemoryFd);
		caps.routes.push_back(ImportRoute::OpaqueFd);
	}
	if (f.dmaBufImport) {
		caps.imports.push_back(ResourceKind::DmaBuf);
		caps.routes.push_back(ImportRoute::DmaBuf);
		caps.drmModifiers = { kDrmModifierLinear };
		for (const auto &plane : f.planeModifiers)
			for (uint64_t m : plane.second)
				if (std::find(caps.drmModifiers.begin(), caps.drmModifiers.end(),
					      m) == caps.drmModifiers.end())
					caps.drmModifiers.push_back(m);
	}
	// No LinearImage: GL textures are opaque, with no CPU-visible linear layout (stride 0).
	caps.storages = { FrameStorage::Buffer, FrameStorage::OptimalImage };
	// No fenceExports: a GLsync does not become a fence fd without
	// EGL_ANDROID_native_fence_sync.
	if (f.semaphoreFd)
		caps.fenceImports = { SyncKind::GlSemaphore };
	caps.cpuMap = true;
	caps.gpuCopy = true;
	return caps;
}

} // namespace

Result<BackendRef> openGlBackend(const BackendOpenOptions &options)
{
	auto device = std::make_shared<GlDevice>();
	if (options.context) {
		auto native = options.context->opengl();
		if (!native.ok())
			return Error::format(
				ErrorCode::InvalidArgument, "context",
				"opengl: the context given is a %s context, not an OpenGL one.",
				backendKindName(options.context->backend()));
		if ((*native)->flavour != GlFlavour::Egl)
			return Error::format(
				ErrorCode::NotSupported, "context",
				"opengl: the backend works with EGL contexts; this one is %s.",
				glFlavourName((*native)->flavour));
		if (!options.glExecutor)
			return Error(
				ErrorCode::InvalidArgument, "glExecutor",
				"opengl: a host GL context needs a glExecutor that runs work where it is current.");
		device->display = (*native)->display;
		device->context = (*native)->context;
		device->executor = options.glExecutor;
		device->host = options.context;
	} else if (Status started = startOwnThread(*device); !started.ok()) {
		return std::move(started).error();
	}
	// Every EGL call on the GL thread (GlDevice::onGlThread says why), entry points included.
	std::optional<Error> why;
	std::optional<DrmNode> renderNode;
	Status ran = device->run([&device, &why, &renderNode] {
		if (!resolveCore(device->gl)) {
			why = Error(
				ErrorCode::NotSupported, "context",
				"opengl: eglGetProcAddress did not find the core GL entry points "
				"the backend uses.");
			return;
		}
		why = queryFeatures(*device);
		renderNode = renderNodeOf(device->display);
	});
	if (!ran.ok())
		return std::move(ran).error();
	if (why)
		return std::move(*why);

	const Features &f = device->features;
	DeviceInfo info;
	info.backend = BackendKind::OpenGL;
	info.name = f.renderer;
	info.driverVersion = f.version;
	info.isSoftware = isSoftwareRendererName(f.renderer);
	info.isIntegrated = info.isSoftware; // a CPU rasteriser's memory is the host's
	info.vendorId = vendorIdOf(f.vendor, info.isSoftware);
	info.id.uuid = f.deviceUuid;
	info.id.drmRenderNode = renderNode;
	if (device->host) {
		const GlContext *native = *device->host->opengl();
		if (!info.id.uuid)
			info.id.uuid = native->deviceUuid;
		if (!info.id.drmRenderNode)
			info.id.drmRenderNode = native->renderNode;
	}
	ContextRef context = device->host;
	if (!context) {
		GlContext native{ device->display, device->context, {},
				  GlFlavour::Egl,  info.id.uuid,    info.id.drmRenderNode };
		auto made = Context::create(std::move(native), device);
		if (!made.ok())
			return std::move(made).error();
		context = std::move(*made);
	}
	BackendCapabilities caps = capabilitiesOf(f);
	return BackendRef(std::make_shared<gl::GlBackend>(std::move(info), std::move(caps),
							  std::move(context), std::move(device)));
}

} // namespace gpuhandle
