// Submitted GPU work that a timed-out wait left running, kept with what it uses until it ends:
// one list per device, shared by the backends whose waits are bounded (Vulkan, CUDA, OpenCL).
#pragma once

#include <gpuhandle/keep_alive.h>
#include <gpuhandle/sync_waiter.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gpuhandle {

// `Work` is the backend's handle of one submission: what tells when it has ended (a VkFence, a
// CUevent, a cl_event) and what goes with it then (a command buffer). A wait that times out
// parks its work here with what the work reads or writes (`keep`: allocations, staging
// copies), rather than free memory the device may still use; later calls reclaim what has
// ended, and the device's end drains the list, bounded.
//
// Thread safety: every member may be called from any thread; the list has its own lock.
// `ended` and `release` run under it (a backend whose release needs a lock of its own, such as
// Vulkan's command pool, takes that lock before calling, always in that order). What the work
// kept is handed back to the caller, to be let go outside the caller's locks: an anchor's
// destructor may reach back into the device.
template<typename Work>
class PendingWork
{
public:
	PendingWork() = default;
	PendingWork(const PendingWork &) = delete;
	PendingWork &operator=(const PendingWork &) = delete;

	// Keeps `work` and `keep` until reclaim() finds the work ended.
	void park(Work work, std::vector<KeepAliveRef> keep)
	{
		std::lock_guard lock(mutex_);
		entries_.push_back({ std::move(work), std::move(keep) });
	}

	// Releases the work that has ended and returns what it kept. `ended(Work &, const Deadline
	// *)` says whether the work has ended (failed work never runs on: it has ended too),
	// waiting up to the deadline when one is given, else never blocking; `release(Work &)`
	// frees the backend's objects. Allocates nothing when nothing is pending.
	template<typename Ended, typename Release>
	std::vector<KeepAliveRef> reclaim(Ended &&ended, Release &&release,
					  const Deadline *deadline = nullptr)
	{
		std::vector<KeepAliveRef> released;
		std::lock_guard lock(mutex_);
		auto left = entries_.begin();
		for (auto it = entries_.begin(); it != entries_.end(); ++it) {
			if (!ended(it->work, deadline)) {
				if (left != it)
					*left = std::move(*it);
				++left;
				continue;
			}
			release(it->work);
			for (KeepAliveRef &kept : it->keep)
				released.push_back(std::move(kept));
		}
		entries_.erase(left, entries_.end());
		return released;
	}

	// Reclaims until nothing is pending or `bound` has passed, polling with a back-off from
	// 100 us up to `longestSleep`; true when nothing is left. Left work stays parked: its
	// owner decides (a device whose anchors the work holds is leaked rather than freed under
	// work that may still run).
	template<typename Ended, typename Release>
	bool drain(WaitDuration bound, Ended &&ended, Release &&release,
		   WaitDuration longestSleep = std::chrono::milliseconds(1))
	{
		const Deadline deadline = Deadline::after(bound);
		WaitDuration sleep = std::chrono::microseconds(100);
		for (;;) {
			// What ended work kept goes here, outside the lock.
			static_cast<void>(reclaim(ended, release, &deadline));
			if (empty())
				return true;
			if (deadline.expired())
				return false;
			std::this_thread::sleep_for(std::min(sleep, deadline.remaining()));
			sleep = std::min<WaitDuration>(sleep * 2, longestSleep);
		}
	}

	// Releases every parked work whether it has ended or not, dropping what it kept: for the
	// end of a device after drain() gave up on work that keeps nothing of the device.
	template<typename Release>
	void releaseAll(Release &&release)
	{
		std::vector<Entry> entries;
		{
			std::lock_guard lock(mutex_);
			entries.swap(entries_);
		}
		for (Entry &entry : entries)
			release(entry.work);
	}

	bool empty() const
	{
		std::lock_guard lock(mutex_);
		return entries_.empty();
	}
	size_t size() const
	{
		std::lock_guard lock(mutex_);
		return entries_.size();
	}

private:
	struct Entry {
		Work work;
		std::vector<KeepAliveRef> keep;
	};
	mutable std::mutex mutex_;
	std::vector<Entry> entries_{}; // under mutex_
};

} // namespace gpuhandle
