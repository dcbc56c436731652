// GstCudaMemory -> gpuhandle frames; GStreamer's CUDA context as a gpuhandle CUDA backend.
#include <gst/gpuhandle/gstgpuhandlecuda.hpp>

// GStreamer's CUDA library is unstable API: its headers #warning without this.
#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API 1
#endif

#include <gpuhandle/context.h>
#include <gpuhandle/cuda_resources.h>

#include "gstgpuhandlegpushared.h"

#include <memory>
#include <mutex>

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_cuda_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_cuda_debug

using namespace gpuhandle;

namespace {

void initDebug()
{
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_cuda_debug, "gpuhandlecuda", 0,
					"gpuhandle CUDA memory and backend");
	});
}

// GObject's type-check macros cast C-style; their expansions land here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
bool isCudaContext(gpointer object)
{
	return object && GST_IS_CUDA_CONTEXT(object);
}
#pragma GCC diagnostic pop

// GST_MAP_CUDA lies past GstMapFlags' named values, as GStreamer defines it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
GstMapFlags cudaReadMap()
{
	return static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_CUDA);
}

GstMapFlags cudaWriteMap()
{
	return static_cast<GstMapFlags>(GST_MAP_WRITE | GST_MAP_CUDA);
}
#pragma GCC diagnostic pop

const char *videoFormatName(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	return name ? name : "unknown";
}

const char *memTypeOf(GstMemory *mem)
{
	return mem && mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
								 : "typeless";
}

// A reference on GStreamer's CUDA context, for a backend's Context.
struct ContextHold final : KeepAlive {
	explicit ContextHold(GstCudaContext *c)
		: context(static_cast<GstCudaContext *>(gst_object_ref(c)))
	{
	}
	ContextHold(const ContextHold &) = delete;
	ContextHold &operator=(const ContextHold &) = delete;
	~ContextHold() override { gst_object_unref(context); }

	GstCudaContext *const context;
};

using gpuhandle::gst::detail::BufferAnchor;

// The anchor of a frame over a pooled buffer's CUDA memory while it is written: a memory
// reference, not a buffer one, so that the buffer stays writable for downstream.
struct MemoryAnchor final : KeepAlive {
	explicit MemoryAnchor(GstMemory *m) : memory(gst_memory_ref(m)) {}
	MemoryAnchor(const MemoryAnchor &) = delete;
	MemoryAnchor &operator=(const MemoryAnchor &) = delete;
	~MemoryAnchor() override { gst_memory_unref(memory); }

	GstMemory *const memory;
};

// One backend per object (see detail::cacheBackend in gstgpuhandlegpushared.h).
GQuark backendQuark()
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-cuda-backend");
	return quark;
}

// The argument checks cudaBackendFor and cudaBufferFromFrame share.
Status checkContext(GstCudaContext *context)
{
	if (!context)
		return Error(ErrorCode::NullHandle, "context", "The GstCudaContext is null.");
	if (!isCudaContext(context))
		return Error(ErrorCode::InvalidArgument, "context",
			     "The object given as the CUDA context is not a GstCudaContext.");
	return {};
}

} // namespace

namespace gpuhandle::gst {

Result<BackendRef> cudaBackendFor(GstCudaContext *context)
{
	initDebug();
	if (Status checked = checkContext(context); !checked)
		return std::move(checked).error();
	void *handle = gst_cuda_context_get_handle(context);
	if (!handle)
		return Error(ErrorCode::InvalidState, "context",
			     "The GstCudaContext wraps no CUcontext (it was not made by "
			     "gst_cuda_context_new or gst_cuda_context_new_wrapped).");
	auto *object = reinterpret_cast<GObject *>(context);
	if (BackendRef cached = detail::cachedBackend(object, backendQuark()))
		return cached;
	guint deviceId = 0;
	g_object_get(object, "cuda-device-id", &deviceId, nullptr);
	CudaContext native;
	native.context = handle;
	native.stream = nullptr; // the legacy default stream, which GStreamer 1.22 copies on
	native.ordinal = static_cast<int32_t>(deviceId);
	Result<ContextRef> made =
		Context::create(std::move(native), std::make_shared<ContextHold>(context));
	if (!made)
		return std::move(made).error();
	BackendOpenOptions options;
	options.context = std::move(*made);
	Result<BackendRef> opened = openBackend(BackendKind::Cuda, options);
	if (!opened)
		return std::move(opened).error();
	GST_DEBUG("gpuhandle CUDA backend opened in GStreamer's context %p: %s",
		  static_cast<void *>(context), (*opened)->deviceInfo().toString().c_str());
	return detail::cacheBackend(object, backendQuark(), std::move(*opened));
}

} // namespace gpuhandle::gst

