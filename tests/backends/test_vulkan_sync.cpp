// Vulkan fence waiter on Mesa lavapipe: timeline semaphores signalled from the host and from a
// queue, binary semaphores through a fence, timeouts, anchors, exports, bad input, fd leaks.
#include <gpuhandle/backends/vulkan_sync.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <vulkan/vulkan.h>

// Last, and kept last by clang-format: Check's fail() macro breaks standard headers after it.
// clang-format off
#include "check_helpers.h"
#include "fd_count.h"
#include "lavapipe_device.h"
// clang-format on

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using test::handleOf;
using test::kWaitAcrossHostSignal;
using test::timelineAt;

long long millisSince(Clock::time_point start)
{
	return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

START_TEST(host_signal_from_another_thread_wakes_blocked_waiters)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	SyncPoint point = vk.pointAt(semaphore, 3);
	ck_assert_int_eq(static_cast<int>(point.kind()),
			 static_cast<int>(SyncKind::VulkanSemaphore));
	ck_assert(!point.isRawCarrier());
	ck_assert_ptr_eq(point.raw<VulkanSemaphoreSync>()->device, vk.device);

	std::atomic<int> woken{ 0 };
	std::vector<std::thread> waiters;
	for (int i = 0; i < 3; i++)
		waiters.emplace_back([&] {
			if (point.wait(kWaitAcrossHostSignal).ok())
				woken++;
		});
	auto start = Clock::now();
	std::thread signaller([&] {
		std::this_thread::sleep_for(30ms);
		vk.hostSignal(semaphore, 3);
	});
	ck_assert_ok(point.wait(kWaitAcrossHostSignal)); // woken by the signal, not a Timeout
	long long elapsed = millisSince(start);
	signaller.join();
	for (auto &t : waiters)
		t.join();
	ck_assert_int_eq(woken.load(), 3);
	std::printf("host signal: blocked wait woke after %lld ms (signal at 30 ms)\n", elapsed);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

START_TEST(unsignalled_wait_times_out_within_bounds)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	SyncPoint point = vk.pointAt(semaphore, 1);

	auto start = Clock::now();
	Status status = point.wait(50ms);
	long long elapsed = millisSince(start);
	ck_assert_error(status, ErrorCode::Timeout, "timeout");
	ck_assert_int_eq(static_cast<int>(status.error().kind()),
			 static_cast<int>(ErrorKind::Recoverable));
	ck_assert_msg(elapsed >= 50, "a 50 ms wait took %lld ms", elapsed);
	std::printf("timeout: a 50 ms wait returned Timeout after %lld ms\n", elapsed);

	// A zero budget polls once and says Timeout at once (read as forever, it would hang here).
	ck_assert_error(point.wait(0ms), ErrorCode::Timeout, "timeout");

	// Then signalled: the same point is done.
	vk.hostSignal(semaphore, 1);
	ck_assert_ok(point.wait(50ms));
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

START_TEST(queue_submit_signal_then_wait)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	SyncPoint five = vk.pointAt(semaphore, 5);
	SyncPoint six = vk.pointAt(semaphore, 6);
	ck_assert(!five.isSignaled().value());

	vk.queueSignal(semaphore, 5);
	ck_assert_ok(five.wait(kDefaultWaitTimeout));
	ck_assert(five.isSignaled().value());
	// Value 5 does not satisfy a point at 6.
	ck_assert(!six.isSignaled().value());
	ck_assert_error(six.wait(20ms), ErrorCode::Timeout, "timeout");
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

START_TEST(is_signaled_false_then_true_and_wait_forever)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE, 10);
	SyncPoint done = vk.pointAt(semaphore, 10);
	SyncPoint later = vk.pointAt(semaphore, 11);
	ck_assert(done.isSignaled().value()); // the initial value already reaches 10
	ck_assert(!later.isSignaled().value());
	vk.hostSignal(semaphore, 11);
	ck_assert(later.isSignaled().value());
	// Both already signalled: they return (a wait that blocked would never end).
	ck_assert_ok(later.wait(kWaitForever));
	ck_assert_ok(done.wait(kWaitForever));
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

// The test's semaphore owner: destroys the semaphore when the anchor goes, and counts.
struct SemaphoreOwner {
	VkDevice device;
	VkSemaphore semaphore;
	std::atomic<int> released{ 0 };
};

void releaseSemaphore(void *data)
{
	auto *owner = static_cast<SemaphoreOwner *>(data);
	vkDestroySemaphore(owner->device, owner->semaphore, nullptr);
	owner->released++;
}

