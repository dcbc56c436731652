// CpuFence: a fence a host thread signals, pollable through an eventfd.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/sync_point.h>
#include <gpuhandle/sync_waiter.h>

#include <atomic>
#include <memory>
#include <mutex>

namespace GPUHANDLE_API gpuhandle {

// Signalled once (per reset()) by any thread; waited on by any number (blocking, polled, or
// async). Its eventfd turns readable when signalled, so epoll and GLib main loops wait without
// a thread, and blocking waits sleep in ppoll() on it.
class CpuFence final : public SyncWaiter, public std::enable_shared_from_this<CpuFence>
{
public:
	// Io error when no eventfd can be made (the process ran out of fds).
	static Result<std::shared_ptr<CpuFence>> create();
	~CpuFence() override;
	CpuFence(const CpuFence &) = delete;
	CpuFence &operator=(const CpuFence &) = delete;

	// Marks the fence done and wakes every waiter; later calls do nothing.
	void signal() noexcept;
	// Pools: makes a signalled fence unsignalled again, so that a slot reuses one fence per
	// frame and allocates nothing. Only once nobody waits on the previous signal any more (the
	// slot's consumer has released it); a point taken before then reads the new state.
	void reset() noexcept;
	// A SyncPoint of kind Cpu that waits on this fence.
	SyncPoint point();

	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override;
	Result<bool> isSignaled() override;
	// The eventfd is written only once somebody asked for it here: a fence nobody polls
	// signals and resets without a system call.
	int pollFd() const noexcept override;

private:
	explicit CpuFence(UniqueFd eventFd) : eventFd_(std::move(eventFd)) {}
	void writeEventFd() const noexcept; // under mutex_, once per signal

	// signal(), isSignaled() and reset() take no lock and make no system call while nobody
	// asked for the eventfd (a pool's fences that are never waited on). A blocking wait polls
	// the eventfd too, as a raw poll() loop would. signaled_ on one side and fdInUse_ on the
	// other are sequentially consistent: either the signaller sees the fd in use (and writes
	// it) or pollFd() sees the signal (and writes it itself).
	UniqueFd eventFd_;
	mutable std::mutex mutex_; // guards fdWritten_ and the eventfd counter
	std::atomic<bool> signaled_{ false };
	mutable std::atomic<bool> fdInUse_{ false }; // pollFd() was called: signals write the fd
	mutable bool fdWritten_ = false;             // under mutex_: the counter is non-zero
};

} // namespace gpuhandle
