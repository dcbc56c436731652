// ThreadBlockCache: a thread reuses the blocks it gave back, keeps at most 8 per size, and frees
// them when it exits (the valgrind and ASan runs check that nothing leaks).
#include "alloc_counter.h"
#include "thread_block_cache.h"

#include <array>
#include <cstdlib>
#include <thread>
#include <vector>

#include "check_helpers.h"

using gpuhandle::detail::ThreadBlockCache;
using gpuhandle::test::AllocationScope;

namespace {

// A size of its own, so that no other user of the cache shares these lists.
using Blocks = ThreadBlockCache<200, 8>;

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

START_TEST(at_most_eight_are_kept)
{
	std::array<void *, 10> taken{};
	for (void *&b : taken)
		b = Blocks::take();
	for (void *b : taken)
		Blocks::give(b); // the last two go back to the heap
	AllocationScope scope;
	for (void *&b : taken)
		b = Blocks::take();
	const uint64_t allocated = scope.count();
	if (countsAllocations())
		ck_assert_uint_eq(allocated, 2);
	for (void *b : taken)
		Blocks::give(b);
}
END_TEST

START_TEST(blocks_given_on_another_thread_stay_there)
{
	std::vector<void *> made;
	for (int i = 0; i < 4; ++i)
		made.push_back(Blocks::take());
	uint64_t allocatedThere = 0;
	std::thread other([&] {
		for (void *b : made)
			Blocks::give(b); // kept by the other thread, freed when it exits
		AllocationScope scope;
		for (void *&b : made)
			b = Blocks::take();
		allocatedThere = scope.count();
		for (void *b : made)
			Blocks::give(b);
	});
	other.join();
	if (countsAllocations())
		ck_assert_uint_eq(allocatedThere, 0);
}
END_TEST

int main()
{
	Suite *s = suite_create("thread-block-cache");
	TCase *tc = tcase_create("cache");
	tcase_add_test(tc, a_thread_reuses_what_it_gave_back);
	tcase_add_test(tc, at_most_eight_are_kept);
	tcase_add_test(tc, blocks_given_on_another_thread_stay_there);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
