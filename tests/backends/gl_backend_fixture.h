// Test fixture: the OpenGL backend tests' helpers (open, byte pattern, map, allocate, formats).
#pragma once

#include <gpuhandle/backends/backend.h>

#include <cstdint>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test {

inline BackendRef openGl()
{
	auto opened = openBackend(BackendKind::OpenGL);
	ck_assert_ok(opened);
	return *opened;
}

inline uint8_t patternAt(uint32_t plane, uint32_t row, uint64_t column, uint8_t seed)
{
	return static_cast<uint8_t>((column * 7 + row * 31 + plane * 101 + seed) ^ (column >> 8));
}

// Writes the pattern into every row of every plane of a mapping (only the row bytes: padding
// between rows is not part of the picture).
inline void writePattern(const CpuMapping &mapping, const Frame &frame, uint8_t seed)
{
	const PixelFormatInfo *info = *pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info->numPlanes; ++p)
		for (uint32_t y = 0; y < info->planes[p].rows(frame.height()); ++y)
			for (uint64_t x = 0; x < info->planes[p].rowBytes(frame.width()); ++x)
				mapping.data(p)[y * uint64_t(mapping.stride(p)) + x] =
					patternAt(p, y, x, seed);
}

inline void expectPattern(const CpuMapping &mapping, const Frame &frame, uint8_t seed)
{
	const PixelFormatInfo *info = *pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info->numPlanes; ++p)
		for (uint32_t y = 0; y < info->planes[p].rows(frame.height()); ++y) {
			const uint8_t *row = mapping.data(p) + y * uint64_t(mapping.stride(p));
			for (uint64_t x = 0; x < info->planes[p].rowBytes(frame.width()); ++x)
				if (row[x] != patternAt(p, y, x, seed))
					ck_abort_msg(
						"%s %ux%u plane %u row %u byte %llu: read 0x%x, wrote 0x%x",
						pixelFormatName(frame.format()), frame.width(),
						frame.height(), p, y,
						static_cast<unsigned long long>(x), row[x],
						patternAt(p, y, x, seed));
		}
}

inline void writeFrame(Backend &backend, const Frame &frame, uint8_t seed)
{
	auto mapping = backend.map(frame, MapAccess::Write, kDefaultWaitTimeout);
	ck_assert_ok(mapping);
	writePattern(*mapping, frame, seed);
	ck_assert_ok(mapping->unmap());
}

inline void expectFrame(Backend &backend, const Frame &frame, uint8_t seed)
{
	auto mapping = backend.map(frame, MapAccess::Read, kDefaultWaitTimeout);
	ck_assert_ok(mapping);
	expectPattern(*mapping, frame, seed);
}

inline Frame allocate(Backend &backend, PixelFormat format, uint32_t width, uint32_t height,
		      FrameStorage storage)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	request.storage = storage;
	auto frame = backend.allocate(request);
	ck_assert_ok(frame);
	return *frame;
}

inline constexpr PixelFormat kFormats[] = { PixelFormat::NV12,   PixelFormat::YUV420P,
					    PixelFormat::P010LE, PixelFormat::RGBA,
					    PixelFormat::V210,   PixelFormat::BGRA };

} // namespace gpuhandle::test
