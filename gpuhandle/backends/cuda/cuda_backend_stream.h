// Private to the CUDA backend's I/O: stream work waited for with a timeout, pending work kept.
#pragma once

#include <gpuhandle/backends/cuda_sync.h>

#include "cuda/cuda_backend_internal.h"

#include <algorithm>
#include <array>
#include <memory>
#include <thread>
#include <vector>

namespace gpuhandle::cuda {

// One plane as the copies see it: device address, stride, and the bytes of its rows.
struct PlaneSpan {
	CUdeviceptr device = 0;
	uint32_t stride = 0;
	uint64_t rowBytes = 0;
	uint32_t rows = 0;
};

// A device <-> host copy of one plane's rows at its stride, queued on `stream`.
inline CUresult copyPlane(const Driver &d, const PlaneSpan &span, uint8_t *host, bool toHost,
			  CUstream stream)
{
	CUDA_MEMCPY2D copy{};
	if (toHost) {
		copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
		copy.srcDevice = span.device;
		copy.srcPitch = span.stride;
		copy.dstMemoryType = CU_MEMORYTYPE_HOST;
		copy.dstHost = host;
		copy.dstPitch = span.stride;
	} else {
		copy.srcMemoryType = CU_MEMORYTYPE_HOST;
		copy.srcHost = host;
		copy.srcPitch = span.stride;
		copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		copy.dstDevice = span.device;
		copy.dstPitch = span.stride;
	}
	copy.WidthInBytes = span.rowBytes;
	copy.Height = span.rows;
	return d.memcpy2DAsync(&copy, stream);
}

// Page-locked host copies of a staged mapping's planes (cuMemAllocHost: a device-to-host copy
// into pageable memory would block the caller until the stream reaches it, whatever the
// timeout). Holds the device state: its context frees them.
struct Staging final : KeepAlive {
	std::shared_ptr<CudaDevice> device{};
	std::array<uint8_t *, 4> planes{};