namespace {

// The checks frameFromCudaBuffer and cudaBufferCopyOf share: `buffer` holds one whole
// GstCudaMemory laid out as gpuhandle lays out `info`'s format. Gives that format.
Result<PixelFormat> checkCudaBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const guint memories = gst_buffer_n_memory(buffer);
	for (guint i = 0; i < memories; i++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		if (!gst_is_cuda_memory(mem))
			return Error::format(ErrorCode::WrongKind, "buffer.memory",
					     "Memory %u of the buffer is a %s memory, not a "
					     "GstCudaMemory.",
					     i, memTypeOf(mem));
	}
	if (memories != 1)
		return Error::format(ErrorCode::InvalidArgument, "buffer.memory",
				     "The buffer has %u memories; GStreamer's CUDA buffers hold "
				     "every plane in one GstCudaMemory.",
				     memories);
	GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
	const GstCudaMemory &cuda = *reinterpret_cast<GstCudaMemory *>(mem);
	const GstVideoInfo &laid = cuda.info; // the planes as GStreamer allocated them
	const GstVideoFormat videoFormat = GST_VIDEO_INFO_FORMAT(&info);
	if (GST_VIDEO_INFO_FORMAT(&laid) != videoFormat ||
	    GST_VIDEO_INFO_WIDTH(&laid) != GST_VIDEO_INFO_WIDTH(&info) ||
	    GST_VIDEO_INFO_HEIGHT(&laid) != GST_VIDEO_INFO_HEIGHT(&info))
		return Error::format(
			ErrorCode::FormatMismatch, "info",
			"The CUDA memory holds a %dx%d %s frame; the video info says %dx%d %s.",
			GST_VIDEO_INFO_WIDTH(&laid), GST_VIDEO_INFO_HEIGHT(&laid),
			videoFormatName(GST_VIDEO_INFO_FORMAT(&laid)), GST_VIDEO_INFO_WIDTH(&info),
			GST_VIDEO_INFO_HEIGHT(&info), videoFormatName(videoFormat));
	Result<PixelFormat> format = gst::pixelFormatOf(videoFormat);
	if (!format)
		return std::move(format).error();
	const PixelFormatInfo &pixels = **pixelFormatInfo(*format);
	const uint32_t planes = GST_VIDEO_INFO_N_PLANES(&laid);
	if (planes != pixels.numPlanes)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "GStreamer holds %s in %u planes, gpuhandle's %s has %u.",
				     videoFormatName(videoFormat), planes, pixelFormatName(*format),
				     pixels.numPlanes);
	// The planes are counted from the allocation's start; a shared sub-range is not.
	if (mem->offset != 0)
		return Error::format(ErrorCode::NotSupported, "buffer.memory",
				     "The CUDA memory starts %zu bytes into its allocation (a "
				     "shared sub-range); its planes are laid out from the start.",
				     static_cast<size_t>(mem->offset));
	return *format;
}

