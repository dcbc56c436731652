// WaiterThread: the one background thread that waits on many fences for asynchronous callers.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace GPUHANDLE_API gpuhandle {

// Called exactly once with the outcome: ok, Timeout, the driver's error, or Cancelled.
using WaitCallback = std::function<void(Status)>;

class WaiterThread;

// A pending asynchronous wait. Dropping the ticket does not cancel the wait.
class WaitTicket
{
public:
	WaitTicket() = default;
	// Resolves the wait with Cancelled if it is still pending; true when this call did.
	bool cancel() const;

	// Opaque: the pending wait's record, defined by the library.
	struct Entry;

private:
	friend class WaiterThread;
	std::weak_ptr<Entry> entry_{};
	std::weak_ptr<WaiterThread> thread_{};
};

// One thread, documented: fences with a pollable fd (sync_file, eventfd, CpuFence, any waiter
// whose pollFd() is set) are waited with epoll (level-triggered, one registration per fd shared by
// every wait on it) and no slicing; readiness is confirmed with isSignaled(). The others, and fds
// epoll refuses, are polled with isSignaled() every kWaiterSlice. Callbacks run on this thread,
// with no internal lock held (they may enqueue or cancel), and must not block; cancelled waits are
// also delivered there. Destroying it resolves every pending wait with Cancelled and joins the
// thread (or, when the last reference drops inside a callback, lets it finish on its own).
// An enqueue wakes the thread only when its deadline comes before the thread's next look (at most
// a second away; an idle thread looks once a second). Memory grows linearly with pending waits;
// 10,000 pending waits cost one thread.
// Thread safety: every member may be called from any thread, including from callbacks.
class WaiterThread : public std::enable_shared_from_this<WaiterThread>
{
public:
	// Starts a thread named `name` (cut to 15 bytes, the kernel's limit). Io when its epoll
	// instance, its wake-up eventfd or the thread cannot be made.
	static Result<std::shared_ptr<WaiterThread>> create(std::string name);
	// The process-wide instance, started on first use (null when it could not start).
	static std::shared_ptr<WaiterThread> shared();
	~WaiterThread();
	WaiterThread(const WaiterThread &) = delete;
	WaiterThread &operator=(const WaiterThread &) = delete;

	// Waits for `point` on the thread and calls `done` once. A Noop point or an already
	// signalled one still completes on the thread. Errors: a raw carrier (NotSupported), an
	// empty `done` (NullHandle) or a stopped thread (InvalidState), reported here and `done` is
	// not called. kWaitForever waits without a deadline.
	Result<WaitTicket> enqueue(SyncPoint point, WaitDuration timeout, WaitCallback done);
	// Waits not yet resolved (cancelled ones whose callback has not run yet are not counted).
	size_t pending() const;
	// The id of the background thread; fixed for the object's lifetime.
	std::thread::id threadId() const;

private:
	struct GPUHANDLE_LOCAL State;
	friend class WaitTicket;
	GPUHANDLE_LOCAL explicit WaiterThread(std::shared_ptr<State> state);
	bool cancel(const std::shared_ptr<WaitTicket::Entry> &entry);
	// Shared with the running thread, so that the thread can finish after a destructor that
	// ran on it (the last reference dropped in a callback) detached it.
	std::shared_ptr<State> state_;
	std::thread thread_;
	std::thread::id threadId_;
};

// How long a fence without a pollable fd is left between two isSignaled() checks.
inline constexpr WaitDuration kWaiterSlice = std::chrono::milliseconds(2);

} // namespace gpuhandle
