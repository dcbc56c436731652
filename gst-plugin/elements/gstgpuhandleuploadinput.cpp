// gpuhandleupload's input: native memories wrapped as frames, system memory copied into pooled
// frames, and the Vulkan instance it shares with Vulkan neighbours.
#include "gstgpuhandleupload.h"

#define GST_CAT_DEFAULT gst_gpu_handle_upload_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::upload {

// The input as a frame, without a copy; its backend is where the memory lives.
Result<Frame> wrapInput(GstBaseTransform *trans, GstBuffer *inbuf, BackendRef &backend)
{
	UploadState &s = stateOf(trans);
	switch (s.input) {
	case BufferMemory::DmaBuf: {
		DeviceSetRef devices = ensureDevices(GST_ELEMENT_CAST(trans), s.devices);
		Result<BackendRef> fd = devices->backend(BackendKind::Fd);
		if (!fd.ok())
			return std::move(fd).error();
		backend = *fd;
		return frameFromFdBuffer(inbuf, s.info, s.modifier);
	}
#if GPUHANDLE_GST_HAVE_GL
	case BufferMemory::GlMemory: {
		GstMemory *mem = gst_buffer_peek_memory(inbuf, 0);
		if (!gst_is_gl_memory(mem))
			return Error::format(
				ErrorCode::WrongKind, "buffer",
				"The caps say GLMemory, but the buffer holds %s memory.",
				mem->allocator ? mem->allocator->mem_type : "unknown");
		Result<BackendRef> gl =
			glBackendFor(reinterpret_cast<GstGLBaseMemory *>(mem)->context);
		if (!gl.ok())
			return std::move(gl).error();
		backend = *gl;
		return frameFromGlBuffer(inbuf, s.info);
	}
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	case BufferMemory::VulkanImage: {
		GstMemory *mem = gst_buffer_peek_memory(inbuf, 0);
		if (!gst_is_vulkan_image_memory(mem))
			return Error::format(
				ErrorCode::WrongKind, "buffer",
				"The caps say VulkanImage, but the buffer holds %s memory.",
				mem->allocator ? mem->allocator->mem_type : "unknown");
		Result<BackendRef> vk =
			vulkanBackendFor(reinterpret_cast<GstVulkanImageMemory *>(mem)->device);
		if (!vk.ok())
			return std::move(vk).error();
		backend = *vk;
		return frameFromVulkanBuffer(inbuf, s.info);
	}
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	case BufferMemory::CudaMemory: {
		Result<BackendRef> cuda = cudaBackendForBuffer(inbuf);
		if (!cuda.ok())
			return std::move(cuda).error();
		backend = *cuda;
		Result<Frame> frame = frameFromCudaBuffer(inbuf, s.info);
		return frame.ok() ? backend->importFrame(*frame, ImportRoute::Direct) : frame;
	}
#endif
#if GPUHANDLE_GST_HAVE_VA
	case BufferMemory::VaMemory: {
		Result<BackendRef> va = vaBackendForBuffer(inbuf);
		if (!va.ok())
			return std::move(va).error();
		backend = *va;
		Result<Frame> frame = frameFromVaBuffer(inbuf, s.info);
		return frame.ok() ? backend->importFrame(*frame, ImportRoute::Direct) : frame;
	}
#endif
	default: backend = s.backend; return frameFromSystemBuffer(inbuf, s.info, MapAccess::Read);
	}
}

