// Test helper: writes a position-dependent byte pattern into a frame's rows and checks it back.
#pragma once

#include <gpuhandle/backends/backend.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace gpuhandle::test {

inline uint8_t patternByte(uint32_t seed, uint32_t plane, uint32_t row, uint64_t col)
{
	return static_cast<uint8_t>(seed * 29 + plane * 131 + row * 7 + col * 13 + (col >> 8));
}

// Writes the pattern into every pixel byte of every plane (padding is left alone). Empty on
// success, else what failed.
inline std::string writePattern(Backend &backend, const Frame &frame, uint32_t seed)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	Result<CpuMapping> mapped = backend.map(frame, MapAccess::Write, std::chrono::seconds(5));
	if (!mapped.ok())
		return "map for writing: " + mapped.error().message();
	for (uint32_t p = 0; p < info.numPlanes; ++p) {
		const uint64_t rowBytes = info.planes[p].rowBytes(frame.width());
		for (uint32_t y = 0; y < info.planes[p].rows(frame.height()); ++y) {
			uint8_t *row = mapped->data(p) + static_cast<uint64_t>(y) * mapped->stride(p);
			for (uint64_t x = 0; x < rowBytes; ++x)
				row[x] = patternByte(seed, p, y, x);
		}
	}
	Status unmapped = mapped->unmap();
	return unmapped.ok() ? std::string() : "unmap after writing: " + unmapped.error().message();
}

// Checks every pixel byte; empty when all match, else the first difference.
inline std::string checkPattern(Backend &backend, const Frame &frame, uint32_t seed)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	Result<CpuMapping> mapped = backend.map(frame, MapAccess::Read, std::chrono::seconds(5));
	if (!mapped.ok())
		return "map for reading: " + mapped.error().message();
	for (uint32_t p = 0; p < info.numPlanes; ++p) {
		const uint64_t rowBytes = info.planes[p].rowBytes(frame.width());
		for (uint32_t y = 0; y < info.planes[p].rows(frame.height()); ++y) {
			const uint8_t *row = mapped->data(p) + static_cast<uint64_t>(y) * mapped->stride(p);
			for (uint64_t x = 0; x < rowBytes; ++x) {
				if (row[x] != patternByte(seed, p, y, x)) {
					char where[160];
					std::snprintf(where, sizeof where, "plane %u row %u byte %llu: %u, expected %u", p, y,
						      static_cast<unsigned long long>(x), row[x], patternByte(seed, p, y, x));
					return where;
				}
			}
		}
	}
	return {};
}

} // namespace gpuhandle::test
