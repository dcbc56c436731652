// Pooled NV12 frames over memfds, stamped with their number, for the frame-transport tests.
#pragma once

#include <gpuhandle/fd_resources.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/layout.h>

#include "fd_count.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace gpuhandle::test {

constexpr uint32_t kFrameW = 320, kFrameH = 180;

// A unique socket path per test process.
inline std::string socketPath(const char *name)
{
	char path[108];
	std::snprintf(path, sizeof path, "/tmp/gpuhandle-test-%s-%d.sock", name, getpid());
	return path;
}

// One pooled buffer: a memfd mapped here, a frame over it, and the gate its consumers signal.
struct PoolSlot {
	uint8_t *bytes = nullptr;
	uint64_t size = 0;
	ReleaseGate gate;
	std::optional<Frame> frame;
};

// `count` NV12 buffers, each with a release gate that is re-armed on reuse.
inline std::vector<PoolSlot> makePool(size_t count)
{
	std::vector<PoolSlot> pool(count);
	const FrameLayout layout = computeLayout(PixelFormat::NV12, kFrameW, kFrameH).value();
	for (PoolSlot &slot : pool) {
		UniqueFd fd = makeMemfd(layout.size, true);
		slot.size = layout.size;
		void *map =
			mmap(nullptr, layout.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
		slot.bytes = static_cast<uint8_t *>(map);
		slot.gate = ReleaseGate::create().value();
		FrameDesc d;
		d.format = PixelFormat::NV12;
		d.width = kFrameW;
		d.height = kFrameH;
		d.numResources = 1;
		d.resources[0] =
			ShmFd::create({ .fd = SharedFd(std::move(fd)), .size = layout.size })
				.value();
		d.numPlanes = 2;
		for (uint32_t p = 0; p < 2; ++p)
			d.planes[p] = { 0, 0, layout.planes[p].offset, layout.planes[p].stride };
		d.release = slot.gate;
		slot.frame = Frame::create(std::move(d)).value();
	}
	return pool;
}

inline void freePool(std::vector<PoolSlot> &pool)
{
	for (PoolSlot &slot : pool)
		munmap(slot.bytes, slot.size);
	pool.clear();
}

// Writes frame number `n` into the luma plane's first and last bytes.
inline void stamp(PoolSlot &slot, uint64_t n)
{
	std::memcpy(slot.bytes, &n, sizeof n);
	std::memcpy(slot.bytes + slot.size - sizeof n, &n, sizeof n);
}

// The number a received frame was stamped with (both ends must agree), or ~0 when not.
inline uint64_t readStamp(const Frame &frame)
{
	const ShmFd *shm = frame.resource(0).get<ShmFd>();
	if (!shm)
		return ~uint64_t(0);
	const uint64_t size = shm->desc().size;
	void *map = mmap(nullptr, size, PROT_READ, MAP_SHARED, shm->desc().fd.get(), 0);
	if (map == MAP_FAILED)
		return ~uint64_t(0);
	uint64_t first, last;
	std::memcpy(&first, map, sizeof first);
	std::memcpy(&last, static_cast<uint8_t *>(map) + size - sizeof last, sizeof last);
	munmap(map, size);
	return first == last ? first : ~uint64_t(0);
}

} // namespace gpuhandle::test
