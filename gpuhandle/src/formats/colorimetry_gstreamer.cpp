// Colorimetry to and from GstVideoColorimetry's four enums, numbered as GStreamer 1.22 does.
//
// GStreamer's enums are its own (GST_VIDEO_COLOR_MATRIX_BT709 is 3, H.273's is 1); the pairs below
// follow gst_video_color_matrix_to_iso() and friends, and tests/formats checks them against those
// functions. Where several H.273 codes share one GStreamer value (BT.470BG and SMPTE 170M are
// both GST_VIDEO_COLOR_MATRIX_BT601), the value maps back to the code GStreamer's *_to_iso() gives.
#include <gpuhandle/colorimetry_mappings.h>

#include <span>

namespace gpuhandle {

namespace {

template<typename Enum>
struct GstPair {
	Enum ours;
	uint32_t gst;
	bool canonical; // the pair a GStreamer value maps back through
};

// GstVideoColorRange: UNKNOWN 0, 0_255 1, 16_235 2.
constexpr GstPair<ColorRange> kRanges[] = {
	{ ColorRange::Unknown, 0, true },
	{ ColorRange::Full, 1, true },
	{ ColorRange::Limited, 2, true },
};

// GstVideoColorMatrix: UNKNOWN 0, RGB 1, FCC 2, BT709 3, BT601 4, SMPTE240M 5, BT2020 6.
constexpr GstPair<ColorMatrix> kMatrices[] = {
	{ ColorMatrix::Unknown, 0, true },
	{ ColorMatrix::Rgb, 1, true },
	{ ColorMatrix::Fcc, 2, true },
	{ ColorMatrix::Bt709, 3, true },
	{ ColorMatrix::Smpte170M, 4, true },
	{ ColorMatrix::Bt470Bg, 4, false }, // the same coefficients as SMPTE 170M
	{ ColorMatrix::Smpte240M, 5, true },
	{ ColorMatrix::Bt2020Ncl, 6, true },
};

// GstVideoTransferFunction: UNKNOWN 0, GAMMA10 1, GAMMA18 2, GAMMA20 3, GAMMA22 4, BT709 5,
// SMPTE240M 6, SRGB 7, GAMMA28 8, LOG100 9, LOG316 10, BT2020_12 11, ADOBERGB 12, BT2020_10 13,
// SMPTE2084 14, ARIB_STD_B67 15, BT601 16. GAMMA18, GAMMA20 and ADOBERGB have no H.273 code.
constexpr GstPair<ColorTransfer> kTransfers[] = {
	{ ColorTransfer::Unknown, 0, true },    { ColorTransfer::Linear, 1, true },
	{ ColorTransfer::Gamma22, 4, true },    { ColorTransfer::Bt709, 5, true },
	{ ColorTransfer::Smpte240M, 6, true },  { ColorTransfer::Srgb, 7, true },
	{ ColorTransfer::Gamma28, 8, true },    { ColorTransfer::Log100, 9, true },
	{ ColorTransfer::Log316, 10, true },    { ColorTransfer::Bt2020_12, 11, true },
	{ ColorTransfer::Bt2020_10, 13, true }, { ColorTransfer::Pq, 14, true },
	{ ColorTransfer::Hlg, 15, true },       { ColorTransfer::Smpte170M, 16, true },
};

// GstVideoColorPrimaries: UNKNOWN 0, BT709 1, BT470M 2, BT470BG 3, SMPTE170M 4, SMPTE240M 5,
// FILM 6, BT2020 7, ADOBERGB 8, SMPTEST428 9, SMPTERP431 10, SMPTEEG432 11, EBU3213 12.
// ADOBERGB has no H.273 code.
constexpr GstPair<ColorPrimaries> kPrimaries[] = {
	{ ColorPrimaries::Unknown, 0, true },   { ColorPrimaries::Bt709, 1, true },
	{ ColorPrimaries::Bt470M, 2, true },    { ColorPrimaries::Bt470Bg, 3, true },
	{ ColorPrimaries::Smpte170M, 4, true }, { ColorPrimaries::Smpte240M, 5, true },
	{ ColorPrimaries::Film, 6, true },      { ColorPrimaries::Bt2020, 7, true },
	{ ColorPrimaries::Smpte428, 9, true },  { ColorPrimaries::Smpte431, 10, true },
	{ ColorPrimaries::Smpte432, 11, true }, { ColorPrimaries::Ebu3213, 12, true },
};

template<typename Enum>
Result<uint32_t> toGst(std::span<const GstPair<Enum>> pairs, Enum value, const char *field)
{
	for (const auto &pair : pairs) {
		if (pair.ours == value)
			return pair.gst;
	}
	return Error::format(ErrorCode::NotSupported, field,
			     "GStreamer has no %s for H.273 code %u.", field,
			     static_cast<unsigned>(value));
}

template<typename Enum>
Result<Enum> fromGst(std::span<const GstPair<Enum>> pairs, uint32_t value, const char *field)
{
	for (const auto &pair : pairs) {
		if (pair.gst == value && pair.canonical)
			return pair.ours;
	}
	return Error::format(
		ErrorCode::NotSupported, field,
		"GStreamer %s %u has no H.273 code (or is not one GStreamer 1.22 defines).", field,
		value);
}

} // namespace

Result<GstColorimetry> toGstColorimetry(const Colorimetry &colorimetry)
{
	auto range = toGst<ColorRange>(kRanges, colorimetry.range, "range");
	if (!range.ok())
		return std::move(range).error();
	auto matrix = toGst<ColorMatrix>(kMatrices, colorimetry.matrix, "matrix");
	if (!matrix.ok())
		return std::move(matrix).error();
	auto transfer = toGst<ColorTransfer>(kTransfers, colorimetry.transfer, "transfer");
	if (!transfer.ok())
		return std::move(transfer).error();
	auto primaries = toGst<ColorPrimaries>(kPrimaries, colorimetry.primaries, "primaries");
	if (!primaries.ok())
		return std::move(primaries).error();
	return GstColorimetry{ *range, *matrix, *transfer, *primaries };
}

Result<Colorimetry> fromGstColorimetry(const GstColorimetry &gst)
{
	auto range = fromGst<ColorRange>(kRanges, gst.range, "range");
	if (!range.ok())
		return std::move(range).error();
	auto matrix = fromGst<ColorMatrix>(kMatrices, gst.matrix, "matrix");
	if (!matrix.ok())
		return std::move(matrix).error();
	auto transfer = fromGst<ColorTransfer>(kTransfers, gst.transfer, "transfer");
	if (!transfer.ok())
		return std::move(transfer).error();
	auto primaries = fromGst<ColorPrimaries>(kPrimaries, gst.primaries, "primaries");
	if (!primaries.ok())
		return std::move(primaries).error();
	return Colorimetry{ *range, *matrix, *primaries, *transfer };
}

} // namespace gpuhandle
