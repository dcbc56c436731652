// Test fixture: the OpenCL backend tests' helpers (open, pattern round trip, allocate, host
// memory).
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/layout.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <vector>

// Last: Check defines a fail() macro that breaks standard headers included after it.
// clang-format off
#include "frame_pattern.h"
#include "check_helpers.h"
// clang-format on

namespace gpuhandle::test {

inline BackendRef openOwn()
{
	auto opened = openBackend(BackendKind::OpenCl);
	ck_assert_ok(opened);
	return *opened;
}

inline const PixelFormatInfo &infoOf(PixelFormat format)
{
	return *pixelFormatInfo(format).value();
}

// Writes frame_pattern.h's pattern through map(Write) and reads it back through map(Read).
// Writes the pattern and reads it back; "" when every byte came back, else what failed.
inline std::string roundTrip(Backend &backend, const Frame &frame, uint32_t seed)
{
	std::string failed = writePattern(backend, frame, seed);
	return failed.empty() ? checkPattern(backend, frame, seed) : failed;
}

inline Frame allocateOk(Backend &backend, PixelFormat format, uint32_t width, uint32_t height,
			FrameStorage storage = FrameStorage::Buffer, uint32_t strideAlign = 0)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	request.storage = storage;
	request.strideAlign = strideAlign;
	auto frame = backend.allocate(request);
	ck_assert_ok(frame);
	return *frame;
}

// Host memory whose anchor counts its releases.
struct HostBlock {
	std::vector<void *> blocks{};
	std::atomic<int> released{ 0 };
	~HostBlock()
	{
		for (void *block : blocks)
			std::free(block);
	}
	void *add(uint64_t size)
	{
		blocks.push_back(std::aligned_alloc(64, (size + 63) / 64 * 64));
		return blocks.back();
	}
	KeepAliveRef anchor()
	{
		return makeKeepAlive(
			[](void *data) { static_cast<HostBlock *>(data)->released.fetch_add(1); },
			this);
	}
};

// A CpuBytes frame over host memory with a tight layout.
inline Frame cpuBytesFrame(HostBlock &host, PixelFormat format, uint32_t width, uint32_t height)
{
	auto layout = computeLayout(format, width, height);
	ck_assert_ok(layout);
	auto bytes = CpuBytes::create({ host.add(layout->size), layout->size, host.anchor() });
	ck_assert_ok(bytes);
	FrameDesc desc;
	desc.format = format;
	desc.width = width;
	desc.height = height;
	desc.numResources = 1;
	desc.resources[0] = *bytes;
	desc.numPlanes = layout->numPlanes;
	for (uint32_t i = 0; i < layout->numPlanes; ++i)
		desc.planes[i] =
			PlaneView{ 0, 0, layout->planes[i].offset, layout->planes[i].stride };
	auto frame = Frame::create(std::move(desc));
	ck_assert_ok(frame);
	return *frame;
}

} // namespace gpuhandle::test
