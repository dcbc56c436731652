// Colorimetry to and from FFmpeg's AVColor* range, space, primaries and transfer values.
#include <gpuhandle/colorimetry_mappings.h>

namespace gpuhandle {

namespace {

// Both sides number their fields as ITU-T H.273 does, so mapping is a range check. These are the
// values libavutil 57 defines (the *_NB of its enums); 0 and 3 are FFmpeg's RESERVED0 / RESERVED
// placeholders for primaries and transfer, and 3 for the matrix, which carry no colorimetry.
constexpr uint32_t kAvRangeCount = 3;     // AVCOL_RANGE_NB
constexpr uint32_t kAvSpaceCount = 15;    // AVCOL_SPC_NB (up to AVCOL_SPC_ICTCP)
constexpr uint32_t kAvTransferCount = 19; // AVCOL_TRC_NB (up to AVCOL_TRC_ARIB_STD_B67)
constexpr uint32_t kAvPrimariesEbu3213 = 22;

bool avRangeKnown(uint32_t v)
{
	return v < kAvRangeCount;
}
bool avSpaceKnown(uint32_t v)
{
	return v < kAvSpaceCount && v != 3;
}
bool avPrimariesKnown(uint32_t v)
{
	return (v >= 1 && v <= 12 && v != 3) || v == kAvPrimariesEbu3213;
}
bool avTransferKnown(uint32_t v)
{
	return v >= 1 && v < kAvTransferCount && v != 3;
}

Error avValueMissing(const char *field, const char *type, uint32_t value)
{
	return Error::format(
		ErrorCode::NotSupported, field,
		"%s %u is reserved or newer than libavutil 57; gpuhandle has no colorimetry for it.",
		type, value);
}

} // namespace

// Every valid Colorimetry has an FFmpeg spelling: H.273 numbers are the AVColor* values.
// InvalidArgument names the first field that holds a number H.273 reserves.
Result<AvColor> toAvColor(const Colorimetry &colorimetry)
{
	auto range = static_cast<uint32_t>(colorimetry.range);
	auto space = static_cast<uint32_t>(colorimetry.matrix);
	auto primaries = static_cast<uint32_t>(colorimetry.primaries);
	auto transfer = static_cast<uint32_t>(colorimetry.transfer);
	// Our enums define exactly the numbers FFmpeg knows, so one check serves both sides.
	if (!avRangeKnown(range))
		return Error::format(ErrorCode::InvalidArgument, "range",
				     "Colour range %u is not a ColorRange.", range);
	if (!avSpaceKnown(space))
		return Error::format(ErrorCode::InvalidArgument, "matrix",
				     "Colour matrix %u is not a ColorMatrix.", space);
	if (!avPrimariesKnown(primaries))
		return Error::format(ErrorCode::InvalidArgument, "primaries",
				     "Colour primaries %u are not ColorPrimaries.", primaries);
	if (!avTransferKnown(transfer))
		return Error::format(ErrorCode::InvalidArgument, "transfer",
				     "Transfer function %u is not a ColorTransfer.", transfer);
	return AvColor{ range, space, primaries, transfer };
}

// NotSupported names the first field whose value is reserved (AVCOL_*_RESERVED*) or past what
// libavutil 57 defines (a newer FFmpeg's extension values).
Result<Colorimetry> fromAvColor(const AvColor &av)
{
	if (!avRangeKnown(av.range))
		return avValueMissing("range", "AVColorRange", av.range);
	if (!avSpaceKnown(av.space))
		return avValueMissing("space", "AVColorSpace", av.space);
	if (!avPrimariesKnown(av.primaries))
		return avValueMissing("primaries", "AVColorPrimaries", av.primaries);
	if (!avTransferKnown(av.transfer))
		return avValueMissing("transfer", "AVColorTransferCharacteristic", av.transfer);
	Colorimetry c;
	c.range = static_cast<ColorRange>(av.range);
	c.matrix = static_cast<ColorMatrix>(av.space);
	c.primaries = static_cast<ColorPrimaries>(av.primaries);
	c.transfer = static_cast<ColorTransfer>(av.transfer);
	return c;
}

} // namespace gpuhandle
