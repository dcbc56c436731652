// MemoryBudget on one thread: accounting, RAII, caps, soft and hard pressure, pools, callbacks.
#include <gpuhandle/memory_budget.h>

#include "alloc_counter.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// Last: check.h defines a fail() macro that breaks later standard headers.
#include <check.h>

using namespace gpuhandle;

namespace {

constexpr BackendKind kVk = BackendKind::Vulkan;

// Error codes as ints, for ck_assert_int_eq's message.
int code(ErrorCode c)
{
	return static_cast<int>(c);
}
int code(const Error &e)
{
	return code(e.code());
}

std::shared_ptr<MemoryBudget> makeBudget(std::optional<uint64_t> soft, std::optional<uint64_t> hard)
{
	auto budget = MemoryBudget::create({ { kVk, { soft, hard } } });
	ck_assert_msg(budget.ok(), "create failed: %s",
		      budget.ok() ? "" : budget.error().message().c_str());
	return std::move(budget).value();
}

BudgetReservation reserve(MemoryBudget &budget, BackendKind backend, uint64_t bytes)
{
	auto r = budget.tryReserve(backend, bytes);
	ck_assert_msg(r.ok(), "tryReserve(%llu) failed: %s", static_cast<unsigned long long>(bytes),
		      r.ok() ? "" : r.error().message().c_str());
	return std::move(r).value();
}

// A pool that holds reservations and gives them back on eviction; logs every call.
class TestPool final : public EvictablePool
{
public:
	TestPool(std::vector<std::string> &log, std::string name)
		: log_(log), name_(std::move(name))
	{
	}
	void fill(MemoryBudget &budget, uint64_t bytes)
	{
		held_.push_back(reserve(budget, kVk, bytes));
	}
	uint64_t evictUnused(uint64_t wantedBytes) override
	{
		log_.push_back(name_ + ".evict");
		wanted_ = wantedBytes;
		uint64_t freed = 0;
		while (freed < wantedBytes && !held_.empty()) {
			freed += held_.back().bytes();
			held_.pop_back();
		}
		return freed;
	}
	uint64_t bytesInUse() const override
	{
		uint64_t sum = 0;
		for (const auto &r : held_)
			sum += r.bytes();
		return sum;
	}
	uint64_t wanted_ = 0;

private:
	std::vector<std::string> &log_;
	std::string name_;
	std::vector<BudgetReservation> held_;
};

} // namespace

START_TEST(test_reserve_release_usage)
{
	auto budget = makeBudget(std::nullopt, 1000);
	auto a = reserve(*budget, kVk, 300);
	ck_assert_uint_eq(a.bytes(), 300);
	ck_assert(a.backend() == kVk);
	ck_assert_uint_eq(budget->usage(kVk), 300);
	ck_assert_uint_eq(budget->available(kVk), 700);
	auto b = reserve(*budget, kVk, 700);
	ck_assert_uint_eq(budget->usage(kVk), 1000);
	ck_assert_uint_eq(budget->available(kVk), 0);
	a.release();
	ck_assert(a.isEmpty());
	ck_assert_uint_eq(budget->usage(kVk), 700);
	a.release(); // releasing twice gives nothing back twice
	ck_assert_uint_eq(budget->usage(kVk), 700);
	ck_assert(b.shrink(200).ok());
	ck_assert_uint_eq(b.bytes(), 200);
	ck_assert_uint_eq(budget->usage(kVk), 200);
	Status grow = b.shrink(500);
	ck_assert(!grow.ok());
	ck_assert_int_eq(code(grow.error()), code(ErrorCode::InvalidArgument));
	ck_assert_str_eq(grow.error().field(), "newBytes");
	ck_assert(b.shrink(0).ok());
	ck_assert(b.isEmpty());
	ck_assert_uint_eq(budget->usage(kVk), 0);
}
END_TEST