// A frame of one CudaPitched2D resource over `mem` (checked by checkCudaBuffer), mapped for
// CUDA at `map`, of `format`; `anchor` keeps the memory.
Result<Frame> describeCudaMemory(GstMemory *mem, const GstMapInfo &map, PixelFormat format,
				 const GstVideoInfo &info, KeepAliveRef anchor)
{
	const GstCudaMemory &cuda = *reinterpret_cast<GstCudaMemory *>(mem);
	const GstVideoInfo &laid = cuda.info;
	const uint32_t planes = GST_VIDEO_INFO_N_PLANES(&laid);
	const auto pointer = reinterpret_cast<uint64_t>(map.data);
	const uint64_t size = map.maxsize;
	CudaPitched2DDesc pitched;
	pitched.pointer = pointer;
	pitched.pitch = static_cast<uint32_t>(GST_VIDEO_INFO_PLANE_STRIDE(&laid, 0));
	pitched.numPlanes = planes;
	for (uint32_t p = 0; p < planes; p++)
		pitched.planeOffsets[p] = GST_VIDEO_INFO_PLANE_OFFSET(&laid, p);
	pitched.size = size;
	pitched.context = gst_cuda_context_get_handle(cuda.context);
	pitched.anchor = std::move(anchor);
	Result<CudaPitched2D> resource = CudaPitched2D::create(std::move(pitched));
	if (!resource)
		return std::move(resource).error();
	FrameDesc desc;
	desc.format = format;
	desc.width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
	desc.height = static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info));
	desc.colorimetry = gst::colorimetryOf(info);
	desc.numResources = 1;
	desc.resources[0] = std::move(*resource);
	desc.numPlanes = planes;
	for (uint32_t p = 0; p < planes; p++)
		desc.planes[p] =
			PlaneView{ 0, 0, GST_VIDEO_INFO_PLANE_OFFSET(&laid, p),
				   static_cast<uint32_t>(GST_VIDEO_INFO_PLANE_STRIDE(&laid, p)) };
	return Frame::create(std::move(desc));
}

} // namespace

namespace gpuhandle::gst {

Result<Frame> frameFromCudaBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	initDebug();
	Result<PixelFormat> format = checkCudaBuffer(buffer, info);
	if (!format)
		return std::move(format).error();
	GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
	GstMapInfo map;
	if (!gst_memory_map(mem, &map, cudaReadMap()))
		return Error(ErrorCode::Backend, "buffer.memory",
			     "Mapping the CUDA memory for CUDA (GST_MAP_CUDA) failed: GStreamer "
			     "could not upload what the CPU wrote, or push its context.");
	// The device pointer outlives the map: it belongs to the memory, which the anchor keeps.
	Result<Frame> frame =
		describeCudaMemory(mem, map, *format, info, std::make_shared<BufferAnchor>(buffer));
	gst_memory_unmap(mem, &map);
	return frame;
}

Result<GstBuffer *> cudaBufferFromFrame(const Frame &frame, GstCudaContext *context,
					const GstVideoInfo &info)
{
	initDebug();
	if (Status checked = checkContext(context); !checked)
		return std::move(checked).error();
	// GStreamer 1.24's gst_cuda_allocator_alloc_wrapped would do; this build keeps to 1.22.
	return Error::format(
		ErrorCode::NotSupported, "context",
		"GStreamer 1.22's CUDA library cannot wrap the %ux%u %s frame's device memory as "
		"a GstCudaMemory (%s): it makes CUDA memory only over what it allocates itself "
		"(gst_cuda_allocator_alloc), and gpuhandle does not use the wrapping call 1.24 "
		"added. Copy the frame into a buffer of GStreamer's CUDA buffer pool instead.",
		frame.width(), frame.height(), pixelFormatName(frame.format()),
		videoFormatName(GST_VIDEO_INFO_FORMAT(&info)));
}

Result<BackendRef> cudaBackendForBuffer(GstBuffer *buffer)
{
	GstMemory *mem = buffer && gst_buffer_n_memory(buffer) > 0
				 ? gst_buffer_peek_memory(buffer, 0)
				 : nullptr;
	if (!mem || !gst_is_cuda_memory(mem))
		return Error(ErrorCode::WrongKind, "buffer", "The buffer holds no GstCudaMemory.");
	return cudaBackendFor(reinterpret_cast<GstCudaMemory *>(mem)->context);
}