START_TEST(waiter_keeps_the_semaphore_alive)
{
	LAVAPIPE(vk);
	SemaphoreOwner owner{ vk.device, vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE) };
	{
		SyncPoint copy;
		{
			SyncPoint point =
				importVulkanSemaphore(timelineAt(owner.semaphore, 1), vk.dispatch(),
						      makeKeepAlive(releaseSemaphore, &owner))
					.value();
			copy = point;
		}
		ck_assert_int_eq(owner.released.load(), 0);
		vk.hostSignal(owner.semaphore, 1); // still valid: the copy's waiter holds the owner
		ck_assert_ok(copy.wait(kDefaultWaitTimeout));
	}
	ck_assert_int_eq(owner.released.load(), 1);

	// A raw carrier (fields that crossed a boundary) refuses CPU waits until imported; the
	// imported point keeps the carrier's anchor alive after the carrier is gone.
	SemaphoreOwner carried{ vk.device, vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE) };
	{
		SyncPoint imported;
		{
			SyncPoint carrier =
				SyncPoint::create(
					VulkanSemaphoreSync{ handleOf(carried.semaphore),
							     VulkanSemaphoreKind::Timeline, 2,
							     vk.device },
					nullptr, makeKeepAlive(releaseSemaphore, &carried))
					.value();
			ck_assert(carrier.isRawCarrier());
			ck_assert_error(carrier.wait(10ms), ErrorCode::NotSupported, "waiter");
			imported = importVulkanSemaphore(carrier, vk.dispatch()).value();
			// Importing an already waitable point gives it back.
			SyncPoint again = importVulkanSemaphore(imported, vk.dispatch()).value();
			ck_assert(again.waiter() == imported.waiter());
		}
		ck_assert_int_eq(carried.released.load(), 0);
		ck_assert_error(imported.wait(10ms), ErrorCode::Timeout, "timeout");
		vk.hostSignal(carried.semaphore, 2);
		ck_assert_ok(imported.wait(kDefaultWaitTimeout));
	}
	ck_assert_int_eq(carried.released.load(), 1);
}
END_TEST

std::atomic<int> g_locks{ 0 };
std::atomic<int> g_unlocks{ 0 };
constexpr auto lockQueue = [](void *, uint32_t) { g_locks++; };
constexpr auto unlockQueue = [](void *, uint32_t) { g_unlocks++; };

// A getDeviceProcAddr that counts its lookups, so a test sees who resolves what.
std::atomic<int> g_lookups{ 0 };
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL countingProcAddr(VkDevice device, const char *name)
{
	g_lookups++;
	return vkGetDeviceProcAddr(device, name);
}

// Entry points loaded once (loadVulkanDeviceFunctions) make each import look nothing up; the
// points wait and poll as those resolved per call do.
START_TEST(functions_loaded_once_serve_every_import)
{
	LAVAPIPE(vk);
	VulkanDeviceDispatch dispatch = vk.dispatch(true);
	dispatch.getDeviceProcAddr = reinterpret_cast<void *>(&countingProcAddr);
	auto functions = loadVulkanDeviceFunctions(dispatch);
	ck_assert_ok(functions);
	ck_assert_int_gt(g_lookups.load(), 0);
	dispatch.functions = *functions;
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	g_lookups = 0;
	for (uint64_t value = 1; value <= 3; value++) {
		SyncPoint point =
			importVulkanSemaphore(timelineAt(semaphore, value), dispatch).value();
		ck_assert(!point.isSignaled().value());
		vk.queueSignal(semaphore, value);
		ck_assert_ok(point.wait(kDefaultWaitTimeout));
	}
	ck_assert_int_eq(g_lookups.load(), 0);
	// Without them, each import resolves what it calls.
	dispatch.functions.reset();
	SyncPoint point = importVulkanSemaphore(timelineAt(semaphore, 3), dispatch).value();
	ck_assert(point.isSignaled().value());
	ck_assert_int_gt(g_lookups.load(), 0);
	ck_assert_error(loadVulkanDeviceFunctions(VulkanDeviceDispatch{}), ErrorCode::NullHandle,
			"device");
	// Functions of one device do not serve another's dispatch.
	VulkanDeviceDispatch other = dispatch;
	other.device = test::fakeHandle(0x1234);
	other.functions = *functions;
	ck_assert_error(importVulkanSemaphore(timelineAt(semaphore, 3), other),
			ErrorCode::DeviceMismatch, "functions");
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

START_TEST(binary_semaphore_waits_through_a_fence)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_BINARY);
	vk.queueSignal(semaphore, 0);
	VulkanDeviceDispatch dispatch = vk.dispatch(true);
	dispatch.lockQueue = lockQueue;
	dispatch.unlockQueue = unlockQueue;
	VulkanSemaphoreSync raw{ handleOf(semaphore), VulkanSemaphoreKind::Binary, 0, vk.device };
	SyncPoint point = importVulkanSemaphore(raw, dispatch).value();
	ck_assert_int_eq(g_locks.load(), 1);
	ck_assert_int_eq(g_unlocks.load(), 1);
	ck_assert_ok(point.wait(kDefaultWaitTimeout));
	ck_assert(point.isSignaled().value());
	ck_assert_ok(point.wait(kWaitForever));
	point = SyncPoint::noop(); // destroys the fence
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

