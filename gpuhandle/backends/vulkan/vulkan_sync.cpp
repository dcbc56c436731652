// Vulkan fence waiters: timeline by vkWaitSemaphores (and a watch thread for poll fds), binary
// through a private VkFence. No libvulkan link: every entry point comes from vkGetDeviceProcAddr.
#define VK_NO_PROTOTYPES
#include <gpuhandle/backends/vulkan_sync.h>

#include "../shared/vulkan_dispatch.h"
#include "validation.h"
#include "vulkan_sync_internal.h"
#include "vulkan_timeline_watch.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sys/eventfd.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

namespace gpuhandle {

namespace vksync {

namespace {

const char *vkResultName(VkResult result)
{
	switch (result) {
	case VK_SUCCESS: return "VK_SUCCESS";
	case VK_NOT_READY: return "VK_NOT_READY";
	case VK_TIMEOUT: return "VK_TIMEOUT";
	case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
	case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
	case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
	case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
	case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
	case VK_ERROR_INVALID_EXTERNAL_HANDLE: return "VK_ERROR_INVALID_EXTERNAL_HANDLE";
	case VK_ERROR_UNKNOWN: return "VK_ERROR_UNKNOWN";
	default: return "an unlisted VkResult";
	}
}

} // namespace

// DEVICE_LOST gets its own code because the pipeline must restart; anything else is the driver's.
Error vulkanError(VkResult result, const char *call)
{
	ErrorCode code = result == VK_ERROR_DEVICE_LOST ? ErrorCode::DeviceLost
							: ErrorCode::Backend;
	return Error::format(code, "device", "%s failed with %s (%d).", call, vkResultName(result),
			     static_cast<int>(result));
}

// Checks what both import and export need; on success fills `device`.
std::optional<Error> checkInput(const char *type, const VulkanSemaphoreSync &raw,
				const VulkanDeviceDispatch &dispatch, Device &device)
{
	if (auto e = detail::requireHandle(type, "device", dispatch.device))
		return e;
	if (auto e = detail::requireHandle(type, "getDeviceProcAddr", dispatch.getDeviceProcAddr))
		return e;
	if (auto e = detail::requireHandle(type, "semaphore", raw.semaphore))
		return e;
	if (raw.kind != VulkanSemaphoreKind::Binary && raw.kind != VulkanSemaphoreKind::Timeline)
		return Error::format(ErrorCode::InvalidArgument, "kind",
				     "%s: Vulkan semaphore kind %u is neither binary nor timeline.",
				     type, static_cast<unsigned>(raw.kind));
	// A raw carrier names its device; a point must not be waited through another one.
	if (raw.device && raw.device != dispatch.device)
		return Error::format(
			ErrorCode::DeviceMismatch, "device",
			"%s: the semaphore belongs to VkDevice %p, not to the dispatch's VkDevice %p.",
			type, raw.device, dispatch.device);
	device.device = static_cast<VkDevice>(dispatch.device);
	if (dispatch.functions) {
		if (dispatch.functions->table.device != device.device)
			return Error::format(
				ErrorCode::DeviceMismatch, "functions",
				"%s: the functions were loaded for VkDevice %p, not for "
				"the dispatch's VkDevice %p.",
				type, static_cast<void *>(dispatch.functions->table.device),
				dispatch.device);
		device.api = dispatch.functions->table;
		return std::nullopt;
	}
	Result<VulkanDispatch> loaded =
		loadVulkanDispatch(type, dispatch, {}, VulkanRequire::Nothing);
	if (!loaded)
		return std::move(loaded).error();
	device.api = *loaded;
	return std::nullopt;
}

VkSemaphore semaphoreOf(const VulkanSemaphoreSync &raw)
{
	// VkSemaphore is a pointer on 64-bit targets and a uint64_t elsewhere; both take this cast.
	return reinterpret_cast<VkSemaphore>(raw.semaphore);
}

} // namespace vksync

using vksync::checkInput;
using vksync::Device;
using vksync::semaphoreOf;
using vksync::vulkanError;

namespace {

constexpr const char *kType = "importVulkanSemaphore";

// Saturates like Deadline: only kWaitForever becomes Vulkan's UINT64_MAX ("no timeout").
uint64_t vulkanTimeout(const Deadline &deadline)
{
	if (deadline.isNever())
		return UINT64_MAX;
	return static_cast<uint64_t>(deadline.remaining().count());
}

// One bounded wait around a Vulkan wait call. A VK_TIMEOUT before the deadline (a driver that
// wakes early) waits out the rest, so Timeout always means the whole budget was spent.
template<typename WaitOnce>
Status waitUntil(WaitDuration timeout, const char *call, WaitOnce waitOnce)
{
	Deadline deadline = Deadline::after(timeout);
	for (;;) {
		VkResult result = waitOnce(vulkanTimeout(deadline));
		if (result == VK_SUCCESS)
			return {};
		if (result != VK_TIMEOUT)
			return vulkanError(result, call);
		if (deadline.expired())
			return waitTimeoutError(BackendKind::Vulkan, timeout);
	}
}

Error missingEntryPoint(const char *name, const char *why)
{
	return Error::format(ErrorCode::NotSupported, "getDeviceProcAddr",
			     "%s: vkGetDeviceProcAddr returned no %s for the device; %s.", kType,
			     name, why);
}

// Timeline: waits with vkWaitSemaphores and reads the counter. Asynchronous waiters get an
// eventfd on first asking (pollFd): written at once when the value is already reached, else by a
// watch thread blocked in vkWaitSemaphores (vulkan_timeline_watch.h); -1 where no watch can be
// had, and those waiters poll.
class TimelineWaiter final : public SyncWaiter
{
public:
	TimelineWaiter(KeepAliveRef owner, VkDevice device, VkSemaphore semaphore, uint64_t value,
		       PFN_vkWaitSemaphores waitSemaphores,
		       PFN_vkGetSemaphoreCounterValue getCounter)
		: owner_(std::move(owner)), device_(device), semaphore_(semaphore), value_(value),
		  waitSemaphores_(waitSemaphores), getCounter_(getCounter)
	{
	}

