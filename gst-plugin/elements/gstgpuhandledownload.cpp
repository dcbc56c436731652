// gpuhandledownload: memory:GpuHandle in; system, GL, Vulkan, DMABuf or CUDA memory out (planner).
#include "gstgpuhandleelements.h"
#include "gstgpuhandlestats.h"

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

#include <gpuhandle/backends/planner.h>

#include <gst/base/gstbasetransform.h>

#include <algorithm>
#include <vector>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_download_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_download_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace {

enum Property { PropAllowCopy = 1, PropTimeout, PropStats };

// Where frames go, from the negotiated src caps.
enum class Target { System, Gl, Vulkan, DmaBuf, Cuda };

const char *targetName(Target target)
{
	switch (target) {
	case Target::System:
		return "system memory";
	case Target::Gl:
		return "GLMemory";
	case Target::Vulkan:
		return "VulkanImage";
	case Target::DmaBuf:
		return "DMABuf";
	case Target::Cuda:
		return "CUDAMemory";
	}
	return "?";
}

struct DownloadState {
	std::mutex mutex{};
	bool allowCopy = true;
	guint64 timeoutNs = defaultTimeoutNs();

	PathStats stats{};
	DevicesSlot devices{};
	// Set by a flush and by the state change to READY: fence waits end at once (FLUSHING).
	std::atomic<bool> flushing{ false };

	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	Target target = Target::System;
	BackendRef targetBackend{}; // GL, Vulkan, CUDA or fd
	bool downstreamVideoMeta = false;
	bool downstreamSyncMeta = false; // downstream waits on GstGpuHandleSyncMeta itself
	ExecutionPath::Kind lastPath = ExecutionPath::Kind::NotRun; // logged when it changes
	ImportRoute lastRoute = ImportRoute::Direct;
	// Guards the GL, Vulkan and CUDA object fields below: context queries and set_context arrive from
	// other threads while the streaming thread negotiates. Recursive, as GstGLBaseFilter's: the
	// neighbours' answers to the queries made under it come back into this element (query,
	// set_context) on the same thread. The streaming thread alone replaces glContext and
	// vkDevice, so it reads them without the lock.
	std::recursive_mutex contextMutex{};
#if GPUHANDLE_GST_HAVE_GL
	GstGLDisplay *glDisplay = nullptr;
	GstGLContext *glOtherContext = nullptr;
	GstGLContext *glContext = nullptr;
	GstBufferPool *glPool = nullptr; // the CPU-copy fallback into GLMemory, made on first use
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	GstVulkanInstance *vkInstance = nullptr;
	GstVulkanDevice *vkDevice = nullptr;
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	GstCudaContext *cudaContext = nullptr;
	// GStreamer 1.22 wraps no foreign device memory: frames are copied on the GPU into this
	// pool's buffers. Made on first use, for the negotiated caps.
	GstBufferPool *cudaPool = nullptr;
#endif
};

} // namespace

struct GstGpuHandleDownload {
	GstBaseTransform parent;
	DownloadState *state;
};
struct GstGpuHandleDownloadClass {
	GstBaseTransformClass parent_class;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleDownload, gst_gpu_handle_download, GST_TYPE_BASE_TRANSFORM)
#pragma GCC diagnostic pop

namespace {

DownloadState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleDownload *>(self)->state;
}

// Src memories in the order offered downstream: system memory first, so that a sink taking
// anything gets plain bytes; GPU memories when downstream asks for them in its caps.
std::vector<const char *> srcFeatures()
{
	std::vector<const char *> features{ GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY };
#if GPUHANDLE_GST_HAVE_GL
	features.push_back("memory:GLMemory");
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	features.push_back("memory:VulkanImage");
#endif
	features.push_back("memory:DMABuf");
#if GPUHANDLE_GST_HAVE_CUDA
	features.push_back("memory:CUDAMemory");
#endif
	return features;
}

GstCaps *transformCaps(GstBaseTransform *, GstPadDirection direction, GstCaps *caps,
		       GstCaps *filter)
{
	GstCaps *out = direction == GST_PAD_SINK
			       ? capsWithFeatures(caps, srcFeatures())
			       : capsWithFeatures(caps, { GST_CAPS_FEATURE_MEMORY_GPU_HANDLE });
	out = intersectFilter(out, filter);
	return out;
}

Target targetOfCaps(GstCaps *caps)
{
	GstCapsFeatures *features = gst_caps_get_features(caps, 0);
	if (gst_caps_features_contains(features, "memory:GLMemory"))
		return Target::Gl;
	if (gst_caps_features_contains(features, "memory:VulkanImage"))
		return Target::Vulkan;
	if (gst_caps_features_contains(features, "memory:DMABuf"))
		return Target::DmaBuf;
	if (gst_caps_features_contains(features, "memory:CUDAMemory"))
		return Target::Cuda;
	return Target::System;
}

