// Fault injection: each backend step (allocate, export, import, map, copy, wait) failing with
// device-lost, out-of-memory and timeout in the middle of a run of frames: the fault arrives as
// an error of the right code and kind, the run carries on (restarts) afterwards, no fd leaks.
#include <gpuhandle/backends/fault_injection.h>
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/layout.h>

#include "fd_count.h"

#include <cstdlib>
#include <cstring>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

constexpr ErrorCode kCodes[] = { ErrorCode::DeviceLost, ErrorCode::OutOfMemory,
				 ErrorCode::Timeout };
constexpr uint32_t kFrames = 30, kFaultAt = 10, kFaults = 2;
uint64_t g_faultsSeen = 0;

// One frame's trip: allocate, write through a mapping, export as a shm fd, import (Direct,
// into the same backend), map the import for reading, and copy on the device where it can.
// Returns the first error, or nothing.
std::optional<Error> trip(Backend &backend, bool withCopy)
{
	AllocateRequest request{ PixelFormat::NV12, 320, 240 };
	auto frame = backend.allocate(request);
	if (!frame.ok())
		return std::move(frame).error();
	{
		auto map = backend.map(*frame, MapAccess::Write, 1s);
		if (!map.ok())
			return std::move(map).error();
		std::memset(map->data(0), 0x5a, map->stride(0));
		if (Status s = map->unmap(); !s.ok())
			return std::move(s).error();
	}
	if (withCopy) {
		auto other = backend.allocate(request);
		if (!other.ok())
			return std::move(other).error();
		if (Status s = backend.copyFrame(*other, *frame, 1s); !s.ok())
			return std::move(s).error();
		return std::nullopt;
	}
	auto exported = backend.exportFrame(*frame, ResourceKind::ShmFd);
	if (!exported.ok())
		return std::move(exported).error();
	auto imported = backend.importFrame(*exported, ImportRoute::Direct);
	if (!imported.ok())
		return std::move(imported).error();
	auto read = backend.map(*imported, MapAccess::Read, 1s);
	if (!read.ok())
		return std::move(read).error();
	if (read->data(0)[0] != 0x5a)
		return Error(ErrorCode::Fatal, "bytes", "the imported frame lost its bytes");
	return std::nullopt;
}

// kFrames trips through `plain` wrapped with a plan failing `step` twice from call kFaultAt.
void runPlan(BackendRef plain, FaultStep step, ErrorCode code, bool withCopy)
{
	const int fdsBefore = test::openFdCount();
	FaultPlan plan{ step, kFaultAt, kFaults, code };
	BackendRef backend = injectFaults(plain, plan);
	uint32_t faults = 0, good = 0;
	for (uint32_t i = 0; i < kFrames; ++i) {
		auto e = trip(*backend, withCopy);
		if (!e) {
			good++;
			continue;
		}
		ck_assert_msg(e->code() == code, "%s: %s", faultStepName(step),
			      e->message().c_str());
		ck_assert_int_eq(static_cast<int>(e->kind()), static_cast<int>(errorKindOf(code)));
		ck_assert_msg(e->message().find("injected fault") != std::string::npos, "%s",
			      e->message().c_str());
		ck_assert_str_eq(e->field(), faultStepName(step));
		faults++;
	}
	// Exactly the planned faults, and every other trip (before and after them) worked.
	ck_assert_uint_eq(faults, kFaults);
	ck_assert_uint_eq(good, kFrames - kFaults);
	g_faultsSeen += faults;
	backend.reset();
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}

} // namespace

// Loop index: step (0..4 without Copy) x code (3).
START_TEST(host_backend_steps_fail_and_recover)
{
	constexpr FaultStep kSteps[] = { FaultStep::Allocate, FaultStep::Export, FaultStep::Import,
					 FaultStep::Map, FaultStep::Wait };
	auto fd = openBackend(BackendKind::Fd);
	ck_assert_ok(fd);
	runPlan(*fd, kSteps[_i / 3], kCodes[_i % 3], false);
}
END_TEST

START_TEST(device_copy_fails_and_recovers)
{
	auto vulkan = openBackend(BackendKind::Vulkan);
	if (!vulkan.ok() || !(*vulkan)->capabilities().gpuCopy) {
		std::printf("device_copy_fails_and_recovers: no Vulkan device copies here (%s)\n",
			    vulkan.ok() ? "no gpuCopy" : vulkan.error().message().c_str());
		ck_assert(!vulkan.ok() || !(*vulkan)->capabilities().gpuCopy);
		return;
	}
	runPlan(*vulkan, FaultStep::Copy, kCodes[_i], true);
}
END_TEST

