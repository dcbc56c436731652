// Timeline watches: the process-wide pool of threads that turn a Vulkan timeline point into an
// eventfd, so that WaiterThread and the GLib source wake on it instead of polling every 2 ms.
//
// Why one semaphore per thread: a single thread waiting with VK_SEMAPHORE_WAIT_ANY_BIT on many
// semaphores (and one of its own, to be woken for new work) is the natural design, but Mesa's
// common timeline emulation (lavapipe among others) implements WAIT_ANY over several semaphores
// by spinning: a one-second wait on two unsignalled semaphores took one second of CPU here. A
// one-semaphore wait sleeps in every driver.
#include "vulkan_timeline_watch.h"

#include <gpuhandle/sync_waiter.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace gpuhandle::detail {

namespace {

struct Slot {
	std::condition_variable wake; // a job arrived, or the pool stops
	std::condition_variable done; // the job finished (generation moved on)
	std::thread thread;
	bool started = false;
	bool busy = false;
	bool cancelled = false;
	uint64_t generation = 0;
	TimelineWatch watch{};
	UniqueFd fd{};
};

// Whether `fn` lives in Khronos's validation layer (its library is named after the layer).
bool isValidationLayer(PFN_vkWaitSemaphores fn)
{
	Dl_info info{};
	if (dladdr(reinterpret_cast<void *>(fn), &info) == 0 || !info.dli_fname)
		return false;
	return std::strstr(info.dli_fname, "VkLayer_khronos_validation") != nullptr;
}

// Set once the pool's static is destroyed at exit: points dropped later (by other statics) must
// not touch it. Trivially destructible, so it outlives every static.
std::atomic<bool> gPoolGone{ false };

void writeEventFd(int fd)
{
	uint64_t one = 1;
	ssize_t wrote = ::write(fd, &one, sizeof(one));
	(void)wrote; // a non-blocking eventfd only refuses at a counter near 2^64
}

class Pool
{
public:
	static Pool &instance()
	{
		// Destroyed at exit with the other statics, after joining its threads.
		static Pool pool;
		return pool;
	}

	~Pool()
	{
		{
			std::lock_guard<std::mutex> lock(mutex_);
			stopping_ = true;
		}
		for (Slot &slot : slots_)
			slot.wake.notify_all();
		for (Slot &slot : slots_)
			if (slot.thread.joinable())
				slot.thread.join();
		gPoolGone.store(true);
	}

	UniqueFd start(TimelineWatch watch, TimelineWatchHandle &handle)
	{
		if (!accepts(watch.waitSemaphores))
			return {};
		UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
		if (!fd.isValid())
			return {};
		// The thread writes its own copy, so the point may close its fd at any time.
		UniqueFd threadFd(fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
		if (!threadFd.isValid())
			return {};
		std::unique_lock<std::mutex> lock(mutex_);
		// A forked child has none of the parent's threads: its points poll instead.
		if (stopping_ || getpid() != pid_)
			return {};
		Slot *slot = nullptr;
		for (Slot &candidate : slots_)
			if (!candidate.busy) {
				slot = &candidate;
				break;
			}
		if (!slot)
			return {};
		if (!slot->started) {
			try {
				slot->thread = std::thread([this, slot] { work(*slot); });
			} catch (...) {
				return {};
			}
			slot->started = true;
		}
		slot->busy = true;
		slot->cancelled = false;
		slot->watch = std::move(watch);
		slot->fd = std::move(threadFd);
		handle.slot = slot;
		handle.generation = slot->generation;
		lock.unlock();
		slot->wake.notify_one();
		return fd;
	}

	void cancel(const TimelineWatchHandle &handle, bool waitForRelease)
	{
		auto *slot = static_cast<Slot *>(handle.slot);
		if (!slot)
			return;
		std::unique_lock<std::mutex> lock(mutex_);
		if (slot->generation != handle.generation || !slot->busy)
			return; // finished, and perhaps serving another point by now
		slot->cancelled = true;
		if (!waitForRelease)
			return;
		// Bounded: the thread checks `cancelled` after every slice.
		slot->done.wait_for(lock, kTimelineWatchSlice * 4,
				    [&] { return slot->generation != handle.generation; });
	}

private:
	Pool() = default;

	// One dladdr per distinct entry point, remembered (a few at most).
	bool accepts(PFN_vkWaitSemaphores fn)
	{
		if (!fn)
			return false;
		std::lock_guard<std::mutex> lock(layerMutex_);
		for (const auto &[known, accepted] : checked_)
			if (known == fn)
				return accepted;
		bool accepted = !isValidationLayer(fn);
		if (checkedCount_ < checked_.size())
			checked_[checkedCount_++] = { fn, accepted };
		return accepted;
	}

	void work(Slot &slot)
	{
		std::unique_lock<std::mutex> lock(mutex_);
		for (;;) {
			slot.wake.wait(lock, [&] { return slot.busy || stopping_; });
			if (stopping_)
				break;
			TimelineWatch watch = std::move(slot.watch);
			UniqueFd fd = std::move(slot.fd);
			lock.unlock();
			VkSemaphoreWaitInfo info{};
			info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
			info.semaphoreCount = 1;
			info.pSemaphores = &watch.semaphore;
			info.pValues = &watch.value;
			auto slice = static_cast<uint64_t>(
				std::chrono::nanoseconds(kTimelineWatchSlice).count());
			for (;;) {
				VkResult result = watch.waitSemaphores(watch.device, &info, slice);
				if (result != VK_TIMEOUT) {
					// Reached, or failed: either way the waiter's isSignaled()
					// says.
					writeEventFd(fd.get());
					break;
				}
				lock.lock();
				bool stop = slot.cancelled || stopping_;
				lock.unlock();
				if (stop)
					break;
			}
			// Outside the lock: the owner's release may drop another point, which
			// cancels.
			fd.reset();
			watch = {};
			lock.lock();
			slot.busy = false;
			slot.generation++;
			slot.done.notify_all();
		}
		// Stopping at exit: what a slot still holds goes without a signal.
		TimelineWatch rest = std::move(slot.watch);
		slot.fd.reset();
		lock.unlock();
	}

	std::mutex mutex_;
	const pid_t pid_ = getpid();
	bool stopping_ = false;
	std::array<Slot, kMaxTimelineWatches> slots_{};
	std::mutex layerMutex_;
	std::array<std::pair<PFN_vkWaitSemaphores, bool>, 8> checked_{};
	size_t checkedCount_ = 0;
};

} // namespace

UniqueFd startTimelineWatch(TimelineWatch watch, TimelineWatchHandle &handle) noexcept
{
	if (gPoolGone.load())
		return {};
	try {
		return Pool::instance().start(std::move(watch), handle);
	} catch (...) {
		return {};
	}
}

void cancelTimelineWatch(const TimelineWatchHandle &handle, bool waitForRelease) noexcept
{
	if (!handle.slot || gPoolGone.load())
		return;
	try {
		Pool::instance().cancel(handle, waitForRelease);
	} catch (...) {
	}
}

} // namespace gpuhandle::detail