	~TimelineWaiter() override
	{
		// Without an owner nothing else keeps the semaphore valid once this point is gone,
		// so the watch must have let go of it before this returns.
		detail::cancelTimelineWatch(watch_, !owner_);
	}

	BackendKind backend() const noexcept override { return BackendKind::Vulkan; }

	Status wait(WaitDuration timeout) override
	{
		VkSemaphoreWaitInfo info{};
		info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
		info.semaphoreCount = 1;
		info.pSemaphores = &semaphore_;
		info.pValues = &value_;
		return waitUntil(timeout, "vkWaitSemaphores",
				 [&](uint64_t ns) { return waitSemaphores_(device_, &info, ns); });
	}

	Result<bool> isSignaled() override
	{
		uint64_t counter = 0;
		VkResult result = getCounter_(device_, semaphore_, &counter);
		if (result != VK_SUCCESS)
			return vulkanError(result, "vkGetSemaphoreCounterValue");
		return counter >= value_;
	}

	int pollFd() const noexcept override
	{
		std::call_once(armed_, [this] { arm(); });
		return eventFd_.get();
	}

private:
	void arm() const noexcept
	{
		uint64_t counter = 0;
		if (getCounter_(device_, semaphore_, &counter) == VK_SUCCESS && counter >= value_) {
			eventFd_.reset(eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK));
			return;
		}
		// A failed read is left to the watch: its wait fails the same way and wakes us.
		eventFd_ = detail::startTimelineWatch(
			{ device_, semaphore_, value_, waitSemaphores_, owner_ }, watch_);
	}

	// Keeps the device and semaphore valid for as long as this waiter lives.
	KeepAliveRef owner_;
	VkDevice device_;
	VkSemaphore semaphore_;
	uint64_t value_;
	PFN_vkWaitSemaphores waitSemaphores_;
	PFN_vkGetSemaphoreCounterValue getCounter_;
	// Set once, by the first pollFd().
	mutable std::once_flag armed_{};
	mutable UniqueFd eventFd_{};
	mutable detail::TimelineWatchHandle watch_{};
};

// Binary: the CPU cannot wait on a binary semaphore, so import submits one wait on it that
// signals a private fence, and every copy of the point waits on that fence.
class BinaryWaiter final : public SyncWaiter
{
public:
	struct Fns {
		PFN_vkCreateFence createFence;
		PFN_vkDestroyFence destroyFence;
		PFN_vkQueueSubmit queueSubmit;
		PFN_vkWaitForFences waitForFences;
		PFN_vkGetFenceStatus getFenceStatus;
	};

	BinaryWaiter(KeepAliveRef owner, VkDevice device, Fns fns, VkFence fence)
		: owner_(std::move(owner)), device_(device), fns_(fns), fence_(fence)
	{
	}

