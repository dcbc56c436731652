// Stress: 8 threads waiting on the same fence (blocking and asynchronous), for every CPU-side
// fence kind, round after round; every waiter wakes exactly once, or times out when unsignalled.
#include <gpuhandle/async_wait.h>
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/sync_point.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 200;

// One fence of each kind, with the call that signals it.
struct Fence {
	SyncPoint point;
	std::function<void()> signal;
	std::shared_ptr<void> keep; // the primitive, alive until the round ends
};

Fence cpuFence()
{
	auto fence = CpuFence::create().value();
	return { fence->point(), [fence] { fence->signal(); }, fence };
}

Fence eventFd()
{
	const int fd = eventfd(0, EFD_CLOEXEC);
	auto point =
		SyncPoint::fromFenceFd(SharedFd(UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, 0)))).value();
	auto owner = std::shared_ptr<void>(nullptr, [fd](void *) { close(fd); });
	return { point,
		 [fd] {
			 const uint64_t one = 1;
			 (void)!write(fd, &one, sizeof one);
		 },
		 owner };
}

Fence releaseGate()
{
	auto gate = ReleaseGate::create().value();
	return { gate.released(), [gate] { (void)gate.signal(); }, nullptr };
}

using MakeFence = Fence (*)();
constexpr MakeFence kKinds[] = { cpuFence, eventFd, releaseGate };

// What the waiting threads saw over all rounds.
struct Outcomes {
	int woken = 0;    // waits that ended signalled
	int timedOut = 0; // waits that ended with Timeout
	int expected = 0; // waits made
};

// Round after round: 8 threads block on one fence, which is signalled once all are waiting
// (or not at all).
Outcomes blockingRounds(MakeFence make, bool signalled)
{
	int woken = 0, timedOut = 0;
	for (int round = 0; round < kRounds / (signalled ? 1 : 20); ++round) {
		Fence fence = make();
		std::atomic<int> ok{ 0 }, timeout{ 0 };
		std::barrier start(kThreads + 1);
		std::vector<std::thread> threads;
		for (int t = 0; t < kThreads; ++t)
			threads.emplace_back([&] {
				start.arrive_and_wait();
				Status s = fence.point.wait(signalled ? 5s : 20ms);
				if (s.ok())
					ok++;
				else if (s.error().code() == ErrorCode::Timeout)
					timeout++;
			});
		start.arrive_and_wait();
		if (signalled)
			fence.signal();
		for (auto &t : threads)
			t.join();
		woken += ok;
		timedOut += timeout;
	}
	return { woken, timedOut, kThreads * kRounds / (signalled ? 1 : 20) };
}

} // namespace

START_TEST(eight_threads_block_on_one_fence)
{
	// Every thread wakes with success once the fence is signalled; none times out.
	const Outcomes seen = blockingRounds(kKinds[_i], true);
	ck_assert_int_eq(seen.woken, seen.expected);
	ck_assert_int_eq(seen.timedOut, 0);
}
END_TEST

START_TEST(eight_threads_time_out_on_one_fence)
{
	// Every thread gets Timeout from a fence nobody signals; none sees success.
	const Outcomes seen = blockingRounds(kKinds[_i], false);
	ck_assert_int_eq(seen.timedOut, seen.expected);
	ck_assert_int_eq(seen.woken, 0);
}
END_TEST

START_TEST(eight_threads_wait_asynchronously_on_one_fence)
{
	auto waiter = WaiterThread::create("stress").value();
	std::atomic<int> done{ 0 }, failed{ 0 };
	for (int round = 0; round < kRounds; ++round) {
		Fence fence = kKinds[_i]();
		std::barrier start(kThreads + 1);
		std::vector<std::thread> threads;
		for (int t = 0; t < kThreads; ++t)
			threads.emplace_back([&] {
				start.arrive_and_wait();
				auto ticket = waitAsync(
					fence.point, 5s,
					[&](Status s) { (s.ok() ? done : failed)++; },
					waiter.get());
				if (!ticket.ok())
					failed++;
			});
		start.arrive_and_wait();
		fence.signal();
		for (auto &t : threads)
			t.join();
	}
	// Every callback runs once; wait for the last ones (bounded).
	for (int i = 0; i < 500 && done + failed < kThreads * kRounds; ++i)
		std::this_thread::sleep_for(10ms);
	ck_assert_int_eq(done.load(), kThreads * kRounds);
	ck_assert_int_eq(failed.load(), 0);
	ck_assert_uint_eq(waiter->pending(), 0);
}
END_TEST

int main()
{
	Suite *s = suite_create("stress_fences");
	TCase *tc = tcase_create("fences");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, eight_threads_block_on_one_fence, 0, 3);
	tcase_add_loop_test(tc, eight_threads_time_out_on_one_fence, 0, 3);
	tcase_add_loop_test(tc, eight_threads_wait_asynchronously_on_one_fence, 0, 3);
	suite_add_tcase(s, tc);
	const int status = gpuhandle::test::runSuite(s);
	std::printf("stress: %d threads x %d rounds per fence kind (CpuFence, eventfd, release "
		    "gate), blocking, timing out and asynchronous\n",
		    kThreads, kRounds);
	return status;
}