Status ensureCudaContext(GstElement *element, GstCudaContext **context)
{
	initDebug();
	if (!element || !context)
		return Error(ErrorCode::NullHandle, "element",
			     "The element or context slot is null.");
	if (*context)
		return {};
	// Before anything that may make a context: GStreamer 1.22 calls libcuda unchecked.
	if (!gst_cuda_load_library())
		return Error(ErrorCode::NotSupported, "cuda",
			     "GStreamer could not load the CUDA driver library (libcuda.so.1): no "
			     "NVIDIA driver is installed.");
	if (!gst_cuda_ensure_element_context(element, -1, context) || !*context)
		return Error(ErrorCode::NotSupported, "cuda",
			     "No CUDA context: no neighbour or application shared one, and "
			     "GStreamer could not make one (no usable CUDA device).");
	return {};
}

void cudaHandleSetContext(GstElement *element, GstContext *context, GstCudaContext **held)
{
	gst_cuda_handle_set_context(element, context, -1, held);
}

bool cudaHandleContextQuery(GstElement *element, GstQuery *query, GstCudaContext *held)
{
	return held && gst_cuda_handle_context_query(element, query, held) != FALSE;
}

Result<GstBufferPool *> cudaBufferPoolFor(GstCudaContext *context, const GstVideoInfo &info)
{
	initDebug();
	if (Status checked = checkContext(context); !checked)
		return std::move(checked).error();
	GstCaps *caps = gst_video_info_to_caps(&info);
	if (!caps)
		return Error(ErrorCode::InvalidArgument, "info", "The video info makes no caps.");
	gst_caps_set_features(caps, 0,
			      gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, nullptr));
	GstBufferPool *pool = gst_cuda_buffer_pool_new(context);
	GstStructure *config = gst_buffer_pool_get_config(pool);
	gst_buffer_pool_config_set_params(config, caps,
					  static_cast<guint>(GST_VIDEO_INFO_SIZE(&info)), 1, 0);
	gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
	gst_caps_unref(caps);
	if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
		gst_object_unref(pool);
		return Error::format(ErrorCode::Backend, "pool",
				     "GStreamer's CUDA buffer pool did not start for %dx%d %s.",
				     GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info),
				     videoFormatName(GST_VIDEO_INFO_FORMAT(&info)));
	}
	return pool;
}

Result<GstBuffer *> cudaBufferCopyOf(const Frame &src, const BackendRef &cuda, GstBufferPool *pool,
				     const GstVideoInfo &info, WaitDuration timeout)
{
	initDebug();
	if (!cuda || !pool)
		return Error(ErrorCode::NullHandle, !cuda ? "cuda" : "pool",
			     "The CUDA backend or the buffer pool is null.");
	if (cuda->kind() != BackendKind::Cuda)
		return Error::format(ErrorCode::WrongKind, "cuda",
				     "The backend is a %s backend, not a CUDA one.",
				     backendKindName(cuda->kind()));
	GstBuffer *buffer = nullptr;
	if (GstFlowReturn ret = gst_buffer_pool_acquire_buffer(pool, &buffer, nullptr);
	    ret != GST_FLOW_OK || !buffer)
		return Error::format(ErrorCode::Backend, "pool",
				     "GStreamer's CUDA buffer pool gave no buffer (%s).",
				     gst_flow_get_name(ret));
	Result<PixelFormat> format = checkCudaBuffer(buffer, info);
	if (!format) {
		gst_buffer_unref(buffer);
		return std::move(format).error();
	}
	GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
	GstMapInfo map;
	if (!gst_memory_map(mem, &map, cudaWriteMap())) {
		gst_buffer_unref(buffer);
		return Error(ErrorCode::Backend, "pool",
			     "Mapping a pooled CUDA memory for CUDA writes (GST_MAP_CUDA) failed.");
	}
	Status copied;
	{
		// The frames go before the unmap; the backend keeps the memory until its copy ends.
		Result<Frame> described = describeCudaMemory(mem, map, *format, info,
							     std::make_shared<MemoryAnchor>(mem));
		Result<Frame> dst = described ? cuda->importFrame(*described, ImportRoute::Direct)
					      : std::move(described);
		copied = dst ? cuda->copyFrame(*dst, src, timeout) : Status(std::move(dst).error());
	}
	gst_memory_unmap(mem, &map);
	if (!copied) {
		gst_buffer_unref(buffer);
		return std::move(copied).error();
	}
	return buffer;
}

} // namespace gpuhandle::gst