START_TEST(test_raii_and_budget_lifetime)
{
	auto budget = makeBudget(std::nullopt, 1000);
	{
		auto r = reserve(*budget, kVk, 400);
		ck_assert_uint_eq(budget->usage(kVk), 400);
	}
	ck_assert_uint_eq(budget->usage(kVk), 0);

	// The reservation keeps the budget alive after the caller's reference is gone.
	std::weak_ptr<MemoryBudget> weak = budget;
	auto r = reserve(*budget, kVk, 10);
	budget.reset();
	ck_assert(!weak.expired());
	r.release();
	ck_assert(weak.expired());
}
END_TEST

START_TEST(test_move_semantics)
{
	auto budget = makeBudget(std::nullopt, 1000);
	auto a = reserve(*budget, kVk, 100);
	BudgetReservation b(std::move(a));
	ck_assert(a.isEmpty());
	ck_assert_uint_eq(b.bytes(), 100);
	ck_assert_uint_eq(budget->usage(kVk), 100);

	auto c = reserve(*budget, kVk, 50);
	c = std::move(b); // c's own 50 bytes are given back first
	ck_assert(b.isEmpty());
	ck_assert_uint_eq(c.bytes(), 100);
	ck_assert_uint_eq(budget->usage(kVk), 100);

	BudgetReservation empty;
	c = std::move(empty);
	ck_assert(c.isEmpty());
	ck_assert_uint_eq(budget->usage(kVk), 0);
}
END_TEST

START_TEST(test_zero_and_bad_backend_refused)
{
	auto budget = makeBudget(std::nullopt, 1000);
	auto zero = budget->tryReserve(kVk, 0);
	ck_assert(!zero.ok());
	ck_assert_int_eq(code(zero.error()), code(ErrorCode::ZeroSize));
	ck_assert_str_eq(zero.error().field(), "bytes");
	ck_assert_ptr_nonnull(std::strstr(zero.error().message().c_str(), "vulkan"));

	auto bad = budget->tryReserve(static_cast<BackendKind>(kBackendKindCount), 10);
	ck_assert(!bad.ok());
	ck_assert_int_eq(code(bad.error()), code(ErrorCode::InvalidArgument));
	ck_assert_str_eq(bad.error().field(), "backend");
	ck_assert_uint_eq(budget->usage(kVk), 0);
}
END_TEST

START_TEST(test_caps_validation)
{
	auto inverted = MemoryBudget::create({ { BackendKind::Cpu, { 2000, 1000 } } });
	ck_assert(!inverted.ok());
	ck_assert_int_eq(code(inverted.error()), code(ErrorCode::InvalidArgument));
	ck_assert(inverted.error().kind() == ErrorKind::Configuration);
	ck_assert_str_eq(inverted.error().field(), "caps[0].softBytes");
	ck_assert_ptr_nonnull(std::strstr(inverted.error().message().c_str(), "2000"));

	auto twice =
		MemoryBudget::create({ { kVk, {} }, { BackendKind::Cpu, {} }, { kVk, { 1, 2 } } });
	ck_assert(!twice.ok());
	ck_assert_str_eq(twice.error().field(), "caps[2].backend");

	auto unknown = MemoryBudget::create({ { static_cast<BackendKind>(99), {} } });
	ck_assert(!unknown.ok());
	ck_assert_str_eq(unknown.error().field(), "caps[0].backend");

	auto equal = MemoryBudget::create({ { kVk, { 1000, 1000 } } });
	ck_assert(equal.ok());
	BudgetCaps caps = (*equal)->caps(kVk);
	ck_assert(caps.softBytes && *caps.softBytes == 1000);
	ck_assert(caps.hardBytes && *caps.hardBytes == 1000);
	ck_assert(!(*equal)->caps(BackendKind::Cpu).hardBytes);
	ck_assert_uint_eq((*equal)->available(BackendKind::Cpu), UINT64_MAX);
}
END_TEST