// The path planner with every import of the target failing: a lost device or a timeout ends the
// plan with that error (no copy hides it); out of memory passes to the next route, a copy.
// Targets: the CPU backend, and Vulkan where it opens (lavapipe here). Loop index: code.
START_TEST(planner_ends_on_lost_device_and_copies_on_no_memory)
{
	const ErrorCode code = kCodes[_i];
	auto source = openBackend(BackendKind::Fd);
	ck_assert_ok(source);
	auto frame = (*source)->allocate({ PixelFormat::NV12, 64, 48 });
	ck_assert_ok(frame);
	uint32_t targets = 0;
	for (BackendKind kind : { BackendKind::Cpu, BackendKind::Vulkan }) {
		auto plain = openBackend(kind);
		if (!plain.ok()) {
			std::printf("planner faults: no %s target here (%s)\n",
				    backendKindName(kind), plain.error().message().c_str());
			continue;
		}
		BackendRef target = injectFaults(*plain, { FaultStep::Import, 0, 0, code });
		ImportOptions options;
		options.source = *source;
		auto imported = importFrame(*frame, *target, options);
		if (code == ErrorCode::OutOfMemory) {
			ck_assert_msg(imported.ok(), "%s: %s", backendKindName(kind),
				      imported.ok() ? "" : imported.error().message().c_str());
			ck_assert(imported->path.kind() != ExecutionPath::Kind::ZeroCopy);
		} else {
			ck_assert_msg(!imported.ok() && imported.error().code() == code, "%s: %s",
				      backendKindName(kind),
				      imported.ok() ? "imported"
						    : imported.error().message().c_str());
			ck_assert(endsThePlan(imported.error()));
		}
		targets++;
	}
	ck_assert_uint_ge(targets, 1);
}
END_TEST

START_TEST(plans_parse_and_refuse_nonsense)
{
	auto plan = parseFaultPlan("map:20:device-lost");
	ck_assert_ok(plan);
	ck_assert(plan->step == FaultStep::Map && plan->afterCalls == 20 && plan->count == 1 &&
		  plan->code == ErrorCode::DeviceLost && !plan->only);
	plan = parseFaultPlan("allocate:5:0:out_of_memory:fd");
	ck_assert_ok(plan);
	ck_assert(plan->count == 0 && plan->code == ErrorCode::OutOfMemory &&
		  plan->only == BackendKind::Fd);
	for (const char *bad : { "", "map", "map:x:timeout", "map:1:nonsense", "jump:1:timeout",
				 "map:1:2:timeout:nowhere", "map:1:2:timeout:fd:extra" })
		ck_assert_error(parseFaultPlan(bad), ErrorCode::InvalidArgument,
				"GPUHANDLE_FAULT_INJECTION");
}
END_TEST

START_TEST(environment_plan_applies_to_opened_backends)
{
	// The environment variable is read by every openBackend() call; unset again at the end.
	const uint64_t before = faultsInjected();
	setenv("GPUHANDLE_FAULT_INJECTION", "allocate:1:timeout:fd", 1);
	auto fd = openBackend(BackendKind::Fd);
	ck_assert_ok(fd);
	AllocateRequest request{ PixelFormat::NV12, 64, 48 };
	ck_assert_ok((*fd)->allocate(request));
	ck_assert_error((*fd)->allocate(request), ErrorCode::Timeout, "allocate");
	// Counted process-wide: a reopened backend (a restarted pipeline) does not fail again.
	auto reopened = openBackend(BackendKind::Fd);
	ck_assert_ok(reopened);
	ck_assert_ok((*reopened)->allocate(request));
	ck_assert_uint_eq(faultsInjected() - before, 1);
	// Other kinds are left alone; a malformed plan is an error, not ignored.
	auto cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	ck_assert_ok((*cpu)->allocate(request));
	setenv("GPUHANDLE_FAULT_INJECTION", "allocate:one:timeout", 1);
	ck_assert_error(openBackend(BackendKind::Fd), ErrorCode::InvalidArgument,
			"GPUHANDLE_FAULT_INJECTION");
	unsetenv("GPUHANDLE_FAULT_INJECTION");
}
END_TEST

int main()
{
	Suite *s = suite_create("fault_injection");
	TCase *tc = tcase_create("faults");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, host_backend_steps_fail_and_recover, 0, 15);
	tcase_add_loop_test(tc, device_copy_fails_and_recovers, 0, 3);
	tcase_add_loop_test(tc, planner_ends_on_lost_device_and_copies_on_no_memory, 0, 3);
	tcase_add_test(tc, plans_parse_and_refuse_nonsense);
	tcase_add_test(tc, environment_plan_applies_to_opened_backends);
	suite_add_tcase(s, tc);
	SRunner *runner = srunner_create(s);
	// No fork: the faults seen are counted across the cases, and printed.
	srunner_set_fork_status(runner, CK_NOFORK);
	srunner_run_all(runner, CK_NORMAL);
	const int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	std::printf("fault injection: %llu faults injected (6 steps x device-lost, out-of-memory, "
		    "timeout), each reported with its kind, runs recovered, no fd leaked\n",
		    static_cast<unsigned long long>(g_faultsSeen));
	return failed ? 1 : 0;
}
