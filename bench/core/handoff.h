// Benchmark 1 (frame handoff): the pooled frames, the runner and the variants it compares.
#pragma once

#include "bench_common.h"
#include "spsc_queue.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

namespace gpuhandle::bench {

inline constexpr uint32_t kWidth = 3840;
inline constexpr uint32_t kHeight = 2160;
inline constexpr uint64_t kLumaBytes = uint64_t(kWidth) * kHeight;
inline constexpr uint64_t kFrameBytes = kLumaBytes * 3 / 2; // NV12
// Frames in flight: the producer waits for a slot to come back before it reuses it.
inline constexpr uint32_t kSlots = 4;

// The pooled memory every variant hands off: kSlots NV12 frames in CPU memory (never touched,
// so never faulted in) and kSlots memfds of the same size.
struct PoolMemory {
	std::array<uint8_t *, kSlots> cpu{};
	std::array<int, kSlots> memfd{};
	// Empty on success, else why the memory could not be made.
	std::string create();
	~PoolMemory();
};

enum class Memory { Cpu, Memfd };

// Nanoseconds and heap allocations (both threads) per frame in steady state.
struct HandoffFigures {
	double nsPerFrame = 0;
	double medianNs = 0; // over the rounds (nsPerFrame is the fastest round)
	double allocationsPerFrame = 0;
	std::string error{}; // non-empty when a variant could not run
};

// Spins (yielding) until `flag` is set, then clears it: a pool slot coming back.
inline void takeSlot(std::atomic<bool> &flag)
{
	while (!flag.load(std::memory_order_acquire))
		std::this_thread::yield();
	flag.store(false, std::memory_order_relaxed);
}

// Threads: the handoff itself. Inline: produce and consume on one thread, no queue, to show
// each library's own cost without the cross-thread traffic that all variants share.
enum class Run { Threads, Inline };

template<typename Item, typename Produce, typename Consume>
HandoffFigures runInline(int frames, Produce &&produce, Consume &&consume)
{
	// As in the queue: the item is built (copied) from what produce() returns, consumed,
	// dropped.
	auto once = [&](int i) {
		std::optional<Item> item;
		item.emplace(produce(i));
		consume(*item);
	};
	for (int i = 0; i < frames / 10 + 2 * int(kSlots); i++)
		once(i);
	const uint64_t allocations = heapAllocations();
	const auto start = Clock::now();
	for (int i = 0; i < frames; i++)
		once(i);
	const double ns = nsSince(start);
	return { .nsPerFrame = ns / frames,
		 .allocationsPerFrame = double(heapAllocations() - allocations) / frames };
}

// Runs `frames` handoffs (after a warm-up): produce(i) on this thread makes item i (or returns
// what it is copied from), the queue carries it to a consumer thread, consume(Item &) releases
// it there. Figures cover the
// measured frames only; allocations are counted process-wide, on both threads.
template<typename Item, typename Produce, typename Consume>
HandoffFigures runHandoff(Run run, int frames, Produce &&produce, Consume &&consume)
{
	if (run == Run::Inline)
		return runInline<Item>(frames, produce, consume);
	SpscQueue<Item, 8> queue;
	const int warm = frames / 10 + 2 * int(kSlots);
	std::atomic<int> consumed{ 0 };
	std::thread consumer([&] {
		for (int i = 0; i < warm + frames; i++) {
			queue.consume(consume);
			consumed.store(i + 1, std::memory_order_release);
		}
	});
	auto drained = [&](int count) {
		while (consumed.load(std::memory_order_acquire) < count)
			std::this_thread::yield();
	};
	for (int i = 0; i < warm; i++)
		queue.push(produce(i));
	drained(warm);
	const uint64_t allocations = heapAllocations();
	const auto start = Clock::now();
	for (int i = 0; i < frames; i++)
		queue.push(produce(warm + i));
	drained(warm + frames);
	const double ns = nsSince(start);
	const uint64_t allocated = heapAllocations() - allocations;
	consumer.join();
	return { .nsPerFrame = ns / frames, .allocationsPerFrame = double(allocated) / frames };
}

// gpuhandle's variants. Copies: each slot's Frame (fence and gate set) is built once and a copy
// crosses the queue (the main figure). Borrowed: a pointer to the pool's Frame crosses, the
// gate gives it back (no reference counts touched). Unpooled: Frame::wrap, a new CpuFence and
// a new ReleaseGate per frame, to show what the pool saves.
enum class GpuhandleMode { Copies, Borrowed, Unpooled };

// The variants (handoff_gpuhandle.cpp, handoff_baselines.cpp).
HandoffFigures handoffGpuhandle(const PoolMemory &memory, Memory kind, GpuhandleMode mode, Run run,
				int frames);
// The queue and the pool's slot flags alone, no library object: the floor every variant pays.
HandoffFigures handoffFloor(Run run, int frames);
HandoffFigures handoffGstreamer(const PoolMemory &memory, Memory kind, Run run, int frames);
HandoffFigures handoffFfmpeg(const PoolMemory &memory, Memory kind, Run run, int frames);

// Sum of strides the consumers read, so that no compiler drops their reads.
extern std::atomic<uint64_t> g_consumerSink;

} // namespace gpuhandle::bench