START_TEST(test_backends_independent)
{
	auto created = MemoryBudget::create(
		{ { kVk, { std::nullopt, 100 } }, { BackendKind::Cuda, { std::nullopt, 50 } } });
	ck_assert(created.ok());
	auto budget = std::move(created).value();
	auto v = reserve(*budget, kVk, 100);
	auto c = reserve(*budget, BackendKind::Cuda, 50);
	auto cpu = reserve(*budget, BackendKind::Cpu, 1ull << 40); // uncapped
	ck_assert_uint_eq(budget->usage(kVk), 100);
	ck_assert_uint_eq(budget->usage(BackendKind::Cuda), 50);
	ck_assert_uint_eq(budget->usage(BackendKind::Cpu), 1ull << 40);
	ck_assert(!budget->tryReserve(BackendKind::Cuda, 1).ok());
	v.release();
	ck_assert_uint_eq(budget->usage(BackendKind::Cuda), 50);
	ck_assert(!budget->tryReserve(BackendKind::Cuda, 1).ok());
	ck_assert(budget->tryReserve(kVk, 1).ok());
}
END_TEST

START_TEST(test_pressure_query)
{
	auto budget = makeBudget(500, 1000);
	ck_assert(budget->pressure(kVk) == BudgetPressure::None);
	ck_assert(budget->pressure(kVk, 500) == BudgetPressure::None);
	ck_assert(budget->pressure(kVk, 501) == BudgetPressure::Soft);
	ck_assert(budget->pressure(kVk, 1001) == BudgetPressure::Hard);
	ck_assert(budget->pressure(kVk, UINT64_MAX) == BudgetPressure::Hard);
	ck_assert(budget->pressure(BackendKind::Cpu, UINT64_MAX) == BudgetPressure::None);
	ck_assert_str_eq(budgetPressureName(BudgetPressure::Soft), "soft");
}
END_TEST

START_TEST(test_soft_cap_notifies_once_per_crossing)
{
	auto budget = makeBudget(500, 1000);
	std::vector<BudgetPressureEvent> events;
	auto reg = budget->registerPressureCallback(
		[&](const BudgetPressureEvent &e) { events.push_back(e); });
	ck_assert(reg.ok());

	auto a = reserve(*budget, kVk, 500); // reaching the soft cap is not crossing it
	ck_assert_uint_eq(events.size(), 0);
	auto b = reserve(*budget, kVk, 100);
	ck_assert_uint_eq(events.size(), 1);
	ck_assert(events[0].backend == kVk);
	ck_assert(events[0].level == BudgetPressure::Soft);
	ck_assert_uint_eq(events[0].requestedBytes, 100);
	ck_assert_uint_eq(events[0].usageBytes, 600);
	ck_assert(events[0].softCap && *events[0].softCap == 500);
	ck_assert(events[0].hardCap && *events[0].hardCap == 1000);

	auto c = reserve(*budget, kVk, 100); // still above: no new event
	ck_assert_uint_eq(events.size(), 1);
	b.release();
	c.release(); // back to 500: re-armed
	auto d = reserve(*budget, kVk, 1);
	ck_assert_uint_eq(events.size(), 2);
	ck_assert_uint_eq(events[1].usageBytes, 501);
}
END_TEST

START_TEST(test_hard_cap_callbacks_then_eviction)
{
	auto budget = makeBudget(std::nullopt, 1000);
	std::vector<std::string> log;
	TestPool pool(log, "pool");
	pool.fill(*budget, 300);
	pool.fill(*budget, 300);
	auto cb = budget->registerPressureCallback([&](const BudgetPressureEvent &e) {
		log.push_back(e.level == BudgetPressure::Hard ? "callback.hard" : "callback.soft");
		ck_assert_uint_eq(e.requestedBytes, 500);
		ck_assert_uint_eq(e.usageBytes, 600);
	});
	auto reg = budget->registerPool(kVk, pool);
	ck_assert(cb.ok() && reg.ok());

	auto r = budget->tryReserve(kVk, 500); // 600 + 500 > 1000: 100 bytes short
	ck_assert(r.ok());
	ck_assert_uint_eq(log.size(), 2);
	ck_assert_str_eq(log[0].c_str(), "callback.hard");
	ck_assert_str_eq(log[1].c_str(), "pool.evict");
	ck_assert_uint_eq(pool.wanted_, 100);
	ck_assert_uint_eq(pool.bytesInUse(), 300);
	ck_assert_uint_eq(budget->usage(kVk), 800);
}
END_TEST

