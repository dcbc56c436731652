// Colorimetry to and from GStreamer's GstVideoColorimetry, FFmpeg's AVColor* and Vulkan's YCbCr
// model.
#pragma once

#include <gpuhandle/colorimetry.h>
#include <gpuhandle/export.h>
#include <gpuhandle/result.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// The four enums of a GstVideoColorimetry, as numbers (GstVideoColorRange, GstVideoColorMatrix,
// GstVideoTransferFunction, GstVideoColorPrimaries).
struct GstColorimetry {
	uint32_t range = 0;
	uint32_t matrix = 0;
	uint32_t transfer = 0;
	uint32_t primaries = 0;
	friend constexpr bool operator==(const GstColorimetry &, const GstColorimetry &) = default;
};
// NotSupported when GStreamer has no value for a field (say, ICtCp matrix).
GPUHANDLE_API Result<GstColorimetry> toGstColorimetry(const Colorimetry &colorimetry);
// NotSupported for GStreamer values H.273 has no code for (GAMMA18, ADOBERGB ...).
GPUHANDLE_API Result<Colorimetry> fromGstColorimetry(const GstColorimetry &gst);

// AVColorRange, AVColorSpace, AVColorPrimaries, AVColorTransferCharacteristic.
struct AvColor {
	uint32_t range = 0;
	uint32_t space = 2;     // AVCOL_SPC_UNSPECIFIED
	uint32_t primaries = 2; // AVCOL_PRI_UNSPECIFIED
	uint32_t transfer = 2;  // AVCOL_TRC_UNSPECIFIED
	friend constexpr bool operator==(const AvColor &, const AvColor &) = default;
};
GPUHANDLE_API Result<AvColor> toAvColor(const Colorimetry &colorimetry);
GPUHANDLE_API Result<Colorimetry> fromAvColor(const AvColor &av);

// VkSamplerYcbcrModelConversion and VkSamplerYcbcrRange for a sampler that converts to RGB.
struct VkYcbcr {
	uint32_t model = 0;
	uint32_t range = 0;
	friend constexpr bool operator==(const VkYcbcr &, const VkYcbcr &) = default;
};
// NotSupported for matrices Vulkan's samplers cannot convert (SMPTE 240M, YCgCo, ICtCp ...).
GPUHANDLE_API Result<VkYcbcr> toVkYcbcr(const Colorimetry &colorimetry);

} // namespace gpuhandle
