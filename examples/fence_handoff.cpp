// Example: frames handed to another thread before their pixels are written, kept safe by fences.
//
// What it shows: a producer with a pool of two pixel buffers hands each Frame to a consumer
// thread *at once* and writes the pixels afterwards (as a GPU would, asynchronously). Two fences
// make that safe:
// - the acquire point (a CpuFence here; a Vulkan semaphore or a GLsync on a GPU) says "the pixels
//   are written": the consumer waits on it before it reads;
// - the release gate says "I no longer read this memory": the consumer signals it when done, and
//   the producer waits on gate.released() before it writes that pool slot again.
// Why: without the acquire wait the consumer reads half-written pixels; without the release wait
// the producer overwrites a picture still being read. Every wait is bounded.
// What to look at: main()'s loop (producer) and consume() (consumer); every pixel is checked.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/frame.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kWidth = 640, kHeight = 360; // one RGBA plane, 4 bytes a pixel
constexpr uint32_t kStride = kWidth * 4;
constexpr int kFrames = 20;

// A minimal blocking queue of frames; nullopt ends the stream.
class Queue
{
public:
	void push(std::optional<Frame> frame)
	{
		std::lock_guard<std::mutex> lock(mutex_);
		items_.push_back(std::move(frame));
		ready_.notify_one();
	}
	std::optional<Frame> pop()
	{
		std::unique_lock<std::mutex> lock(mutex_);
		ready_.wait(lock, [this] { return !items_.empty(); });
		std::optional<Frame> frame = std::move(items_.front());
		items_.pop_front();
		return frame;
	}

private:
	std::mutex mutex_;
	std::condition_variable ready_;
	std::deque<std::optional<Frame>> items_;
};

// Consumer: wait for the pixels, check them, then give the memory back through the release gate.
void consume(Queue &queue, int &good, int &bad)
{
	for (int n = 0; std::optional<Frame> frame = queue.pop(); ++n) {
		// 1. Bounded wait on the producer's fence (a Timeout error would mean: drop it).
		if (Status ready = frame->acquire().wait(2s); !ready) {
			std::fprintf(stderr, "frame %d: %s\n", n, ready.error().message().c_str());
			++bad;
			continue;
		}
		// 2. Read in place: the frame borrows the producer's memory (no copy was made).
		const CpuPlane &plane = frame->resource(0).get<CpuPlanes>()->desc().planes[0];
		const auto *pixels = static_cast<const uint8_t *>(plane.data);
		bool same = true;
		for (uint32_t i = 0; i < kStride * kHeight; ++i)
			same = same && pixels[i] == static_cast<uint8_t>(n + i);
		++(same ? good : bad);
		// 3. Done reading: the producer may reuse the slot. No GPU work of ours is pending,
		// so no fence is passed (a GPU consumer would pass the fence of its last read).
		if (Status released = frame->release().signal(); !released)
			std::fprintf(stderr, "frame %d: %s\n", n,
				     released.error().message().c_str());
	}
}

} // namespace

int main()
{
	std::array<std::vector<uint8_t>, 2> pool{ std::vector<uint8_t>(kStride * kHeight),
						  std::vector<uint8_t>(kStride * kHeight) };
	std::array<ReleaseGate, 2> inUse{}; // a slot's gate from its last frame; none() when fresh
	Queue queue;
	int good = 0, bad = 0;
	std::thread consumer(consume, std::ref(queue), std::ref(good), std::ref(bad));

	int failures = 0;
	for (int n = 0; n < kFrames; ++n) {
		const size_t slot = static_cast<size_t>(n) % pool.size();
		// Before writing the slot again: has its last consumer let go of it? (bounded)
		if (Status free = inUse[slot].released().wait(2s); !free) {
			std::fprintf(stderr, "slot %zu never came back: %s\n", slot,
				     free.error().message().c_str());
			++failures;
			break;
		}
		// A fresh acquire fence and release gate for this frame.
		Result<std::shared_ptr<CpuFence>> written = CpuFence::create();
		Result<ReleaseGate> gate = ReleaseGate::create();
		CpuPlanesDesc planes;
		planes.numPlanes = 1;
		planes.planes[0] = { pool[slot].data(), kStride, kHeight };
		Result<CpuPlanes> memory = CpuPlanes::create(planes);
		if (!written || !gate || !memory) {
			++failures;
			break;
		}
		Result<Frame> frame = Frame::wrap(PixelFormat::RGBA, kWidth, kHeight, Colorimetry{},
						  Resource(std::move(memory).value()));
		if (!frame) {
			std::fprintf(stderr, "%s\n", frame.error().message().c_str());
			++failures;
			break;
		}
		frame->setAcquire((*written)->point());
		frame->setRelease(*gate);
		inUse[slot] = *gate;

		// Hand the frame over first (copying a Frame allocates nothing) ...
		queue.push(*frame);
		// ... then "render" into it; the consumer is blocked on the fence meanwhile.
		for (uint32_t i = 0; i < kStride * kHeight; ++i)
			pool[slot][i] = static_cast<uint8_t>(n + i);
		(*written)->signal(); // the pixels are complete: wake the consumer
	}
	queue.push(std::nullopt);
	consumer.join();
	// Every gate must have been released: nothing still reads the pool when it goes away.
	for (const ReleaseGate &gate : inUse)
		if (!gate.released().wait(1s))
			++failures;

	std::printf("frames handed over before they were written: %d\n"
		    "read intact after the acquire fence: %d, wrong: %d\n"
		    "pool slots reused only after their release gate: %zu slots for %d frames\n",
		    kFrames, good, bad, pool.size(), kFrames);
	const bool ok = failures == 0 && bad == 0 && good == kFrames;
	std::printf("%s\n", ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
