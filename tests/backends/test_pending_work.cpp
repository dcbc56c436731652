// The pending-work list the Vulkan, CUDA and OpenCL backends share: work parked by a timed-out
// wait stays with what it uses until it ends, what it kept is let go outside the list's lock,
// drains are bounded, and parking and reclaiming from many threads at once is safe (TSan runs
// this test with the sync suite). The backends' own tests time their real waits out.
#include "pending_work.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;

namespace {

// A submission of the test's own: it ends when `done` is set.
struct FakeWork {
	std::shared_ptr<std::atomic<bool>> done;
	int id = 0;
};

// What parked work keeps: counts its destruction, and may call back into the list then.
struct Kept final : KeepAlive {
	std::atomic<int> *destroyed = nullptr;
	PendingWork<FakeWork> *list = nullptr; // asked for its size while destroyed, when set
	~Kept() override
	{
		if (list)
			static_cast<void>(list->size()); // deadlocks if run under the list's lock
		destroyed->fetch_add(1);
	}
};

KeepAliveRef kept(std::atomic<int> &destroyed, PendingWork<FakeWork> *list = nullptr)
{
	auto k = std::make_shared<Kept>();
	k->destroyed = &destroyed;
	k->list = list;
	return k;
}

FakeWork work(int id, bool done = false)
{
	return { std::make_shared<std::atomic<bool>>(done), id };
}

bool isDone(FakeWork &w, const Deadline *)
{
	return w.done->load();
}

} // namespace

START_TEST(ended_work_is_released_and_what_it_kept_handed_back)
{
	PendingWork<FakeWork> list;
	std::atomic<int> destroyed{ 0 };
	FakeWork a = work(1), b = work(2), c = work(3);
	list.park(a, { kept(destroyed), kept(destroyed) });
	list.park(b, { kept(destroyed) });
	list.park(c, { kept(destroyed) });
	ck_assert_uint_eq(list.size(), 3);

	std::vector<int> releasedIds;
	int destroyedBefore = 0; // before the reclaim() that runs `release`
	auto release = [&](FakeWork &w) {
		releasedIds.push_back(w.id);
		// The work's objects go before what it kept.
		ck_assert_int_eq(destroyed.load(), destroyedBefore);
	};
	// Nothing has ended: nothing released, nothing dropped.
	ck_assert(list.reclaim(isDone, release).empty());
	ck_assert(releasedIds.empty());

	a.done->store(true);
	c.done->store(true);
	std::vector<KeepAliveRef> handedBack = list.reclaim(isDone, release);
	ck_assert_uint_eq(handedBack.size(), 3); // a's two, c's one
	ck_assert_uint_eq(releasedIds.size(), 2);
	ck_assert_int_eq(releasedIds[0], 1);
	ck_assert_int_eq(releasedIds[1], 3);
	ck_assert_uint_eq(list.size(), 1); // b
	// What they kept lives until the caller lets it go.
	ck_assert_int_eq(destroyed.load(), 0);
	handedBack.clear();
	ck_assert_int_eq(destroyed.load(), 3);

	b.done->store(true);
	destroyedBefore = destroyed.load();
	ck_assert_uint_eq(list.reclaim(isDone, release).size(), 1);
	ck_assert(list.empty());
	ck_assert_int_eq(destroyed.load(), 4);
}
END_TEST

START_TEST(what_work_kept_may_reach_back_into_the_list)
{
	PendingWork<FakeWork> list;
	std::atomic<int> destroyed{ 0 };
	list.park(work(1, true), { kept(destroyed, &list) });
	// Dropped after reclaim() has let its lock go: the destructor's size() does not deadlock.
	static_cast<void>(list.reclaim(isDone, [](FakeWork &) {}));
	ck_assert_int_eq(destroyed.load(), 1);
	// drain() and releaseAll() likewise.
	list.park(work(2, true), { kept(destroyed, &list) });
	ck_assert(list.drain(std::chrono::seconds(1), isDone, [](FakeWork &) {}));
	ck_assert_int_eq(destroyed.load(), 2);
	list.park(work(3), { kept(destroyed, &list) });
	list.releaseAll([](FakeWork &) {});
	ck_assert_int_eq(destroyed.load(), 3);
}
END_TEST