// System memory into a pooled frame of the backend: one CPU copy.
GstFlowReturn copyIntoPool(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &input,
			   GstBuffer **outbuf)
{
	UploadState &s = stateOf(trans);
	WaitDuration timeout;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		timeout = timeoutFromNs(s.timeoutNs);
	}
	// The input's fence (its sync meta), waited in slices that a flush ends.
	if (!input.acquire().isNoop()) {
		std::chrono::nanoseconds waited{ 0 };
		std::optional<Error> why;
		switch (waitSliced(input.acquire(), timeout, s.flushing, waited, why)) {
		case SlicedWait::Signaled: break;
		case SlicedWait::Flushing: return GST_FLOW_FLUSHING;
		case SlicedWait::Failed:
			GPUHANDLE_ELEMENT_ERROR(
				trans, RESOURCE, BUSY,
				(_("A frame's fence did not signal in time.")),
				why ? *why
				    : Error::format(ErrorCode::Timeout, "acquire",
						    "The input's %s fence did not signal in time.",
						    syncKindName(input.acquire().kind())));
			return GST_FLOW_ERROR;
		}
	}
	GstBuffer *out = nullptr;
	GstFlowReturn ret = gst_buffer_pool_acquire_buffer(s.pool, &out, nullptr);
	if (ret != GST_FLOW_OK)
		return ret;
	Result<Frame> frame = frameFromBuffer(out);
	Result<CpuMapping> dst = frame.ok() ? s.backend->map(*frame, MapAccess::Write, timeout)
					    : Result<CpuMapping>(frame.error());
	Result<CpuMapping> src = mapFrame(input, MapAccess::Read, timeout);
	Result<const PixelFormatInfo *> formatInfo = pixelFormatInfo(s.format);
	if (!dst.ok() || !src.ok() || !formatInfo.ok()) {
		const Error &why = !dst.ok()   ? dst.error()
				   : !src.ok() ? src.error()
					       : formatInfo.error();
		gst_buffer_unref(out);
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, WRITE,
					(_("Could not write the frame into gpuhandle memory.")),
					why);
		return GST_FLOW_ERROR;
	}
	uint8_t *dstPlanes[4]{};
	const uint8_t *srcPlanes[4]{};
	uint32_t dstStrides[4]{}, srcStrides[4]{};
	for (uint32_t p = 0; p < dst->numPlanes(); ++p) {
		dstPlanes[p] = dst->data(p);
		dstStrides[p] = dst->stride(p);
		srcPlanes[p] = src->data(p);
		srcStrides[p] = src->stride(p);
	}
	copyPlaneRows(dstPlanes, dstStrides, srcPlanes, srcStrides, **formatInfo,
		      static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&s.info)),
		      static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&s.info)));
	Status ended = dst->unmap();
	if (!ended.ok()) {
		gst_buffer_unref(out);
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, WRITE,
					(_("Could not write the frame into gpuhandle memory.")),
					ended.error());
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, out, inbuf);
	s.stats.count(ExecutionPath::Kind::CpuCopy);
	*outbuf = out;
	return GST_FLOW_OK;
}

#if GPUHANDLE_GST_HAVE_VULKAN
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

// A Vulkan neighbour (vulkanupload) asks for the pipeline's instance before it makes its device:
// answered with one whose devices export memory, made now if the pipeline has none yet.
gboolean vulkanInstanceQuery(GstBaseTransform *trans, GstQuery *q)
{
	const gchar *type = nullptr;
	if (GST_QUERY_TYPE(q) != GST_QUERY_CONTEXT || !gst_query_parse_context_type(q, &type) ||
	    g_strcmp0(type, GST_VULKAN_INSTANCE_CONTEXT_TYPE_STR) != 0)
		return FALSE;
	UploadState &s = stateOf(trans);
	std::lock_guard<std::mutex> lock(s.vkMutex);
	if (!s.vkInstance) {
		GstVulkanInstance *instance = gst_vulkan_instance_new();
		GError *error = nullptr;
		if (!gst_vulkan_instance_open(instance, &error)) {
			GST_INFO_OBJECT(trans, "no Vulkan instance: %s",
					error ? error->message : "?");
			g_clear_error(&error);
			gst_object_unref(instance);
			return FALSE;
		}
		s.vkInstance = instance;
	}
	exportDevicesOf(s.vkInstance);
	return gst_vulkan_handle_context_query(GST_ELEMENT_CAST(trans), q, nullptr, s.vkInstance,
					       nullptr);
}
#endif

} // namespace gpuhandle::gst::upload
