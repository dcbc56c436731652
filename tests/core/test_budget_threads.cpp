// MemoryBudget under many threads: the hard cap holds, usage returns to 0, churn is safe.
#include <gpuhandle/memory_budget.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

// Last: check.h defines a fail() macro that breaks later standard headers.
#include <check.h>

using namespace gpuhandle;

namespace {

constexpr BackendKind kVk = BackendKind::Vulkan;
// Every loop stops at its iteration count or when the main thread says so (after kRunFor at
// most), so the suite stays within a few seconds on two cores and under sanitizers.
constexpr auto kRunFor = std::chrono::milliseconds(400);

// xorshift64: cheap, per thread, no shared state.
struct Rng {
	uint64_t state;
	uint64_t next()
	{
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		return state;
	}
};

// Counters filled by worker threads and checked on the main thread (ck_assert belongs there).
struct Tally {
	std::atomic<uint64_t> granted{ 0 };
	std::atomic<uint64_t> outOfMemory{ 0 };
	std::atomic<uint64_t> otherErrors{ 0 };
	std::atomic<uint64_t> overCap{ 0 };
	std::atomic<uint64_t> maxSeen{ 0 };

	void see(uint64_t usage)
	{
		uint64_t seen = maxSeen.load();
		while (usage > seen && !maxSeen.compare_exchange_weak(seen, usage)) {
		}
	}
};

// Reserves and releases in a loop, holding up to 8 reservations at a time.
void hammer(MemoryBudget &budget, Tally &tally, uint64_t seed, uint64_t maxBytes, int iterations,
	    const std::atomic<bool> &stop)
{
	const uint64_t hard = *budget.caps(kVk).hardBytes;
	Rng rng{ seed };
	std::array<BudgetReservation, 8> held;
	for (int i = 0; i < iterations && !stop.load(std::memory_order_relaxed); ++i) {
		BudgetReservation &slot = held[static_cast<size_t>(i) % held.size()];
		slot.release();
		auto r = budget.tryReserve(kVk, 1 + rng.next() % maxBytes);
		if (r.ok()) {
			slot = std::move(r).value();
			tally.granted++;
		} else if (r.error().code() == ErrorCode::OutOfMemory) {
			tally.outOfMemory++;
		} else {
			tally.otherErrors++;
		}
		const uint64_t usage = budget.usage(kVk);
		tally.see(usage);
		if (usage > hard)
			tally.overCap++;
	}
}

// A pool on the heap whose every call checks it was not unregistered before.
class ChurnPool final : public EvictablePool
{
public:
	uint64_t evictUnused(uint64_t wantedBytes) override
	{
		if (retired.load())
			lateCalls->fetch_add(1);
		calls++;
		std::lock_guard lock(mutex_);
		uint64_t freed = 0;
		while (freed < wantedBytes && !held_.empty()) {
			freed += held_.back().bytes();
			held_.pop_back();
		}
		return freed;
	}
	uint64_t bytesInUse() const override
	{
		if (retired.load())
			lateCalls->fetch_add(1);
		calls++;
		std::lock_guard lock(mutex_);
		uint64_t sum = 0;
		for (const auto &r : held_)
			sum += r.bytes();
		return sum;
	}
	void add(BudgetReservation r)
	{
		std::lock_guard lock(mutex_);
		held_.push_back(std::move(r));
	}