START_TEST(a_plain_reclaim_never_waits_and_a_drain_passes_its_deadline)
{
	PendingWork<FakeWork> list;
	list.park(work(1), {});
	bool sawDeadline = false;
	bool sawNone = false;
	auto ended = [&](FakeWork &, const Deadline *deadline) {
		(deadline ? sawDeadline : sawNone) = true;
		return false;
	};
	static_cast<void>(list.reclaim(ended, [](FakeWork &) {}));
	ck_assert(sawNone && !sawDeadline);
	ck_assert(!list.drain(std::chrono::milliseconds(5), ended, [](FakeWork &) {}));
	ck_assert(sawDeadline);
}
END_TEST

START_TEST(drain_waits_for_work_that_ends_and_gives_up_on_work_that_does_not)
{
	PendingWork<FakeWork> list;
	std::atomic<int> destroyed{ 0 };
	FakeWork late = work(1);
	list.park(late, { kept(destroyed) });
	std::thread finisher([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		late.done->store(true);
	});
	int released = 0;
	ck_assert(list.drain(std::chrono::seconds(10), isDone, [&](FakeWork &) { ++released; }));
	finisher.join();
	ck_assert_int_eq(released, 1);
	ck_assert_int_eq(destroyed.load(), 1);

	// Work that never ends: the drain is bounded and the work stays parked, with what it kept.
	list.park(work(2), { kept(destroyed) });
	const auto start = std::chrono::steady_clock::now();
	ck_assert(!list.drain(std::chrono::milliseconds(30), isDone,
			      [&](FakeWork &) { ++released; }));
	ck_assert(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(30));
	ck_assert_uint_eq(list.size(), 1);
	ck_assert_int_eq(destroyed.load(), 1);
	// The device's end lets it go regardless.
	list.releaseAll([&](FakeWork &) { ++released; });
	ck_assert(list.empty());
	ck_assert_int_eq(released, 2);
	ck_assert_int_eq(destroyed.load(), 2);
}
END_TEST

START_TEST(parking_and_reclaiming_from_many_threads)
{
	PendingWork<FakeWork> list;
	std::atomic<int> destroyed{ 0 };
	std::atomic<int> released{ 0 };
	constexpr int kThreads = 4;
	constexpr int kPerThread = 500;
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; ++t)
		threads.emplace_back([&, t] {
			for (int i = 0; i < kPerThread; ++i) {
				// Every other work has ended when parked; the rest end at the
				// drain.
				list.park(work(t * kPerThread + i, i % 2 == 0),
					  { kept(destroyed) });
				static_cast<void>(list.reclaim(isDone, [&](FakeWork &) {
					released.fetch_add(1);
				}));
			}
		});
	for (std::thread &thread : threads)
		thread.join();
	ck_assert_int_eq(released.load(), kThreads * kPerThread / 2);
	ck_assert_int_eq(destroyed.load(), kThreads * kPerThread / 2);
	list.releaseAll([&](FakeWork &) { released.fetch_add(1); });
	ck_assert_int_eq(released.load(), kThreads * kPerThread);
	ck_assert_int_eq(destroyed.load(), kThreads * kPerThread);
}
END_TEST

int main()
{
	Suite *s = suite_create("pending-work");
	TCase *tc = tcase_create("pending-work");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ended_work_is_released_and_what_it_kept_handed_back);
	tcase_add_test(tc, what_work_kept_may_reach_back_into_the_list);
	tcase_add_test(tc, a_plain_reclaim_never_waits_and_a_drain_passes_its_deadline);
	tcase_add_test(tc, drain_waits_for_work_that_ends_and_gives_up_on_work_that_does_not);
	tcase_add_test(tc, parking_and_reclaiming_from_many_threads);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
