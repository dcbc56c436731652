// What every benchmark shares: timing, statistics, heap-allocation counts, the results report.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

namespace gpuhandle::bench {

// Command line of every benchmark: `--short` (CI: few iterations, no targets judged) and
// `--json PATH` (the machine-readable summary; default: none).
struct Options {
	bool shortMode = false;
	std::string jsonPath{};
	// Iterations: `full` normally, `brief` in short mode.
	int iterations(int full, int brief) const { return shortMode ? brief : full; }
};
Options parseOptions(int argc, char **argv);

using Clock = std::chrono::steady_clock;
inline double nsSince(Clock::time_point start)
{
	return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Nanoseconds per call of `body` over `n` calls (after `n / 10 + 1` warm-up calls).
template<typename F>
double nsPerCall(int n, F &&body)
{
	for (int i = 0; i < n / 10 + 1; i++)
		body();
	const auto start = Clock::now();
	for (int i = 0; i < n; i++)
		body();
	return nsSince(start) / n;
}

struct Stats {
	double median = 0;
	double p99 = 0;
	double min = 0;
	double max = 0;
	double mean = 0;
};
Stats statsOf(std::vector<double> samples);

// Heap allocations (malloc, calloc, realloc, aligned allocations, operator new: all of them go
// through malloc) made by this process since it started, counted by bench_alloc.cpp, which every
// benchmark links. Thread-safe (relaxed atomics).
uint64_t heapAllocations();
// Of those, the ones called from the code of the libraries whose file names contain one of
// `libraries` ("libavutil"), counted from this call until the next: it reads which libraries
// are loaded now (call it after a warm-up loaded them). An empty list tells nothing apart (no
// cost).
void countAllocationsFrom(std::initializer_list<const char *> libraries);
uint64_t foreignHeapAllocations();
// countAllocationsFrom the GPU drivers' libraries (Mesa's, PoCL, LLVM, a vendor's), or nothing.
void countDriverAllocations(bool on);

// The target "no heap allocation per frame in steady state", as a Result's maxValue: a stray
// allocation in a hundred frames (a container reaching a new size) still counts as none.
constexpr double kNoAllocations = 0.01;

// One comparison: gpuhandle's figure against a baseline run side by side, lower is better.
struct Result {
	std::string name;         // "handoff/cpu-planes/3840x2160"
	std::string baseline;     // "gst_buffer_new + gst_memory_new_wrapped + video meta"
	double baselineValue = 0; // in `unit`
	double value = 0;         // gpuhandle's, in `unit`
	std::string unit = "ns";
	// The target as a maximum ratio value / baselineValue (0.5: at most half the baseline);
	// 0 when the result has no target.
	double targetRatio = 0;
	std::string note{}; // what limits it, extra figures (allocations per frame, ...)
	// An absolute target: `value` at most this (kNoAllocations for heap allocations per
	// frame, unit "al", whatever the baseline's); negative when the result has none.
	double maxValue = -1;
	double ratio() const { return baselineValue > 0 ? value / baselineValue : 0; }
	bool met() const
	{
		return (targetRatio <= 0 || ratio() <= targetRatio) &&
		       (maxValue < 0 || value <= maxValue);
	}
};

// Collects results, prints them as a table as they come and writes the JSON summary at the end.
class Report
{
public:
	Report(std::string benchmark, Options options);
	void add(Result result);
	// Prints the last lines and writes options.jsonPath when set. Returns the exit status: 0
	// (targets are reported, never asserted: timing is not a test).
	int finish();

private:
	std::string benchmark_;
	Options options_;
	std::vector<Result> results_{};
};

} // namespace gpuhandle::bench