	std::atomic<bool> retired{ false };
	std::atomic<uint64_t> *lateCalls = nullptr;
	mutable std::atomic<uint64_t> calls{ 0 };

private:
	mutable std::mutex mutex_;
	std::vector<BudgetReservation> held_;
};

// Keeps a registration up until it has been called, for 20 ms at most: long enough for the
// workers to reach it even when threads are serialised (valgrind), short enough to churn.
void waitForCall(const std::atomic<uint64_t> &calls, const std::atomic<bool> &stop)
{
	const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
	while (calls.load() == 0 && !stop.load() && std::chrono::steady_clock::now() < until)
		std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void stopAfter(std::chrono::milliseconds runFor, std::vector<std::thread> &threads,
	       std::atomic<bool> &stop)
{
	std::this_thread::sleep_for(runFor);
	stop = true;
	for (auto &thread : threads)
		thread.join();
}

} // namespace

START_TEST(test_concurrent_reservations_respect_hard_cap)
{
	constexpr uint64_t kHard = 1 << 20;
	auto created = MemoryBudget::create({ { kVk, { kHard / 2, kHard } } });
	ck_assert(created.ok());
	auto budget = std::move(created).value();
	std::atomic<uint64_t> softEvents{ 0 }, hardEvents{ 0 };
	auto cb = budget->registerPressureCallback([&](const BudgetPressureEvent &e) {
		(e.level == BudgetPressure::Soft ? softEvents : hardEvents)++;
	});
	ck_assert(cb.ok());

	Tally tally;
	std::atomic<bool> stop{ false };
	std::vector<std::thread> threads;
	for (uint64_t t = 0; t < 8; ++t)
		threads.emplace_back([&, t] {
			hammer(*budget, tally, 0x9e3779b97f4a7c15ull * (t + 1), kHard / 4, 20000,
			       stop);
		});
	stopAfter(kRunFor, threads, stop);

	ck_assert_uint_eq(tally.otherErrors.load(), 0);
	ck_assert_uint_eq(tally.overCap.load(), 0);
	ck_assert_uint_le(tally.maxSeen.load(), kHard);
	ck_assert_uint_gt(tally.granted.load(), 0);
	ck_assert_uint_gt(softEvents.load(), 0);
	// One thread holding 8 x kHard/8 on average already reaches the hard cap.
	ck_assert_uint_gt(tally.outOfMemory.load(), 0);
	ck_assert_uint_gt(hardEvents.load(), 0);
	ck_assert_uint_eq(budget->usage(kVk), 0);
}
END_TEST

START_TEST(test_registration_churn_under_pressure)
{
	constexpr uint64_t kHard = 64 * 1024;
	auto created = MemoryBudget::create({ { kVk, { std::nullopt, kHard } } });
	ck_assert(created.ok());
	auto budget = std::move(created).value();

	Tally tally;
	std::atomic<uint64_t> lateCalls{ 0 }, poolCalls{ 0 }, poolsMade{ 0 }, callbacksMade{ 0 },
		callbackCalls{ 0 };
	std::atomic<bool> stop{ false };
	std::vector<std::thread> threads;
	for (uint64_t t = 0; t < 4; ++t)
		threads.emplace_back([&, t] {
			hammer(*budget, tally, 0xda942042e4dd58b5ull * (t + 1), kHard / 4, 1000000,
			       stop);
		});

	// Pools come and go, each holding some of the budget that the workers want.
	for (uint64_t t = 0; t < 2; ++t) {
		threads.emplace_back([&] {
			do {
				auto *pool = new ChurnPool();
				pool->lateCalls = &lateCalls;
				for (int k = 0; k < 4; ++k)
					if (auto r = budget->tryReserve(kVk, kHard / 16); r.ok())
						pool->add(std::move(r).value());
				auto reg = budget->registerPool(kVk, *pool);
				if (reg.ok()) {
					waitForCall(pool->calls, stop);
					reg->reset();
				}
				pool->retired = true;
				poolCalls += pool->calls.load();
				delete pool;
				poolsMade++;
			} while (!stop.load());
		});
	}

	// Callbacks come and go too; each checks it is not called after its unregistration.
	threads.emplace_back([&] {
		do {
			auto *retired = new std::atomic<bool>(false);
			std::atomic<uint64_t> calls{ 0 };
			auto reg = budget->registerPressureCallback(
				[retired, &lateCalls, &calls](const BudgetPressureEvent &) {
					if (retired->load())
						lateCalls++;
					calls++;
				});
			if (reg.ok()) {
				waitForCall(calls, stop);
				reg->reset();
			}
			callbackCalls += calls.load();
			retired->store(true);
			delete retired;
			callbacksMade++;
		} while (!stop.load());
	});
	stopAfter(kRunFor, threads, stop);

	ck_assert_uint_eq(lateCalls.load(), 0);
	ck_assert_uint_eq(tally.otherErrors.load(), 0);
	ck_assert_uint_eq(tally.overCap.load(), 0);
	ck_assert_uint_gt(tally.granted.load(), 0);
	ck_assert_uint_gt(poolsMade.load(), 0);
	ck_assert_uint_gt(callbacksMade.load(), 0);
	// Registrations overlapped the pressure path.
	ck_assert_uint_gt(poolCalls.load(), 0);
	ck_assert_uint_gt(callbackCalls.load(), 0);
	ck_assert_uint_eq(budget->usage(kVk), 0);
}
END_TEST

static Suite *budgetThreadsSuite()
{
	Suite *s = suite_create("memory_budget_threads");
	TCase *tc = tcase_create("concurrency");
	// Generous against a deadlock turning into a hang; the loops themselves stop in ~1.5 s.
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_concurrent_reservations_respect_hard_cap);
	tcase_add_test(tc, test_registration_churn_under_pressure);
	suite_add_tcase(s, tc);
	return s;
}

int main()
{
	SRunner *runner = srunner_create(budgetThreadsSuite());
	srunner_run_all(runner, CK_NORMAL);
	const int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
