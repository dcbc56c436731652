// CUDA waiters when no CUDA headers were found: arguments are checked, then NotSupported.
#include <gpuhandle/backends/cuda_sync.h>

namespace gpuhandle {

namespace {

Error notBuilt()
{
	return Error(
		ErrorCode::NotSupported, "driver",
		"gpuhandle was built without CUDA support (neither the CUDA Toolkit's cuda.h nor "
		"ffnvcodec's headers were found).");
}

} // namespace

Status cudaDriverStatus()
{
	return notBuilt();
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
	return notBuilt();
}

Result<SyncPoint> adoptCudaEvent(const CudaEventSync &raw, KeepAliveRef)
{
	if (auto carrier = SyncPoint::create(raw, nullptr); !carrier.ok())
		return carrier.error();
	if (!raw.context)
		return Error(
			ErrorCode::NullHandle, "context",
			"adoptCudaEvent: the event's context is null; it must be pushed to destroy the event.");
	return notBuilt();
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
	return notBuilt();
}

} // namespace gpuhandle
