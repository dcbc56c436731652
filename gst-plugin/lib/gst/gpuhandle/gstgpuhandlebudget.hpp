// The memory budget gpuhandle's GStreamer elements share: one per process, capped by a property.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/memory_budget.h>
#include <gpuhandle/result.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// The budget a DeviceSet made without one charges its backends' allocations to: one for the
// whole process (MemoryBudget counts per backend kind, and a DeviceSet opens one device per
// kind), uncapped until a caller sets caps, e.g. an element's `memory-budget` property. Pools
// of gpuhandle frames (bufferPoolNew) register with it and give idle frames back under pressure.
GST_GPUHANDLE_API std::shared_ptr<MemoryBudget> processBudget();

// What a fraction of "the device's memory" counts from: the device's dedicated memory, or, for a
// device that shares the host's memory (integrated, software, the CPU and fd backends), the
// host's RAM.
GST_GPUHANDLE_API uint64_t budgetBaseBytes(const Backend &backend);

// A hard cap from a property's text: a byte count with an optional binary unit ("536870912",
// "512M", "512MiB", "1.5G"; K, M, G, T, with or without "iB"/"B"), or a percentage of
// `baseBytes` ("25%", "12.5%"). "" and "none" mean no cap (nullopt). Errors: InvalidArgument
// (field "memory-budget") naming the text and what was expected.
GST_GPUHANDLE_API Result<std::optional<uint64_t>> parseBudgetCap(std::string_view text,
								 uint64_t baseBytes);

// Adds `budget`'s figures for `kind` to `stats` (guint64 fields): budget-bytes (reserved now),
// budget-peak-bytes (the most at once) and budget-cap-bytes (the hard cap; 0 when none).
GST_GPUHANDLE_API void addBudgetStats(GstStructure *stats, const MemoryBudget &budget,
				      BackendKind kind);

} // namespace gst
} // namespace gpuhandle
