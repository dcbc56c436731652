// UniqueFd and SharedFd: close exactly once, share by one atomic, borrow with an anchor.
#include <gpuhandle/fd.h>

#include "thread_block_cache.h"

#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <unistd.h>
#include <utility>
#include <vector>

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
	// Importers' values (attach()); declared last, so destroyed before the fd closes.
	mutable std::mutex mutex;
	mutable std::vector<std::pair<const void *, std::shared_ptr<void>>> attachments;

	int fd() const { return owned.isValid() ? owned.get() : borrowed; }
};

SharedFd::SharedFd(UniqueFd fd)
{
	if (!fd.isValid())
		return;
	// Made per received frame and dropped with it: from the thread's block lists.
	auto holder = std::allocate_shared<Holder>(detail::ThreadRecyclingAllocator<Holder>{});
	holder->owned = std::move(fd);
	holder_ = std::move(holder);
}

SharedFd::SharedFd(UniqueFd fd, KeepAliveRef anchor) : SharedFd(std::move(fd))
{
	if (holder_)
		std::const_pointer_cast<Holder>(holder_)->anchor = std::move(anchor);
}

SharedFd SharedFd::borrow(int fd, KeepAliveRef anchor)
{
	SharedFd shared;
	if (fd < 0)
		return shared;
	// Made per received frame and dropped with it: from the thread's block lists.
	auto holder = std::allocate_shared<Holder>(detail::ThreadRecyclingAllocator<Holder>{});
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

namespace {

// The value under `key`, or null; the holder's mutex is held.
template<typename Holder>
std::shared_ptr<void> attachmentLocked(const Holder &holder, const void *key)
{
	for (const auto &[k, v] : holder.attachments)
		if (k == key)
			return v;
	return {};
}

} // namespace

std::shared_ptr<void> SharedFd::attach(const void *key, std::shared_ptr<void> value) const noexcept
{
	if (!holder_)
		return {};
	std::lock_guard<std::mutex> lock(holder_->mutex);
	if (std::shared_ptr<void> existing = attachmentLocked(*holder_, key))
		return existing;
	try {
		holder_->attachments.emplace_back(key, value);
	} catch (...) {
		return {};
	}
	return value;
}

std::shared_ptr<void> SharedFd::attachment(const void *key) const noexcept
{
	if (!holder_)
		return {};
	std::lock_guard<std::mutex> lock(holder_->mutex);
	return attachmentLocked(*holder_, key);
}

bool isOpenFd(int fd) noexcept
{
	return fd >= 0 && fcntl(fd, F_GETFD) != -1;
}

} // namespace gpuhandle
