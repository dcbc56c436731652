// Names of ExecutionPath kinds.
#include <gpuhandle/execution_path.h>

namespace gpuhandle {

const char *executionPathKindName(ExecutionPath::Kind kind) noexcept
{
	switch (kind) {
	case ExecutionPath::Kind::NotRun: return "not-run";
	case ExecutionPath::Kind::ZeroCopy: return "zero-copy";
	case ExecutionPath::Kind::GpuCopy: return "gpu-copy";
	case ExecutionPath::Kind::CpuCopy: return "cpu-copy";
	}
	return "unknown";
}

} // namespace gpuhandle
