// Benchmark 1, gpuhandle's side: a pool that builds each slot's Frame, fence and gate once.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/frame.h>

#include "handoff.h"

#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <optional>

namespace gpuhandle::bench {

namespace {

constexpr auto kWaitBudget = std::chrono::seconds(5);

// The pool's memory outlives every frame here; the anchor stands for a real pool's reference
// to one slot. One per slot, each on its own cache lines: the producer's copies and the
// consumer's releases of different slots then touch different lines.
struct alignas(64) PoolAnchor final : KeepAlive {
	char padding[64]{};
};

// Keeps the heap objects of consecutive slots (the fence and gate control blocks, 24 to 200
// bytes each) off each other's cache lines, as in a pool whose slots were made at different
// times; without it, malloc packs them together and two threads working on different slots
// share lines (false sharing that varies from run to run).
struct Spacer {
	std::array<std::unique_ptr<char[]>, 8> blocks;
	void add()
	{
		for (auto &b : blocks)
			if (!b) {
				b = std::make_unique<char[]>(128);
				return;
			}
	}
};

// One resource over slot `i`: two CpuPlanes, or one memfd with the chroma plane at an offset.
gpuhandle::Result<Frame> makeFrame(const PoolMemory &memory, Memory kind, uint32_t i,
				   const KeepAliveRef &anchor)
{
	if (kind == Memory::Cpu) {
		CpuPlanesDesc planes;
		planes.numPlanes = 2;
		planes.planes[0] = { memory.cpu[i], kWidth, kHeight };
		planes.planes[1] = { memory.cpu[i] + kLumaBytes, kWidth, kHeight / 2 };
		planes.anchor = anchor;
		auto resource = CpuPlanes::create(std::move(planes));
		if (!resource.ok())
			return std::move(resource).error();
		return Frame::wrap(PixelFormat::NV12, kWidth, kHeight, Colorimetry{},
				   std::move(*resource));
	}
	UniqueFd fd(fcntl(memory.memfd[i], F_DUPFD_CLOEXEC, 0));
	auto resource =
		ShmFd::create({ .fd = SharedFd(std::move(fd)), .offset = 0, .size = kFrameBytes });
	if (!resource.ok())
		return std::move(resource).error();
	FrameDesc desc;
	desc.format = PixelFormat::NV12;
	desc.width = kWidth;
	desc.height = kHeight;
	desc.numResources = 1;
	desc.resources[0] = std::move(*resource);
	desc.numPlanes = 2;
	desc.planes[0] = { 0, 0, 0, kWidth };
	desc.planes[1] = { 0, 0, kLumaBytes, kWidth };
	return Frame::create(std::move(desc));
}

// A slot: its frame (acquire = `written`, release = `gate`), built once and handed out as copies.
struct Slot {
	std::shared_ptr<CpuFence> written; // the producer's "done writing" fence
	ReleaseGate gate;                  // the consumer's "done reading"
	SyncPoint released;                // gate.released(), asked before reuse
	std::optional<Frame> frame;
};

// Consumer side, the same for both gpuhandle variants: wait for the producer's fence, read,
// release. Failures are counted, never hidden.
void consumeFrame(const Frame &frame, std::atomic<int> &failures)
{
	if (!frame.acquire().wait(kWaitBudget).ok())
		failures.fetch_add(1, std::memory_order_relaxed);
	g_consumerSink.fetch_add(frame.plane(0).stride, std::memory_order_relaxed);
	if (!frame.release().signal().ok())
		failures.fetch_add(1, std::memory_order_relaxed);
}

// Spins (yielding) until the consumer released the slot's previous frame.
bool waitReleased(const SyncPoint &released)
{
	for (;;) {
		auto done = released.isSignaled();
		if (!done.ok())
			return false;
		if (*done)
			return true;
		std::this_thread::yield();
	}
}

HandoffFigures pooledRun(const PoolMemory &memory, Memory kind, bool borrowed, Run run, int frames)
{
	std::array<Slot, kSlots> slots;
	Spacer spacer;
	for (uint32_t i = 0; i < kSlots; i++) {
		Slot &s = slots[i];
		auto fence = CpuFence::create();
		spacer.add();
		auto gate = ReleaseGate::create();
		spacer.add();
		auto frame = makeFrame(memory, kind, i, std::make_shared<PoolAnchor>());
		if (!fence.ok() || !gate.ok() || !frame.ok())
			return { .error = "the pool could not be built: " +
					  (!frame.ok() ? frame.error().message()
						       : std::string("no eventfd")) };
		s.written = std::move(*fence);
		s.gate = std::move(*gate);
		s.released = s.gate.released();
		s.frame = std::move(*frame);
		s.frame->setAcquire(s.written->point());
		s.frame->setRelease(s.gate);
		(void)s.gate.signal(); // free: its first use finds it released
	}
	std::atomic<int> failures{ 0 };
	// Takes slot i's turn: waits for its release, re-arms its fence and gate, signals the
	// fence.
	auto take = [&](int i) -> const Frame & {
		Slot &s = slots[uint32_t(i) % kSlots];
		if (!waitReleased(s.released))
			failures.fetch_add(1, std::memory_order_relaxed);
		(void)s.gate.reset();
		s.written->reset();
		s.written->signal(); // the producer's writes are done
		return *s.frame;
	};
	HandoffFigures figures;
	if (borrowed) {
		figures = runHandoff<const Frame *>(
			run, frames, [&](int i) { return &take(i); },
			[&](const Frame *&frame) { consumeFrame(*frame, failures); });
	} else {
		// The queue copies the frame into its slot: atomic increments only.
		figures = runHandoff<Frame>(
			run, frames, [&](int i) { return std::cref(take(i)); },
			[&](Frame &frame) { consumeFrame(frame, failures); });
	}
	if (failures.load())
		figures.error = std::to_string(failures.load()) + " waits or signals failed";
	return figures;
}

// What a producer writes without a pool: wrap, a new fence and a new gate per frame.
HandoffFigures unpooledRun(const PoolMemory &memory, Memory kind, Run run, int frames)
{
	KeepAliveRef anchor = std::make_shared<PoolAnchor>();
	std::array<SyncPoint, kSlots> released{};
	std::atomic<int> failures{ 0 };
	auto produce = [&](int i) {
		const uint32_t slot = uint32_t(i) % kSlots;
		if (!waitReleased(released[slot]))
			failures.fetch_add(1, std::memory_order_relaxed);
		auto frame = makeFrame(memory, kind, slot, anchor);
		auto fence = CpuFence::create();
		auto gate = ReleaseGate::create();
		if (!frame.ok() || !fence.ok() || !gate.ok()) {
			failures.fetch_add(1, std::memory_order_relaxed);
			// Cannot go on without a frame; the counts would be meaningless.
			std::abort();
		}
		frame->setAcquire((*fence)->point());
		frame->setRelease(*gate);
		released[slot] = gate->released();
		(*fence)->signal();
		return std::move(*frame);
	};
	auto consume = [&](Frame &frame) { consumeFrame(frame, failures); };
	HandoffFigures figures = runHandoff<Frame>(run, frames, produce, consume);
	if (failures.load())
		figures.error = std::to_string(failures.load()) + " waits or signals failed";
	return figures;
}

} // namespace

HandoffFigures handoffGpuhandle(const PoolMemory &memory, Memory kind, GpuhandleMode mode, Run run,
				int frames)
{
	if (mode == GpuhandleMode::Unpooled)
		return unpooledRun(memory, kind, run, frames);
	return pooledRun(memory, kind, mode == GpuhandleMode::Borrowed, run, frames);
}

} // namespace gpuhandle::bench
