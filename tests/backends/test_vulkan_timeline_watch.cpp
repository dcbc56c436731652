// Vulkan timeline points' poll fds on Mesa lavapipe: the watch threads that let WaiterThread and
// the GLib source wake on a timeline instead of polling it, their pool's bounds, their release of
// the semaphore and its owner, and their absence under the validation layer (VVL #4968).
#include <gpuhandle/backends/vulkan_sync.h>
#include <gpuhandle/waiter_thread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <poll.h>
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

namespace {

using test::timelineAt;

// run.sh sets it where Khronos's validation layer is loaded: no watch runs there.
bool underValidationLayer()
{
	return std::getenv("GPUHANDLE_UNDER_VKVALIDATION") != nullptr;
}

bool readableWithin(int fd, int millis)
{
	pollfd p{ fd, POLLIN, 0 };
	return ::poll(&p, 1, millis) == 1 && (p.revents & POLLIN);
}

int pollFdOf(const SyncPoint &point)
{
	return point.waiter()->pollFd();
}

// Retries `ok` for up to two seconds (a watch thread lets go within a slice, 50 ms).
template<typename Predicate>
bool eventually(Predicate ok)
{
	for (int i = 0; i < 200; i++) {
		if (ok())
			return true;
		std::this_thread::sleep_for(10ms);
	}
	return ok();
}

START_TEST(timeline_poll_fd_becomes_readable_at_the_value)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	{
		SyncPoint point = vk.pointAt(semaphore, 2);
		int fd = pollFdOf(point);
		if (underValidationLayer()) {
			ck_assert_int_eq(fd, -1);
		} else {
			ck_assert_int_ge(fd, 0);
			ck_assert_int_eq(pollFdOf(point), fd); // armed once, the same fd after
			ck_assert(!readableWithin(fd, 0));
			vk.hostSignal(semaphore, 1); // below the point's value: still not readable
			ck_assert(!readableWithin(fd, 100));
			vk.queueSignal(semaphore, 2);
			ck_assert(readableWithin(fd, 10000));
			ck_assert(point.isSignaled().value());
			ck_assert(readableWithin(fd, 0)); // stays readable (level-triggered users)
		}
	}
	// Reached before anyone asks: readable at once, under the layer too.
	vk.hostSignal(semaphore, 3);
	SyncPoint reached = vk.pointAt(semaphore, 3);
	int fd = pollFdOf(reached);
	ck_assert_int_ge(fd, 0);
	ck_assert(readableWithin(fd, 0));
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

// The WaiterThread resolves a timeline wait through the fd: a queue signal and a host signal
// from another thread each complete it, and an unreached one times out.
START_TEST(waiter_thread_wakes_on_a_timeline_signal)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	auto thread = WaiterThread::create("timeline-test").value();
	std::mutex mutex;
	std::condition_variable changed;
	std::vector<Status> outcomes;
	auto enqueue = [&](uint64_t value, WaitDuration timeout) {
		SyncPoint point = vk.pointAt(semaphore, value);
		ck_assert_ok(thread->enqueue(point, timeout, [&](Status s) {
			std::lock_guard<std::mutex> lock(mutex);
			outcomes.push_back(std::move(s));
			changed.notify_all();
		}));
	};
	auto awaitOutcomes = [&](size_t count) {
		std::unique_lock<std::mutex> lock(mutex);
		ck_assert(changed.wait_for(lock, 10s, [&] { return outcomes.size() >= count; }));
	};
	enqueue(1, kDefaultWaitTimeout);
	vk.queueSignal(semaphore, 1);
	awaitOutcomes(1);
	ck_assert_ok(outcomes[0]);

	enqueue(2, kDefaultWaitTimeout);
	std::thread signaller([&] { vk.hostSignal(semaphore, 2); });
	signaller.join();
	awaitOutcomes(2);
	ck_assert_ok(outcomes[1]);

	enqueue(3, 30ms);
	awaitOutcomes(3);
	ck_assert_error(outcomes[2], ErrorCode::Timeout, "timeout");
	thread.reset();
	ck_assert_int_eq(vkQueueWaitIdle(vk.queue), VK_SUCCESS);
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

// An armed point dropped before its value: without an owner the drop returns only once the
// watch no longer waits on the semaphore (destroyed right after, which ASan and valgrind would
// catch), and its watch serves the next point; beyond the pool's size points get no fd.
START_TEST(dropped_points_give_their_watch_back)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	if (underValidationLayer()) {
		ck_assert_int_eq(pollFdOf(vk.pointAt(semaphore, 1)), -1);
		vkDestroySemaphore(vk.device, semaphore, nullptr);
		return;
	}
	// Fill the pool: the first point without an fd marks its size.
	std::vector<SyncPoint> armed;
	std::optional<SyncPoint> beyond;
	for (uint64_t value = 1; value <= 64 && !beyond; value++) {
		SyncPoint point = vk.pointAt(semaphore, value);
		if (pollFdOf(point) >= 0)
			armed.push_back(std::move(point));
		else
			beyond = std::move(point);
	}
	ck_assert_msg(beyond.has_value(), "64 watches ran at once: the pool has no bound");
	size_t size = armed.size();
	ck_assert_uint_ge(size, 4);
	std::printf("pool: %zu watches at once\n", size);
	// A point beyond the pool still completes, by isSignaled (its waiters poll).
	vk.hostSignal(semaphore, size + 1);
	ck_assert(beyond->isSignaled().value());
	ck_assert_ok(beyond->wait(0ms));
	for (SyncPoint &point : armed)
		ck_assert(readableWithin(pollFdOf(point), 10000));
	armed.clear();
	beyond.reset();

	// Unreached points, dropped one by one, each give the pool's slot back by the time the
	// drop returns: more of them than the pool holds all get an fd.
	for (size_t i = 0; i < 2 * size; i++) {
		SyncPoint point = vk.pointAt(semaphore, 1000 + i);
		ck_assert_msg(pollFdOf(point) >= 0, "point %zu got no watch", i);
	}
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
END_TEST

// A point with an owner: dropping it unreached returns at once, and the watch releases the
// owner within a slice; no fd stays open.
START_TEST(owner_is_released_after_the_watch)
{
	LAVAPIPE(vk);
	VkSemaphore semaphore = vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
	if (underValidationLayer()) {
		vkDestroySemaphore(vk.device, semaphore, nullptr);
		return;
	}
	int before = test::openFdCount();
	std::atomic<int> released{ 0 };
	for (int i = 0; i < 5; i++) {
		KeepAliveRef owner = makeKeepAlive(
			[](void *data) { static_cast<std::atomic<int> *>(data)->fetch_add(1); },
			&released);
		SyncPoint point =
			importVulkanSemaphore(timelineAt(semaphore, 100), vk.dispatch(), owner)
				.value();
		owner.reset();
		ck_assert_int_ge(pollFdOf(point), 0);
		point = SyncPoint::noop();
	}
	ck_assert(eventually([&] { return released.load() == 5; }));
	ck_assert(eventually([&] { return test::openFdCount() == before; }));
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
	Suite *s = suite_create("vulkan-timeline-watch");
	TCase *tc = tcase_create("vulkan-timeline-watch");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, timeline_poll_fd_becomes_readable_at_the_value);
	tcase_add_test(tc, waiter_thread_wakes_on_a_timeline_signal);
	tcase_add_test(tc, dropped_points_give_their_watch_back);
	tcase_add_test(tc, owner_is_released_after_the_watch);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
