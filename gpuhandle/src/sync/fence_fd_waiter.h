// Private: waits on a pollable fence fd (sync_file, eventfd) with ppoll().
#pragma once

#include <gpuhandle/fd.h>
#include <gpuhandle/sync_waiter.h>

namespace gpuhandle::detail {

// Waits until `fd` polls readable or `timeout` passes; the shared helper of every fd waiter.
Status pollUntilReadable(int fd, WaitDuration timeout, BackendKind backend);
// Readable right now (poll with a zero timeout); errors for POLLERR / POLLNVAL.
Result<bool> pollReadable(int fd, BackendKind backend);

class FenceFdWaiter final : public SyncWaiter
{
public:
	explicit FenceFdWaiter(SharedFd fd) : fd_(std::move(fd)) {}
	BackendKind backend() const noexcept override { return BackendKind::Fd; }
	Status wait(WaitDuration timeout) override
	{
		return pollUntilReadable(fd_.get(), timeout, BackendKind::Fd);
	}
	Result<bool> isSignaled() override { return pollReadable(fd_.get(), BackendKind::Fd); }
	int pollFd() const noexcept override { return fd_.get(); }

private:
	SharedFd fd_;
};

} // namespace gpuhandle::detail
