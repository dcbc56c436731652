// CUDA waiters over libcuda loaded with dlopen: CUevent queries, external semaphores via a stream.
#include <gpuhandle/backends/cuda_sync.h>

#include "cuda/cuda_driver.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace gpuhandle {

namespace {

// The driver table is shared with the backend object (cuda_driver.h).
using CudaDriver = cuda::Driver;
using cuda::ContextScope;
using cuda::driver;
using cuda::kLibrary;

Error cudaError(const CudaDriver &d, const char *field, const char *call, CUresult result)
{
	return cuda::error(d, field, call, result);
}

// One cuEventQuery, with `context` pushed: done, not yet, or the driver's error.
Result<bool> queryEvent(const CudaDriver &d, CUevent event, CUcontext context)
{
	ContextScope scope(d, context);
	if (scope.result() != CUDA_SUCCESS)
		return cudaError(d, "context", "cuCtxPushCurrent", scope.result());
	CUresult result = d.eventQuery(event);
	if (result == CUDA_SUCCESS)
		return true;
	if (result == CUDA_ERROR_NOT_READY)
		return false;
	return cudaError(d, "event", "cuEventQuery", result);
}

// Polls `waiter` until done, failed or out of time, sleeping 20 us at first and doubling up to
// kCudaWaitSlice: short GPU work is seen quickly, long waits cost little CPU.
Status waitInSlices(SyncWaiter &waiter, WaitDuration timeout)
{
	Deadline deadline = Deadline::after(timeout);
	WaitDuration slice = std::chrono::microseconds(20);
	for (;;) {
		Result<bool> signaled = waiter.isSignaled();
		if (!signaled.ok())
			return signaled.error();
		if (*signaled)
			return {};
		if (deadline.expired())
			return waitTimeoutError(BackendKind::Cuda, timeout);
		std::this_thread::sleep_for(std::min(slice, deadline.remaining()));
		slice = std::min<WaitDuration>(slice * 2, kCudaWaitSlice);
	}
}

class CudaEventWaiter final : public SyncWaiter
{
public:
	CudaEventWaiter(const CudaDriver &d, const CudaEventSync &raw, bool owned,
			KeepAliveRef anchor)
		: anchor_(std::move(anchor)), driver_(d), event_(static_cast<CUevent>(raw.event)),
		  context_(static_cast<CUcontext>(raw.context)), owned_(owned)
	{
	}
	~CudaEventWaiter() override
	{
		if (!owned_)
			return;
		// Destroy even when the push failed: the event knows its context, and skipping
		// would leak it for certain.
		ContextScope scope(driver_, context_);
		driver_.eventDestroy(event_);
	}
	CudaEventWaiter(const CudaEventWaiter &) = delete;
	CudaEventWaiter &operator=(const CudaEventWaiter &) = delete;

	BackendKind backend() const noexcept override { return BackendKind::Cuda; }
	Status wait(WaitDuration timeout) override { return waitInSlices(*this, timeout); }
	Result<bool> isSignaled() override { return queryEvent(driver_, event_, context_); }

private:
	KeepAliveRef anchor_; // first member: released last, after the destructor body
	const CudaDriver &driver_;
	CUevent event_;
	CUcontext context_;
	bool owned_;
};

// Waits for an external semaphore through a private stream: cuWaitExternalSemaphoresAsync then
// an event, enqueued on the first wait (a binary semaphore's wait consumes its signal, so an
// import that is never waited on must not consume it).
class CudaSemaphoreWaiter final : public SyncWaiter
{
public:
	CudaSemaphoreWaiter(const CudaDriver &d, const CudaExternalSemaphoreSync &raw,
			    CUcontext context, KeepAliveRef anchor)
		: anchor_(std::move(anchor)), driver_(d),
		  semaphore_(static_cast<CUexternalSemaphore>(raw.semaphore)), value_(raw.value),
		  context_(context)
	{
	}
	~CudaSemaphoreWaiter() override
	{
		// A never-signalled wait stays queued; the driver frees the stream once it drains.
		ContextScope scope(driver_, context_);
		if (event_)
			driver_.eventDestroy(event_);
		if (stream_)
			driver_.streamDestroy(stream_);
	}
	CudaSemaphoreWaiter(const CudaSemaphoreWaiter &) = delete;
	CudaSemaphoreWaiter &operator=(const CudaSemaphoreWaiter &) = delete;

