// ExecutionPath: how a frame actually moved (zero-copy, GPU copy, CPU copy and why), per call.
#pragma once

#include <gpuhandle/export.h>

#include <cstdint>
#include <string_view>

namespace GPUHANDLE_API gpuhandle {

class ExecutionPath
{
public:
	enum class Kind : uint32_t {
		NotRun = 0,   // nothing moved yet (the default for counters)
		ZeroCopy = 1, // the consumer aliases the producer's memory
		GpuCopy = 2,  // a copy on the device, no trip through system memory
		CpuCopy = 3,  // bytes went through system memory
	};

	constexpr ExecutionPath() = default;
	static constexpr ExecutionPath zeroCopy() { return ExecutionPath(Kind::ZeroCopy, ""); }
	// `reason` must have static storage: tests and counters compare it as a string.
	static constexpr ExecutionPath gpuCopy(const char *reason)
	{
		return { Kind::GpuCopy, reason };
	}
	static constexpr ExecutionPath cpuCopy(const char *reason)
	{
		return { Kind::CpuCopy, reason };
	}

	constexpr Kind kind() const { return kind_; }
	constexpr const char *reason() const { return reason_; }
	constexpr bool isCopy() const { return kind_ == Kind::GpuCopy || kind_ == Kind::CpuCopy; }

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

GPUHANDLE_API const char *executionPathKindName(ExecutionPath::Kind kind) noexcept;

} // namespace gpuhandle