WaitDuration timeoutOf(DownloadState &s)
{
	std::lock_guard<std::mutex> lock(s.mutex);
	return timeoutFromNs(s.timeoutNs);
}

bool allowCopyOf(DownloadState &s)
{
	std::lock_guard<std::mutex> lock(s.mutex);
	return s.allowCopy;
}

// Opens the backend of the target API (the one GL/Vulkan neighbours share, or the fd backend
// for DMA-BUFs); posts the element error when it cannot.
bool openTarget(GstBaseTransform *trans)
{
	DownloadState &s = stateOf(trans);
	s.targetBackend.reset();
	Result<BackendRef> backend = Error::format(ErrorCode::NotSupported, "target",
						   "no backend for %s", targetName(s.target));
	switch (s.target) {
	case Target::System:
		return true;
	case Target::DmaBuf:
		backend = ensureDevices(GST_ELEMENT_CAST(trans), s.devices)->backend(BackendKind::Fd);
		break;
	case Target::Gl:
#if GPUHANDLE_GST_HAVE_GL
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
		Status found = ensureGlContext(GST_ELEMENT_CAST(trans), GST_PAD_SRC, &s.glDisplay,
					       &s.glOtherContext, &s.glContext);
		backend = found.ok() ? glBackendFor(s.glContext) : Result<BackendRef>(found.error());
	}
#endif
		break;
	case Target::Vulkan:
#if GPUHANDLE_GST_HAVE_VULKAN
	{
		std::lock_guard<std::recursive_mutex> lock(s.contextMutex);
		Status found = ensureVulkanDevice(GST_ELEMENT_CAST(trans), &s.vkInstance, &s.vkDevice);
		backend = found.ok() ? vulkanBackendFor(s.vkDevice) : Result<BackendRef>(found.error());
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
				  (_("No device to download frames into %s."), targetName(s.target)),
				  ("%s", backend.error().message().c_str()));
		return false;
	}
	s.targetBackend = *backend;
	GST_INFO_OBJECT(trans, "frames go into %s on %s", targetName(s.target),
			s.targetBackend->deviceInfo().name.c_str());
	return true;
}

gboolean setCaps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
	DownloadState &s = stateOf(trans);
	GstVideoInfo info;
	if (!gst_video_info_from_caps(&info, incaps)) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION, (_("The input is not raw video.")),
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
	s.target = targetOfCaps(outcaps);
	s.lastPath = ExecutionPath::Kind::NotRun;
#if GPUHANDLE_GST_HAVE_GL
	if (s.glPool) { // made for the old caps (and maybe another context)
		gst_buffer_pool_set_active(s.glPool, FALSE);
		gst_clear_object(&s.glPool);
	}
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	if (s.cudaPool) { // made for the old caps (and maybe another context)
		gst_buffer_pool_set_active(s.cudaPool, FALSE);
		gst_clear_object(&s.cudaPool);
	}
#endif
	return openTarget(trans) ? TRUE : FALSE;
}

gboolean proposeAllocation(GstBaseTransform *trans, GstQuery *, GstQuery *query)
{
	DownloadState &s = stateOf(trans);
	// Tell upstream which API we import into, and what it imports without a copy: GL and
	// Vulkan take images (textures) from Vulkan's exportable memory.
	TargetHint hint{};
	switch (s.target) {
	case Target::System:
		hint = { BackendKind::Cpu, FrameStorage::Buffer };
		break;
	case Target::Gl:
		hint = { BackendKind::OpenGL, FrameStorage::OptimalImage };
		break;
	case Target::Vulkan:
		hint = { BackendKind::Vulkan, FrameStorage::OptimalImage };
		break;
	case Target::DmaBuf:
		hint = { BackendKind::Fd, FrameStorage::Buffer };
		break;
	case Target::Cuda: // copied on the GPU from a pitched CUDA allocation
		hint = { BackendKind::Cuda, FrameStorage::Buffer };
		break;
	}
	addTargetHint(query, hint);
	gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	return TRUE;
}

