// SyncWaiter, the owner of a fence primitive that can wait on it, and bounded wait deadlines.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/export.h>
#include <gpuhandle/result.h>

#include <chrono>
#include <memory>

namespace GPUHANDLE_API gpuhandle {

// Timeouts and waits, in nanoseconds (other std::chrono durations convert to it).
using WaitDuration = std::chrono::nanoseconds;

// The budget of a wait when the caller names none.
inline constexpr WaitDuration kDefaultWaitTimeout = std::chrono::seconds(10);
// The one explicit "wait forever" value. No other duration means forever: large ones saturate.
inline constexpr WaitDuration kWaitForever = WaitDuration::max();

// A point in time a wait must end by, or never. Built from a timeout; saturates at one year from
// now instead of overflowing, so only kWaitForever means "never".
class Deadline
{
public:
	// `timeout` from now on the steady clock: kWaitForever gives never(), zero or less an
	// expired deadline, more than a year one year.
	static Deadline after(WaitDuration timeout) noexcept;
	// A deadline that never expires.
	static Deadline never() noexcept { return Deadline(); }

	// True for never() and after(kWaitForever).
	bool isNever() const noexcept { return never_; }
	// True once the steady clock reached the deadline; always false when never.
	bool expired() const noexcept;
	// Time left: zero once expired, kWaitForever when never.
	WaitDuration remaining() const noexcept;
	// Only meaningful when !isNever().
	std::chrono::steady_clock::time_point when() const noexcept { return when_; }

private:
	Deadline() = default;
	bool never_ = true;
	std::chrono::steady_clock::time_point when_{};
};

// Owns a fence primitive (a timeline semaphore, a GLsync, a cl_event, an fd) and waits on it from
// the CPU. Implementations live in the backends; a SyncPoint holds its waiter by shared_ptr, so
// the primitive lives as long as any copy of the point. Thread safety: every member may be called
// from any thread, concurrently.
class SyncWaiter
{
public:
	virtual ~SyncWaiter() = default;
	// The API whose primitive this waiter owns (Fd for a fence fd, Cpu for a CpuFence).
	virtual BackendKind backend() const noexcept = 0;
	// Blocks until signalled or `timeout` passes (ErrorCode::Timeout, a Recoverable error).
	// kWaitForever waits without limit; a driver failure is returned as its own error.
	virtual Status wait(WaitDuration timeout) = 0;
	// True once signalled. A driver failure is an error, never folded into false.
	virtual Result<bool> isSignaled() = 0;
	// An fd that polls readable (POLLIN) once signalled, for epoll and GLib main loops; -1 when
	// the primitive only offers a blocking wait. Owned by the waiter.
	virtual int pollFd() const noexcept { return -1; }
};

// Shared ownership of a waiter: every copy of a SyncPoint holds one.
using SyncWaiterRef = std::shared_ptr<SyncWaiter>;

// The Timeout error every waiter returns, with the backend and the timeout in the sentence.
GPUHANDLE_API Error waitTimeoutError(BackendKind backend, WaitDuration timeout);

} // namespace gpuhandle
