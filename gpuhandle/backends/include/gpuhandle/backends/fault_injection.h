// Fault injection: a backend that fails chosen steps on purpose, to prove that every fault
// reaches the application as an error of the right kind and that nothing leaks or hangs.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/export.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// The steps of a backend that can be made to fail. Wait: the waits a backend does for a frame's
// acquire point (in map and copyFrame), failing before the step itself runs.
enum class FaultStep : uint8_t { Allocate, Export, Import, Map, Copy, Wait };
// Number of FaultStep values.
inline constexpr uint32_t kFaultStepCount = 6;
// A step's lowercase name, as a plan spells it ("allocate", "map"); "unknown" for a value
// outside FaultStep. Static storage: never freed.
GPUHANDLE_INTEROP_API const char *faultStepName(FaultStep step) noexcept;

// Which calls of a backend fail, and how (parseFaultPlan() reads one from text).
struct FaultPlan {
	// The step whose calls fail.
	FaultStep step = FaultStep::Allocate;
	uint32_t afterCalls = 0; // calls of `step` that succeed before the first fault
	uint32_t count = 1;      // calls that fail then (0: every later call)
	// What they fail with (DeviceLost, OutOfMemory, Timeout, or any other code)
	ErrorCode code = ErrorCode::DeviceLost;
	std::optional<BackendKind> only{}; // the backend kind faults apply to (all when unset)
	// Member-wise.
	friend bool operator==(const FaultPlan &, const FaultPlan &) = default;
};

// `backend` with `plan` applied: every call passes through except the planned ones, which fail
// with plan.code and a message saying the fault was injected. Frames it returns are the inner
// backend's. Calls are counted across every live backend wrapped with an equal plan (and, for
// the environment's plan, for the whole process), so that a pipeline that restarts (and reopens
// its backends) sees the fault once, not once per open.
GPUHANDLE_INTEROP_API BackendRef injectFaults(BackendRef backend, const FaultPlan &plan);

// "step:after[:count]:code[:backend]" as in GPUHANDLE_FAULT_INJECTION, e.g. "map:20:device-lost"
// or "allocate:5:2:out-of-memory:fd" (codes: errorCodeName's spelling, dashes or underscores;
// backends: backendKindName's). InvalidArgument naming the part that is wrong.
GPUHANDLE_INTEROP_API Result<FaultPlan> parseFaultPlan(std::string_view text);

// Test aid: when the environment variable GPUHANDLE_FAULT_INJECTION holds a plan, openBackend()
// wraps every backend it opens (of the plan's kind) with it, process-wide; a malformed value
// makes openBackend() fail with the parse error. Faults injected so far, process-wide:
GPUHANDLE_INTEROP_API uint64_t faultsInjected() noexcept;

} // namespace gpuhandle
