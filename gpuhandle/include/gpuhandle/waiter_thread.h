// WaiterThread: the one background thread that waits on many fences for asynchronous callers.
#pragma once

#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace gpuhandle {

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

private:
	friend class WaiterThread;
	struct Entry;
	std::weak_ptr<Entry> entry_{};
	std::weak_ptr<WaiterThread> thread_{};
};

// One thread, documented: fences with a pollable fd (sync_file, eventfd, CpuFence, any waiter
// whose pollFd() is set) are waited with epoll and no slicing; the others are polled with
// isSignaled() in short slices (kWaiterSlice). Callbacks run on this thread and must not block.
// Destroying it resolves every pending wait with Cancelled and joins the thread. Memory grows
// linearly with pending waits; 10,000 pending waits cost one thread.
// Thread safety: every member may be called from any thread, including from callbacks.
class WaiterThread : public std::enable_shared_from_this<WaiterThread>
{
public:
	static Result<std::shared_ptr<WaiterThread>> create(std::string name);
	// The process-wide instance, started on first use (null when it could not start).
	static std::shared_ptr<WaiterThread> shared();
	~WaiterThread();
	WaiterThread(const WaiterThread &) = delete;
	WaiterThread &operator=(const WaiterThread &) = delete;

	// Waits for `point` on the thread and calls `done` once. A Noop point or an already
	// signalled one still completes on the thread. Errors: a raw carrier (NotSupported) or a
	// stopped thread (InvalidState), reported here and `done` is not called.
	Result<WaitTicket> enqueue(SyncPoint point, WaitDuration timeout, WaitCallback done);
	size_t pending() const;
	std::thread::id threadId() const;

private:
	struct State;
	friend class WaitTicket;
	WaiterThread();
	bool cancel(const std::shared_ptr<WaitTicket::Entry> &entry);
	std::unique_ptr<State> state_;
};

// How long a fence without a pollable fd is left between two isSignaled() checks.
inline constexpr WaitDuration kWaiterSlice = std::chrono::milliseconds(2);

} // namespace gpuhandle