START_TEST(test_hard_cap_fails_when_nothing_frees)
{
	auto budget = makeBudget(std::nullopt, 1000);
	std::vector<std::string> log;
	TestPool pool(log, "pool");
	pool.fill(*budget, 100);
	auto other = reserve(*budget, kVk, 800);
	auto cb = budget->registerPressureCallback(
		[&](const BudgetPressureEvent &) { log.push_back("callback"); });
	auto reg = budget->registerPool(kVk, pool);
	ck_assert(cb.ok() && reg.ok());

	auto r = budget->tryReserve(kVk, 400); // even an empty pool leaves 200 short
	ck_assert(!r.ok());
	ck_assert_int_eq(code(r.error()), code(ErrorCode::OutOfMemory));
	ck_assert(r.error().kind() == ErrorKind::Recoverable);
	const char *msg = r.error().message().c_str();
	ck_assert_msg(std::strstr(msg, "400") && std::strstr(msg, "1000") &&
			      std::strstr(msg, "800"),
		      "message lacks requested, cap or usage: %s", msg);
	ck_assert_uint_eq(log.size(), 2);
	ck_assert_str_eq(log[0].c_str(), "callback");
	ck_assert_str_eq(log[1].c_str(), "pool.evict");
	ck_assert_uint_eq(budget->usage(kVk), 800);

	// Larger than the hard cap itself: refused without bothering anyone.
	log.clear();
	auto huge = budget->tryReserve(kVk, 1001);
	ck_assert(!huge.ok());
	ck_assert_int_eq(code(huge.error()), code(ErrorCode::OutOfMemory));
	ck_assert_uint_eq(log.size(), 0);
}
END_TEST

START_TEST(test_callback_release_lets_retry_succeed)
{
	auto budget = makeBudget(std::nullopt, 1000);
	std::vector<std::string> log;
	TestPool pool(log, "pool");
	pool.fill(*budget, 200);
	auto cache = reserve(*budget, kVk, 700);
	auto cb = budget->registerPressureCallback([&](const BudgetPressureEvent &) {
		// Re-entering the budget from a callback must not deadlock.
		log.push_back("callback usage=" + std::to_string(budget->usage(kVk)));
		cache.release();
	});
	auto reg = budget->registerPool(kVk, pool);
	auto r = budget->tryReserve(kVk, 500);
	ck_assert(r.ok());
	ck_assert_uint_eq(log.size(), 1); // the pool was not needed
	ck_assert_str_eq(log[0].c_str(), "callback usage=900");
	ck_assert_uint_eq(budget->usage(kVk), 700);
}
END_TEST

START_TEST(test_reserve_inside_callback)
{
	auto budget = makeBudget(100, 1000);
	int calls = 0;
	bool nestedOk = false, nestedOverOk = true;
	auto cb = budget->registerPressureCallback([&](const BudgetPressureEvent &e) {
		++calls;
		if (e.level != BudgetPressure::Hard)
			return;
		// Within the cap it succeeds; over it, it fails at once instead of recursing.
		nestedOk = budget->tryReserve(BackendKind::Cpu, 10).ok();
		nestedOverOk = budget->tryReserve(kVk, 950).ok();
	});
	auto a = reserve(*budget, kVk, 900); // Soft event
	ck_assert_int_eq(calls, 1);
	auto r = budget->tryReserve(kVk, 200); // Hard event, nothing frees
	ck_assert(!r.ok());
	ck_assert_int_eq(calls, 2);
	ck_assert(nestedOk);
	ck_assert(!nestedOverOk);
	ck_assert_uint_eq(budget->usage(kVk), 900);
}
END_TEST

START_TEST(test_largest_pool_first)
{
	auto budget = makeBudget(std::nullopt, 1000);
	std::vector<std::string> log;
	TestPool small(log, "small"), big(log, "big");
	small.fill(*budget, 100);
	big.fill(*budget, 200);
	big.fill(*budget, 200);
	auto regSmall = budget->registerPool(kVk, small);
	auto regBig = budget->registerPool(kVk, big);
	auto r = budget->tryReserve(kVk, 600); // 500 + 600: 100 short, the big pool suffices
	ck_assert(r.ok());
	ck_assert_uint_eq(log.size(), 1);
	ck_assert_str_eq(log[0].c_str(), "big.evict");
	ck_assert_uint_eq(small.bytesInUse(), 100);
}
END_TEST

