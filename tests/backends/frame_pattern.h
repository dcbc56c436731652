// Test helper: writes a position-dependent byte pattern into a frame's rows and checks it back,
// through a backend's map() or into a mapping already open, returning what failed (or asserting
// with Check through the ...Ok wrappers).
#pragma once

#include <gpuhandle/backends/backend.h>

#include <cstdint>
#include <cstdio>
#include <string>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test {

inline uint8_t patternByte(uint32_t seed, uint32_t plane, uint32_t row, uint64_t col)
{
	return static_cast<uint8_t>(seed * 29 + plane * 131 + row * 7 + col * 13 + (col >> 8));
}

// Empty when `mapping` has the planes of `frame`'s format, else what differs.
inline std::string checkPlaneCount(const CpuMapping &mapping, const Frame &frame)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	if (mapping.numPlanes() == info.numPlanes)
		return {};
	char what[96];
	std::snprintf(what, sizeof what, "%s: the mapping has %u planes, the format %u",
		      pixelFormatName(frame.format()), mapping.numPlanes(), info.numPlanes);
	return what;
}

// Writes the pattern into every pixel byte of every plane of `frame` (padding is left alone),
// each row at rowOf(plane, row) (a uint8_t *).
template<typename RowOf>
void fillRows(const Frame &frame, uint32_t seed, RowOf rowOf)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info.numPlanes; ++p) {
		const uint64_t rowBytes = info.planes[p].rowBytes(frame.width());
		for (uint32_t y = 0; y < info.planes[p].rows(frame.height()); ++y) {
			uint8_t *row = rowOf(p, y);
			for (uint64_t x = 0; x < rowBytes; ++x)
				row[x] = patternByte(seed, p, y, x);
		}
	}
}

// Checks every pixel byte of every plane of `frame`, each row at rowOf(plane, row); empty when
// all match, else the first difference.
template<typename RowOf>
std::string checkRows(const Frame &frame, uint32_t seed, RowOf rowOf)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info.numPlanes; ++p) {
		const uint64_t rowBytes = info.planes[p].rowBytes(frame.width());
		for (uint32_t y = 0; y < info.planes[p].rows(frame.height()); ++y) {
			const uint8_t *row = rowOf(p, y);
			for (uint64_t x = 0; x < rowBytes; ++x) {
				if (row[x] != patternByte(seed, p, y, x)) {
					char where[192];
					std::snprintf(
						where, sizeof where,
						"%s %ux%u plane %u row %u byte %llu: %u, expected %u",
						pixelFormatName(frame.format()), frame.width(),
						frame.height(), p, y,
						static_cast<unsigned long long>(x), row[x],
						patternByte(seed, p, y, x));
					return where;
				}
			}
		}
	}
	return {};
}

// fillRows into an open mapping of `frame`. Empty on success, else what failed.
inline std::string fillPattern(const CpuMapping &mapping, const Frame &frame, uint32_t seed)
{
	std::string planes = checkPlaneCount(mapping, frame);
	if (!planes.empty())
		return planes;
	fillRows(frame, seed, [&](uint32_t p, uint32_t y) {
		return mapping.data(p) + static_cast<uint64_t>(y) * mapping.stride(p);
	});
	return {};
}

// checkRows over an open mapping of `frame`.
inline std::string checkPattern(const CpuMapping &mapping, const Frame &frame, uint32_t seed)
{
	std::string planes = checkPlaneCount(mapping, frame);
	if (!planes.empty())
		return planes;
	return checkRows(frame, seed, [&](uint32_t p, uint32_t y) -> const uint8_t * {
		return mapping.data(p) + static_cast<uint64_t>(y) * mapping.stride(p);
	});
}

// Writes the pattern through backend.map(Write) and unmaps. Empty on success, else what failed.
inline std::string writePattern(Backend &backend, const Frame &frame, uint32_t seed,
				WaitDuration timeout = kDefaultWaitTimeout)
{
	Result<CpuMapping> mapped = backend.map(frame, MapAccess::Write, timeout);
	if (!mapped.ok())
		return "map for writing: " + mapped.error().message();
	std::string filled = fillPattern(*mapped, frame, seed);
	if (!filled.empty())
		return filled;
	Status unmapped = mapped->unmap();
	return unmapped.ok() ? std::string() : "unmap after writing: " + unmapped.error().message();
}

// Checks every pixel byte through backend.map(Read), then unmaps; empty when all match and the
// unmap succeeds, else the first difference (or what failed).
inline std::string checkPattern(Backend &backend, const Frame &frame, uint32_t seed,
				WaitDuration timeout = kDefaultWaitTimeout)
{
	Result<CpuMapping> mapped = backend.map(frame, MapAccess::Read, timeout);
	if (!mapped.ok())
		return "map for reading: " + mapped.error().message();
	std::string checked = checkPattern(*mapped, frame, seed);
	if (!checked.empty())
		return checked;
	Status unmapped = mapped->unmap();
	return unmapped.ok() ? std::string() : "unmap after reading: " + unmapped.error().message();
}

// The same, asserting success with Check (the failure message says what differs).
inline void fillPatternOk(const CpuMapping &mapping, const Frame &frame, uint32_t seed)
{
	const std::string failed = fillPattern(mapping, frame, seed);
	ck_assert_msg(failed.empty(), "fillPattern: %s", failed.c_str());
}

inline void checkPatternOk(const CpuMapping &mapping, const Frame &frame, uint32_t seed)
{
	const std::string failed = checkPattern(mapping, frame, seed);
	ck_assert_msg(failed.empty(), "checkPattern: %s", failed.c_str());
}

inline void writePatternOk(Backend &backend, const Frame &frame, uint32_t seed)
{
	const std::string failed = writePattern(backend, frame, seed);
	ck_assert_msg(failed.empty(), "writePattern: %s", failed.c_str());
}

inline void checkPatternOk(Backend &backend, const Frame &frame, uint32_t seed)
{
	const std::string failed = checkPattern(backend, frame, seed);
	ck_assert_msg(failed.empty(), "checkPattern: %s", failed.c_str());
}

} // namespace gpuhandle::test
