// Timing that survives a busy machine: the median of batches, so that one preemption (other
// builds on the same cores) spoils one batch rather than the whole figure.
#pragma once

#include "bench_common.h"

#include <vector>

namespace gpuhandle::bench {

// Nanoseconds per call of `body`: `n` calls (after a warm-up) in `batches` batches; the median
// batch's mean.
template<typename F>
double nsPerCallMedian(int n, F &&body, int batches = 21)
{
	const int perBatch = n / batches + 1;
	for (int i = 0; i < perBatch; i++)
		body();
	std::vector<double> means;
	means.reserve(size_t(batches));
	for (int b = 0; b < batches; b++) {
		const auto start = Clock::now();
		for (int i = 0; i < perBatch; i++)
			body();
		means.push_back(nsSince(start) / perBatch);
	}
	return statsOf(std::move(means)).median;
}

} // namespace gpuhandle::bench
