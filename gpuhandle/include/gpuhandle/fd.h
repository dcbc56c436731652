// UniqueFd and SharedFd: file descriptors owned once, shared by copy, closed exactly once.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>

#include <memory>

namespace GPUHANDLE_API gpuhandle {

// Sole owner of one fd (move-only). Closing happens in the destructor or reset().
class UniqueFd
{
public:
	UniqueFd() = default;
	// Takes ownership of `fd`; a negative value gives an empty UniqueFd.
	explicit UniqueFd(int fd) noexcept : fd_(fd) {}
	UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {} // leaves `other` empty
	UniqueFd &operator=(UniqueFd &&other) noexcept;               // closes the fd held before
	UniqueFd(const UniqueFd &) = delete;
	UniqueFd &operator=(const UniqueFd &) = delete;
	~UniqueFd() { reset(); }

	// The fd, still owned by this UniqueFd (do not close it); negative when empty.
	int get() const noexcept { return fd_; }
	bool isValid() const noexcept { return fd_ >= 0; } // get() >= 0
	// Gives up ownership without closing.
	[[nodiscard]] int release() noexcept;
	// Closes the fd held (unless it is `fd`) and owns `fd` instead; reset() leaves it empty.
	void reset(int fd = -1) noexcept;

private:
	int fd_ = -1;
};

// Shared fd: copies share one owner; the fd is closed when the last copy goes. A borrowed
// SharedFd never closes its fd; its anchor keeps the fd's real owner alive instead.
// Copying costs one atomic increment and allocates nothing. Thread safety: like shared_ptr.
class SharedFd
{
public:
	SharedFd() = default;
	// Takes ownership (allocates one small control block). An invalid UniqueFd gives an empty
	// SharedFd.
	explicit SharedFd(UniqueFd fd);
	// Takes ownership, and keeps `anchor` alive until the fd closes (a budget charge for the
	// memory the fd holds, say). Owned: whoever holds a copy (a transport's file cache) keeps
	// the anchor too, so it must not be something another pool waits for (a GstBuffer).
	SharedFd(UniqueFd fd, KeepAliveRef anchor);
	// Borrows `fd` from a producer that keeps it open while `anchor` lives.
	static SharedFd borrow(int fd, KeepAliveRef anchor);

	// The fd, or -1 when empty. Owned by the SharedFd (or by the anchor's owner when borrowed):
	// never close it; dup() it for an API that takes ownership.
	int get() const noexcept;
	bool isValid() const noexcept { return get() >= 0; } // get() >= 0
	// True when the last copy of this SharedFd closes the fd; false when borrowed or empty.
	bool isOwned() const noexcept;
	// No other copy of this SharedFd exists: a cache holding this one can let it go.
	bool isSoleCopy() const noexcept { return holder_ && holder_.use_count() == 1; }
	// Copies the fd with F_DUPFD_CLOEXEC into a new owner (for handing to an API that takes
	// ownership). Returns an invalid UniqueFd and sets errno on failure.
	UniqueFd dup() const noexcept;
	// Passes on to the anchor, if any (KeepAlive::markConsumed): the consumer's sync succeeded.
	void markConsumed() const noexcept;
	// What an importer keeps with this descriptor's owner (copies of one SharedFd share it, a
	// dup() does not), destroyed with the last copy, before the fd closes: the GL objects
	// imported from an exporter's allocation, say, reused for every frame of it. One value per
	// key. attach() stores `value` unless the key has one, and returns the key's value (null
	// for an empty SharedFd, or when memory ran out). The value must not hold a copy of this
	// SharedFd (a cycle that never ends). Thread-safe.
	std::shared_ptr<void> attach(const void *key, std::shared_ptr<void> value) const noexcept;
	// The value attach() stored under `key`, or null when none (or the SharedFd is empty).
	// Thread-safe.
	std::shared_ptr<void> attachment(const void *key) const noexcept;

	// True when both carry the same descriptor number (an empty SharedFd is -1).
	friend bool operator==(const SharedFd &a, const SharedFd &b) noexcept
	{
		return a.get() == b.get();
	}

private:
	struct Holder;
	std::shared_ptr<const Holder> holder_;
};

// True when `fd` is >= 0 and refers to an open descriptor of this process.
GPUHANDLE_API bool isOpenFd(int fd) noexcept;

} // namespace gpuhandle
