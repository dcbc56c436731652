// Plane geometry of the common DRM fourccs, for validating DMA-BUF layouts (private).
#pragma once

#include <cstdint>
#include <optional>

namespace gpuhandle::detail {

struct DrmPlaneGeometry {
	uint8_t blockBytes; // bytes of one block (a pixel, or a macropixel for packed 4:2:2)
	uint8_t blockWidth; // pixels of the plane in one block
	uint8_t hsub;       // horizontal subsampling of the plane
	uint8_t vsub;       // vertical subsampling of the plane
};

struct DrmFormatGeometry {
	uint32_t fourcc;
	uint8_t numPlanes;
	DrmPlaneGeometry planes[3];

	uint64_t rowBytes(uint32_t plane, uint32_t width) const;
	uint32_t planeHeight(uint32_t plane, uint32_t height) const;
};

// The geometry of `fourcc` when it is one of the linear layouts gpuhandle knows.
std::optional<DrmFormatGeometry> drmFormatGeometry(uint32_t fourcc);

} // namespace gpuhandle::detail
