// ppoll()-based waits on pollable fence fds: no slicing, nanosecond timeouts, EINTR-safe.
#include "fence_fd_waiter.h"

#include <cerrno>
#include <cstring>
#include <poll.h>

namespace gpuhandle::detail {

namespace {

// One ppoll() call: 1 readable, 0 timed out, -1 error (errno set, or EIO for POLLERR/POLLNVAL).
int pollOnce(int fd, const timespec *timeout)
{
	pollfd entry = { fd, POLLIN, 0 };
	int ready = ppoll(&entry, 1, timeout, nullptr);
	if (ready <= 0)
		return ready;
	if (entry.revents & POLLIN)
		return 1;
	errno = (entry.revents & POLLNVAL) ? EBADF : EIO;
	return -1;
}

Error pollError(int fd, BackendKind backend, int error)
{
	return Error::format(ErrorCode::Io, "fd", "Polling the %s fence fd %d failed: %s.",
			     backendKindName(backend), fd, std::strerror(error));
}

} // namespace

Status pollUntilReadable(int fd, WaitDuration timeout, BackendKind backend)
{
	Deadline deadline = Deadline::after(timeout);
	for (;;) {
		timespec slice{};
		const timespec *limit = nullptr;
		if (!deadline.isNever()) {
			auto left = deadline.remaining();
			slice.tv_sec = static_cast<time_t>(left.count() / 1000000000);
			slice.tv_nsec = static_cast<long>(left.count() % 1000000000);
			limit = &slice;
		}
		int ready = pollOnce(fd, limit);
		if (ready > 0)
			return {};
		if (ready < 0 && errno != EINTR)
			return pollError(fd, backend, errno);
		if (ready == 0 && deadline.expired())
			return waitTimeoutError(backend, timeout);
	}
}

Result<bool> pollReadable(int fd, BackendKind backend)
{
	timespec zero{};
	for (;;) {
		int ready = pollOnce(fd, &zero);
		if (ready >= 0)
			return ready > 0;
		if (errno != EINTR)
			return pollError(fd, backend, errno);
	}
}

} // namespace gpuhandle::detail
