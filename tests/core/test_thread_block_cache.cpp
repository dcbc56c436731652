// ThreadBlockCache: a thread reuses the blocks it gave back, keeps at most 16 per size and hands
// batches of 8 to a depot (64 at most) that other threads take from, so that blocks dropped on
// another thread come back; a thread's blocks are freed when it exits, the depot's when the
// process does (the valgrind and ASan runs check that nothing leaks). Also in the sync suite,
// which ThreadSanitizer runs.
#include "alloc_counter.h"
#include "thread_block_cache.h"

#include <array>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "check_helpers.h"

using gpuhandle::detail::ThreadBlockCache;
using gpuhandle::test::AllocationScope;

namespace {

// Sizes of their own, one per test (the depot is per size and process-wide), so that no other
// user of the cache shares these lists.
using Blocks = ThreadBlockCache<200, 8>;
using Kept = ThreadBlockCache<208, 8>;
using Crossing = ThreadBlockCache<216, 8>;
using Churn = ThreadBlockCache<224, 8>;

// Valgrind replaces malloc and operator new: allocations cannot be counted there (the plain runs
// check the counts; valgrind checks that nothing leaks).
bool countsAllocations()
{
	return std::getenv("GPUHANDLE_UNDER_VALGRIND") == nullptr;
}

} // namespace

START_TEST(a_thread_reuses_what_it_gave_back)
{
	void *first = Blocks::take();
	Blocks::give(first);
	AllocationScope scope;
	void *again = Blocks::take();
	const uint64_t allocated = scope.count(); // before any ck_assert (Check allocates)
	ck_assert_ptr_eq(again, first);
	if (countsAllocations())
		ck_assert_uint_eq(allocated, 0);
	Blocks::give(again);
}
END_TEST

START_TEST(a_thread_keeps_sixteen_and_the_depot_sixty_four)
{
	// 100 given back: the list fills to 16, then each 8 more hand a batch to the depot, which
	// keeps 8 batches (64) and sends the next 3 to the heap; the list ends with 12.
	std::array<void *, 100> taken{};
	for (void *&b : taken)
		b = Kept::take();
	for (void *b : taken)
		Kept::give(b);
	AllocationScope scope;
	for (void *&b : taken)
		b = Kept::take();
	const uint64_t allocated = scope.count();
	if (countsAllocations())
		ck_assert_uint_eq(allocated, 100 - 12 - 64);
	for (void *b : taken)
		Kept::give(b);
}
END_TEST

START_TEST(blocks_dropped_on_another_thread_come_back)
{
	// Made here, dropped there (a src's buffers pulled from an appsink): the other thread's
	// list keeps 16 and hands the other 16 to the depot in two batches; its 16 are freed when
	// it exits. Taken here again: 16 from the depot, 16 from the heap.
	Crossing::give(Crossing::take()); // this thread's reaper is registered (that allocates)
	std::vector<void *> made;
	for (int i = 0; i < 32; ++i)
		made.push_back(Crossing::take());
	std::thread other([&] {
		for (void *b : made)
			Crossing::give(b);
	});
	other.join();
	AllocationScope scope;
	for (void *&b : made)
		b = Crossing::take();
	const uint64_t allocated = scope.count();
	if (countsAllocations())
		ck_assert_uint_eq(allocated, 16);
	for (void *b : made)
		Crossing::give(b);
}
END_TEST

START_TEST(a_steady_stream_between_threads_allocates_nothing)
{
	// One thread makes a block per frame, another drops it: after the first batches, every
	// block comes back through the depot. Checked under ThreadSanitizer with the sync suite.
	constexpr int kFrames = 20000;
	std::mutex mutex;
	std::condition_variable changed;
	// A ring of its own: a std::deque would allocate a block every 64 frames.
	std::array<void *, 8> ring{};
	size_t head = 0, size = 0;
	bool done = false;
	std::thread dropper([&] {
		for (;;) {
			std::unique_lock<std::mutex> lock(mutex);
			changed.wait(lock, [&] { return done || size > 0; });
			if (size == 0)
				return;
			void *block = ring[head];
			head = (head + 1) % ring.size();
			size--;
			lock.unlock();
			*static_cast<int *>(block) = 0; // written where it is dropped
			Churn::give(block);
		}
	});
	auto send = [&](int frames) {
		for (int i = 0; i < frames; ++i) {
			void *block = Churn::take();
			*static_cast<int *>(block) = i; // written where it is made
			{
				std::lock_guard<std::mutex> lock(mutex);
				ring[(head + size++) % ring.size()] = block;
			}
			changed.notify_one();
			// At most a few in flight, as with a pool of buffers.
			for (;;) {
				std::lock_guard<std::mutex> lock(mutex);
				if (size < 4)
					break;
			}
		}
	};
	send(2000); // warm-up: the lists and the depot fill
	AllocationScope scope;
	send(kFrames);
	const uint64_t allocated = scope.count();
	{
		std::lock_guard<std::mutex> lock(mutex);
		done = true;
	}
	changed.notify_one();
	dropper.join();
	// Not one per frame (20,000 without the depot): a few when the threads' phases shift and
	// the taker finds the depot empty for a moment, fewer as blocks accumulate.
	if (countsAllocations())
		ck_assert_uint_lt(allocated, kFrames / 1000);
}
END_TEST

int main()
{
	Suite *s = suite_create("thread-block-cache");
	TCase *tc = tcase_create("cache");
	tcase_add_test(tc, a_thread_reuses_what_it_gave_back);
	tcase_add_test(tc, a_thread_keeps_sixteen_and_the_depot_sixty_four);
	tcase_add_test(tc, blocks_dropped_on_another_thread_come_back);
	tcase_add_test(tc, a_steady_stream_between_threads_allocates_nothing);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