START_TEST(test_unregister_stops_calls)
{
	auto budget = makeBudget(std::nullopt, 100);
	std::vector<std::string> log;
	TestPool pool(log, "pool");
	pool.fill(*budget, 50);
	auto cb = budget->registerPressureCallback(
		[&](const BudgetPressureEvent &) { log.push_back("callback"); });
	auto reg = budget->registerPool(kVk, pool);
	ck_assert(cb->isActive() && reg->isActive());
	cb->reset();
	BudgetRegistration moved = std::move(reg).value();
	moved = BudgetRegistration(); // move-assigning unregisters the old one
	ck_assert(!moved.isActive());
	ck_assert(!budget->tryReserve(kVk, 60).ok());
	ck_assert_uint_eq(log.size(), 0);
	ck_assert_uint_eq(pool.bytesInUse(), 50);

	auto empty = budget->registerPressureCallback(nullptr);
	ck_assert(!empty.ok());
	ck_assert_str_eq(empty.error().field(), "callback");
}
END_TEST

START_TEST(test_callback_unregisters_itself)
{
	auto budget = makeBudget(10, 100);
	int calls = 0;
	BudgetRegistration self;
	auto created = budget->registerPressureCallback([&](const BudgetPressureEvent &) {
		++calls;
		self.reset(); // returns at once: this is the last call
	});
	self = std::move(created).value();
	auto a = reserve(*budget, kVk, 20);
	ck_assert_int_eq(calls, 1);
	ck_assert(!self.isActive());
	a.release();
	auto b = reserve(*budget, kVk, 20);
	ck_assert_int_eq(calls, 1);
}
END_TEST

START_TEST(test_fast_path_allocates_nothing)
{
	auto budget = makeBudget(std::nullopt, 1000);
	auto cb = budget->registerPressureCallback([](const BudgetPressureEvent &) {});
	bool ok = true;
	test::AllocationScope scope;
	{
		auto a = budget->tryReserve(kVk, 100);
		ok = ok && a.ok();
		if (a.ok())
			a->release();
		auto b = budget->tryReserve(kVk, 200); // given back by the destructor
		ok = ok && b.ok() && budget->usage(kVk) == 200;
	}
	const uint64_t allocations = scope.count();
	ck_assert(ok);
	ck_assert_uint_eq(allocations, 0);
	ck_assert_uint_eq(budget->usage(kVk), 0);
}
END_TEST

static Suite *budgetSuite()
{
	Suite *s = suite_create("memory_budget");
	TCase *basics = tcase_create("basics");
	tcase_add_test(basics, test_reserve_release_usage);
	tcase_add_test(basics, test_raii_and_budget_lifetime);
	tcase_add_test(basics, test_move_semantics);
	tcase_add_test(basics, test_zero_and_bad_backend_refused);
	tcase_add_test(basics, test_caps_validation);
	tcase_add_test(basics, test_backends_independent);
	tcase_add_test(basics, test_pressure_query);
	tcase_add_test(basics, test_fast_path_allocates_nothing);
	suite_add_tcase(s, basics);

	TCase *pressure = tcase_create("pressure");
	tcase_add_test(pressure, test_soft_cap_notifies_once_per_crossing);
	tcase_add_test(pressure, test_hard_cap_callbacks_then_eviction);
	tcase_add_test(pressure, test_hard_cap_fails_when_nothing_frees);
	tcase_add_test(pressure, test_callback_release_lets_retry_succeed);
	tcase_add_test(pressure, test_reserve_inside_callback);
	tcase_add_test(pressure, test_largest_pool_first);
	tcase_add_test(pressure, test_unregister_stops_calls);
	tcase_add_test(pressure, test_callback_unregisters_itself);
	suite_add_tcase(s, pressure);
	return s;
}

int main()
{
	SRunner *runner = srunner_create(budgetSuite());
	srunner_run_all(runner, CK_NORMAL);
	const int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
