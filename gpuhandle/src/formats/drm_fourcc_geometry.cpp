// Table of DRM fourcc plane layouts (values from drm_fourcc.h; no libdrm needed).
#include "drm_fourcc_geometry.h"

namespace gpuhandle::detail {

namespace {

constexpr uint32_t fourcc(char a, char b, char c, char d)
{
	return static_cast<uint32_t>(a) | static_cast<uint32_t>(b) << 8 |
	       static_cast<uint32_t>(c) << 16 | static_cast<uint32_t>(d) << 24;
}

constexpr DrmPlaneGeometry px(uint8_t bytes)
{
	return { bytes, 1, 1, 1 };
}
constexpr DrmPlaneGeometry sub(uint8_t bytes, uint8_t hsub, uint8_t vsub)
{
	return { bytes, 1, hsub, vsub };
}
constexpr DrmPlaneGeometry macro(uint8_t bytes, uint8_t width)
{
	return { bytes, width, 1, 1 };
}

constexpr DrmFormatGeometry single(uint32_t code, DrmPlaneGeometry p)
{
	return { code, 1, { p, {}, {} } };
}
constexpr DrmFormatGeometry two(uint32_t code, uint8_t bytes, uint8_t hsub, uint8_t vsub)
{
	// Semi-planar: luma, then interleaved chroma with two samples per block.
	return { code, 2, { px(bytes), sub(static_cast<uint8_t>(2 * bytes), hsub, vsub), {} } };
}
constexpr DrmFormatGeometry three(uint32_t code, uint8_t bytes, uint8_t hsub, uint8_t vsub)
{
	return { code, 3, { px(bytes), sub(bytes, hsub, vsub), sub(bytes, hsub, vsub) } };
}

constexpr DrmFormatGeometry kFormats[] = {
	// RGB and single-channel
	single(fourcc('R', '8', ' ', ' '), px(1)),
	single(fourcc('R', '1', '0', ' '), px(2)),
	single(fourcc('R', '1', '2', ' '), px(2)),
	single(fourcc('R', '1', '6', ' '), px(2)),
	single(fourcc('G', 'R', '8', '8'), px(2)),
	single(fourcc('R', 'G', '8', '8'), px(2)),
	single(fourcc('G', 'R', '3', '2'), px(4)),
	single(fourcc('R', 'G', '3', '2'), px(4)),
	single(fourcc('R', 'G', '1', '6'), px(2)),
	single(fourcc('B', 'G', '1', '6'), px(2)),
	single(fourcc('R', 'G', '2', '4'), px(3)),
	single(fourcc('B', 'G', '2', '4'), px(3)),
	single(fourcc('X', 'R', '2', '4'), px(4)),
	single(fourcc('X', 'B', '2', '4'), px(4)),
	single(fourcc('R', 'X', '2', '4'), px(4)),
	single(fourcc('B', 'X', '2', '4'), px(4)),
	single(fourcc('A', 'R', '2', '4'), px(4)),
	single(fourcc('A', 'B', '2', '4'), px(4)),
	single(fourcc('R', 'A', '2', '4'), px(4)),
	single(fourcc('B', 'A', '2', '4'), px(4)),
	single(fourcc('X', 'R', '3', '0'), px(4)),
	single(fourcc('X', 'B', '3', '0'), px(4)),
	single(fourcc('R', 'X', '3', '0'), px(4)),
	single(fourcc('B', 'X', '3', '0'), px(4)),
	single(fourcc('A', 'R', '3', '0'), px(4)),
	single(fourcc('A', 'B', '3', '0'), px(4)),
	single(fourcc('R', 'A', '3', '0'), px(4)),
	single(fourcc('B', 'A', '3', '0'), px(4)),
	single(fourcc('X', 'R', '4', 'H'), px(8)),
	single(fourcc('X', 'B', '4', 'H'), px(8)),
	single(fourcc('A', 'R', '4', 'H'), px(8)),
	single(fourcc('A', 'B', '4', 'H'), px(8)),
	single(fourcc('X', 'R', '4', '8'), px(8)),
	single(fourcc('X', 'B', '4', '8'), px(8)),
	single(fourcc('A', 'R', '4', '8'), px(8)),
	single(fourcc('A', 'B', '4', '8'), px(8)),
	// packed YUV
	single(fourcc('Y', 'U', 'Y', 'V'), macro(4, 2)),
	single(fourcc('Y', 'V', 'Y', 'U'), macro(4, 2)),
	single(fourcc('U', 'Y', 'V', 'Y'), macro(4, 2)),
	single(fourcc('V', 'Y', 'U', 'Y'), macro(4, 2)),
	single(fourcc('Y', '2', '1', '0'), macro(8, 2)),
	single(fourcc('Y', '2', '1', '2'), macro(8, 2)),
	single(fourcc('Y', '2', '1', '6'), macro(8, 2)),
	single(fourcc('A', 'Y', 'U', 'V'), px(4)),
	single(fourcc('X', 'Y', 'U', 'V'), px(4)),
	single(fourcc('V', 'U', '2', '4'), px(3)),
	single(fourcc('Y', '4', '1', '0'), px(4)),
	single(fourcc('Y', '4', '1', '2'), px(8)),
	single(fourcc('Y', '4', '1', '6'), px(8)),
	single(fourcc('X', 'V', '3', '0'), px(4)),
	single(fourcc('X', 'V', '3', '6'), px(8)),
	single(fourcc('X', 'V', '4', '8'), px(8)),
	// semi-planar YUV
	two(fourcc('N', 'V', '1', '2'), 1, 2, 2),
	two(fourcc('N', 'V', '2', '1'), 1, 2, 2),
	two(fourcc('N', 'V', '1', '6'), 1, 2, 1),
	two(fourcc('N', 'V', '6', '1'), 1, 2, 1),
	two(fourcc('N', 'V', '2', '4'), 1, 1, 1),
	two(fourcc('N', 'V', '4', '2'), 1, 1, 1),
	two(fourcc('P', '0', '1', '0'), 2, 2, 2),
	two(fourcc('P', '0', '1', '2'), 2, 2, 2),
	two(fourcc('P', '0', '1', '6'), 2, 2, 2),
	two(fourcc('P', '2', '1', '0'), 2, 2, 1),
	// planar YUV
	three(fourcc('Y', 'U', '1', '2'), 1, 2, 2),
	three(fourcc('Y', 'V', '1', '2'), 1, 2, 2),
	three(fourcc('Y', 'U', '1', '6'), 1, 2, 1),
	three(fourcc('Y', 'V', '1', '6'), 1, 2, 1),
	three(fourcc('Y', 'U', '2', '4'), 1, 1, 1),
	three(fourcc('Y', 'V', '2', '4'), 1, 1, 1),
	three(fourcc('Y', 'U', '1', '1'), 1, 4, 1),
	three(fourcc('Y', 'U', 'V', '9'), 1, 4, 4),
	three(fourcc('Q', '4', '1', '0'), 2, 1, 1),
	three(fourcc('Q', '4', '0', '1'), 2, 1, 1),
};

uint64_t divUp(uint64_t value, uint64_t divisor)
{
	return (value + divisor - 1) / divisor;
}

} // namespace

uint64_t DrmFormatGeometry::rowBytes(uint32_t plane, uint32_t width) const
{
	const DrmPlaneGeometry &p = planes[plane];
	uint64_t samples = divUp(width, p.hsub);
	return divUp(samples, p.blockWidth) * p.blockBytes;
}

uint32_t DrmFormatGeometry::planeHeight(uint32_t plane, uint32_t height) const
{
	return static_cast<uint32_t>(divUp(height, planes[plane].vsub));
}

std::optional<DrmFormatGeometry> drmFormatGeometry(uint32_t code)
{
	for (const DrmFormatGeometry &format : kFormats) {
		if (format.fourcc == code)
			return format;
	}
	return std::nullopt;
}

} // namespace gpuhandle::detail
