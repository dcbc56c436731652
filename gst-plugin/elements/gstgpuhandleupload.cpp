// gpuhandleupload: system, DMABuf, GL and Vulkan memory in, memory:GpuHandle out.
#include "gstgpuhandleelements.h"
#include "gstgpuhandlestats.h"

#include <gst/gpuhandle/gstgpuhandlebufferpool.hpp>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gpuhandle/gstgpuhandlegl.hpp>
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>
#endif
#if GPUHANDLE_GST_HAVE_CUDA
#include <gst/gpuhandle/gstgpuhandlecuda.hpp>
#endif
#if GPUHANDLE_GST_HAVE_VA
#include <gst/gpuhandle/gstgpuhandleva.hpp>
#endif

#include <gst/base/gstbasetransform.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_upload_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_upload_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace {

enum Property { PropBackend = 1, PropStorage, PropTimeout, PropStats };

// What the element keeps. Properties are read under `mutex` (set from the application's
// thread); the rest belongs to the streaming thread between set_caps and stop.
struct UploadState {
	std::mutex mutex{};
	BackendChoice backendChoice = BackendChoice::Auto;
	StorageChoice storageChoice = StorageChoice::Auto;
	guint64 timeoutNs = defaultTimeoutNs();

	PathStats stats{};
	DevicesSlot devices{};

	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	BufferMemory input = BufferMemory::System;
	BackendRef backend{};     // where system memory goes (cpu: wrapped in place)
	FrameStorage storage = FrameStorage::Buffer;
	GstBufferPool *pool = nullptr; // frames of `backend` (not for cpu)
	uint64_t modifier = 0;    // DMA-BUF input: the caps' modifier (linear on 1.22)
	GstVideoFormat warnedFormat = GST_VIDEO_FORMAT_UNKNOWN; // see warnUnsupportedFormat
	// Set by a flush and by the change to READY: the wait for an input's fence ends at once.
	std::atomic<bool> flushing{ false };
#if GPUHANDLE_GST_HAVE_VULKAN
	// Shared with Vulkan neighbours (see vulkanInstanceQuery); queries and set_context come
	// from several threads, so it is guarded by vkMutex.
	std::mutex vkMutex{};
	GstVulkanInstance *vkInstance = nullptr;
#endif
};

} // namespace

struct GstGpuHandleUpload {
	GstBaseTransform parent;
	UploadState *state;
};
struct GstGpuHandleUploadClass {
	GstBaseTransformClass parent_class;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleUpload, gst_gpu_handle_upload, GST_TYPE_BASE_TRANSFORM)
#pragma GCC diagnostic pop

namespace {

UploadState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleUpload *>(self)->state;
}

// Every memory feature the sink pad takes, in the order caps are offered upstream.
std::vector<const char *> sinkFeatures()
{
	std::vector<const char *> features{ GST_CAPS_FEATURE_MEMORY_GPU_HANDLE,
					    GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY, "memory:DMABuf" };
#if GPUHANDLE_GST_HAVE_GL
	features.push_back("memory:GLMemory");
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	features.push_back("memory:VulkanImage");
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	features.push_back("memory:CUDAMemory");
#endif
#if GPUHANDLE_GST_HAVE_VA
	features.push_back("memory:VAMemory");
#endif
	return features;
}

GstCaps *transformCaps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
		       GstCaps *filter)
{
	GstCaps *out = direction == GST_PAD_SINK
			       ? capsWithFeatures(caps, { GST_CAPS_FEATURE_MEMORY_GPU_HANDLE })
			       : capsWithFeatures(caps, sinkFeatures());
	out = intersectFilter(out, filter);
	GST_TRACE_OBJECT(trans, "%s caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
			 direction == GST_PAD_SINK ? "sink" : "src", static_cast<void *>(caps),
			 static_cast<void *>(out));
	return out;
}

BufferMemory memoryOfCaps(GstCaps *caps)
{
	GstCapsFeatures *features = gst_caps_get_features(caps, 0);
	if (gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_GPU_HANDLE))
		return BufferMemory::GpuHandle;
	if (gst_caps_features_contains(features, "memory:DMABuf"))
		return BufferMemory::DmaBuf;
	if (gst_caps_features_contains(features, "memory:GLMemory"))
		return BufferMemory::GlMemory;
	if (gst_caps_features_contains(features, "memory:VulkanImage"))
		return BufferMemory::VulkanImage;
	if (gst_caps_features_contains(features, "memory:CUDAMemory"))
		return BufferMemory::CudaMemory;
	if (gst_caps_features_contains(features, "memory:VAMemory"))
		return BufferMemory::VaMemory;
	return BufferMemory::System;
}

