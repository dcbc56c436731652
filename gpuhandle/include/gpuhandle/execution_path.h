// ExecutionPath: how a frame actually moved (zero-copy, GPU copy, CPU copy and why), per call.
#pragma once

#include <gpuhandle/export.h>

#include <cstdint>
#include <string_view>

namespace GPUHANDLE_API gpuhandle {

// How one call moved a frame (its Kind) and, for a copy, why it could not be zero-copy. A
// small constexpr value: copy it freely.
class ExecutionPath
{
public:
	// Stable numbers: the C API's gpuhandle_execution_path_kind uses the same values.
	enum class Kind : uint32_t {
		NotRun = 0,   // nothing moved yet (the default for counters)
		ZeroCopy = 1, // the consumer aliases the producer's memory
		GpuCopy = 2,  // a copy on the device, no trip through system memory
		CpuCopy = 3,  // bytes went through system memory
	};

	constexpr ExecutionPath() = default;
	// The consumer aliases the producer's memory; the reason is "".
	static constexpr ExecutionPath zeroCopy() { return ExecutionPath(Kind::ZeroCopy, ""); }
	// `reason` must have static storage: tests and counters compare it as a string.
	static constexpr ExecutionPath gpuCopy(const char *reason)
	{
		return { Kind::GpuCopy, reason };
	}
	// A copy through system memory; `reason` (static storage, as for gpuCopy()) says why.
	static constexpr ExecutionPath cpuCopy(const char *reason)
	{
		return { Kind::CpuCopy, reason };
	}

	constexpr Kind kind() const { return kind_; } // NotRun when default-constructed
	// Why it copied; "" when not a copy.
	constexpr const char *reason() const { return reason_; }
	// True for GpuCopy and CpuCopy.
	constexpr bool isCopy() const { return kind_ == Kind::GpuCopy || kind_ == Kind::CpuCopy; }

	// Same kind and equal reason strings (compared by content, not address).
	friend constexpr bool operator==(const ExecutionPath &a, const ExecutionPath &b)
	{
		return a.kind_ == b.kind_ &&
		       std::string_view(a.reason_) == std::string_view(b.reason_);
	}

private:
	constexpr ExecutionPath(Kind kind, const char *reason) : kind_(kind), reason_(reason) {}

	Kind kind_ = Kind::NotRun;
	const char *reason_ = "";
};

// A kind's stable lowercase name for logs ("zero-copy", "cpu-copy"); "unknown" for a value
// outside the Kind enumeration. Static storage: never freed.
GPUHANDLE_API const char *executionPathKindName(ExecutionPath::Kind kind) noexcept;

} // namespace gpuhandle