	// A fence that a pending submission will still signal must not be destroyed. Give the
	// submission the default budget; past it, leak the fence rather than corrupt the driver.
	// After a device loss nothing is pending any more, so the fence may go.
	~BinaryWaiter() override
	{
		uint64_t budget = static_cast<uint64_t>(kDefaultWaitTimeout.count());
		VkResult result = fns_.waitForFences(device_, 1, &fence_, VK_TRUE, budget);
		if (result == VK_SUCCESS || result == VK_ERROR_DEVICE_LOST)
			fns_.destroyFence(device_, fence_, nullptr);
	}

	BackendKind backend() const noexcept override { return BackendKind::Vulkan; }

	Status wait(WaitDuration timeout) override
	{
		return waitUntil(timeout, "vkWaitForFences", [&](uint64_t ns) {
			return fns_.waitForFences(device_, 1, &fence_, VK_TRUE, ns);
		});
	}

	Result<bool> isSignaled() override
	{
		VkResult result = fns_.getFenceStatus(device_, fence_);
		if (result == VK_SUCCESS || result == VK_NOT_READY)
			return result == VK_SUCCESS;
		return vulkanError(result, "vkGetFenceStatus");
	}

private:
	KeepAliveRef owner_; // declared first: released after the fence is destroyed
	VkDevice device_;
	Fns fns_;
	VkFence fence_;
};

Result<SyncWaiterRef> timelineWaiter(const VulkanSemaphoreSync &raw, const Device &device,
				     KeepAliveRef owner)
{
	// Core in Vulkan 1.2; the KHR names serve a 1.1 device with VK_KHR_timeline_semaphore.
	auto wait = device.api.WaitSemaphores;
	auto counter = device.api.GetSemaphoreCounterValue;
	const char *why =
		"the device needs Vulkan 1.2 or VK_KHR_timeline_semaphore for timeline waits";
	if (!wait)
		return missingEntryPoint("vkWaitSemaphores", why);
	if (!counter)
		return missingEntryPoint("vkGetSemaphoreCounterValue", why);
	return SyncWaiterRef(std::make_shared<TimelineWaiter>(
		std::move(owner), device.device, semaphoreOf(raw), raw.value, wait, counter));
}

Result<SyncWaiterRef> binaryWaiter(const VulkanSemaphoreSync &raw,
				   const VulkanDeviceDispatch &dispatch, const Device &device,
				   KeepAliveRef owner)
{
	if (!dispatch.queue)
		return Error::format(
			ErrorCode::NullHandle, "queue",
			"%s: queue is null; a binary semaphore is waited by a queue submission, so it needs the VkQueue.",
			kType);
	if (!dispatch.lockQueue != !dispatch.unlockQueue)
		return Error::format(
			ErrorCode::InvalidArgument,
			dispatch.lockQueue ? "unlockQueue" : "lockQueue",
			"%s: lockQueue and unlockQueue come as a pair; only one was given.", kType);
	BinaryWaiter::Fns fns{};
	fns.createFence = device.api.CreateFence;
	fns.destroyFence = device.api.DestroyFence;
	fns.queueSubmit = device.api.QueueSubmit;
	fns.waitForFences = device.api.WaitForFences;
	fns.getFenceStatus = device.api.GetFenceStatus;
	if (!fns.createFence || !fns.destroyFence || !fns.queueSubmit || !fns.waitForFences ||
	    !fns.getFenceStatus)
		return missingEntryPoint(
			"fence or queue-submit functions",
			"every Vulkan 1.0 device has them, so getDeviceProcAddr is probably not the device's");

	VkFenceCreateInfo fenceInfo{};
	fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
	VkFence fence = VK_NULL_HANDLE;
	VkResult result = fns.createFence(device.device, &fenceInfo, nullptr, &fence);
	if (result != VK_SUCCESS)
		return vulkanError(result, "vkCreateFence");

	// Consumes the semaphore's signal: from here on only this point's fence says it happened.
	VkSemaphore semaphore = semaphoreOf(raw);
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkSubmitInfo submit{};
	submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
	submit.waitSemaphoreCount = 1;
	submit.pWaitSemaphores = &semaphore;
	submit.pWaitDstStageMask = &stage;
	if (dispatch.lockQueue)
		dispatch.lockQueue(dispatch.queueLockUserData, dispatch.queueFamily);
	result = fns.queueSubmit(static_cast<VkQueue>(dispatch.queue), 1, &submit, fence);
	if (dispatch.unlockQueue)
		dispatch.unlockQueue(dispatch.queueLockUserData, dispatch.queueFamily);
	if (result != VK_SUCCESS) {
		// Never submitted, so safe to destroy.
		fns.destroyFence(device.device, fence, nullptr);
		return vulkanError(result, "vkQueueSubmit");
	}
	return SyncWaiterRef(
		std::make_shared<BinaryWaiter>(std::move(owner), device.device, fns, fence));
}

// Keeps a raw carrier (and so its own anchor) alive beside the importer's owner.
class CarrierAnchor final : public KeepAlive
{
public:
	CarrierAnchor(SyncPoint carrier, KeepAliveRef owner)
		: carrier_(std::move(carrier)), owner_(std::move(owner))
	{
	}
	void markConsumed() noexcept override
	{
		if (owner_)
			owner_->markConsumed();
	}

private:
	SyncPoint carrier_;
	KeepAliveRef owner_;
};

} // namespace

