// Benchmark 5 (fence wake-up): the measuring harness and the GLib loop every source case uses.
#pragma once

#include <gpuhandle/sync_point.h>
#include <gpuhandle/waiter_thread.h>

#include "bench_common.h"

#include <atomic>
#include <functional>
#include <glib.h>
#include <string>
#include <thread>
#include <vector>

namespace gpuhandle::bench {

// How long the signaller waits after the waiter is about to block, so that it really sleeps
// in the kernel (or in the loop's poll) when the signal comes.
inline constexpr auto kPark = std::chrono::microseconds(50);
inline constexpr auto kWaitBudget = std::chrono::seconds(5);

// Microseconds from signal(i) to the waiter running, one sample per i: a waiter thread calls
// arm(i) was done by this thread first, then the waiter blocks in wait(i) (false: failed).
std::vector<double> measureBlocking(int n, const std::function<void(int)> &arm,
				    const std::function<bool(int)> &wait,
				    const std::function<void(int)> &signal, int &failures);

// Callback waits: arm(i, stamp) starts an asynchronous wait whose callback calls stamp(ok);
// signal(i) signals it; the sample is the time from signal to stamp.
using Stamp = std::function<void(bool ok)>;
std::vector<double> measureCallback(int n, const std::function<void(int, Stamp)> &arm,
				    const std::function<void(int)> &signal, int &failures);

// Runs every variant for `n` samples in all, in rounds of a few samples each, so that a burst of
// other load (builds on the same cores) lands on all variants alike. A variant gets `count`
// and appends that many samples.
using Variant = std::function<void(int count)>;
void interleave(int n, const std::vector<Variant> &variants);
inline void append(std::vector<double> &to, const std::vector<double> &more)
{
	to.insert(to.end(), more.begin(), more.end());
}

// A GMainLoop on its own thread; attach() hands it a source (thread-safe).
class LoopThread
{
public:
	LoopThread();
	~LoopThread();
	LoopThread(const LoopThread &) = delete;
	LoopThread &operator=(const LoopThread &) = delete;
	// Attaches gpuhandle::makeSyncSource(point) whose callback calls stamp.
	void attachSyncSource(SyncPoint point, Stamp stamp);

private:
	GMainContext *context_;
	GMainLoop *loop_;
	std::thread thread_;
};

// Adds the rows of one fence kind: raw baseline, gpuhandle blocking (target 1.5x), async and
// GSource (no target). Empty vectors are skipped.
struct WakeFigures {
	std::vector<double> raw, blocking, async, source;
	std::string rawWhat;
	std::string note{};
	// Issue 21 sets one for the Vulkan timeline's async and GSource rows only; 0: none.
	double asyncTarget = 0;
};
void reportWake(Report &out, const std::string &kind, const WakeFigures &f);

// The GPU kinds (fences_gpu.cpp): each adds its rows or prints why it is skipped.
void benchVulkan(Report &out, int samples, WaiterThread &thread, LoopThread &loop);
void benchGl(Report &out, int samples, WaiterThread &thread, LoopThread &loop);

} // namespace gpuhandle::bench
