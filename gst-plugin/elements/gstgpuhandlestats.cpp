// Path counters shared by the elements and their read-only `stats` property.
#include "gstgpuhandlestats.h"

namespace gpuhandle::gst {

void PathStats::count(ExecutionPath::Kind path) noexcept
{
	frames_.fetch_add(1, std::memory_order_relaxed);
	switch (path) {
	case ExecutionPath::Kind::ZeroCopy:
		zeroCopy_.fetch_add(1, std::memory_order_relaxed);
		break;
	case ExecutionPath::Kind::GpuCopy:
		gpuCopies_.fetch_add(1, std::memory_order_relaxed);
		break;
	case ExecutionPath::Kind::CpuCopy:
		cpuCopies_.fetch_add(1, std::memory_order_relaxed);
		break;
	case ExecutionPath::Kind::NotRun: break;
	}
}

void PathStats::countFenceWait(std::chrono::nanoseconds waited) noexcept
{
	fenceWaits_.fetch_add(1, std::memory_order_relaxed);
	waitNs_.fetch_add(static_cast<uint64_t>(waited.count()), std::memory_order_relaxed);
}

void PathStats::reset() noexcept
{
	for (auto *counter :
	     { &frames_, &zeroCopy_, &gpuCopies_, &cpuCopies_, &fenceWaits_, &waitNs_ })
		counter->store(0, std::memory_order_relaxed);
}

GstStructure *PathStats::toStructure(const char *name) const
{
	auto get = [](const std::atomic<uint64_t> &counter) -> guint64 {
		return counter.load(std::memory_order_relaxed);
	};
	return gst_structure_new(name, "frames", G_TYPE_UINT64, get(frames_), "zero-copy",
				 G_TYPE_UINT64, get(zeroCopy_), "gpu-copies", G_TYPE_UINT64,
				 get(gpuCopies_), "cpu-copies", G_TYPE_UINT64, get(cpuCopies_),
				 "fence-waits", G_TYPE_UINT64, get(fenceWaits_), "wait-time",
				 G_TYPE_UINT64, get(waitNs_), nullptr);
}

void postStats(GstElement *element)
{
	GstStructure *stats = nullptr;
	g_object_get(element, "stats", &stats, nullptr);
	if (stats)
		gst_element_post_message(element,
					 gst_message_new_element(GST_OBJECT(element), stats));
}

} // namespace gpuhandle::gst
