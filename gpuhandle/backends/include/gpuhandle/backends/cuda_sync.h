// CUDA fence waiters: CUevent and CUDA external semaphores, with libcuda loaded by dlopen.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <chrono>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// Whether libcuda.so.1 loads and cuInit(0) succeeds: ok, NotSupported (field "driver", with the
// dlopen error text, or "built without CUDA") or Backend (field "cuInit", with the CUresult
// name). The library is loaded once per process and never unloaded.
GPUHANDLE_INTEROP_API Status cudaDriverStatus();
// cudaDriverStatus().ok(); cudaDriverStatus() says why not.
GPUHANDLE_INTEROP_API bool cudaDriverAvailable();

// A CUevent the producer recorded. Borrowed: the producer destroys it; `owner` keeps it alive
// while the waiter lives. `raw.context`, when set, is pushed around each query.
GPUHANDLE_INTEROP_API Result<SyncPoint> importCudaEvent(const CudaEventSync &raw,
							KeepAliveRef owner = {});
// Takes ownership of `raw.event`: when the last copy of the point goes, the waiter pushes
// `raw.context` (required), calls cuEventDestroy, and pops only if the push succeeded.
// `contextOwner` keeps the context alive until then. On failure the caller still owns the event.
GPUHANDLE_INTEROP_API Result<SyncPoint> adoptCudaEvent(const CudaEventSync &raw,
						       KeepAliveRef contextOwner = {});

// An imported CUexternalSemaphore, borrowed (`owner` keeps it alive). A CPU wait needs a stream:
// the first wait enqueues cuWaitExternalSemaphoresAsync (for `raw.value` when set; a binary
// semaphore's signal is consumed, once per point) and an event on a private stream of
// `context`, then polls that event.
GPUHANDLE_INTEROP_API Result<SyncPoint>
importCudaExternalSemaphore(const CudaExternalSemaphoreSync &raw, void *context,
			    KeepAliveRef owner = {});

// cuEventSynchronize has no timeout: CUDA waits poll, backing off from 20 us to this slice.
inline constexpr std::chrono::microseconds kCudaWaitSlice{ 1000 };

} // namespace gpuhandle
