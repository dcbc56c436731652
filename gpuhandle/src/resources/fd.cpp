// UniqueFd and SharedFd: close exactly once, share by one atomic, borrow with an anchor.
#include <gpuhandle/fd.h>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace gpuhandle {

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept
{
	if (this != &other)
		reset(other.release());
	return *this;
}

int UniqueFd::release() noexcept
{
	int fd = fd_;
	fd_ = -1;
	return fd;
}

void UniqueFd::reset(int fd) noexcept
{
	if (fd_ >= 0 && fd_ != fd) {
		// Linux closes the fd even when close() reports EINTR; never retry.
		::close(fd_);
	}
	fd_ = fd;
}

struct SharedFd::Holder {
	UniqueFd owned;    // set when this holder closes the fd
	int borrowed = -1; // set when the fd belongs to the anchor's owner
	KeepAliveRef anchor;

	int fd() const { return owned.isValid() ? owned.get() : borrowed; }
};

SharedFd::SharedFd(UniqueFd fd)
{
	if (!fd.isValid())
		return;
	auto holder = std::make_shared<Holder>();
	holder->owned = std::move(fd);
	holder_ = std::move(holder);
}

SharedFd SharedFd::borrow(int fd, KeepAliveRef anchor)
{
	SharedFd shared;
	if (fd < 0)
		return shared;
	auto holder = std::make_shared<Holder>();
	holder->borrowed = fd;
	holder->anchor = std::move(anchor);
	shared.holder_ = std::move(holder);
	return shared;
}

int SharedFd::get() const noexcept
{
	return holder_ ? holder_->fd() : -1;
}

bool SharedFd::isOwned() const noexcept
{
	return holder_ && holder_->owned.isValid();
}

UniqueFd SharedFd::dup() const noexcept
{
	int fd = get();
	if (fd < 0) {
		errno = EBADF;
		return UniqueFd();
	}
	return UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

void SharedFd::markConsumed() const noexcept
{
	if (holder_ && holder_->anchor)
		holder_->anchor->markConsumed();
}

bool isOpenFd(int fd) noexcept
{
	return fd >= 0 && fcntl(fd, F_GETFD) != -1;
}

} // namespace gpuhandle
