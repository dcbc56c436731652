// gpuhandledownload's target devices: GL, Vulkan, CUDA shared with neighbours, and the fd backend.
#include "gstgpuhandledownload.h"

#define GST_CAT_DEFAULT gst_gpu_handle_download_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::download {

namespace {

// A new reference on `object`, or null.
template<typename T>
T *refOrNull(T *object)
{
	return object ? static_cast<T *>(gst_object_ref(object)) : nullptr;
}

} // namespace

// Opens the backend of the target API (the one GL/Vulkan neighbours share, or the fd backend
// for DMA-BUFs); posts the element error when it cannot.
bool openTarget(GstBaseTransform *trans)
{
	DownloadState &s = stateOf(trans);
	s.targetBackend.reset();
	Result<BackendRef> backend = Error::format(ErrorCode::NotSupported, "target",
						   "no backend for %s", targetName(s.target));
	switch (s.target) {
	case Target::System: return true;
	case Target::DmaBuf:
		backend =
			ensureDevices(GST_ELEMENT_CAST(trans), s.devices)->backend(BackendKind::Fd);
		break;
	case Target::Gl:
#if GPUHANDLE_GST_HAVE_GL
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
		Status found = ensureGlContext(GST_ELEMENT_CAST(trans), GST_PAD_SRC, &s.glDisplay,
					       &s.glOtherContext, &s.glContext);
		backend = found.ok() ? glBackendFor(s.glContext)
				     : Result<BackendRef>(found.error());
	}
#endif
	break;
	case Target::Vulkan:
#if GPUHANDLE_GST_HAVE_VULKAN
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
		Status found =
			ensureVulkanDevice(GST_ELEMENT_CAST(trans), &s.vkInstance, &s.vkDevice);
		backend = found.ok() ? vulkanBackendFor(s.vkDevice)
				     : Result<BackendRef>(found.error());
	}
#endif
	break;
	case Target::Cuda:
#if GPUHANDLE_GST_HAVE_CUDA
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
		Status found = ensureCudaContext(GST_ELEMENT_CAST(trans), &s.cudaContext);
		backend = found.ok() ? cudaBackendFor(s.cudaContext)
				     : Result<BackendRef>(found.error());
	}
#endif
	break;
	}
	if (!backend.ok()) {
		GST_ELEMENT_ERROR(trans, RESOURCE, NOT_FOUND,
				  (_("No device to download frames into %s."),
				   targetName(s.target)),
				  ("%s", backend.error().message().c_str()));
		return false;
	}
	s.targetBackend = *backend;
	GST_INFO_OBJECT(trans, "frames go into %s on %s", targetName(s.target),
			s.targetBackend->deviceInfo().name.c_str());
	return true;
}

void releaseContexts(DownloadState &s)
{
	s.targetBackend.reset();
	std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
#if GPUHANDLE_GST_HAVE_GL
	if (s.glPool) {
		gst_buffer_pool_set_active(s.glPool, FALSE);
		gst_clear_object(&s.glPool);
	}
	gst_clear_object(&s.glContext);
	gst_clear_object(&s.glOtherContext);
	gst_clear_object(&s.glDisplay);
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	gst_clear_object(&s.vkDevice);
	gst_clear_object(&s.vkInstance);
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	if (s.cudaPool) {
		gst_buffer_pool_set_active(s.cudaPool, FALSE);
		gst_clear_object(&s.cudaPool);
	}
	gst_clear_object(&s.cudaContext);
#endif
}

// Answers a GST_QUERY_CONTEXT for GL, Vulkan or CUDA with the element's objects, referenced
// under the lock: set_context may replace them meanwhile.
gboolean contextQuery(GstBaseTransform *trans, GstQuery *q)
{
	if (GST_QUERY_TYPE(q) != GST_QUERY_CONTEXT)
		return FALSE;
	DownloadState &s = stateOf(trans);
	// Answered with references taken under the lock: set_context may replace the
	// objects meanwhile.
	gboolean answered = FALSE;
#if GPUHANDLE_GST_HAVE_GL
	GstGLDisplay *display = nullptr;
	GstGLContext *context = nullptr, *other = nullptr;
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	GstVulkanInstance *instance = nullptr;
	GstVulkanDevice *device = nullptr;
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	GstCudaContext *cuda = nullptr;
#endif
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
#if GPUHANDLE_GST_HAVE_GL
		display = refOrNull(s.glDisplay);
		context = refOrNull(s.glContext);
		other = refOrNull(s.glOtherContext);
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
		instance = refOrNull(s.vkInstance);
		device = refOrNull(s.vkDevice);
#endif
#if GPUHANDLE_GST_HAVE_CUDA
		if (s.cudaContext)
			cuda = static_cast<GstCudaContext *>(gst_object_ref(s.cudaContext));
#endif
	}
#if GPUHANDLE_GST_HAVE_GL
	answered = gst_gl_handle_context_query(GST_ELEMENT_CAST(trans), q, display, context, other);
	gst_clear_object(&display);
	gst_clear_object(&context);
	gst_clear_object(&other);
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	if (!answered)
		answered = gst_vulkan_handle_context_query(GST_ELEMENT_CAST(trans), q, nullptr,
							   instance, device);
	gst_clear_object(&instance);
	gst_clear_object(&device);
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	if (!answered)
		answered = cudaHandleContextQuery(GST_ELEMENT_CAST(trans), q, cuda) ? TRUE : FALSE;
	gst_clear_object(&cuda);
#endif
	return answered;
}

// set_context's part for the GL, Vulkan and CUDA objects.
void setTargetContexts(GstElement *element, GstContext *context)
{
	DownloadState &s = stateOf(element);
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
#if GPUHANDLE_GST_HAVE_GL
		gst_gl_handle_set_context(element, context, &s.glDisplay, &s.glOtherContext);
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
		gst_vulkan_handle_set_context(element, context, nullptr, &s.vkInstance);
#endif
#if GPUHANDLE_GST_HAVE_CUDA
		cudaHandleSetContext(element, context, &s.cudaContext);
#endif
	}
}

} // namespace gpuhandle::gst::download
