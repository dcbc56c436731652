// CpuFence: mutex + condition variable for blocking waits, an eventfd for poll-based waits.
#include <gpuhandle/cpu_fence.h>

#include <cerrno>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

namespace gpuhandle {

Result<std::shared_ptr<CpuFence>> CpuFence::create()
{
	UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!fd.isValid())
		return Error::format(ErrorCode::Io, "eventfd", "CpuFence: eventfd() failed: %s.", std::strerror(errno));
	return std::shared_ptr<CpuFence>(new CpuFence(std::move(fd)));
}

CpuFence::~CpuFence() = default;

void CpuFence::signal() noexcept
{
	{
		std::lock_guard<std::mutex> lock(mutex_);
		if (signaled_)
			return;
		signaled_ = true;
	}
	// The counter stays non-zero (nobody reads it), so the fd stays readable: a level, not an edge.
	uint64_t one = 1;
	ssize_t written = ::write(eventFd_.get(), &one, sizeof(one));
	(void)written; // cannot fail for a fresh eventfd counter of 1
	done_.notify_all();
}

SyncPoint CpuFence::point()
{
	auto point = SyncPoint::fromWaiter(SyncKind::Cpu, shared_from_this());
	return point.ok() ? *point : SyncPoint::noop(); // fromWaiter only fails on a null waiter
}

Status CpuFence::wait(WaitDuration timeout)
{
	std::unique_lock<std::mutex> lock(mutex_);
	Deadline deadline = Deadline::after(timeout);
	if (deadline.isNever()) {
		done_.wait(lock, [this] { return signaled_; });
		return {};
	}
	if (!done_.wait_until(lock, deadline.when(), [this] { return signaled_; }))
		return waitTimeoutError(BackendKind::Cpu, timeout);
	return {};
}

Result<bool> CpuFence::isSignaled()
{
	std::lock_guard<std::mutex> lock(mutex_);
	return signaled_;
}

} // namespace gpuhandle
