// CpuFence: a fence a host thread signals, pollable through an eventfd.
#pragma once

#include <gpuhandle/sync_point.h>
#include <gpuhandle/sync_waiter.h>

#include <condition_variable>
#include <memory>
#include <mutex>

namespace gpuhandle {

// Signalled once by any thread; waited on by any number (blocking, polled, or async). Its
// eventfd turns readable when signalled, so epoll and GLib main loops wait without a thread.
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
	// A SyncPoint of kind Cpu that waits on this fence.
	SyncPoint point();

	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override;
	Result<bool> isSignaled() override;
	int pollFd() const noexcept override { return eventFd_.get(); }

private:
	explicit CpuFence(UniqueFd eventFd) : eventFd_(std::move(eventFd)) {}

	UniqueFd eventFd_;
	std::mutex mutex_;
	std::condition_variable done_;
	bool signaled_ = false;
};

} // namespace gpuhandle
