// CpuFence: an atomic flag for checks, an eventfd (written only once in use) for every wait.
#include <gpuhandle/cpu_fence.h>

#include "fence_fd_waiter.h"

#include <cerrno>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>

namespace gpuhandle {

Result<std::shared_ptr<CpuFence>> CpuFence::create()
{
	UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!fd.isValid())
		return Error::format(ErrorCode::Io, "eventfd", "CpuFence: eventfd() failed: %s.",
				     std::strerror(errno));
	return std::shared_ptr<CpuFence>(new CpuFence(std::move(fd)));
}

CpuFence::~CpuFence() = default;

void CpuFence::writeEventFd() const noexcept
{
	if (fdWritten_)
		return;
	// The counter stays non-zero until reset() reads it, so the fd stays readable: a level,
	// not an edge.
	uint64_t one = 1;
	ssize_t written = ::write(eventFd_.get(), &one, sizeof(one));
	(void)written; // cannot fail for a drained eventfd counter
	fdWritten_ = true;
}

void CpuFence::signal() noexcept
{
	if (signaled_.exchange(true) || !fdInUse_.load())
		return; // nobody polls the fd: no lock, no system call
	// A pool may already have reset() the fence (it saw signaled_): then write nothing, so
	// that the fd is readable exactly while the fence is signalled.
	std::lock_guard<std::mutex> lock(mutex_);
	if (signaled_.load())
		writeEventFd();
}

void CpuFence::reset() noexcept
{
	signaled_.store(false);
	if (!fdInUse_.load())
		return;
	std::lock_guard<std::mutex> lock(mutex_);
	if (!fdWritten_)
		return;
	uint64_t count = 0;
	ssize_t got = ::read(eventFd_.get(), &count, sizeof(count));
	(void)got; // non-blocking; the counter is non-zero, so the read drains it
	fdWritten_ = false;
}

int CpuFence::pollFd() const noexcept
{
	if (!fdInUse_.load()) {
		std::lock_guard<std::mutex> lock(mutex_);
		fdInUse_.store(true);
		// A signal() that came before saw no fd user and wrote nothing: write for it.
		if (signaled_.load())
			writeEventFd();
	}
	return eventFd_.get();
}

SyncPoint CpuFence::point()
{
	auto point = SyncPoint::fromWaiter(SyncKind::Cpu, shared_from_this());
	return point.ok() ? *point : SyncPoint::noop(); // fromWaiter only fails on a null waiter
}

Status CpuFence::wait(WaitDuration timeout)
{
	if (signaled_.load())
		return {}; // done: no lock, no clock
	// The eventfd is written once signalled (pollFd() writes it if the signal came first).
	return detail::pollUntilReadable(pollFd(), timeout, BackendKind::Cpu);
}

Result<bool> CpuFence::isSignaled()
{
	return signaled_.load();
}

} // namespace gpuhandle
