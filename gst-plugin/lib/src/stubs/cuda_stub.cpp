// CUDAMemory in a libgstgpuhandle-1.0 built without gstreamer-cuda-1.0 (and the CUDA Toolkit's
// cuda.h, which GStreamer's CUDA headers need): gstgpuhandlecuda.hpp's functions, each
// answering NotSupported (or nothing: the context helpers), and no adapter.
#include "../memorytypes/memorytypes_internal.h"
#include "stub_internal.h"

typedef struct _GstCudaContext GstCudaContext; // as gstgpuhandlecuda.hpp declares it

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

namespace {
constexpr const char *kLibrary = "gstreamer-cuda-1.0 and the CUDA Toolkit's cuda.h";
} // namespace

GST_GPUHANDLE_API Result<BackendRef> cudaBackendFor(GstCudaContext *)
{
	return detail::notBuilt("cudaBackendFor", kLibrary);
}

GST_GPUHANDLE_API Result<BackendRef> cudaBackendForBuffer(GstBuffer *)
{
	return detail::notBuilt("cudaBackendForBuffer", kLibrary);
}

GST_GPUHANDLE_API Result<Frame> frameFromCudaBuffer(GstBuffer *, const GstVideoInfo &)
{
	return detail::notBuilt("frameFromCudaBuffer", kLibrary);
}

GST_GPUHANDLE_API Result<GstBuffer *> cudaBufferFromFrame(const Frame &, GstCudaContext *,
							  const GstVideoInfo &)
{
	return detail::notBuilt("cudaBufferFromFrame", kLibrary);
}

GST_GPUHANDLE_API Status ensureCudaContext(GstElement *, GstCudaContext **)
{
	return detail::notBuilt("ensureCudaContext", kLibrary);
}

// No context to hold or to answer with.
GST_GPUHANDLE_API void cudaHandleSetContext(GstElement *, GstContext *, GstCudaContext **)
{
}

GST_GPUHANDLE_API bool cudaHandleContextQuery(GstElement *, GstQuery *, GstCudaContext *)
{
	return false;
}

GST_GPUHANDLE_API Result<GstBufferPool *> cudaBufferPoolFor(GstCudaContext *, const GstVideoInfo &)
{
	return detail::notBuilt("cudaBufferPoolFor", kLibrary);
}

GST_GPUHANDLE_API Result<GstBuffer *> cudaBufferCopyOf(const Frame &, const BackendRef &,
						       GstBufferPool *, const GstVideoInfo &,
						       WaitDuration)
{
	return detail::notBuilt("cudaBufferCopyOf", kLibrary);
}

} // namespace gst
} // namespace gpuhandle

// Not exported: outside the blocks the export macro marks.
namespace gpuhandle::gst::detail {
std::unique_ptr<MemoryAdapter> cudaAdapter(const MemoryTypeInfo &, MemoryRole)
{
	return nullptr;
}
} // namespace gpuhandle::gst::detail
