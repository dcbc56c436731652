// Timeline watches: a few threads, each blocked in a one-semaphore vkWaitSemaphores for one
// asynchronously awaited Vulkan timeline point, which give that point a pollable eventfd.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <gpuhandle/fd.h>
#include <gpuhandle/keep_alive.h>

#include <chrono>
#include <cstdint>

#include <vulkan/vulkan.h>

namespace gpuhandle::detail {

// What a watch thread waits for. `owner` (may be null) keeps the device and semaphore valid; the
// thread holds it until it lets go of the semaphore.
struct TimelineWatch {
	VkDevice device = VK_NULL_HANDLE;
	VkSemaphore semaphore = VK_NULL_HANDLE;
	uint64_t value = 0;
	PFN_vkWaitSemaphores waitSemaphores = nullptr;
	KeepAliveRef owner{};
};

// Names a started watch, so that its point can let it go. Plain data: a slot of the process-wide
// pool (which is never freed) and the slot's use count when the watch started.
struct TimelineWatchHandle {
	void *slot = nullptr;
	uint64_t generation = 0;
};

// The most watches running at once; a point armed beyond it gets no fd (its waiters poll).
inline constexpr int kMaxTimelineWatches = 16;
// How long one vkWaitSemaphores of a watch lasts before the thread checks for cancellation.
inline constexpr std::chrono::milliseconds kTimelineWatchSlice{ 50 };

// Starts a watch. Returns an eventfd that becomes readable (and stays so) once the semaphore
// reaches the value or its wait fails (device lost: the waiter's isSignaled() then says so).
// Returns an invalid fd, and the caller polls instead, where no watch can be had: every watch is
// busy, a thread or an eventfd could not be made, the process is a fork of the one whose threads
// these were, or `waitSemaphores` is Khronos's validation
// layer, whose versions before 1.3.259 hold their lock through a host wait and so would block
// every other thread's Vulkan calls (Vulkan-ValidationLayers issue 4968).
UniqueFd startTimelineWatch(TimelineWatch watch, TimelineWatchHandle &handle) noexcept;

// Lets a watch go (no-op where it has finished). With `waitForRelease` (a watch that holds no
// owner) it returns only once the thread no longer waits on the semaphore, at most one slice
// later; otherwise it returns at once and the thread drops its owner within a slice.
void cancelTimelineWatch(const TimelineWatchHandle &handle, bool waitForRelease) noexcept;

} // namespace gpuhandle::detail
