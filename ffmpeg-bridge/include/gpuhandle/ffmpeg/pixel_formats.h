// AVPixelFormat <-> PixelFormat and AVColor* <-> Colorimetry, thin helpers over the core's tables.
#pragma once

#include <gpuhandle/colorimetry.h>
#include <gpuhandle/ffmpeg/export.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/result.h>

#include <string>

extern "C" {
#include <libavutil/pixfmt.h>
}

struct AVFrame;

namespace GPUHANDLE_FFMPEG_API gpuhandle {
namespace ffmpeg {

// The AVPixelFormat of `format` (the core's FormatApi::FFmpeg table, matched by FFmpeg's name:
// the numbers differ between libavutil majors). NotSupported when FFmpeg has no such format, or
// when the libavutil this library runs with does not know it (formats newer than it).
GPUHANDLE_FFMPEG_API Result<AVPixelFormat> toAvPixelFormat(PixelFormat format);
// The PixelFormat of a software AVPixelFormat. NotSupported naming the format when gpuhandle
// does not map it (hardware formats included: they name a handle, not a layout). The yuvj*
// formats give the plain yuv*p format (see isFullRangeAlias).
GPUHANDLE_FFMPEG_API Result<PixelFormat> fromAvPixelFormat(AVPixelFormat format);
// A deprecated yuvj* format: the yuv*p bytes with full range implied by the format itself.
GPUHANDLE_FFMPEG_API bool isFullRangeAlias(AVPixelFormat format) noexcept;
// "AV_PIX_FMT_NV12" for a known value, "AVPixelFormat 1234" otherwise: for error messages.
GPUHANDLE_FFMPEG_API std::string avPixelFormatName(int format);
// Whether libavutil marks the format AV_PIX_FMT_FLAG_HWACCEL (its data[] are handles).
GPUHANDLE_FFMPEG_API bool isHwPixelFormat(int format) noexcept;

// The four AVColor* fields, strictly: NotSupported naming the first field H.273 has no code for.
GPUHANDLE_FFMPEG_API Result<Colorimetry> fromAvColorFields(AVColorRange range, AVColorSpace space,
							   AVColorPrimaries primaries,
							   AVColorTransferCharacteristic transfer);
// A frame's colour fields, leniently: a field gpuhandle cannot represent (a value newer than the
// core's H.273 tables) becomes Unknown rather than failing the whole frame, as GStreamer does.
GPUHANDLE_FFMPEG_API Colorimetry colorimetryOf(const AVFrame *frame) noexcept;
// Sets the frame's color_range, colorspace, color_primaries and color_trc. Unknown fields become
// the AVCOL_*_UNSPECIFIED values (AVCOL_RANGE_UNSPECIFIED for the range).
GPUHANDLE_FFMPEG_API void setColorimetry(AVFrame *frame, const Colorimetry &colorimetry) noexcept;

} // namespace ffmpeg
} // namespace gpuhandle