	explicit Staging(std::shared_ptr<CudaDevice> state) : device(std::move(state)) {}
	Staging(const Staging &) = delete;
	Staging &operator=(const Staging &) = delete;
	~Staging() override
	{
		const Driver &d = driver();
		ContextScope scope(d, device->context);
		for (uint8_t *plane : planes)
			if (plane)
				d.memFreeHost(plane);
	}
};

// The anchors (allocations) of a frame's resources: what queued work on it must keep alive.
inline void anchorsOf(const Frame &frame, std::vector<KeepAliveRef> &out)
{
	for (uint32_t i = 0; i < frame.numResources(); ++i)
		if (const CudaBuffer *buffer = frame.resource(i).get<CudaBuffer>())
			out.push_back(buffer->desc().anchor);
}

// The event awaitStream() records: made before the work it follows is queued, so that no
// queued work goes untracked when the driver cannot make one. The context must be current.
inline Result<CUevent> newEvent(const Driver &d)
{
	CUevent event = nullptr;
	if (CUresult r = d.eventCreate(&event, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS)
		return error(d, "stream", "cuEventCreate", r);
	return event;
}

// Records `event` after everything queued on the device's stream so far and waits for it,
// bounded by `timeout` (cuStreamSynchronize has none: the event is polled, backing off from
// 20 us). Takes over the event: on Timeout it goes with `keep` (what the queued work reads or
// writes) to the state's pending list until the work completes, else it is destroyed. A free
// function: a mapping's end runs it after the backend may be gone.
inline Status awaitStream(CudaDevice &state, CUevent event, WaitDuration timeout,
			  std::vector<KeepAliveRef> keep)
{
	const Driver &d = driver();
	ContextScope scope(d, state.context);
	// A context that cannot be made current or record an event is in an error state, where
	// queued work no longer runs: nothing needs keeping.
	CUresult r = scope.result() != CUDA_SUCCESS ? scope.result()
						    : d.eventRecord(event, state.stream);
	if (r != CUDA_SUCCESS) {
		d.eventDestroy(event);
		return error(d, "stream",
			     scope.result() != CUDA_SUCCESS ? "cuCtxPushCurrent" : "cuEventRecord",
			     r);
	}
	Deadline deadline = Deadline::after(timeout);
	WaitDuration slice = std::chrono::microseconds(20);
	while ((r = d.eventQuery(event)) == CUDA_ERROR_NOT_READY) {
		if (deadline.expired()) {
			// Destroying a queued event is allowed: the driver frees it when done.
			if (keep.empty())
				d.eventDestroy(event);
			else
				state.park(event, std::move(keep));
			return waitTimeoutError(BackendKind::Cuda, timeout);
		}
		std::this_thread::sleep_for(std::min(slice, deadline.remaining()));
		slice = std::min<WaitDuration>(slice * 2, kCudaWaitSlice);
	}
	d.eventDestroy(event);
	if (r != CUDA_SUCCESS)
		return error(d, "stream", "cuEventQuery", r);
	return {};
}

// Waits (bounded) for the work already queued on the device's stream, which keeps its own.
inline Status finishStream(CudaDevice &state, WaitDuration timeout)
{
	const Driver &d = driver();
	Result<CUevent> event = [&]() -> Result<CUevent> {
		ContextScope scope(d, state.context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		return newEvent(d);
	}();
	if (!event.ok())
		return event.error();
	return awaitStream(state, *event, timeout, {});
}

// Queues a copy of each plane between the device and `staging` (toHost: device to host) after
// making the event that follows them, and waits for them (bounded). What the copies use stays
// alive until they complete: the allocations in `keep`, the staging copies.
inline Status stageCopies(const std::shared_ptr<CudaDevice> &state,
			  const std::array<PlaneSpan, 4> &spans, uint32_t numPlanes,
			  const std::shared_ptr<Staging> &staging, bool toHost,
			  WaitDuration timeout, std::vector<KeepAliveRef> keep)
{
	const Driver &d = driver();
	CUevent event = nullptr;
	Status queued;
	{
		ContextScope scope(d, state->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		Result<CUevent> made = newEvent(d);
		if (!made.ok())
			return made.error();
		event = *made;
		for (uint32_t p = 0; p < numPlanes && queued.ok(); ++p)
			if (CUresult r = copyPlane(d, spans[p], staging->planes[p], toHost,
						   state->stream);
			    r != CUDA_SUCCESS)
				queued = error(d, "frame",
					       toHost ? "cuMemcpy2DAsync (device to host)"
						      : "cuMemcpy2DAsync (host to device)",
					       r);
	}
	keep.push_back(staging);
	// The planes queued before a failed one still run: they are waited for all the same.
	Status done = awaitStream(*state, event, timeout, std::move(keep));
	return queued.ok() ? done : queued;
}

// Whether pending work's event completed (or failed: the work then never runs on). Never
// blocks. The context must be current.
inline bool eventEnded(CUevent &event, const Deadline *)
{
	return driver().eventQuery(event) != CUDA_ERROR_NOT_READY;
}

inline void CudaDevice::park(CUevent event, std::vector<KeepAliveRef> keep)
{
	pending_.park(event, std::move(keep));
}

inline void CudaDevice::reclaim()
{
	if (pending_.empty())
		return;
	const Driver &d = driver();
	std::vector<KeepAliveRef> released; // the anchors free memory after the scope has gone
	ContextScope scope(d, context);
	released = pending_.reclaim(eventEnded, [&](CUevent &event) { d.eventDestroy(event); });
}

inline bool CudaDevice::drain(WaitDuration bound)
{
	if (pending_.empty())
		return true;
	const Driver &d = driver();
	ContextScope scope(d, context);
	return pending_.drain(
		bound, eventEnded, [&](CUevent &event) { d.eventDestroy(event); }, kCudaWaitSlice);
}

} // namespace gpuhandle::cuda