gboolean decideAllocation(GstBaseTransform *trans, GstQuery *query)
{
	DownloadState &s = stateOf(trans);
	s.downstreamVideoMeta =
		gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr) != FALSE;
	s.downstreamSyncMeta = gst_query_find_allocation_meta(
				       query, GST_GPU_HANDLE_SYNC_META_API_TYPE, nullptr) != FALSE;
	if (s.target != Target::System) {
		// Output buffers wrap imported frames; no pool of ours or downstream's is used.
		while (gst_query_get_n_allocation_pools(query) > 0)
			gst_query_remove_nth_allocation_pool(query, 0);
		return TRUE;
	}
	// System memory copies go into a video pool (downstream's when it offers one).
	GstCaps *caps = nullptr;
	gst_query_parse_allocation(query, &caps, nullptr);
	GstBufferPool *pool = nullptr;
	guint size = static_cast<guint>(GST_VIDEO_INFO_SIZE(&s.info)), min = 2, max = 0;
	if (gst_query_get_n_allocation_pools(query) > 0) {
		gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
		size = std::max(size, static_cast<guint>(GST_VIDEO_INFO_SIZE(&s.info)));
	}
	if (!pool)
		pool = gst_video_buffer_pool_new();
	GstStructure *config = gst_buffer_pool_get_config(pool);
	gst_buffer_pool_config_set_params(config, caps, size, min, max);
	if (s.downstreamVideoMeta)
		gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
	gst_buffer_pool_set_config(pool, config);
	if (gst_query_get_n_allocation_pools(query) > 0)
		gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
	else
		gst_query_add_allocation_pool(query, pool, size, min, max);
	gst_object_unref(pool);
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)
		->decide_allocation(trans, query);
}

// Timestamps, flags and the metas GstBaseTransform carries over (crop, time codes, ...): its own
// copy_metadata, which prepare_output_buffer would have run had it made the buffer.
void copyMetadata(GstBaseTransform *trans, GstBuffer *out, GstBuffer *in)
{
	GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)->copy_metadata(trans, in, out);
}

void notePath(GstBaseTransform *trans, ExecutionPath path, ImportRoute route)
{
	DownloadState &s = stateOf(trans);
	s.stats.count(path.kind());
	if (path.kind() == s.lastPath && route == s.lastRoute)
		return;
	s.lastPath = path.kind();
	s.lastRoute = route;
	GST_INFO_OBJECT(trans, "%s into %s: %s (%s)%s%s", pixelFormatName(s.format),
			targetName(s.target), executionPathKindName(path.kind()),
			importRouteName(route), *path.reason() ? ": " : "", path.reason());
}

enum class Acquired { Yes, Flushing, Failed };

// Waits for the frame's acquire point in slices (so a flush or a state change interrupts it),
// counting the wait; posts the element error when it does not signal within `timeout`.
Acquired waitAcquire(GstBaseTransform *trans, const Frame &frame, WaitDuration timeout)
{
	DownloadState &s = stateOf(trans);
	if (frame.acquire().isNoop())
		return Acquired::Yes;
	Result<bool> signaled = frame.acquire().isSignaled();
	if (signaled.ok() && *signaled)
		return Acquired::Yes;
	std::chrono::nanoseconds waited{ 0 };
	std::optional<Error> why;
	const SlicedWait done = waitSliced(frame.acquire(), timeout, s.flushing, waited, why);
	if (done == SlicedWait::Flushing)
		return Acquired::Flushing;
	s.stats.countFenceWait(waited);
	if (done == SlicedWait::Failed) {
		GST_ELEMENT_ERROR(trans, RESOURCE, BUSY, (_("A frame's fence did not signal in time.")),
				  ("waiting for the %s fence: %s", syncKindName(frame.acquire().kind()),
				   why ? why->message().c_str() : "?"));
		return Acquired::Failed;
	}
	return Acquired::Yes;
}

GstFlowReturn flowOf(Acquired acquired)
{
	switch (acquired) {
	case Acquired::Yes:
		return GST_FLOW_OK;
	case Acquired::Flushing:
		return GST_FLOW_FLUSHING;
	case Acquired::Failed:
		break;
	}
	return GST_FLOW_ERROR;
}

// Whether a consumer that ignores GstVideoMeta reads a system-memory wrap of `frame` right: one
// CPU range laid out as GStreamer lays out `info` by default.
bool frameHasDefaultLayout(const Frame &frame, const GstVideoInfo &info)
{
	if (frame.numResources() != 1)
		return false;
	const ResourceKind kind = frame.resource(0).kind();
	if (kind != ResourceKind::CpuBytes && kind != ResourceKind::ShmFd &&
	    !(kind == ResourceKind::CpuPlanes && frame.numPlanes() == 1))
		return false;
	for (uint32_t p = 0; p < frame.numPlanes(); ++p)
		if (frame.plane(p).offset != GST_VIDEO_INFO_PLANE_OFFSET(&info, p) ||
		    frame.plane(p).stride != static_cast<uint32_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, p)))
			return false;
	return true;
}

// Whether a consumer that ignores GstVideoMeta reads `buffer` right: one memory, laid out as
// GStreamer lays out `info` by default.
bool hasDefaultLayout(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (gst_buffer_n_memory(buffer) != 1 || gst_buffer_get_size(buffer) < GST_VIDEO_INFO_SIZE(&info))
		return false;
	const GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
	if (!meta)
		return true;
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); ++p)
		if (meta->offset[p] != GST_VIDEO_INFO_PLANE_OFFSET(&info, p) ||
		    meta->stride[p] != GST_VIDEO_INFO_PLANE_STRIDE(&info, p))
			return false;
	return true;
}