void clearPool(UploadState &s)
{
	if (s.pool) {
		gst_buffer_pool_set_active(s.pool, FALSE);
		gst_object_unref(s.pool);
		s.pool = nullptr;
	}
}

// The backend system memory goes to: the property's, or for auto the one downstream imports
// from best (the target hint), else cpu (wrapped in place: no copy at all).
BackendKind chooseBackend(BackendChoice choice, const std::optional<TargetHint> &hint)
{
	if (auto kind = backendKindOf(choice))
		return *kind;
	if (!hint)
		return BackendKind::Cpu;
	switch (hint->backend) {
	case BackendKind::OpenGL:
		// GL imports Vulkan's exportable memory without a copy; its own textures would need
		// a CPU upload anyway.
		return BackendKind::Vulkan;
	case BackendKind::Vulkan:
	case BackendKind::Cuda:
	case BackendKind::VaApi:
		return hint->backend;
	default:
		return BackendKind::Cpu;
	}
}

FrameStorage chooseStorage(StorageChoice choice, const std::optional<TargetHint> &hint)
{
	switch (choice) {
	case StorageChoice::Buffer:
		return FrameStorage::Buffer;
	case StorageChoice::LinearImage:
		return FrameStorage::LinearImage;
	case StorageChoice::OptimalImage:
		return FrameStorage::OptimalImage;
	case StorageChoice::Auto:
		break;
	}
	return hint ? hint->storage : FrameStorage::Buffer;
}

gboolean setCaps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
	UploadState &s = stateOf(trans);
	GstVideoInfo info;
	if (!gst_video_info_from_caps(&info, incaps)) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("The input is not raw video.")),
				  ("caps %" GST_PTR_FORMAT, static_cast<void *>(incaps)));
		return FALSE;
	}
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format.ok()) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("The video format is not supported by gpuhandle.")),
				  ("%s", format.error().message().c_str()));
		return FALSE;
	}
	s.info = info;
	s.format = *format;
	s.input = memoryOfCaps(incaps);
	clearPool(s);
	s.backend.reset();
	gst_base_transform_set_passthrough(trans, s.input == BufferMemory::GpuHandle);
	if (s.input == BufferMemory::DmaBuf) {
		Result<DmaDrmInfo> drm = dmaDrmInfoFromCaps(incaps);
		s.modifier = drm.ok() ? drm->modifier : 0;
	}
	GST_DEBUG_OBJECT(trans, "%s %s input -> %" GST_PTR_FORMAT, bufferMemoryName(s.input),
			 pixelFormatName(s.format), static_cast<void *>(outcaps));
	return TRUE;
}