/**
 * \brief Resolves a device's entry points once, for imports of every frame
 */
Result<std::shared_ptr<const VulkanDeviceFunctions>>
loadVulkanDeviceFunctions(const VulkanDeviceDispatch &device,
			  const VulkanPhysicalDeviceDispatch &physical)
{
	const char *fn = "loadVulkanDeviceFunctions";
	if (auto e = detail::requireHandle(fn, "device", device.device))
		return std::move(*e);
	if (auto e = detail::requireHandle(fn, "getDeviceProcAddr", device.getDeviceProcAddr))
		return std::move(*e);
	Result<VulkanDispatch> api =
		loadVulkanDispatch(fn, device, physical, VulkanRequire::Nothing);
	if (!api)
		return std::move(api).error();
	auto functions = std::make_shared<VulkanDeviceFunctions>();
	functions->table = *api;
	return std::shared_ptr<const VulkanDeviceFunctions>(std::move(functions));
}

/**
 * \brief Makes a waitable point over a Vulkan semaphore owned by the host
 * \param raw The semaphore, its kind and (timeline) the value to reach
 * \param dispatch The host's VkDevice and vkGetDeviceProcAddr; for binary semaphores its queue
 * \param owner Keeps the device and semaphore valid; released once, after the last copy
 *
 * A timeline point waits with vkWaitSemaphores (VK_TIMEOUT gives Timeout, VK_ERROR_DEVICE_LOST
 * DeviceLost, anything else Backend naming the VkResult) and polls vkGetSemaphoreCounterValue.
 * A binary point submits, once and now, a wait on the semaphore that signals a private VkFence:
 * the semaphore's signal must already be submitted (Vulkan forbids wait-before-signal on binary
 * semaphores) and is consumed, so nobody else may wait on that signal. The queue is used only
 * inside this call.
 */
Result<SyncPoint> importVulkanSemaphore(const VulkanSemaphoreSync &raw,
					const VulkanDeviceDispatch &dispatch, KeepAliveRef owner)
{
	Device device;
	if (auto e = checkInput(kType, raw, dispatch, device))
		return std::move(*e);
	Result<SyncWaiterRef> waiter =
		raw.kind == VulkanSemaphoreKind::Timeline
			? timelineWaiter(raw, device, std::move(owner))
			: binaryWaiter(raw, dispatch, device, std::move(owner));
	if (!waiter)
		return std::move(waiter).error();
	VulkanSemaphoreSync fields = raw;
	fields.device = dispatch.device;
	return SyncPoint::create(fields, std::move(*waiter));
}

/**
 * \brief Imports a raw carrier of kind VulkanSemaphore (see SyncPoint::create with no waiter)
 *
 * The imported point keeps the carrier, and so its anchor, alive as well as `owner`.
 */
Result<SyncPoint> importVulkanSemaphore(const SyncPoint &carrier,
					const VulkanDeviceDispatch &dispatch, KeepAliveRef owner)
{
	const VulkanSemaphoreSync *raw = carrier.raw<VulkanSemaphoreSync>();
	if (!raw)
		return Error::format(ErrorCode::WrongKind, "carrier",
				     "%s: the %s sync point is not a Vulkan semaphore.", kType,
				     syncKindName(carrier.kind()));
	if (!carrier.isRawCarrier())
		return carrier;
	auto anchor = std::make_shared<CarrierAnchor>(carrier, std::move(owner));
	return importVulkanSemaphore(*raw, dispatch, std::move(anchor));
}

} // namespace gpuhandle
