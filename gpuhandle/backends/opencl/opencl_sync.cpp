// OpenCL cl_event waits: a CL_COMPLETE callback signals a CpuFence, so waits are exact and
// pollable.
#define CL_TARGET_OPENCL_VERSION 120
#include <gpuhandle/backends/opencl_sync.h>
#include <gpuhandle/cpu_fence.h>

#include "validation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <CL/cl.h>

namespace gpuhandle {

namespace {

// What the CL_COMPLETE callback touches. The callback may run on a driver thread after the
// waiter is gone (or never, for an event that never completes), so it holds a weak reference.
struct CallbackState {
	std::shared_ptr<CpuFence> fence;
	std::atomic<cl_int> status{ CL_QUEUED }; // the status the callback saw: CL_COMPLETE or < 0
};

// Callbacks are registered under a number, not a heap pointer: a driver may call a callback
// after its waiter is gone, or never (PoCL 3.1 skips failed commands; a user event that is
// released unset never completes), so nothing the callback owns could be freed safely. The
// waiter removes its entry when it goes; a late callback then finds nothing.
struct CallbackRegistry {
	std::mutex mutex;
	std::unordered_map<uintptr_t, std::weak_ptr<CallbackState>> entries;
	uintptr_t next = 1;
};

CallbackRegistry &registry()
{
	// Never destroyed: driver threads may call back while the process exits.
	static auto *instance = new CallbackRegistry;
	return *instance;
}

uintptr_t registerCallback(const std::shared_ptr<CallbackState> &state)
{
	CallbackRegistry &r = registry();
	std::lock_guard<std::mutex> lock(r.mutex);
	uintptr_t id = r.next++;
	r.entries.emplace(id, state);
	return id;
}

void unregisterCallback(uintptr_t id)
{
	CallbackRegistry &r = registry();
	std::lock_guard<std::mutex> lock(r.mutex);
	r.entries.erase(id);
}

void CL_CALLBACK onComplete(cl_event, cl_int status, void *data)
{
	std::shared_ptr<CallbackState> state;
	{
		CallbackRegistry &r = registry();
		std::lock_guard<std::mutex> lock(r.mutex);
		auto it = r.entries.find(reinterpret_cast<uintptr_t>(data));
		if (it == r.entries.end())
			return;
		state = it->second.lock();
		r.entries.erase(it);
	}
	if (state) {
		state->status.store(status);
		state->fence->signal();
	}
}

Error failedCommand(cl_event event, cl_int status)
{
	return Error::format(
		ErrorCode::Backend, "event",
		"The OpenCL command of event %p terminated abnormally with execution status %d.",
		static_cast<void *>(event), status);
}

Error clCallFailed(const char *call, cl_event event, cl_int error)
{
	return Error::format(ErrorCode::Backend, "event",
			     "%s on OpenCL event %p failed with error %d.", call,
			     static_cast<void *>(event), error);
}

class OpenClEventWaiter final : public SyncWaiter
{
public:
	// Takes over one reference to `event` (already retained).
	OpenClEventWaiter(cl_event event, KeepAliveRef owner)
		: event_(event), owner_(std::move(owner))
	{
	}
	// owner_ is released after this body, once the event reference is gone.
	~OpenClEventWaiter() override
	{
		if (callbackId_)
			unregisterCallback(callbackId_);
		clReleaseEvent(event_);
	}

	// Makes the fence and registers the callback; separate from the constructor so that a
	// failure still releases the event through the destructor.
	Status start()
	{
		auto fence = CpuFence::create();
		if (!fence.ok())
			return std::move(fence).error();
		state_ = std::make_shared<CallbackState>();
		state_->fence = std::move(*fence);

		// clWaitForEvents flushes the event's queue; a callback does not, so flush once
		// here or a command that was never flushed would never complete. User events have
		// no queue.
		cl_command_queue queue = nullptr;
		cl_int error = clGetEventInfo(event_, CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue,
					      nullptr);
		if (error != CL_SUCCESS)
			return clCallFailed("clGetEventInfo(CL_EVENT_COMMAND_QUEUE)", event_,
					    error);
		if (queue && (error = clFlush(queue)) != CL_SUCCESS)
			return clCallFailed("clFlush of the event's queue", event_, error);

		// Runs at once (maybe on this thread) when the event is already complete or failed.
		callbackId_ = registerCallback(state_);
		error = clSetEventCallback(event_, CL_COMPLETE, onComplete,
					   reinterpret_cast<void *>(callbackId_));
		if (error != CL_SUCCESS)
			return clCallFailed("clSetEventCallback(CL_COMPLETE)", event_, error);
		return {};
	}

	BackendKind backend() const noexcept override { return BackendKind::OpenCl; }

	Status wait(WaitDuration timeout) override
	{
		// The callback makes completion exact. A driver may skip it when the command fails
		// (PoCL 3.1 calls CL_COMPLETE callbacks only on CL_COMPLETE), so the status is also
		// read between fence waits that grow to kFailureCheck: a failure surfaces that
		// late.
		Deadline deadline = Deadline::after(timeout);
		WaitDuration slice = std::chrono::milliseconds(1);
		for (;;) {
			auto done = isSignaled();
			if (!done.ok())
				return std::move(done).error();
			if (*done)
				return {};
			Status woke = state_->fence->wait(std::min(slice, deadline.remaining()));
			if (woke.ok()) {
				cl_int status = state_->status.load();
				if (status < 0)
					return failedCommand(event_, status);
				return {};
			}
			if (woke.error().code() != ErrorCode::Timeout)
				return woke;
			if (deadline.expired())
				return waitTimeoutError(BackendKind::OpenCl, timeout);
			slice = std::min<WaitDuration>(slice * 2, kFailureCheck);
		}
	}

	Result<bool> isSignaled() override
	{
		cl_int status = CL_QUEUED;
		cl_int error = clGetEventInfo(event_, CL_EVENT_COMMAND_EXECUTION_STATUS,
					      sizeof(status), &status, nullptr);
		if (error != CL_SUCCESS)
			return clCallFailed("clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)",
					    event_, error);
		if (status < 0)
			return failedCommand(event_, status);
		return status == CL_COMPLETE;
	}

	// Readable once the callback ran: on completion, and on failure where the driver calls
	// CL_COMPLETE callbacks for failed commands (the spec says so; PoCL 3.1 does not, so an
	// fd-only waiter sees a failed PoCL command time out). isSignaled() tells which.
	int pollFd() const noexcept override { return state_->fence->pollFd(); }

private:
	// The longest a blocking wait goes without reading the status (see wait()).
	static constexpr WaitDuration kFailureCheck = std::chrono::milliseconds(8);

	cl_event event_;
	std::shared_ptr<CallbackState> state_;
	uintptr_t callbackId_ = 0; // its entry in the callback registry, 0 before start()
	KeepAliveRef owner_;
};

} // namespace

Result<SyncPoint> importOpenClEvent(const OpenClEventSync &raw, KeepAliveRef owner)
{
	if (!raw.event)
		return detail::nullHandle("OpenClEventSync", "event");
	auto event = static_cast<cl_event>(raw.event);
	cl_int error = clRetainEvent(event);
	if (error != CL_SUCCESS)
		return Error::format(
			ErrorCode::Backend, "event",
			"clRetainEvent(%p) failed with error %d: it is not a valid cl_event.",
			raw.event, error);
	auto waiter = std::make_shared<OpenClEventWaiter>(event, std::move(owner));
	Status started = waiter->start();
	if (!started.ok())
		return std::move(started).error();
	return SyncPoint::create(raw, std::move(waiter));
}

} // namespace gpuhandle
