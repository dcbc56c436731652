// Test fixture: the OpenCL backend tests' helpers (open, byte pattern, round trip, allocate).
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/layout.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <vector>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test {

inline BackendRef openOwn()
{
	auto opened = openBackend(BackendKind::OpenCl);
	ck_assert_ok(opened);
	return *opened;
}

inline uint8_t patternAt(uint32_t plane, uint32_t y, uint64_t x, uint32_t seed)
{
	return static_cast<uint8_t>(plane * 131 + y * 31 + x * 7 + seed + (y >> 3));
}

inline const PixelFormatInfo &infoOf(PixelFormat format)
{
	return *pixelFormatInfo(format).value();
}

// Writes the pattern into every row's pixel bytes (not the padding) of a mapping.
inline void writePattern(const CpuMapping &mapping, PixelFormat format, uint32_t width,
			 uint32_t height, uint32_t seed)
{
	const PixelFormatInfo &info = infoOf(format);
	ck_assert_uint_eq(mapping.numPlanes(), info.numPlanes);
	for (uint32_t p = 0; p < info.numPlanes; ++p)
		for (uint32_t y = 0; y < info.planes[p].rows(height); ++y) {
			uint8_t *row = mapping.data(p) + uint64_t(y) * mapping.stride(p);
			for (uint64_t x = 0; x < info.planes[p].rowBytes(width); ++x)
				row[x] = patternAt(p, y, x, seed);
		}
}

inline void checkPattern(const CpuMapping &mapping, PixelFormat format, uint32_t width,
			 uint32_t height, uint32_t seed)
{
	const PixelFormatInfo &info = infoOf(format);
	ck_assert_uint_eq(mapping.numPlanes(), info.numPlanes);
	for (uint32_t p = 0; p < info.numPlanes; ++p)
		for (uint32_t y = 0; y < info.planes[p].rows(height); ++y) {
			const uint8_t *row = mapping.data(p) + uint64_t(y) * mapping.stride(p);
			for (uint64_t x = 0; x < info.planes[p].rowBytes(width); ++x)
				if (row[x] != patternAt(p, y, x, seed))
					ck_abort_msg(
						"%s %ux%u plane %u row %u byte %llu: 0x%x, expected 0x%x",
						pixelFormatName(format), width, height, p, y,
						static_cast<unsigned long long>(x), row[x],
						patternAt(p, y, x, seed));
		}
}

// Writes the pattern through map(Write) and reads it back through map(Read).
inline void roundTrip(Backend &backend, const Frame &frame, uint32_t seed)
{
	{
		auto mapped = backend.map(frame, MapAccess::Write, kDefaultWaitTimeout);
		ck_assert_ok(mapped);
		writePattern(*mapped, frame.format(), frame.width(), frame.height(), seed);
		ck_assert_ok(mapped->unmap());
	}
	auto mapped = backend.map(frame, MapAccess::Read, kDefaultWaitTimeout);
	ck_assert_ok(mapped);
	checkPattern(*mapped, frame.format(), frame.width(), frame.height(), seed);
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
