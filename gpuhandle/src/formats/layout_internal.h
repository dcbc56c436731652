// Private pieces of the layout computation shared by the policy implementations.
#pragma once

#include <gpuhandle/layout.h>

#include <bit>
#include <optional>

namespace gpuhandle::detail {

// Layout queries are table lookups callers make per frame: these helpers keep them free of
// divisions (the factors are powers of two, save v210's 6-pixel blocks) and of calls.
// x & (x - 1), not std::has_single_bit: without -mpopcnt that is a libgcc call.
inline constexpr bool isPowerOfTwo(uint64_t value)
{
	return value && !(value & (value - 1));
}

inline constexpr uint64_t roundUp(uint64_t value, uint64_t multiple)
{
	if (isPowerOfTwo(multiple))
		return (value + multiple - 1) & ~(multiple - 1);
	return (value + multiple - 1) / multiple * multiple;
}

inline constexpr uint64_t divUp(uint64_t value, uint32_t divisor)
{
	if (isPowerOfTwo(divisor))
		return (value + divisor - 1) >> std::countr_zero(divisor);
	return (value + divisor - 1) / divisor;
}

// PlaneInfo::rowTexels, rowBytes and rows, inline (tests/formats checks they agree).
inline uint64_t planeRowBytes(const PlaneInfo &p, uint32_t width)
{
	uint64_t samples = divUp(width, p.hsub);
	uint64_t blocks = p.pixelsPerBlock == 1 ? samples : divUp(samples, p.pixelsPerBlock);
	return blocks * p.texelsPerBlock * bytesPerTexel(p.format);
}
inline uint32_t planeWidth(const PlaneInfo &p, uint32_t width)
{
	return static_cast<uint32_t>(divUp(width, p.hsub));
}
inline uint32_t planeRows(const PlaneInfo &p, uint32_t height)
{
	return static_cast<uint32_t>(divUp(height, p.vsub));
}

// GStreamer's rules (layout_gstreamer.cpp): the alignment of a row, and whether plane rows are
// counted from the frame height rounded up to even.
uint32_t gstreamerStrideAlignment(const PixelFormatInfo &info);
bool gstreamerCountsEvenHeight(const PixelFormatInfo &info);

// Sets offsets and the total size for planes that follow each other; checks for overflow.
std::optional<Error> packPlanes(FrameLayout &layout);

} // namespace gpuhandle::detail
