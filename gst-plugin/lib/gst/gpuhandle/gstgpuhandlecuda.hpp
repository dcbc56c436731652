// GstCudaMemory -> gpuhandle frames, and GStreamer's CUDA context as a gpuhandle CUDA backend.
// Built when gstreamer-cuda-1.0, the CUDA Toolkit's cuda.h and gpuhandle's CUDA backend are found
// (GPUHANDLE_GST_HAVE_CUDA in <gst/gpuhandle/gstgpuhandleconfig.h>).
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_waiter.h>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>
#include <gst/video/video.h>

// GStreamer's CUDA headers need the Toolkit's cuda.h and GST_USE_UNSTABLE_API; the context is
// only passed through here, so its declaration (the one gstcudacontext.h makes) is enough.
typedef struct _GstCudaContext GstCudaContext;

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A gpuhandle CUDA backend working inside `context`'s CUcontext (gst_cuda_context_get_handle),
// on the device of its "cuda-device-id" property, submitting on the legacy default stream
// (the one GStreamer 1.22's CUDA memory copies on, synchronously). It holds a reference to
// `context` for as long as it or any frame it made lives. Cached per context: while one lives,
// the same context gives the same BackendRef. Nothing here loads libcuda through GStreamer: a
// context with a CUcontext exists only where GStreamer loaded it, and gpuhandle's backend loads
// it itself. Errors: NullHandle, InvalidArgument (not a GstCudaContext), InvalidState (the
// context has no CUcontext), and openBackend's errors (NotSupported without a usable driver).
GST_GPUHANDLE_API Result<BackendRef> cudaBackendFor(GstCudaContext *context);
// cudaBackendFor the context of `buffer`'s first GstCudaMemory. Errors: WrongKind (no CUDA
// memory), and cudaBackendFor's.
GST_GPUHANDLE_API Result<BackendRef> cudaBackendForBuffer(GstBuffer *buffer);

// A frame of one CudaPitched2D resource over `buffer`'s GstCudaMemory, without a copy: the
// device pointer a GST_MAP_READ | GST_MAP_CUDA map gives, the planes at the offsets and strides
// of the memory's own GstVideoInfo (GstCudaMemory.info: GStreamer pads every plane to the pitch
// cuMemAllocPitch chose), the memory's CUcontext; a buffer reference is the anchor. The map
// first uploads what a CPU writer left in the memory, on the default stream and synchronously
// (GStreamer 1.22), so the frame's acquire point is a no-op. The frame is for reading: a CUDA
// writer maps the memory with GST_MAP_WRITE | GST_MAP_CUDA itself, so that GStreamer downloads
// its work before the next CPU map. A backend uses it through importFrame(ImportRoute::Direct)
// (cudaBackendFor the memory's context). Errors: NullHandle, WrongKind (not CUDA memory),
// InvalidArgument (not exactly one memory), FormatMismatch (the memory's info is of another
// format or size than `info`), NotSupported (a format without a gpuhandle equivalent or whose
// planes GStreamer counts differently, a memory that is a sub-range of its allocation),
// Backend (the CUDA map failed).
GST_GPUHANDLE_API Result<Frame> frameFromCudaBuffer(GstBuffer *buffer, const GstVideoInfo &info);

// Not possible with GStreamer 1.22: its public CUDA API makes GstCudaMemory only over memory it
// allocates itself (gst_cuda_allocator_alloc); it has no call that wraps a device pointer
// someone else owns (gst_cuda_allocator_alloc_wrapped came with 1.24). So, once its arguments
// are checked, this answers NotSupported saying so; a producer copies its frame into a buffer
// of GStreamer's CUDA buffer pool instead. Errors: NullHandle, InvalidArgument (not a
// GstCudaContext), NotSupported.
GST_GPUHANDLE_API Result<GstBuffer *>
cudaBufferFromFrame(const Frame &frame, GstCudaContext *context, const GstVideoInfo &info);

// A GstCudaContext for `element`, in `*context` (kept when already set): a neighbour's or the
// application's (gst_cuda_ensure_element_context's context query), else a new one on any
// device. libcuda is loaded through GStreamer first (gst_cuda_load_library): without it,
// GStreamer 1.22's gst_cuda_context_new aborts the process. Errors: NullHandle, NotSupported
// (libcuda did not load: no NVIDIA driver; or no context could be made: no usable device).
GST_GPUHANDLE_API Status ensureCudaContext(GstElement *element, GstCudaContext **context);
// gst_cuda_handle_set_context and gst_cuda_handle_context_query for an element holding
// `*context` (any device), so that the element's own header needs no CUDA headers.
GST_GPUHANDLE_API void cudaHandleSetContext(GstElement *element, GstContext *context,
					    GstCudaContext **held);
// True when `query` was answered with `held` (false for a null `held`).
GST_GPUHANDLE_API bool cudaHandleContextQuery(GstElement *element, GstQuery *query,
					      GstCudaContext *held);
// An active GstCudaBufferPool of `context` for `info` (video meta on), the caller's reference.
// Errors: NullHandle, Backend (the pool did not take the config or start).
GST_GPUHANDLE_API Result<GstBufferPool *> cudaBufferPoolFor(GstCudaContext *context,
							    const GstVideoInfo &info);

// A copy of `src`, a frame of the CUDA backend `cuda` (cudaBackendFor the pool's context), in a
// buffer of `pool` (cudaBufferPoolFor): the buffer's memory is mapped GST_MAP_WRITE |
// GST_MAP_CUDA (so GStreamer downloads the result before a CPU map), described as a frame of
// the backend and written by its copyFrame on the device, within `timeout`. What GStreamer
// 1.22 offers in place of wrapping (see cudaBufferFromFrame). Errors: NullHandle, WrongKind
// (not a CUDA backend, or the pool gave no CUDA memory), Backend (the pool gave
// no buffer, the map failed), and the backend's importFrame and copyFrame errors.
GST_GPUHANDLE_API Result<GstBuffer *> cudaBufferCopyOf(const Frame &src, const BackendRef &cuda,
						       GstBufferPool *pool,
						       const GstVideoInfo &info,
						       WaitDuration timeout);

} // namespace gst
} // namespace gpuhandle
