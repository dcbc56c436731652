// Every backend that opens here charges its allocations to the MemoryBudget it was opened with:
// the frame's bytes while any copy of it lives, a clear OutOfMemory past the hard cap (the bytes
// asked, in use and the cap), pressure callbacks past the soft cap, and evictable pools emptied
// before an allocation is refused.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/layout.h>

#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

constexpr uint32_t kWidth = 64;
constexpr uint32_t kHeight = 48;

struct Case {
	BackendKind kind;
	FrameStorage storage;
};
// Buffers everywhere, and the image storage of each GPU API (per-plane allocations).
constexpr Case kCases[] = {
	{ BackendKind::Cpu, FrameStorage::Buffer },
	{ BackendKind::Fd, FrameStorage::Buffer },
	{ BackendKind::Vulkan, FrameStorage::Buffer },
	{ BackendKind::Vulkan, FrameStorage::OptimalImage },
	{ BackendKind::OpenGL, FrameStorage::Buffer },
	{ BackendKind::OpenGL, FrameStorage::OptimalImage },
	{ BackendKind::OpenCl, FrameStorage::Buffer },
	{ BackendKind::OpenCl, FrameStorage::OptimalImage },
};

// NV12 where the backend holds it in the storage (PoCL has no two-channel images), else RGBA.
PixelFormat formatFor(const BackendRef &backend, FrameStorage storage)
{
	if (backend->supportsFormat(PixelFormat::NV12, storage))
		return PixelFormat::NV12;
	ck_assert(backend->supportsFormat(PixelFormat::RGBA, storage));
	return PixelFormat::RGBA;
}

uint64_t frameBytes(const BackendRef &backend, FrameStorage storage)
{
	Result<uint64_t> bytes = estimateTextureBytes(formatFor(backend, storage), kWidth, kHeight);
	ck_assert_ok(bytes);
	return *bytes;
}

std::shared_ptr<MemoryBudget> budgetWith(BackendKind kind, BudgetCaps caps)
{
	Result<std::shared_ptr<MemoryBudget>> budget = MemoryBudget::create({ { kind, caps } });
	ck_assert_ok(budget);
	return *budget;
}

// The backend of `kind` charging `budget`, or null (printed) where it does not open here; the
// cpu and fd backends always open.
BackendRef openCharged(BackendKind kind, std::shared_ptr<MemoryBudget> budget)
{
	BackendOpenOptions options;
	options.budget = std::move(budget);
	Result<BackendRef> backend = openBackend(kind, options);
	if (!backend.ok()) {
		ck_assert(kind != BackendKind::Cpu && kind != BackendKind::Fd);
		std::printf("%s: not here (%s)\n", backendKindName(kind),
			    backend.error().message().c_str());
		return {};
	}
	ck_assert_ptr_eq((*backend)->budget().get(), options.budget.get());
	return *backend;
}

// The bytes one frame of the case is charged, from the backend opened once without a budget
// (the caps are given when the budget is made); nullopt where it does not open here.
std::optional<uint64_t> caseBytes(const Case &c)
{
	Result<BackendRef> plain = openBackend(c.kind);
	if (!plain.ok())
		return std::nullopt;
	return frameBytes(*plain, c.storage);
}

Result<Frame> allocate(const BackendRef &backend, FrameStorage storage)
{
	AllocateRequest request;
	request.format = formatFor(backend, storage);
	request.width = kWidth;
	request.height = kHeight;
	request.storage = storage;
	return backend->allocate(request);
}

// The case's backend opened with a budget whose caps `capsFor` gives for one frame's charge
// (`bytes`); a null backend, with the reason printed, where it does not open here.
struct Charged {
	std::shared_ptr<MemoryBudget> budget{};
	BackendRef backend{};
	uint64_t bytes = 0;
};
template<typename CapsFor>
Charged openCase(const Case &c, CapsFor capsFor)
{
	Charged opened;
	const std::optional<uint64_t> known = caseBytes(c);
	if (!known) {
		(void)openCharged(c.kind, nullptr); // prints why
		return opened;
	}
	opened.bytes = *known;
	opened.budget = budgetWith(c.kind, capsFor(opened.bytes));
	opened.backend = openCharged(c.kind, opened.budget);
	return opened;
}

// A producer's cache of idle frames, counted through their charges: eviction drops them.
class IdleFrames final : public EvictablePool
{
public:
	uint64_t evictUnused(uint64_t wanted) override
	{
		uint64_t freed = 0;
		while (freed < wanted && !frames.empty()) {
			frames.pop_back();
			freed += bytesEach;
			evicted++;
		}
		return freed;
	}
	uint64_t bytesInUse() const override { return frames.size() * bytesEach; }

	std::vector<Frame> frames{};
	uint64_t bytesEach = 0;
	int evicted = 0;
};

} // namespace

