// Private pieces of the layout computation shared by the policy implementations.
#pragma once

#include <gpuhandle/layout.h>

#include <optional>

namespace gpuhandle::detail {

inline constexpr uint64_t roundUp(uint64_t value, uint64_t multiple)
{
	return (value + multiple - 1) / multiple * multiple;
}

// Fills `layout` (format, width, height, numPlanes already set) as GstVideoInfo does.
// Returns an error sentence when the sizes overflow.
std::optional<Error> gstreamerLayout(const PixelFormatInfo &info, FrameLayout &layout);

// Sets offsets and the total size for planes that follow each other; checks for overflow.
std::optional<Error> packPlanes(FrameLayout &layout);

} // namespace gpuhandle::detail
