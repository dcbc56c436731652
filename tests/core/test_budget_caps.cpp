// MemoryBudget's caps changed while reservations are held (setCaps), and its peak usage.
#include <gpuhandle/memory_budget.h>

#include <cstdlib>
#include <vector>

// Last: check.h defines a fail() macro that breaks later standard headers.
#include <check.h>

using namespace gpuhandle;

namespace {

constexpr BackendKind kVk = BackendKind::Vulkan;

std::shared_ptr<MemoryBudget> uncapped()
{
	auto budget = MemoryBudget::create();
	ck_assert(budget.ok());
	return std::move(budget).value();
}

// Frees what it holds when asked; counts the bytes it gave back.
class HeldPool final : public EvictablePool
{
public:
	std::vector<BudgetReservation> held;
	uint64_t evicted = 0;
	uint64_t evictUnused(uint64_t wanted) override
	{
		uint64_t freed = 0;
		while (freed < wanted && !held.empty()) {
			freed += held.back().bytes();
			held.pop_back();
		}
		evicted += freed;
		return freed;
	}
	uint64_t bytesInUse() const override
	{
		uint64_t sum = 0;
		for (const BudgetReservation &r : held)
			sum += r.bytes();
		return sum;
	}
};

} // namespace

START_TEST(lowered_cap_keeps_what_is_held_and_refuses_more)
{
	auto budget = uncapped();
	auto a = budget->tryReserve(kVk, 600);
	ck_assert(a.ok());
	ck_assert(budget->setCaps(kVk, { std::nullopt, 500 }).ok());
	ck_assert(budget->caps(kVk).hardBytes == 500u);
	ck_assert(!budget->caps(kVk).softBytes);
	// Held above the new cap: kept, and reported as hard pressure with nothing more.
	ck_assert_uint_eq(budget->usage(kVk), 600);
	ck_assert_uint_eq(budget->available(kVk), 0);
	ck_assert(budget->pressure(kVk) == BudgetPressure::Hard);
	auto refused = budget->tryReserve(kVk, 1);
	ck_assert(!refused.ok());
	ck_assert(refused.error().code() == ErrorCode::OutOfMemory);
	// The numbers are in the message: asked, cap, in use.
	const std::string why = refused.error().message();
	ck_assert_msg(why.find("1 bytes") != std::string::npos &&
			      why.find("500 bytes") != std::string::npos &&
			      why.find("600 bytes") != std::string::npos,
		      "%s", why.c_str());
	a->release();
	auto b = budget->tryReserve(kVk, 500);
	ck_assert(b.ok());
	// Raised: room again; removed: no cap at all.
	ck_assert(budget->setCaps(kVk, { 700, 1000 }).ok());
	ck_assert_uint_eq(budget->available(kVk), 500);
	ck_assert(budget->setCaps(kVk, {}).ok());
	ck_assert(!budget->caps(kVk).hardBytes);
	ck_assert_uint_eq(budget->available(kVk), UINT64_MAX);
	ck_assert(budget->tryReserve(kVk, uint64_t{ 1 } << 40).ok());
}
END_TEST

START_TEST(lowered_cap_evicts_pools_on_the_next_reservation)
{
	auto budget = uncapped();
	HeldPool pool;
	for (int i = 0; i < 4; i++) {
		auto r = budget->tryReserve(kVk, 100);
		ck_assert(r.ok());
		pool.held.push_back(std::move(r).value());
	}
	auto registration = budget->registerPool(kVk, pool);
	ck_assert(registration.ok());
	ck_assert(budget->setCaps(kVk, { std::nullopt, 300 }).ok());
	// 400 held, 300 allowed: 150 more needs 250 back from the pool (three of its 100s).
	auto r = budget->tryReserve(kVk, 150);
	ck_assert(r.ok());
	ck_assert_uint_eq(pool.evicted, 300);
	ck_assert_uint_eq(budget->usage(kVk), 250);
}
END_TEST

START_TEST(set_caps_refuses_bad_values)
{
	auto budget = uncapped();
	Status above = budget->setCaps(kVk, { 200, 100 });
	ck_assert(!above.ok());
	ck_assert(above.error().code() == ErrorCode::InvalidArgument);
	ck_assert_str_eq(above.error().field(), "caps.softBytes");
	ck_assert(!budget->caps(kVk).hardBytes); // unchanged
	Status unknown = budget->setCaps(static_cast<BackendKind>(200), { std::nullopt, 1 });
	ck_assert(!unknown.ok());
	ck_assert(unknown.error().code() == ErrorCode::InvalidArgument);
}
END_TEST

START_TEST(peak_usage_is_the_most_held_at_once)
{
	auto budget = uncapped();
	ck_assert_uint_eq(budget->peakUsage(kVk), 0);
	{
		auto a = budget->tryReserve(kVk, 300);
		auto b = budget->tryReserve(kVk, 200);
		ck_assert(a.ok() && b.ok());
	}
	auto c = budget->tryReserve(kVk, 100);
	ck_assert(c.ok());
	ck_assert_uint_eq(budget->usage(kVk), 100);
	ck_assert_uint_eq(budget->peakUsage(kVk), 500);
	ck_assert_uint_eq(budget->peakUsage(BackendKind::OpenGL), 0);
	ck_assert_uint_eq(budget->peakUsage(static_cast<BackendKind>(200)), 0);
}
END_TEST

int main()
{
	Suite *s = suite_create("memory_budget_caps");
	TCase *tc = tcase_create("caps");
	tcase_add_test(tc, lowered_cap_keeps_what_is_held_and_refuses_more);
	tcase_add_test(tc, lowered_cap_evicts_pools_on_the_next_reservation);
	tcase_add_test(tc, set_caps_refuses_bad_values);
	tcase_add_test(tc, peak_usage_is_the_most_held_at_once);
	suite_add_tcase(s, tc);
	SRunner *runner = srunner_create(s);
	srunner_run_all(runner, CK_NORMAL);
	const int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