// Maps `frame` (through its backend) and copies its rows into `out`, a buffer of the negotiated
// caps that maps for writing (system memory, or GLMemory, which uploads on unmap). Posts the
// element error and returns false when either side does not map.
// The bytes of a frame gpuhandleupload wrapped from a native GStreamer memory (GLMemory,
// VulkanImage, ...) that the frame's backend cannot map (it maps what it allocated or imported):
// the native buffer, kept as the input's GstParentBufferMeta, is mapped by its own allocator,
// which downloads it. False when the input has no parent or either side does not map.
bool copyParentInto(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *out)
{
	DownloadState &s = stateOf(trans);
	GstParentBufferMeta *parent = gst_buffer_get_parent_buffer_meta(inbuf);
	if (!parent)
		return false;
	GstVideoFrame src, dst;
	if (!gst_video_frame_map(&src, &s.info, parent->buffer, GST_MAP_READ))
		return false;
	if (!gst_video_frame_map(&dst, &s.info, out, GST_MAP_WRITE)) {
		gst_video_frame_unmap(&src);
		return false;
	}
	const bool copied = gst_video_frame_copy(&dst, &src) != FALSE;
	gst_video_frame_unmap(&dst);
	gst_video_frame_unmap(&src);
	return copied;
}

bool copyFrameInto(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		   const BackendRef &backend, GstBuffer *out, WaitDuration timeout)
{
	DownloadState &s = stateOf(trans);
	Result<CpuMapping> src = backend ? backend->map(frame, MapAccess::Read, timeout)
					 : mapFrame(frame, MapAccess::Read, timeout);
	if (!src.ok() && src.error().code() != ErrorCode::Timeout && copyParentInto(trans, inbuf, out)) {
		GST_LOG_OBJECT(trans, "read through GStreamer's own memory: %s",
			       src.error().message().c_str());
		return true;
	}
	GstVideoFrame dst;
	Result<const PixelFormatInfo *> formatInfo = pixelFormatInfo(s.format);
	if (!src.ok() || !formatInfo.ok() ||
	    !gst_video_frame_map(&dst, &s.info, out, GST_MAP_WRITE)) {
		GST_ELEMENT_ERROR(trans, RESOURCE, READ, (_("Could not read a gpuhandle frame.")),
				  ("%s", !src.ok()	  ? src.error().message().c_str()
					 : !formatInfo.ok() ? formatInfo.error().message().c_str()
							    : "the output buffer did not map"));
		return false;
	}
	uint8_t *dstPlanes[4]{};
	const uint8_t *srcPlanes[4]{};
	uint32_t dstStrides[4]{}, srcStrides[4]{};
	for (uint32_t p = 0; p < src->numPlanes() && p < 4; ++p) {
		dstPlanes[p] = static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&dst, p));
		dstStrides[p] = static_cast<uint32_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&dst, p));
		srcPlanes[p] = src->data(p);
		srcStrides[p] = src->stride(p);
	}
	copyPlaneRows(dstPlanes, dstStrides, srcPlanes, srcStrides, **formatInfo,
		      static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&s.info)),
		      static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&s.info)));
	gst_video_frame_unmap(&dst);
	return true;
}