// Opens the backend system memory goes to and a pool of its frames; posts the element error.
bool prepareBackend(GstBaseTransform *trans, GstQuery *query)
{
	UploadState &s = stateOf(trans);
	BackendChoice choice;
	StorageChoice storageChoice;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		choice = s.backendChoice;
		storageChoice = s.storageChoice;
	}
	const std::optional<TargetHint> hint = findTargetHint(query);
	BackendKind kind = chooseBackend(choice, hint);
	FrameStorage storage = chooseStorage(storageChoice, hint);
	DeviceSetRef devices = ensureDevices(GST_ELEMENT_CAST(trans), s.devices);
	Result<BackendRef> backend = devices->backend(kind);
	if (!backend.ok() && choice == BackendChoice::Auto && kind != BackendKind::Cpu) {
		GST_INFO_OBJECT(trans, "auto: %s did not open (%s); using cpu", backendKindName(kind),
				backend.error().message().c_str());
		kind = BackendKind::Cpu;
		backend = devices->backend(kind);
	}
	if (!backend.ok()) {
		GST_ELEMENT_ERROR(trans, RESOURCE, NOT_FOUND,
				  (_("The gpuhandle backend \"%s\" is not available."),
				   backendKindName(kind)),
				  ("%s", backend.error().message().c_str()));
		return false;
	}
	// cpu frames wrap the input in place; the others copy into pooled frames, which need
	// the format in the chosen storage (auto falls back to a buffer, which every format has).
	if (kind != BackendKind::Cpu && !(*backend)->supportsFormat(s.format, storage) &&
	    storageChoice == StorageChoice::Auto)
		storage = FrameStorage::Buffer;
	if (kind != BackendKind::Cpu && !(*backend)->supportsFormat(s.format, storage)) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("The gpuhandle backend \"%s\" cannot hold %s frames."),
				   backendKindName(kind), pixelFormatName(s.format)),
				  ("no %s storage for %s on %s", frameStorageName(storage),
				   pixelFormatName(s.format), (*backend)->deviceInfo().name.c_str()));
		return false;
	}
	s.backend = *backend;
	s.storage = storage;
	GST_INFO_OBJECT(trans, "system memory goes to %s (%s, %s)%s", backendKindName(kind),
			(*backend)->deviceInfo().name.c_str(),
			kind == BackendKind::Cpu ? "wrapped in place" : frameStorageName(storage),
			hint ? " following downstream's target hint" : "");
	if (kind == BackendKind::Cpu)
		return true;
	GstCaps *outcaps = nullptr;
	gst_query_parse_allocation(query, &outcaps, nullptr);
	s.pool = bufferPoolNew(s.backend, storage);
	GstStructure *config = gst_buffer_pool_get_config(s.pool);
	gst_buffer_pool_config_set_params(config, outcaps, 0, 2, 0);
	if (!gst_buffer_pool_set_config(s.pool, config) ||
	    !gst_buffer_pool_set_active(s.pool, TRUE)) {
		clearPool(s);
		GST_ELEMENT_ERROR(trans, RESOURCE, NO_SPACE_LEFT,
				  (_("Could not allocate gpuhandle frames.")),
				  ("a pool of %s %s frames on %s did not start",
				   frameStorageName(storage), pixelFormatName(s.format),
				   backendKindName(kind)));
		return false;
	}
	return true;
}

gboolean decideAllocation(GstBaseTransform *trans, GstQuery *query)
{
	UploadState &s = stateOf(trans);
	clearPool(s);
	// Our buffers come from our own frames (or wrap the input); downstream's pools hold other
	// memory, so none is used.
	while (gst_query_get_n_allocation_pools(query) > 0)
		gst_query_remove_nth_allocation_pool(query, 0);
	if (s.input != BufferMemory::System)
		return TRUE;
	return prepareBackend(trans, query) ? TRUE : FALSE;
}

gboolean proposeAllocation(GstBaseTransform *trans, GstQuery *decideQuery, GstQuery *query)
{
	(void)trans;
	(void)decideQuery;
	// Upstream may give any layout: the video meta says it, and a sync meta says when to read.
	gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	gst_query_add_allocation_meta(query, GST_GPU_HANDLE_SYNC_META_API_TYPE, nullptr);
	return TRUE;
}

