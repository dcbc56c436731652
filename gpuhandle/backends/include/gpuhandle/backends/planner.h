// The path planner: moves a Frame into a target backend by the best route and says which it took.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/export.h>
#include <gpuhandle/execution_path.h>

#include <chrono>
#include <optional>
#include <vector>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// How importFrame() may move a frame into its target.
struct ImportOptions {
	// The backend that holds the frame, when it is not CPU or fd memory: it exports the frame
	// (opaque fd, DMA-BUF), maps it for a CPU copy, or runs a GPU copy into the target's
	// memory.
	BackendRef source{};
	// False: only zero-copy routes; a frame that needs a copy fails with NotSupported (a
	// Configuration error) naming what is missing on each route.
	bool allowCopies = true;
	// What the target allocates when it has to copy.
	FrameStorage copyStorage = FrameStorage::Buffer;
	// Bounds every wait the import makes (the acquire point before a copy or CPU wait).
	WaitDuration timeout = kDefaultWaitTimeout;
};

// One route the planner considered, and why it was not taken (no error: taken).
struct RouteAttempt {
	ImportRoute route = ImportRoute::Direct; // the route considered
	std::optional<Error> why{};              // why it was refused or failed; unset: taken
};

// How the frame's acquire point reached the imported frame. Stable numbers.
enum class FenceTransfer : uint8_t {
	None = 0, // the frame had no acquire point
	// The imported frame carries it: the target's queue waits (a fence fd it imports, or its
	// own API's primitive on the same device)
	Carried = 1,
	CpuWait = 2, // the planner waited on the CPU: the target cannot wait on this kind itself
};
// A transfer's stable lowercase name for logs ("carried", "cpu-wait"); "unknown" for a value
// outside FenceTransfer. Static storage: never freed.
GPUHANDLE_INTEROP_API const char *fenceTransferName(FenceTransfer transfer) noexcept;

// What importFrame() made, and how: the route, the copy it needed and how the fence got there.
struct ImportResult {
	Frame frame; // in the target's memory (or the source frame itself, Direct)
	ImportRoute route = ImportRoute::Direct; // the route taken
	ExecutionPath path;                      // ZeroCopy, GpuCopy or CpuCopy with its reason
	// How the frame's acquire point reached `frame` (CpuWait: waited for already).
	FenceTransfer fence = FenceTransfer::None;
	std::chrono::nanoseconds fenceWait{ 0 }; // time spent in a CPU wait
	std::vector<RouteAttempt> tried{};       // every route considered, in order, the last taken
};

// Tries, in order: Direct, OpaqueFd, DmaBuf, HostPointer, then (when copies are allowed)
// GpuCopy and CpuCopy, and returns the first that works. Zero-copy routes pass the frame (or
// the source's export of it) to target.importFrame(); GpuCopy has the source copy into an
// export of a target allocation; CpuCopy maps both sides. Set GPUHANDLE_DEBUG=planner to log
// each attempt to stderr. A route that fails with DeviceLost, Fatal or Timeout ends the plan
// with that error (no other route could succeed, and a copy would hide the fault); other
// failures pass to the next route. Errors: NotSupported listing why every route failed (copies
// forbidden or impossible), Timeout (the acquire wait), DeviceLost/Fatal from a route, and the
// errors of the route tried last.
GPUHANDLE_INTEROP_API Result<ImportResult> importFrame(const Frame &frame, Backend &target,
						       const ImportOptions &options = {});

// Whether an import's error ends it rather than sending the frame another way (DeviceLost,
// Fatal, Timeout): callers with fallbacks of their own (a copy through system memory) take none
// for these either.
GPUHANDLE_INTEROP_API bool endsThePlan(const Error &why) noexcept;

// Copies the pixels of every plane row by row (the rows computeLayout says the format has),
// between mappings of two frames of `format` and size. Errors: FormatMismatch (plane counts),
// NotSupported (an unknown format).
GPUHANDLE_INTEROP_API Status copyMappedPlanes(const CpuMapping &dst, const CpuMapping &src,
					      PixelFormat format, uint32_t width, uint32_t height);

// A CpuPlanes frame over a mapping of `frame` (through `source`, or mapFrame() for CPU and fd
// memory), keeping the mapping alive as the resource's anchor: host memory a HostPointer import
// can use in place. The acquire point was waited for by the mapping.
GPUHANDLE_INTEROP_API Result<Frame> mapAsCpuFrame(const Frame &frame, MapAccess access,
						  const BackendRef &source,
						  WaitDuration timeout = kDefaultWaitTimeout);

} // namespace gpuhandle
