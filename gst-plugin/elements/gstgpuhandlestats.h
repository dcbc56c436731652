// Path counters shared by the elements and their read-only `stats` property.
#pragma once

#include <gpuhandle/execution_path.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include <gst/gst.h>

namespace gpuhandle::gst {

// Counted from the streaming thread, read from any thread (the `stats` property), so every
// field is atomic; reset when the element goes to READY.
class PathStats
{
public:
	void count(ExecutionPath::Kind path) noexcept;
	void countFenceWait(std::chrono::nanoseconds waited) noexcept;
	void reset() noexcept;
	// A GstStructure named `name` with frames, zero-copy, gpu-copies, cpu-copies, fence-waits
	// (guint64) and wait-time (GstClockTime, nanoseconds). Transfer full.
	GstStructure *toStructure(const char *name) const;

private:
	std::atomic<uint64_t> frames_{ 0 };
	std::atomic<uint64_t> zeroCopy_{ 0 };
	std::atomic<uint64_t> gpuCopies_{ 0 };
	std::atomic<uint64_t> cpuCopies_{ 0 };
	std::atomic<uint64_t> fenceWaits_{ 0 };
	std::atomic<uint64_t> waitNs_{ 0 };
};

// Posts the element's `stats` (its property's structure) as an element message: done as the
// end of a stream passes the element, so that the totals reach whoever reads the bus
// (`gst-launch-1.0 -m` prints them) without polling the property.
void postStats(GstElement *element);

} // namespace gpuhandle::gst