// Into system memory: the frame's own bytes wrapped when they are CPU memory and downstream can
// read their layout; otherwise mapped through the backend and copied into a pooled buffer.
GstFlowReturn toSystem(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	const WaitDuration timeout = timeoutOf(s);
	if (GstFlowReturn ret = flowOf(waitAcquire(trans, frame, timeout)); ret != GST_FLOW_OK)
		return ret;
	// A frame gpuhandleupload made over system memory leaves as that memory, when downstream
	// reads its layout.
	if (GstBuffer *source = sourceBufferOf(frame)) {
		if (s.downstreamVideoMeta || hasDefaultLayout(source, s.info)) {
			GstBuffer *out = gst_buffer_copy(source); // shares the memories and video meta
			gst_buffer_unref(source);
			copyMetadata(trans, out, inbuf);
			notePath(trans, ExecutionPath::zeroCopy(), ImportRoute::Direct);
			*outbuf = out;
			return GST_FLOW_OK;
		}
		gst_buffer_unref(source);
	}
	// Decided before wrapping: a wrap that is dropped would signal the frame's release gate
	// while the copy below still reads the frame.
	if (s.downstreamVideoMeta || frameHasDefaultLayout(frame, s.info)) {
		Result<GstBuffer *> wrapped = systemBufferFromFrame(frame, false, timeout);
		if (wrapped.ok()) {
			keepInputAlive(*wrapped, inbuf); // pooled frames stay out of the pool meanwhile
			copyMetadata(trans, *wrapped, inbuf);
			notePath(trans, ExecutionPath::zeroCopy(), ImportRoute::Direct);
			*outbuf = *wrapped;
			return GST_FLOW_OK;
		}
		GST_DEBUG_OBJECT(trans, "not wrapped as system memory: %s",
				 wrapped.error().message().c_str());
	} else {
		GST_DEBUG_OBJECT(trans, "the frame's layout is not GStreamer's default, and downstream "
					"takes no GstVideoMeta: copying");
	}
	if (!allowCopyOf(s)) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("No zero-copy path into %s, and allow-copy is false."),
				   targetName(s.target)),
				  ("%s frames of %s need a CPU copy%s", pixelFormatName(s.format),
				   backend ? backendKindName(backend->kind()) : "CPU memory",
				   s.downstreamVideoMeta ? "" : " (downstream takes no GstVideoMeta)"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	GstFlowReturn ret = GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)
				    ->prepare_output_buffer(trans, inbuf, outbuf);
	if (ret != GST_FLOW_OK)
		return ret;
	if (!copyFrameInto(trans, inbuf, frame, backend, *outbuf, timeout)) {
		gst_clear_buffer(outbuf);
		return GST_FLOW_ERROR;
	}
	notePath(trans, ExecutionPath::cpuCopy("mapped and copied into system memory"),
		 ImportRoute::CpuCopy);
	return GST_FLOW_OK;
}

#if GPUHANDLE_GST_HAVE_GL
// The fallback into GL when no route gives textures of the formats GStreamer's GL elements use
// (packed 4:2:2 and v210 live in Vulkan buffers, which GL imports as buffer objects): a GLMemory
// buffer of GStreamer's GL pool, written through its CPU map; GStreamer uploads it on unmap.
GstFlowReturn copyIntoGl(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
			 const BackendRef &backend, GstBuffer **outbuf, const std::string &why)
{
	DownloadState &s = stateOf(trans);
	if (!s.glPool) {
		GstCaps *caps = gst_video_info_to_caps(&s.info);
		gst_caps_set_features(caps, 0, gst_caps_features_new("memory:GLMemory", nullptr));
		gst_caps_set_simple(caps, "texture-target", G_TYPE_STRING, "2D", nullptr);
		s.glPool = gst_gl_buffer_pool_new(s.glContext);
		GstStructure *config = gst_buffer_pool_get_config(s.glPool);
		gst_buffer_pool_config_set_params(config, caps,
						  static_cast<guint>(GST_VIDEO_INFO_SIZE(&s.info)), 1, 0);
		gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
		gst_caps_unref(caps);
		if (!gst_buffer_pool_set_config(s.glPool, config) ||
		    !gst_buffer_pool_set_active(s.glPool, TRUE)) {
			gst_clear_object(&s.glPool);
			GST_ELEMENT_ERROR(trans, RESOURCE, FAILED,
					  (_("Could not move a frame into %s."), targetName(s.target)),
					  ("GStreamer's GL pool did not start for %s (after: %s)",
					   pixelFormatName(s.format), why.c_str()));
			return GST_FLOW_ERROR;
		}
	}
	GstFlowReturn ret = gst_buffer_pool_acquire_buffer(s.glPool, outbuf, nullptr);
	if (ret != GST_FLOW_OK)
		return ret;
	if (!copyFrameInto(trans, inbuf, frame, backend, *outbuf, timeoutOf(s))) {
		gst_clear_buffer(outbuf);
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, *outbuf, inbuf);
	GST_DEBUG_OBJECT(trans, "no texture route (%s): copied through system memory", why.c_str());
	notePath(trans, ExecutionPath::cpuCopy("no route gives GL textures of this format"),
		 ImportRoute::CpuCopy);
	return GST_FLOW_OK;
}
#endif