	// Creates the stream and the event, so that a bad context fails the import.
	Status init()
	{
		ContextScope scope(driver_, context_);
		if (scope.result() != CUDA_SUCCESS)
			return cudaError(driver_, "context", "cuCtxPushCurrent", scope.result());
		if (CUresult r = driver_.streamCreate(&stream_, CU_STREAM_NON_BLOCKING);
		    r != CUDA_SUCCESS)
			return cudaError(driver_, "context", "cuStreamCreate", r);
		if (CUresult r = driver_.eventCreate(&event_, CU_EVENT_DISABLE_TIMING);
		    r != CUDA_SUCCESS)
			return cudaError(driver_, "context", "cuEventCreate", r);
		return {};
	}

	BackendKind backend() const noexcept override { return BackendKind::Cuda; }
	Status wait(WaitDuration timeout) override { return waitInSlices(*this, timeout); }
	Result<bool> isSignaled() override
	{
		if (Status enqueued = enqueueOnce(); !enqueued.ok())
			return enqueued.error();
		return queryEvent(driver_, event_, context_);
	}

private:
	Status enqueueOnce()
	{
		std::lock_guard<std::mutex> lock(mutex_);
		if (!enqueued_) {
			enqueued_ = true;
			enqueueFailure_ = enqueue();
		}
		if (enqueueFailure_)
			return *enqueueFailure_;
		return {};
	}
	std::optional<Error> enqueue()
	{
		ContextScope scope(driver_, context_);
		if (scope.result() != CUDA_SUCCESS)
			return cudaError(driver_, "context", "cuCtxPushCurrent", scope.result());
		CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS params{};
		params.params.fence.value = value_.value_or(0);
		if (CUresult r =
			    driver_.waitExternalSemaphoresAsync(&semaphore_, &params, 1, stream_);
		    r != CUDA_SUCCESS)
			return cudaError(driver_, "semaphore", "cuWaitExternalSemaphoresAsync", r);
		if (CUresult r = driver_.eventRecord(event_, stream_); r != CUDA_SUCCESS)
			return cudaError(driver_, "semaphore", "cuEventRecord", r);
		return std::nullopt;
	}

	KeepAliveRef anchor_; // first member: released last, after the destructor body
	const CudaDriver &driver_;
	CUexternalSemaphore semaphore_;
	std::optional<uint64_t> value_;
	CUcontext context_;
	CUstream stream_ = nullptr;
	CUevent event_ = nullptr;
	std::mutex mutex_;
	bool enqueued_ = false;
	std::optional<Error> enqueueFailure_{};
};

Result<SyncPoint> importEvent(const CudaEventSync &raw, bool owned, KeepAliveRef anchor)
{
	// The core's field checks come first (a raw carrier is validated without a waiter), so
	// argument errors are the same with and without a driver.
	if (auto carrier = SyncPoint::create(raw, nullptr); !carrier.ok())
		return carrier.error();
	if (owned && !raw.context)
		return Error(
			ErrorCode::NullHandle, "context",
			"adoptCudaEvent: the event's context is null; it must be pushed to destroy the event.");
	const CudaDriver &d = driver();
	if (d.failure)
		return *d.failure;
	return SyncPoint::create(raw, std::make_shared<CudaEventWaiter>(d, raw, owned,
									std::move(anchor)));
}

} // namespace

Status cudaDriverStatus()
{
	const CudaDriver &d = driver();
	if (d.failure)
		return *d.failure;
	return {};
}

bool cudaDriverAvailable()
{
	return cudaDriverStatus().ok();
}

Result<SyncPoint> importCudaEvent(const CudaEventSync &raw, KeepAliveRef owner)
{
	return importEvent(raw, false, std::move(owner));
}

Result<SyncPoint> adoptCudaEvent(const CudaEventSync &raw, KeepAliveRef contextOwner)
{
	return importEvent(raw, true, std::move(contextOwner));
}

Result<SyncPoint> importCudaExternalSemaphore(const CudaExternalSemaphoreSync &raw, void *context,
					      KeepAliveRef owner)
{
	if (auto carrier = SyncPoint::create(raw, nullptr); !carrier.ok())
		return carrier.error();
	if (!context)
		return Error(
			ErrorCode::NullHandle, "context",
			"importCudaExternalSemaphore: the context is null; a CPU wait needs a stream in it.");
	const CudaDriver &d = driver();
	if (d.failure)
		return *d.failure;
	if (!d.waitExternalSemaphoresAsync)
		return Error::format(
			ErrorCode::NotSupported, "driver",
			"The CUDA driver (%s) has no cuWaitExternalSemaphoresAsync (it predates CUDA 10).",
			kLibrary);
	auto waiter = std::make_shared<CudaSemaphoreWaiter>(d, raw, static_cast<CUcontext>(context),
							    std::move(owner));
	if (Status ready = waiter->init(); !ready.ok())
		return ready.error();
	return SyncPoint::create(raw, std::move(waiter));
}

} // namespace gpuhandle