START_TEST(export_is_not_supported_on_lavapipe)
{
	LAVAPIPE(vk);
	for (auto kind : { VulkanSemaphoreKind::Binary, VulkanSemaphoreKind::Timeline })
		for (auto type :
		     { VulkanSemaphoreFdType::SyncFd, VulkanSemaphoreFdType::OpaqueFd }) {
			Result<bool> can =
				vulkanCanExportSemaphoreFd(vk.physicalDispatch(), kind, type);
			ck_assert_ok(can);
			ck_assert_msg(!*can, "lavapipe claims to export kind %d as fd type %d",
				      static_cast<int>(kind), static_cast<int>(type));
		}
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	Result<SharedFd> fd = exportVulkanSemaphoreFd(timelineAt(semaphore, 1), vk.dispatch(),
						      vk.physicalDispatch(),
						      VulkanSemaphoreFdType::OpaqueFd);
	ck_assert_error(fd, ErrorCode::NotSupported, "type");
	ck_assert(fd.error().message().find("exportable") != std::string::npos);
	std::printf("export: %s\n", fd.error().message().c_str());
	ck_assert_error(exportVulkanSemaphoreFd(timelineAt(semaphore, 1), vk.dispatch(),
						vk.physicalDispatch(),
						VulkanSemaphoreFdType::SyncFd),
			ErrorCode::NotSupported, "type");
	ck_assert_error(vulkanCanExportSemaphoreFd({}, VulkanSemaphoreKind::Binary,
						   VulkanSemaphoreFdType::SyncFd),
			ErrorCode::NullHandle, "instance");
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

START_TEST(invalid_input_names_the_field)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	VulkanSemaphoreSync raw = timelineAt(semaphore, 1);

	VulkanDeviceDispatch noDevice = vk.dispatch();
	noDevice.device = nullptr;
	ck_assert_error(importVulkanSemaphore(raw, noDevice), ErrorCode::NullHandle, "device");
	VulkanDeviceDispatch noProcAddr = vk.dispatch();
	noProcAddr.getDeviceProcAddr = nullptr;
	ck_assert_error(importVulkanSemaphore(raw, noProcAddr), ErrorCode::NullHandle,
			"getDeviceProcAddr");
	ck_assert_error(importVulkanSemaphore(timelineAt(VK_NULL_HANDLE, 1), vk.dispatch()),
			ErrorCode::NullHandle, "semaphore");

	VulkanSemaphoreSync badKind = raw;
	badKind.kind = static_cast<VulkanSemaphoreKind>(7);
	ck_assert_error(importVulkanSemaphore(badKind, vk.dispatch()), ErrorCode::InvalidArgument,
			"kind");
	VulkanSemaphoreSync otherDevice = raw;
	otherDevice.device = test::fakeHandle(0x1000);
	ck_assert_error(importVulkanSemaphore(otherDevice, vk.dispatch()),
			ErrorCode::DeviceMismatch, "device");

	VulkanSemaphoreSync binary = raw;
	binary.kind = VulkanSemaphoreKind::Binary;
	ck_assert_error(importVulkanSemaphore(binary, vk.dispatch()), ErrorCode::NullHandle,
			"queue");
	VulkanDeviceDispatch halfLock = vk.dispatch(true);
	halfLock.lockQueue = lockQueue;
	ck_assert_error(importVulkanSemaphore(binary, halfLock), ErrorCode::InvalidArgument,
			"unlockQueue");

	SyncPoint cpu =
		SyncPoint::create(OpenClEventSync{ test::fakeHandle(0x10) }, nullptr).value();
	ck_assert_error(importVulkanSemaphore(cpu, vk.dispatch()), ErrorCode::WrongKind, "carrier");
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

// A fake driver whose waits fail, to show that failures come back as errors, never as false.
VkResult g_fakeResult = VK_ERROR_DEVICE_LOST;
VKAPI_ATTR VkResult VKAPI_CALL fakeWait(VkDevice, const VkSemaphoreWaitInfo *, uint64_t)
{
	return g_fakeResult;
}
VKAPI_ATTR VkResult VKAPI_CALL fakeCounter(VkDevice, VkSemaphore, uint64_t *)
{
	return VK_ERROR_UNKNOWN;
}
bool g_fakeHasTimeline = true;
VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL fakeProcAddr(VkDevice, const char *name)
{
	if (!g_fakeHasTimeline)
		return nullptr;
	if (!std::strcmp(name, "vkWaitSemaphores"))
		return reinterpret_cast<PFN_vkVoidFunction>(&fakeWait);
	if (!std::strcmp(name, "vkGetSemaphoreCounterValue"))
		return reinterpret_cast<PFN_vkVoidFunction>(&fakeCounter);
	return nullptr;
}

START_TEST(driver_failures_are_errors)
{
	VulkanDeviceDispatch fake;
	fake.device = test::fakeHandle(0x2000);
	fake.getDeviceProcAddr = reinterpret_cast<void *>(&fakeProcAddr);
	VulkanSemaphoreSync raw{ 0x3000, VulkanSemaphoreKind::Timeline, 1, nullptr };
	SyncPoint point = importVulkanSemaphore(raw, fake).value();
	ck_assert_error(point.wait(kDefaultWaitTimeout), ErrorCode::DeviceLost, "device");
	g_fakeResult = VK_ERROR_OUT_OF_HOST_MEMORY;
	Status status = point.wait(kDefaultWaitTimeout);
	ck_assert_error(status, ErrorCode::Backend, "device");
	ck_assert(status.error().message().find("VK_ERROR_OUT_OF_HOST_MEMORY") !=
		  std::string::npos);
	ck_assert_error(point.isSignaled(), ErrorCode::Backend, "device");

	// A device without Vulkan 1.2 or VK_KHR_timeline_semaphore cannot wait on timelines.
	g_fakeHasTimeline = false;
	ck_assert_error(importVulkanSemaphore(raw, fake), ErrorCode::NotSupported,
			"getDeviceProcAddr");
}
END_TEST

START_TEST(no_fd_leaks)
{
	LAVAPIPE(vk);
	// Warm up first: the driver may open what it keeps for the device's lifetime.
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	vk.queueSignal(semaphore, 1);
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	int before = test::openFdCount();
	for (uint64_t i = 2; i < 52; i++) {
		SyncPoint point = vk.pointAt(semaphore, i);
		vk.queueSignal(semaphore, i);
		ck_assert_ok(point.wait(kDefaultWaitTimeout));

		VkSemaphore binary = vk.makeSemaphore(VK_SEMAPHORE_TYPE_BINARY);
		vk.queueSignal(binary, 0);
		VulkanSemaphoreSync raw{ handleOf(binary), VulkanSemaphoreKind::Binary, 0,
					 vk.device };
		SyncPoint fenced = importVulkanSemaphore(raw, vk.dispatch(true)).value();
		ck_assert_ok(fenced.wait(kDefaultWaitTimeout));
		fenced = SyncPoint::noop();
		vkDestroySemaphore(vk.device, binary, nullptr);
	}
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	ck_assert_int_eq(test::openFdCount(), before);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

} // namespace

int main()
{
	if (std::string why = test::whyNoLavapipe(); !why.empty()) {
		std::printf("SKIP: Mesa lavapipe is not usable: %s.\n", why.c_str());
		return 77;
	}

	Suite *s = suite_create("vulkan-sync");
	TCase *tc = tcase_create("vulkan-sync");
	tcase_set_timeout(tc, 60);
	if (std::getenv("GPUHANDLE_UNDER_VKVALIDATION"))
		// Not gpuhandle: the validation layer 1.3.239 keeps its write lock through a host
		// vkWaitSemaphores, so vkSignalSemaphore from another thread blocks until the wait
		// times out (seen in gdb; Vulkan-ValidationLayers issue 4968, fixed in 1.3.259).
		std::printf("not run: host_signal_from_another_thread_wakes_blocked_waiters (the "
			    "validation layer serialises host waits and signals, VVL #4968)\n");
	else
		tcase_add_test(tc, host_signal_from_another_thread_wakes_blocked_waiters);
	tcase_add_test(tc, unsignalled_wait_times_out_within_bounds);
	tcase_add_test(tc, queue_submit_signal_then_wait);
	tcase_add_test(tc, is_signaled_false_then_true_and_wait_forever);
	tcase_add_test(tc, waiter_keeps_the_semaphore_alive);
	tcase_add_test(tc, functions_loaded_once_serve_every_import);
	tcase_add_test(tc, binary_semaphore_waits_through_a_fence);
	tcase_add_test(tc, export_is_not_supported_on_lavapipe);
	tcase_add_test(tc, invalid_input_names_the_field);
	tcase_add_test(tc, driver_failures_are_errors);
	tcase_add_test(tc, no_fd_leaks);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