#if GPUHANDLE_GST_HAVE_CUDA
// Into CUDAMemory: GStreamer 1.22 cannot wrap the CUDA backend's frame, so it is copied on the
// GPU into a buffer of GStreamer's CUDA pool (made on first use). The path counted is the
// planner's when it copied already, else this GPU copy.
GstFlowReturn copyIntoCuda(GstBaseTransform *trans, GstBuffer *inbuf, const ImportResult &imported,
			   GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	if (!allowCopyOf(s)) {
		GST_ELEMENT_ERROR(
			trans, CORE, NEGOTIATION,
			(_("No zero-copy path into %s, and allow-copy is false."),
			 targetName(s.target)),
			("GStreamer 1.22 cannot wrap foreign device memory as CUDAMemory; "
			 "frames are copied into its CUDA pool"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (!s.cudaPool) {
		Result<GstBufferPool *> pool = cudaBufferPoolFor(s.cudaContext, s.info);
		if (!pool.ok()) {
			GST_ELEMENT_ERROR(trans, RESOURCE, FAILED,
					  (_("Could not move a frame into %s."),
					   targetName(s.target)),
					  ("%s", pool.error().message().c_str()));
			return GST_FLOW_ERROR;
		}
		s.cudaPool = *pool;
	}
	Result<GstBuffer *> out =
		cudaBufferCopyOf(imported.frame, s.targetBackend, s.cudaPool, s.info, timeoutOf(s));
	if (!out.ok()) {
		if (out.error().code() == ErrorCode::Timeout)
			GST_ELEMENT_ERROR(trans, RESOURCE, BUSY,
					  (_("A frame's fence did not signal in time.")),
					  ("%s", out.error().message().c_str()));
		else
			GST_ELEMENT_ERROR(
				trans, RESOURCE, FAILED,
				(_("Could not move a frame into %s."), targetName(s.target)),
				("imported by %s, then the copy into GStreamer's CUDA pool "
				 "failed: %s",
				 importRouteName(imported.route), out.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, *out, inbuf);
	if (imported.path.isCopy())
		notePath(trans, imported.path, imported.route);
	else
		notePath(trans,
			 ExecutionPath::gpuCopy("copied into GStreamer's CUDA pool (1.22 wraps no "
						"foreign device memory)"),
			 ImportRoute::GpuCopy);
	*outbuf = *out;
	return GST_FLOW_OK;
}
#endif

// `frame` as the target's GstMemory, when its resources already are the target API's objects
// on the target's device (textures of the GL context's share group, images of the Vulkan device,
// DMA-BUFs). Errors: WrongKind / DeviceMismatch / FormatMismatch from the conversion.
Result<GstBuffer *> wrapAsTarget(GstBaseTransform *trans, const Frame &frame, WaitDuration timeout)
{
	DownloadState &s = stateOf(trans);
	(void)timeout;
	switch (s.target) {
	case Target::Gl:
#if GPUHANDLE_GST_HAVE_GL
		return glBufferFromFrame(frame, s.glContext, s.info, timeout);
#else
		break;
#endif
	case Target::Vulkan:
#if GPUHANDLE_GST_HAVE_VULKAN
		return vulkanBufferFromFrame(frame, s.vkDevice, s.info, timeout);
#else
		break;
#endif
	case Target::DmaBuf:
		return fdBufferFromFrame(frame);
	case Target::Cuda:
		return Error(ErrorCode::NotSupported, "target",
			     "GStreamer 1.22 makes CUDAMemory only over what it allocates: frames are "
			     "copied into its CUDA pool");
	case Target::System:
		break;
	}
	return Error::format(ErrorCode::NotSupported, "target", "%s is not built in",
			     targetName(s.target));
}

bool fenceStaysOnGpu(const DownloadState &s, const SyncPoint &acquire)
{
	if (acquire.isNoop() || !s.targetBackend)
		return false;
	if (s.target == Target::DmaBuf && s.downstreamSyncMeta)
		return true;
	const std::vector<SyncKind> &imports = s.targetBackend->capabilities().fenceImports;
	return std::find(imports.begin(), imports.end(), acquire.kind()) != imports.end();
}

// Into GL, Vulkan or DMA-BUF memory: the planner imports the frame into the target's backend
// (zero-copy where a route exists), then the result is wrapped as the target's GstMemory.
GstFlowReturn toDevice(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	// Consumers of DMA-BUFs and of GStreamer's GL and Vulkan memories read at once and know
	// nothing of gpuhandle's fences: the acquire point is waited here, in slices that a flush
	// ends, unless the wait can stay on the GPU (the target's queue imports the fence, which
	// the planner then carries) or downstream waits on the sync meta itself (DMA-BUFs).
	if (!fenceStaysOnGpu(s, frame.acquire())) {
		if (GstFlowReturn ret = flowOf(waitAcquire(trans, frame, timeoutOf(s)));
		    ret != GST_FLOW_OK)
			return ret;
	}
	// Memory of the target API on its device already (GStreamer's own textures from glupload,
	// or images of the shared Vulkan device): wrapped as it is.
	Result<GstBuffer *> direct = wrapAsTarget(trans, frame, timeoutOf(s));
	if (!direct.ok())
		GST_LOG_OBJECT(trans, "not %s as it is: %s", targetName(s.target),
			       direct.error().message().c_str());
	if (direct.ok()) {
		keepInputAlive(*direct, inbuf);
		copyMetadata(trans, *direct, inbuf);
		notePath(trans, ExecutionPath::zeroCopy(), ImportRoute::Direct);
		*outbuf = *direct;
		return GST_FLOW_OK;
	}
	ImportOptions options{};
	options.source = backend;
	options.allowCopies = allowCopyOf(s);
	options.copyStorage = s.target == Target::DmaBuf || s.target == Target::Cuda
				      ? FrameStorage::Buffer
				      : FrameStorage::OptimalImage;
	options.timeout = timeoutOf(s);
	Result<ImportResult> imported = importFrame(frame, *s.targetBackend, options);
	if (!imported.ok()) {
		const Error &why = imported.error();
		if (why.code() == ErrorCode::Timeout) {
			GST_ELEMENT_ERROR(trans, RESOURCE, BUSY,
					  (_("A frame's fence did not signal in time.")),
					  ("%s", why.message().c_str()));
			return GST_FLOW_ERROR;
		}
#if GPUHANDLE_GST_HAVE_GL
		if (s.target == Target::Gl && options.allowCopies)
			return copyIntoGl(trans, inbuf, frame, backend, outbuf, why.message());
#endif
		if (!options.allowCopies) {
			GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
					  (_("No zero-copy path into %s, and allow-copy is false."),
					   targetName(s.target)),
					  ("%s", why.message().c_str()));
			return GST_FLOW_NOT_NEGOTIATED;
		}
		GST_ELEMENT_ERROR(trans, RESOURCE, FAILED,
				  (_("Could not move a frame into %s."), targetName(s.target)),
				  ("%s", why.message().c_str()));
		return GST_FLOW_ERROR;
	}
	if (imported->fence == FenceTransfer::CpuWait)
		s.stats.countFenceWait(imported->fenceWait);
#if GPUHANDLE_GST_HAVE_CUDA
	if (s.target == Target::Cuda)
		return copyIntoCuda(trans, inbuf, *imported, outbuf);
#endif
	Result<GstBuffer *> out = wrapAsTarget(trans, imported->frame, options.timeout);
	if (!out.ok() && s.target == Target::DmaBuf) {
		// memfd frames leave as DMA-BUFs where the kernel can make them (udmabuf).
		Result<Frame> exported =
			s.targetBackend->exportFrame(imported->frame, ResourceKind::DmaBuf);
		out = exported.ok() ? wrapAsTarget(trans, *exported, options.timeout)
				    : Result<GstBuffer *>(exported.error());
	}
#if GPUHANDLE_GST_HAVE_GL
	if (!out.ok() && s.target == Target::Gl && options.allowCopies)
		return copyIntoGl(trans, inbuf, frame, backend, outbuf, out.error().message());
#endif
	if (!out.ok() && !options.allowCopies) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("No zero-copy path into %s, and allow-copy is false."),
				   targetName(s.target)),
				  ("imported by %s, but not usable as %s: %s",
				   importRouteName(imported->route), targetName(s.target),
				   out.error().message().c_str()));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (!out.ok()) {
		GST_ELEMENT_ERROR(trans, RESOURCE, FAILED,
				  (_("Could not move a frame into %s."), targetName(s.target)),
				  ("imported by %s (%s), but not usable as %s: %s",
				   importRouteName(imported->route),
				   executionPathKindName(imported->path.kind()), targetName(s.target),
				   out.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	if (imported->path.kind() == ExecutionPath::Kind::ZeroCopy)
		keepInputAlive(*out, inbuf); // the output aliases the input's (maybe pooled) memory
	copyMetadata(trans, *out, inbuf);
	notePath(trans, imported->path, imported->route);
	*outbuf = *out;
	return GST_FLOW_OK;
}

GstFlowReturn prepareOutputBuffer(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
	Result<Frame> frame = frameFromBuffer(inbuf);
	if (!frame.ok()) {
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer is not gpuhandle memory.")),
				  ("%s", frame.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	const BackendRef backend = memoryBackend(gst_buffer_peek_memory(inbuf, 0));
	if (stateOf(trans).target == Target::System)
		return toSystem(trans, inbuf, *frame, backend, outbuf);
	return toDevice(trans, inbuf, *frame, backend, outbuf);
}

GstFlowReturn transform(GstBaseTransform *, GstBuffer *, GstBuffer *)
{
	// prepare_output_buffer did the work (wrapped, imported or copied).
	return GST_FLOW_OK;
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

gboolean sinkEvent(GstBaseTransform *trans, GstEvent *event)
{
	noteFlush(event, stateOf(trans).flushing);
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)->sink_event(trans, event);
}

GstStateChangeReturn changeState(GstElement *element, GstStateChange transition)
{
	noteFlush(transition, stateOf(element).flushing);
	return GST_ELEMENT_CLASS(gst_gpu_handle_download_parent_class)->change_state(element, transition);
}

gboolean start(GstBaseTransform *trans)
{
	stateOf(trans).stats.reset();
	return TRUE;
}

gboolean stop(GstBaseTransform *trans)
{
	releaseContexts(stateOf(trans));
	return TRUE;
}

gboolean query(GstBaseTransform *trans, GstPadDirection direction, GstQuery *q)
{
	DownloadState &s = stateOf(trans);
	if (handleDevicesQuery(q, s.devices))
		return TRUE;
	if (GST_QUERY_TYPE(q) == GST_QUERY_CONTEXT) {
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
			display = s.glDisplay ? static_cast<GstGLDisplay *>(gst_object_ref(s.glDisplay)) : nullptr;
			context = s.glContext ? static_cast<GstGLContext *>(gst_object_ref(s.glContext)) : nullptr;
			other = s.glOtherContext ? static_cast<GstGLContext *>(gst_object_ref(s.glOtherContext)) : nullptr;
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
			instance = s.vkInstance ? static_cast<GstVulkanInstance *>(gst_object_ref(s.vkInstance)) : nullptr;
			device = s.vkDevice ? static_cast<GstVulkanDevice *>(gst_object_ref(s.vkDevice)) : nullptr;
#endif
#if GPUHANDLE_GST_HAVE_CUDA
			if (s.cudaContext)
				cuda = static_cast<GstCudaContext *>(gst_object_ref(s.cudaContext));
#endif
		}
#if GPUHANDLE_GST_HAVE_GL
		answered = gst_gl_handle_context_query(GST_ELEMENT_CAST(trans), q, display, context,
						       other);
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
			answered = cudaHandleContextQuery(GST_ELEMENT_CAST(trans), q, cuda) ? TRUE
											    : FALSE;
		gst_clear_object(&cuda);
#endif
		if (answered)
			return TRUE;
	}
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)
		->query(trans, direction, q);
}

void setContext(GstElement *element, GstContext *context)
{
	DownloadState &s = stateOf(element);
	handleDevicesSetContext(context, s.devices);
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
	GST_ELEMENT_CLASS(gst_gpu_handle_download_parent_class)->set_context(element, context);
}

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	DownloadState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropAllowCopy:
		s.allowCopy = g_value_get_boolean(value) != FALSE;
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
	DownloadState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropAllowCopy:
		g_value_set_boolean(value, s.allowCopy);
		break;
	case PropTimeout:
		g_value_set_uint64(value, s.timeoutNs);
		break;
	case PropStats:
		g_value_take_boxed(value, s.stats.toStructure("gpuhandledownload-stats"));
		break;
	default:
		G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleDownload *>(static_cast<void *>(object));
	releaseContexts(*self->state);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_download_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_download_class_init(GstGpuHandleDownloadClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropAllowCopy,
		g_param_spec_boolean("allow-copy", "Allow copies",
				     "Copy frames (on the GPU, else through system memory) when no "
				     "zero-copy path into the negotiated memory exists; when false, "
				     "such a frame is a not-negotiated error",
				     TRUE, flags));
	g_object_class_install_property(
		object, PropTimeout,
		timeoutParamSpec("Longest wait for a frame's fence, in nanoseconds; a fence that "
				 "does not signal in time is an element error"));
	g_object_class_install_property(
		object, PropStats,
		statsParamSpec());

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	element->set_context = setContext;
	element->change_state = changeState;
	gst_element_class_set_static_metadata(
		element, "gpuhandle download", "Filter/Video/Hardware",
		"Moves gpuhandle frames (memory:GpuHandle) into system, GL, Vulkan, DMABuf or CUDA "
		"memory through gpuhandle's path planner, without a copy where a route exists",
		"gpuhandle developers");
	GstCaps *sinkCaps = templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
	gst_element_class_add_pad_template(
		element, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, sinkCaps));
	gst_caps_unref(sinkCaps);
	GstCaps *srcCaps = gst_caps_new_empty();
	for (const char *feature : srcFeatures()) {
		GstCaps *any = templateCaps(feature);
		gst_caps_append(srcCaps, capsWithFeatures(any, { feature }));
		gst_caps_unref(any);
	}
	gst_element_class_add_pad_template(
		element, gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, srcCaps));
	gst_caps_unref(srcCaps);

	GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
	base->transform_caps = transformCaps;
	base->set_caps = setCaps;
	base->propose_allocation = proposeAllocation;
	base->decide_allocation = decideAllocation;
	base->prepare_output_buffer = prepareOutputBuffer;
	base->transform = transform;
	base->start = start;
	base->stop = stop;
	base->query = query;
	base->sink_event = sinkEvent;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_download_debug, "gpuhandledownload", 0,
				"gpuhandle download");
}

static void gst_gpu_handle_download_init(GstGpuHandleDownload *self)
{
	self->state = new DownloadState();
}
