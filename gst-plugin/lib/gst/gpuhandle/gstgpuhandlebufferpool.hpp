// GstGpuHandleBufferPool: a GstBufferPool of reusable frames one gpuhandle backend allocates.
#pragma once

#include <gpuhandle/backends/backend.h>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A pool whose buffers are bufferFromFrame() over frames `backend` allocates in `storage`
// (format and size from the caps of gst_buffer_pool_config_set_params; the size given there is
// replaced by the frame's). Buffers return intact (memories, GstVideoMeta) and are reused; a
// GstGpuHandleSyncMeta is dropped on return. set_config fails (FALSE, with a GST_WARNING
// naming why) for caps the backend cannot allocate. Transfer full.
GST_GPUHANDLE_API GstBufferPool *bufferPoolNew(const BackendRef &backend, FrameStorage storage);

// The backend and storage of a pool made by bufferPoolNew (null for other pools).
GST_GPUHANDLE_API BackendRef bufferPoolBackend(GstBufferPool *pool);

} // namespace gst
} // namespace gpuhandle
