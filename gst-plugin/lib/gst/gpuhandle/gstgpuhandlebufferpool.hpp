// GstGpuHandleBufferPool: a GstBufferPool of reusable frames one gpuhandle backend allocates,
// which gives idle frames back to the backend's memory budget under pressure.
#pragma once

#include <gpuhandle/backends/backend.h>

#include <cstdint>
#include <optional>

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

// Why the pool's last allocation failed (a memory budget's refusal names the bytes asked, in
// use and the cap), or nullopt when none did (or for another pool): an element posts it when
// gst_buffer_pool_acquire_buffer or set_config fails.
GST_GPUHANDLE_API std::optional<Error> bufferPoolLastError(GstBufferPool *pool);

// Idle buffers the pool freed for its backend's memory budget since it was made (0 for another
// pool). While active, a pool whose backend has a budget (Backend::budget()) is registered with
// it as an EvictablePool: a reservation past the hard cap takes idle frames back before it fails.
GST_GPUHANDLE_API uint64_t bufferPoolEvictions(GstBufferPool *pool);

} // namespace gst
} // namespace gpuhandle
