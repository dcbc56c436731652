// CUDA in a build without its headers: openCudaBackend and every call answer notBuilt(), the
// waiters after the same argument checks as the real backend.
#include <gpuhandle/backends/cuda_sync.h>

#include "common/backend_internal.h"

namespace gpuhandle {

namespace {
constexpr MissingApi kCuda{ "CUDA",
			    "the CUDA Toolkit's cuda.h or ffnvcodec's, libffmpeg-nvenc-dev" };
} // namespace

Result<BackendRef> openCudaBackend(const BackendOpenOptions &)
{
	return notBuilt(kCuda, "openBackend", "kind");
}

Status cudaDriverStatus()
{
	return notBuilt(kCuda, "cudaDriverStatus", "driver");
}

bool cudaDriverAvailable()
{
	return false;
}

// The same argument checks as the real backend, so that callers see the same field errors.
Result<SyncPoint> importCudaEvent(const CudaEventSync &raw, KeepAliveRef)
{
	if (auto carrier = SyncPoint::create(raw, nullptr); !carrier.ok())
		return carrier.error();
	return notBuilt(kCuda, "importCudaEvent", "driver");
}

Result<SyncPoint> adoptCudaEvent(const CudaEventSync &raw, KeepAliveRef)
{
	if (auto carrier = SyncPoint::create(raw, nullptr); !carrier.ok())
		return carrier.error();
	if (!raw.context)
		return Error(
			ErrorCode::NullHandle, "context",
			"adoptCudaEvent: the event's context is null; it must be pushed to destroy the event.");
	return notBuilt(kCuda, "adoptCudaEvent", "driver");
}

Result<SyncPoint> importCudaExternalSemaphore(const CudaExternalSemaphoreSync &raw, void *context,
					      KeepAliveRef)
{
	if (auto carrier = SyncPoint::create(raw, nullptr); !carrier.ok())
		return carrier.error();
	if (!context)
		return Error(
			ErrorCode::NullHandle, "context",
			"importCudaExternalSemaphore: the context is null; a CPU wait needs a stream in it.");
	return notBuilt(kCuda, "importCudaExternalSemaphore", "driver");
}

} // namespace gpuhandle
