// Colorimetry: range, matrix, primaries and transfer, numbered as ITU-T H.273 (and AVColor*).
#pragma once

#include <gpuhandle/export.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// Numbered like AVColorRange.
enum class ColorRange : uint8_t { Unknown = 0, Limited = 1, Full = 2 };

// ITU-T H.273 MatrixCoefficients (the values of AVColorSpace).
enum class ColorMatrix : uint8_t {
	Rgb = 0,
	Bt709 = 1,
	Unknown = 2,
	Fcc = 4,
	Bt470Bg = 5,
	Smpte170M = 6,
	Smpte240M = 7,
	YCgCo = 8,
	Bt2020Ncl = 9,
	Bt2020Cl = 10,
	Smpte2085 = 11,
	ChromaNcl = 12,
	ChromaCl = 13,
	ICtCp = 14,
};

// ITU-T H.273 ColourPrimaries (the values of AVColorPrimaries).
enum class ColorPrimaries : uint8_t {
	Bt709 = 1,
	Unknown = 2,
	Bt470M = 4,
	Bt470Bg = 5,
	Smpte170M = 6,
	Smpte240M = 7,
	Film = 8,
	Bt2020 = 9,
	Smpte428 = 10,
	Smpte431 = 11,
	Smpte432 = 12,
	Ebu3213 = 22,
};

// ITU-T H.273 TransferCharacteristics (the values of AVColorTransferCharacteristic).
enum class ColorTransfer : uint8_t {
	Bt709 = 1,
	Unknown = 2,
	Gamma22 = 4,
	Gamma28 = 5,
	Smpte170M = 6,
	Smpte240M = 7,
	Linear = 8,
	Log100 = 9,
	Log316 = 10,
	Iec61966_2_4 = 11,
	Bt1361 = 12,
	Srgb = 13,
	Bt2020_10 = 14,
	Bt2020_12 = 15,
	Pq = 16,
	Smpte428 = 17,
	Hlg = 18,
};

// How a frame's samples map to colour. Unknown in a field (the default) means the source does
// not say; it is valid, and each consumer decides what to assume or whether to refuse it.
struct Colorimetry {
	ColorRange range = ColorRange::Unknown;             // quantisation range of the samples
	ColorMatrix matrix = ColorMatrix::Unknown;          // YUV to RGB coefficients (Rgb: none)
	ColorPrimaries primaries = ColorPrimaries::Unknown; // chromaticities of R, G, B and white
	ColorTransfer transfer = ColorTransfer::Unknown;    // the transfer function (OETF)

	// member-wise
	friend constexpr bool operator==(const Colorimetry &, const Colorimetry &) = default;
	// True when every field holds a value H.273 defines (reserved numbers are refused).
	bool isValid() const noexcept;
};

} // namespace gpuhandle