// A frame is charged its bytes while any copy of it lives, and given back with the last.
START_TEST(allocations_are_charged_while_they_live)
{
	const Case c = kCases[_i];
	const auto [budget, backend, bytes] = openCase(c, [](uint64_t) { return BudgetCaps{}; });
	if (!backend)
		return;
	{
		std::optional<Result<Frame>> frame = allocate(backend, c.storage);
		ck_assert_ok(*frame);
		ck_assert_uint_eq(budget->usage(c.kind), bytes);
		Frame copy = **frame;
		frame.reset();
		ck_assert_uint_eq(budget->usage(c.kind), bytes); // the copy still holds it
		Result<Frame> second = allocate(backend, c.storage);
		ck_assert_ok(second);
		ck_assert_uint_eq(budget->usage(c.kind), 2 * bytes);
	}
	ck_assert_uint_eq(budget->usage(c.kind), 0);
}
END_TEST

// Past the hard cap the allocation fails with the numbers and nothing is allocated or charged;
// once a frame goes, the next allocation fits again.
START_TEST(the_hard_cap_refuses_with_the_numbers)
{
	const Case c = kCases[_i];
	const auto [budget, backend, bytes] = openCase(c, [](uint64_t one) {
		BudgetCaps caps;
		caps.hardBytes = 2 * one + one / 2;
		return caps;
	});
	if (!backend)
		return;
	const uint64_t cap = *budget->caps(c.kind).hardBytes;
	std::optional<Result<Frame>> first = allocate(backend, c.storage);
	Result<Frame> second = allocate(backend, c.storage);
	ck_assert_ok(*first);
	ck_assert_ok(second);
	Result<Frame> third = allocate(backend, c.storage);
	ck_assert_error(third, ErrorCode::OutOfMemory, "bytes");
	const std::string &why = third.error().message();
	for (const std::string &number :
	     { std::to_string(bytes), std::to_string(cap), std::to_string(2 * bytes) })
		ck_assert_msg(why.find(number) != std::string::npos, "'%s' lacks %s", why.c_str(),
			      number.c_str());
	ck_assert_uint_eq(budget->usage(c.kind), 2 * bytes);
	first.reset();
	ck_assert_ok(allocate(backend, c.storage));
}
END_TEST

// Past the soft cap the allocation succeeds and the pressure callbacks hear of it.
START_TEST(the_soft_cap_calls_for_pressure)
{
	const Case c = kCases[_i];
	const auto [budget, backend, bytes] = openCase(c, [](uint64_t one) {
		BudgetCaps caps;
		caps.softBytes = one + one / 2;
		return caps;
	});
	if (!backend)
		return;
	std::vector<BudgetPressureEvent> events;
	Result<BudgetRegistration> listening = budget->registerPressureCallback(
		[&events](const BudgetPressureEvent &event) { events.push_back(event); });
	ck_assert_ok(listening);
	Result<Frame> first = allocate(backend, c.storage);
	ck_assert_ok(first);
	ck_assert_uint_eq(events.size(), 0);
	Result<Frame> second = allocate(backend, c.storage);
	ck_assert_ok(second);
	ck_assert_uint_eq(events.size(), 1);
	ck_assert(events[0].level == BudgetPressure::Soft);
	ck_assert(events[0].backend == c.kind);
	ck_assert_uint_eq(events[0].requestedBytes, bytes);
	ck_assert_uint_eq(events[0].usageBytes, 2 * bytes);
}
END_TEST

// An evictable pool of idle frames is emptied before an allocation is refused: the frame that
// would pass the hard cap is made once the pool gave one of its own back.
START_TEST(idle_pools_are_evicted_before_a_refusal)
{
	const Case c = kCases[_i];
	const auto [budget, backend, bytes] = openCase(c, [](uint64_t one) {
		BudgetCaps caps;
		caps.hardBytes = 2 * one + one / 2;
		return caps;
	});
	if (!backend)
		return;
	IdleFrames pool;
	pool.bytesEach = bytes;
	for (int i = 0; i < 2; i++) {
		Result<Frame> frame = allocate(backend, c.storage);
		ck_assert_ok(frame);
		pool.frames.push_back(*frame);
	}
	Result<BudgetRegistration> registered = budget->registerPool(c.kind, pool);
	ck_assert_ok(registered);
	Result<Frame> third = allocate(backend, c.storage);
	ck_assert_ok(third);
	ck_assert_int_eq(pool.evicted, 1);
	ck_assert_uint_eq(pool.frames.size(), 1);
	ck_assert_uint_eq(budget->usage(c.kind), 2 * bytes);
}
END_TEST

// Without a budget nothing is charged, and budget() says so.
START_TEST(no_budget_charges_nothing)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	ck_assert_ptr_null((*cpu)->budget().get());
	ck_assert_ok(allocate(*cpu, FrameStorage::Buffer));
}
END_TEST

int main()
{
	Suite *suite = suite_create("backend-budget");
	TCase *tc = tcase_create("budget");
	tcase_set_timeout(tc, 120);
	const int cases = static_cast<int>(std::size(kCases));
	tcase_add_loop_test(tc, allocations_are_charged_while_they_live, 0, cases);
	tcase_add_loop_test(tc, the_hard_cap_refuses_with_the_numbers, 0, cases);
	tcase_add_loop_test(tc, the_soft_cap_calls_for_pressure, 0, cases);
	tcase_add_loop_test(tc, idle_pools_are_evicted_before_a_refusal, 0, cases);
	tcase_add_test(tc, no_budget_charges_nothing);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