// Timestamps, flags and the metas GstBaseTransform carries over: its own copy_metadata, which
// prepare_output_buffer would have run had it made the buffer.
void copyMetadata(GstBaseTransform *trans, GstBuffer *out, GstBuffer *in)
{
	GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class)->copy_metadata(trans, in, out);
}

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
			return Error::format(ErrorCode::WrongKind, "buffer",
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
			return Error::format(ErrorCode::WrongKind, "buffer",
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
	default:
		backend = s.backend;
		return frameFromSystemBuffer(inbuf, s.info, MapAccess::Read);
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
		case SlicedWait::Signaled:
			break;
		case SlicedWait::Flushing:
			return GST_FLOW_FLUSHING;
		case SlicedWait::Failed:
			GST_ELEMENT_ERROR(trans, RESOURCE, BUSY,
					  (_("A frame's fence did not signal in time.")),
					  ("the input's %s fence: %s",
					   syncKindName(input.acquire().kind()),
					   why ? why->message().c_str() : "?"));
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
		const Error &why = !dst.ok() ? dst.error() : !src.ok() ? src.error() : formatInfo.error();
		gst_buffer_unref(out);
		GST_ELEMENT_ERROR(trans, RESOURCE, WRITE,
				  (_("Could not write the frame into gpuhandle memory.")),
				  ("%s", why.message().c_str()));
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
		GST_ELEMENT_ERROR(trans, RESOURCE, WRITE,
				  (_("Could not write the frame into gpuhandle memory.")),
				  ("%s", ended.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, out, inbuf);
	s.stats.count(ExecutionPath::Kind::CpuCopy);
	*outbuf = out;
	return GST_FLOW_OK;
}

GstFlowReturn prepareOutputBuffer(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
	UploadState &s = stateOf(trans);
	if (gst_base_transform_is_passthrough(trans)) {
		*outbuf = inbuf;
		return GST_FLOW_OK;
	}
	if (s.input == BufferMemory::System && !s.backend) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION, (_("The element was not negotiated.")),
				  ("no allocation query reached gpuhandleupload"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (gst_buffer_n_memory(inbuf) == 0) {
		if (GST_BUFFER_FLAG_IS_SET(inbuf, GST_BUFFER_FLAG_GAP)) {
			// A gap carries no picture: it goes on as an empty gap buffer.
			*outbuf = gst_buffer_new();
			copyMetadata(trans, *outbuf, inbuf);
			GST_BUFFER_FLAG_SET(*outbuf, GST_BUFFER_FLAG_GAP);
			return GST_FLOW_OK;
		}
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("the buffer has no memory"));
		return GST_FLOW_ERROR;
	}
	BackendRef backend;
	Result<Frame> frame = wrapInput(trans, inbuf, backend);
	if (!frame.ok()) {
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("%s input: %s", bufferMemoryName(s.input),
				   frame.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	if (s.pool)
		return copyIntoPool(trans, inbuf, *frame, outbuf);
	// Upstream owns the memory: the wrap refuses write maps (a tee may share the buffer).
	GstBuffer *out = bufferFromFrame(*frame, backend, true);
	if (!out) {
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("no GstVideoFormat for %s", pixelFormatName(frame->format())));
		return GST_FLOW_ERROR;
	}
	if (!frame->acquire().isNoop() || !frame->release().isNone())
		// The release gate stays with the frame (signalled when its last user is done): a
		// meta of its own would signal it when this buffer goes, while the consumer's
		// zero-copy output may still read the memory.
		addSyncMeta(out, frame->acquire());
	// A native memory stays findable (and alive) as the parent: a consumer whose backend cannot
	// map GStreamer's own textures or images reads them through GStreamer.
	if (s.input != BufferMemory::System)
		gst_buffer_add_parent_buffer_meta(out, inbuf);
	copyMetadata(trans, out, inbuf);
	s.stats.count(ExecutionPath::Kind::ZeroCopy);
	*outbuf = out;
	return GST_FLOW_OK;
}

GstFlowReturn transform(GstBaseTransform *, GstBuffer *, GstBuffer *)
{
	// prepare_output_buffer did the work: the output wraps or holds the frame already.
	return GST_FLOW_OK;
}

gboolean sinkEvent(GstBaseTransform *trans, GstEvent *event)
{
	noteFlush(event, stateOf(trans).flushing);
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class)->sink_event(trans, event);
}

GstStateChangeReturn changeState(GstElement *element, GstStateChange transition)
{
	noteFlush(transition, stateOf(element).flushing);
	return GST_ELEMENT_CLASS(gst_gpu_handle_upload_parent_class)->change_state(element, transition);
}

gboolean stop(GstBaseTransform *trans)
{
	UploadState &s = stateOf(trans);
	clearPool(s);
	s.backend.reset();
	return TRUE;
}

gboolean start(GstBaseTransform *trans)
{
	stateOf(trans).stats.reset();
	return TRUE;
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
			GST_INFO_OBJECT(device, "%s is not offered: Vulkan images leave through a copy",
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
			GST_INFO_OBJECT(trans, "no Vulkan instance: %s", error ? error->message : "?");
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

gboolean query(GstBaseTransform *trans, GstPadDirection direction, GstQuery *q)
{
	if (handleDevicesQuery(q, stateOf(trans).devices))
		return TRUE;
#if GPUHANDLE_GST_HAVE_VULKAN
	if (vulkanInstanceQuery(trans, q))
		return TRUE;
#endif
	if (direction == GST_PAD_SINK &&
	    (GST_QUERY_TYPE(q) == GST_QUERY_CAPS || GST_QUERY_TYPE(q) == GST_QUERY_ACCEPT_CAPS))
		warnUnsupportedFormat(GST_ELEMENT_CAST(trans), q, stateOf(trans).warnedFormat);
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class)
		->query(trans, direction, q);
}

void setContext(GstElement *element, GstContext *context)
{
	handleDevicesSetContext(context, stateOf(element).devices);
#if GPUHANDLE_GST_HAVE_VULKAN
	{
		std::lock_guard<std::mutex> lock(stateOf(element).vkMutex);
		gst_vulkan_handle_set_context(element, context, nullptr, &stateOf(element).vkInstance);
	}
#endif
	GST_ELEMENT_CLASS(gst_gpu_handle_upload_parent_class)->set_context(element, context);
}

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	UploadState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropBackend:
		s.backendChoice = static_cast<BackendChoice>(g_value_get_enum(value));
		break;
	case PropStorage:
		s.storageChoice = static_cast<StorageChoice>(g_value_get_enum(value));
		break;
	case PropTimeout:
		s.timeoutNs = g_value_get_uint64(value);
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	UploadState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropBackend:
		g_value_set_enum(value, static_cast<int>(s.backendChoice));
		break;
	case PropStorage:
		g_value_set_enum(value, static_cast<int>(s.storageChoice));
		break;
	case PropTimeout:
		g_value_set_uint64(value, s.timeoutNs);
		break;
	case PropStats:
		g_value_take_boxed(value, s.stats.toStructure("gpuhandleupload-stats"));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleUpload *>(static_cast<void *>(object));
	clearPool(*self->state);
#if GPUHANDLE_GST_HAVE_VULKAN
	gst_clear_object(&self->state->vkInstance);
#endif
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_upload_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_upload_class_init(GstGpuHandleUploadClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropBackend,
		g_param_spec_enum("backend", "Backend",
				  "Where system memory goes: wrapped in place (cpu), copied into "
				  "pooled frames of the named API, or (auto) what downstream "
				  "imports best. Native memories are always wrapped in place.",
				  backendChoiceType(), static_cast<int>(BackendChoice::Auto),
				  flags));
	g_object_class_install_property(
		object, PropStorage,
		g_param_spec_enum("storage", "Storage",
				  "How pooled frames are stored: one buffer, or images per plane "
				  "(auto: what downstream imports without a copy, else a buffer)",
				  storageChoiceType(), static_cast<int>(StorageChoice::Auto), flags));
	g_object_class_install_property(
		object, PropTimeout,
		timeoutParamSpec("Longest wait for a frame's fence or a device, in nanoseconds"));
	g_object_class_install_property(
		object, PropStats,
		statsParamSpec());

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	element->set_context = setContext;
	element->change_state = changeState;
	gst_element_class_set_static_metadata(
		element, "gpuhandle upload", "Filter/Video/Hardware",
		"Wraps system, DMABuf, GL and Vulkan memory as gpuhandle frames "
		"(memory:GpuHandle) without a copy, or copies system memory into a gpuhandle "
		"backend's pooled frames",
		"gpuhandle developers");
	GstCaps *sinkCaps = gst_caps_new_empty();
	for (const char *feature : sinkFeatures())
		gst_caps_append(sinkCaps, templateCaps(feature));
	gst_element_class_add_pad_template(
		element, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, sinkCaps));
	gst_caps_unref(sinkCaps);
	GstCaps *srcCaps = templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
	gst_element_class_add_pad_template(
		element, gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, srcCaps));
	gst_caps_unref(srcCaps);

	GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
	base->passthrough_on_same_caps = TRUE;
	base->transform_caps = transformCaps;
	base->set_caps = setCaps;
	base->decide_allocation = decideAllocation;
	base->propose_allocation = proposeAllocation;
	base->prepare_output_buffer = prepareOutputBuffer;
	base->transform = transform;
	base->start = start;
	base->stop = stop;
	base->query = query;
	base->sink_event = sinkEvent;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_upload_debug, "gpuhandleupload", 0,
				"gpuhandle upload");
}

static void gst_gpu_handle_upload_init(GstGpuHandleUpload *self)
{
	self->state = new UploadState();
}
