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
	uint32_t range = 0;     // GstVideoColorRange (0: UNKNOWN)
	uint32_t matrix = 0;    // GstVideoColorMatrix (0: UNKNOWN)
	uint32_t transfer = 0;  // GstVideoTransferFunction (0: UNKNOWN)
	uint32_t primaries = 0; // GstVideoColorPrimaries (0: UNKNOWN)
	// member-wise
	friend constexpr bool operator==(const GstColorimetry &, const GstColorimetry &) = default;
};
// NotSupported when GStreamer has no value for a field (say, ICtCp matrix).
GPUHANDLE_API Result<GstColorimetry> toGstColorimetry(const Colorimetry &colorimetry);
// NotSupported for GStreamer values H.273 has no code for (GAMMA18, ADOBERGB ...).
GPUHANDLE_API Result<Colorimetry> fromGstColorimetry(const GstColorimetry &gst);

// AVColorRange, AVColorSpace, AVColorPrimaries, AVColorTransferCharacteristic.
struct AvColor {
	uint32_t range = 0;     // AVCOL_RANGE_UNSPECIFIED
	uint32_t space = 2;     // AVCOL_SPC_UNSPECIFIED
	uint32_t primaries = 2; // AVCOL_PRI_UNSPECIFIED
	uint32_t transfer = 2;  // AVCOL_TRC_UNSPECIFIED
	// member-wise
	friend constexpr bool operator==(const AvColor &, const AvColor &) = default;
};
// H.273 codes are the AVColor* values, so every valid Colorimetry maps; InvalidArgument names
// the first field that holds a number H.273 reserves.
GPUHANDLE_API Result<AvColor> toAvColor(const Colorimetry &colorimetry);
// NotSupported names the first field whose value FFmpeg reserves or libavutil 57 does not define
// (a newer FFmpeg's extensions).
GPUHANDLE_API Result<Colorimetry> fromAvColor(const AvColor &av);

// VkSamplerYcbcrModelConversion and VkSamplerYcbcrRange for a sampler that converts to RGB.
struct VkYcbcr {
	uint32_t model = 0; // VkSamplerYcbcrModelConversion (RGB_IDENTITY for an Rgb matrix)
	uint32_t range = 0; // VkSamplerYcbcrRange: ITU_NARROW (Limited, Unknown) or ITU_FULL
	// member-wise
	friend constexpr bool operator==(const VkYcbcr &, const VkYcbcr &) = default;
};
// NotSupported for matrices Vulkan's samplers cannot convert (SMPTE 240M, YCgCo, ICtCp ...).
GPUHANDLE_API Result<VkYcbcr> toVkYcbcr(const Colorimetry &colorimetry);

} // namespace gpuhandle
