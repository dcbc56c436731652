// AVPixelFormat and AVColor* helpers: the core's FFmpeg tables matched to the running libavutil.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>
#include <gpuhandle/format_mappings.h>

#include <cctype>
#include <cstring>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::ffmpeg {

// The core's table numbers formats as libavutil 57 does, and a later major renumbered them
// (AV_PIX_FMT_XVMC went away), so formats are matched by FFmpeg's own names, which are stable.
Result<AVPixelFormat> toAvPixelFormat(PixelFormat format)
{
	Result<uint32_t> value = toApiFormat(FormatApi::FFmpeg, format);
	if (!value)
		return std::move(value).error();
	for (const FormatMapping &row : formatMappings(FormatApi::FFmpeg)) {
		if (row.format != format || !row.canonical)
			continue;
		const AVPixelFormat number = av_get_pix_fmt(row.name);
		if (number == AV_PIX_FMT_NONE)
			return Error::format(
				ErrorCode::NotSupported, "format",
				"%s is FFmpeg's %s, which this libavutil (%s) does not "
				"know: it is newer than this FFmpeg.",
				pixelFormatName(format), row.name, LIBAVUTIL_IDENT);
		return number;
	}
	return Error::format(ErrorCode::Fatal, "format",
			     "The FFmpeg table maps %s but has no canonical row for it.",
			     pixelFormatName(format));
}

Result<PixelFormat> fromAvPixelFormat(AVPixelFormat format)
{
	const char *name = format >= 0 ? av_get_pix_fmt_name(format) : nullptr;
	if (!name)
		return Error::format(ErrorCode::InvalidArgument, "format",
				     "AVPixelFormat %d is not a pixel format this libavutil (%s) "
				     "knows.",
				     static_cast<int>(format), LIBAVUTIL_IDENT);
	if (isHwPixelFormat(format))
		return Error::format(ErrorCode::NotSupported, "format",
				     "%s is a hardware format: its planes are handles, not a "
				     "pixel layout gpuhandle's tables describe.",
				     avPixelFormatName(format).c_str());
	for (const FormatMapping &row : formatMappings(FormatApi::FFmpeg))
		if (!std::strcmp(row.name, name))
			return row.format;
	return Error::format(ErrorCode::NotSupported, "format", "%s has no gpuhandle PixelFormat.",
			     avPixelFormatName(format).c_str());
}

bool isFullRangeAlias(AVPixelFormat format) noexcept
{
	const char *name = format >= 0 ? av_get_pix_fmt_name(format) : nullptr;
	return name && !std::strncmp(name, "yuvj", 4);
}

std::string avPixelFormatName(int format)
{
	const char *name = format >= 0 ? av_get_pix_fmt_name(static_cast<AVPixelFormat>(format))
				       : nullptr;
	if (!name)
		return "AVPixelFormat " + std::to_string(format);
	std::string spelled = "AV_PIX_FMT_";
	for (const char *c = name; *c; c++)
		spelled += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
	return spelled;
}

bool isHwPixelFormat(int format) noexcept
{
	const AVPixFmtDescriptor *desc =
		format >= 0 ? av_pix_fmt_desc_get(static_cast<AVPixelFormat>(format)) : nullptr;
	return desc && (desc->flags & AV_PIX_FMT_FLAG_HWACCEL);
}

Result<Colorimetry> fromAvColorFields(AVColorRange range, AVColorSpace space,
				      AVColorPrimaries primaries,
				      AVColorTransferCharacteristic transfer)
{
	AvColor av;
	av.range = static_cast<uint32_t>(range);
	av.space = static_cast<uint32_t>(space);
	av.primaries = static_cast<uint32_t>(primaries);
	av.transfer = static_cast<uint32_t>(transfer);
	return fromAvColor(av);
}

Colorimetry colorimetryOf(const AVFrame *frame) noexcept
{
	if (!frame)
		return {};
	AvColor av;
	av.range = static_cast<uint32_t>(frame->color_range);
	av.space = static_cast<uint32_t>(frame->colorspace);
	av.primaries = static_cast<uint32_t>(frame->color_primaries);
	av.transfer = static_cast<uint32_t>(frame->color_trc);
	// fromAvColor names the first field it cannot take; that field becomes unspecified and the
	// rest is tried again (at most once per field).
	for (int attempt = 0; attempt < 4; attempt++) {
		Result<Colorimetry> mapped = fromAvColor(av);
		if (mapped)
			return *mapped;
		const char *field = mapped.error().field();
		if (!std::strcmp(field, "range"))
			av.range = AVCOL_RANGE_UNSPECIFIED;
		else if (!std::strcmp(field, "space"))
			av.space = AVCOL_SPC_UNSPECIFIED;
		else if (!std::strcmp(field, "primaries"))
			av.primaries = AVCOL_PRI_UNSPECIFIED;
		else if (!std::strcmp(field, "transfer"))
			av.transfer = AVCOL_TRC_UNSPECIFIED;
		else
			break;
	}
	return {};
}

void setColorimetry(AVFrame *frame, const Colorimetry &colorimetry) noexcept
{
	if (!frame)
		return;
	// H.273 numbers are AVColor* numbers; toAvColor only refuses values outside H.273.
	Result<AvColor> av = toAvColor(colorimetry);
	const AvColor fields = av ? *av : AvColor{};
	frame->color_range = static_cast<AVColorRange>(fields.range);
	frame->colorspace = static_cast<AVColorSpace>(fields.space);
	frame->color_primaries = static_cast<AVColorPrimaries>(fields.primaries);
	frame->color_trc = static_cast<AVColorTransferCharacteristic>(fields.transfer);
}

} // namespace gpuhandle::ffmpeg
