// Colorimetry to Vulkan's VkSamplerYcbcrModelConversion and VkSamplerYcbcrRange.
#include <gpuhandle/colorimetry_mappings.h>

namespace gpuhandle {

namespace {

// VkSamplerYcbcrModelConversion and VkSamplerYcbcrRange (vulkan_core.h; the test checks them).
constexpr uint32_t kModelRgbIdentity = 0;
constexpr uint32_t kModelYcbcr709 = 2;
constexpr uint32_t kModelYcbcr601 = 3;
constexpr uint32_t kModelYcbcr2020 = 4;
constexpr uint32_t kRangeItuFull = 0;
constexpr uint32_t kRangeItuNarrow = 1;

} // namespace

Result<VkYcbcr> toVkYcbcr(const Colorimetry &colorimetry)
{
	VkYcbcr result;
	switch (colorimetry.matrix) {
	case ColorMatrix::Rgb: result.model = kModelRgbIdentity; break;
	case ColorMatrix::Bt709: result.model = kModelYcbcr709; break;
	// BT.470 System B/G and SMPTE 170M share BT.601's coefficients.
	case ColorMatrix::Bt470Bg:
	case ColorMatrix::Smpte170M: result.model = kModelYcbcr601; break;
	case ColorMatrix::Bt2020Ncl: result.model = kModelYcbcr2020; break;
	default:
		// Unknown is refused rather than guessed: the guess depends on the frame size,
		// which the caller knows and this function does not.
		return Error::format(
			ErrorCode::NotSupported, "matrix",
			"Vulkan's YCbCr samplers cannot convert matrix %u (only BT.709, BT.601, "
			"BT.2020 non-constant luminance and RGB).",
			static_cast<unsigned>(colorimetry.matrix));
	}
	switch (colorimetry.range) {
	case ColorRange::Full: result.range = kRangeItuFull; break;
	// Video is limited range unless it says otherwise.
	case ColorRange::Limited:
	case ColorRange::Unknown: result.range = kRangeItuNarrow; break;
	default:
		return Error::format(ErrorCode::NotSupported, "range",
				     "Colour range %u is not one Vulkan knows.",
				     static_cast<unsigned>(colorimetry.range));
	}
	return result;
}

} // namespace gpuhandle
