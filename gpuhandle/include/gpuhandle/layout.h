// Frame layouts: plane sizes, strides, offsets and totals under the libraries' alignment rules.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/result.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace GPUHANDLE_API gpuhandle {

// The byte just past a plane: offset + stride x (rows - 1) + rowBytes (the last row needs only its
// own bytes). Nullopt when rows is 0 or the sum passes 2^64: geometry checks compare the end with
// an object's size, and wrapped-around arithmetic must not pass them.
constexpr std::optional<uint64_t> planeEnd(uint64_t offset, uint64_t stride, uint32_t rows,
					   uint64_t rowBytes) noexcept
{
	uint64_t end = 0;
	if (rows == 0 || __builtin_mul_overflow(stride, uint64_t{ rows - 1 }, &end) ||
	    __builtin_add_overflow(end, offset, &end) ||
	    __builtin_add_overflow(end, rowBytes, &end))
		return std::nullopt;
	return end;
}

// Whose rules computeLayout() follows for strides, plane offsets and padding, so that a layout
// matches the buffers that library allocates or expects.
enum class LayoutPolicy : uint8_t {
	Tight,       // strides hold exactly a row; planes follow each other
	GStreamer,   // what gst_video_info_set_format() computes (GstVideoInfo offsets and strides)
	FFmpeg,      // what av_image_fill_arrays() / av_image_get_buffer_size() compute for `align`
	StrideAlign, // every stride rounded up to `align` bytes; planes follow each other
};

// Where one plane lies in a frame's buffer.
struct PlaneLayout {
	uint32_t width = 0;  // samples per row of this plane (after subsampling)
	uint32_t height = 0; // rows of this plane
	uint32_t stride = 0; // bytes from one row to the next
	uint64_t offset = 0; // bytes from the start of the buffer
	uint64_t size = 0;   // bytes this plane spans (stride * rows, as the policy counts them)
};

// A frame's buffer: every plane of the format, in the format's plane order, and the total.
struct FrameLayout {
	PixelFormat format = PixelFormat::Unknown; // the format laid out
	uint32_t width = 0;                        // frame width in pixels
	uint32_t height = 0;                       // frame height in pixels
	uint32_t numPlanes = 0;                    // the format's plane count, 1..4
	// The first numPlanes are set; the rest stay zero.
	std::array<PlaneLayout, 4> planes{};
	uint64_t size = 0; // bytes of the whole buffer
};

// The layout of a width x height frame. `align` is FFmpeg's align (1 = none) for FFmpeg and the
// stride alignment for StrideAlign (both a power of two, at most 4096); it is ignored otherwise.
// Errors: unknown format, zero size, a non-power-of-two align, sizes that overflow.
GPUHANDLE_API Result<FrameLayout> computeLayout(PixelFormat format, uint32_t width, uint32_t height,
						LayoutPolicy policy = LayoutPolicy::Tight,
						uint32_t align = 1);

// The layout of a frame whose strides the producer chose (planes follow each other in one
// buffer). Errors as computeLayout, plus a stride smaller than its plane's row.
GPUHANDLE_API Result<FrameLayout> layoutWithStrides(PixelFormat format, uint32_t width,
						    uint32_t height,
						    std::span<const uint32_t> strides);

// Bytes a GPU texture of this format takes: every plane at its storage format, `layers` array
// layers, the whole chain of `mipLevels` levels. The one number budget reservations use.
GPUHANDLE_API Result<uint64_t> estimateTextureBytes(PixelFormat format, uint32_t width,
						    uint32_t height, uint32_t layers = 1,
						    uint32_t mipLevels = 1);

// "tight", "gstreamer", "ffmpeg", "stride-align"; "unknown" for a value outside the enum.
GPUHANDLE_API const char *layoutPolicyName(LayoutPolicy policy) noexcept;

} // namespace gpuhandle
