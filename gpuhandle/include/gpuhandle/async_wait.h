// Asynchronous waits: a callback form with a bounded spin first, and a C++20 awaitable.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/sync_point.h>
#include <gpuhandle/waiter_thread.h>

#include <coroutine>
#include <memory>

namespace GPUHANDLE_API gpuhandle {

// isSignaled() checks (with a yield between them) before a hybrid wait hands off to the thread.
inline constexpr int kHybridSpins = 64;

// Hybrid wait: checks the point up to kHybridSpins times on the calling thread and, when it is
// already done, calls `done` right there (before returning; a failing isSignaled() is also
// delivered there); otherwise hands it to `thread` (WaiterThread::shared() when null) and `done`
// runs there, with `timeout` counted from the hand-off. Errors as WaiterThread::enqueue, and
// `done` is not called: then the returned ticket is empty (cancel() returns false).
GPUHANDLE_API Result<WaitTicket> waitAsync(const SyncPoint &point, WaitDuration timeout,
					   WaitCallback done, WaiterThread *thread = nullptr);

// `co_await asyncWait(point)` suspends the coroutine until the point signals, times out or
// fails, and yields the Status. The coroutine resumes on the waiter thread (or inline when the
// point was already done): hop back to your own executor if it must run elsewhere.
class SyncAwaitable
{
public:
	// Usually made by asyncWait(). A null `thread` means WaiterThread::shared().
	SyncAwaitable(SyncPoint point, WaitDuration timeout, std::shared_ptr<WaiterThread> thread);
	// True (no suspension) when the point is already done or cannot be waited on.
	bool await_ready();
	// False (resume at once with the error) when the thread refused the wait.
	bool await_suspend(std::coroutine_handle<> handle);
	// The outcome: ok, Timeout, the driver's error, Cancelled, or why the wait could not start
	// (NotSupported for a raw carrier, InvalidState when no waiter thread runs).
	Status await_resume();

private:
	SyncPoint point_;
	WaitDuration timeout_;
	std::shared_ptr<WaiterThread> thread_;
	std::shared_ptr<Status> result_;
};

// The awaitable for `co_await`: waits on `thread` (WaiterThread::shared() when null), with
// `timeout` counted from the hand-off to it.
GPUHANDLE_API SyncAwaitable asyncWait(SyncPoint point, WaitDuration timeout = kDefaultWaitTimeout,
				      std::shared_ptr<WaiterThread> thread = nullptr);

} // namespace gpuhandle
