// AVPixelFormat table: every gpuhandle format FFmpeg has, numbered as libavutil 57 numbers them.
//
// AVPixelFormat numbers are stable only within one libavutil major version: a later major dropped
// AV_PIX_FMT_XVMC (151), moving every format after it down by one. These are libavutil 57's
// numbers (FFmpeg 5.1, Debian 12); a bridge linked against another major version must look
// formats up by name at run time (av_get_pix_fmt(name) / av_get_pix_fmt_name()), which is why
// every row carries FFmpeg's own spelling. Rows past AV_PIX_FMT_P416LE (205, the last format of
// libavutil 57.28) came in later libavutil 57 minors; each says which one (doc/APIchanges).
#include "format_tables.h"

namespace gpuhandle::detail {

namespace {

using F = PixelFormat;

constexpr FormatMapping kFfmpegFormats[] = {
	{ F::NV12, 23, "nv12" },
	{ F::NV21, 24, "nv21" },
	{ F::P010LE, 159, "p010le" },
	{ F::P016LE, 170, "p016le" },
	{ F::P210LE, 199, "p210le" },
	{ F::P216LE, 203, "p216le" },
	{ F::P410LE, 201, "p410le" },
	{ F::P416LE, 205, "p416le" },
	// The yuvj* formats are the same bytes as yuv*p with full range implied: they map back to
	// the plain format, so a caller reading them must set ColorRange::Full itself.
	{ F::YUV420P, 0, "yuv420p" },
	{ F::YUV420P, 12, "yuvj420p" },
	{ F::YUV422P, 4, "yuv422p" },
	{ F::YUV422P, 13, "yuvj422p" },
	{ F::YUV444P, 5, "yuv444p" },
	{ F::YUV444P, 14, "yuvj444p" },
	{ F::YUV420P10LE, 62, "yuv420p10le" },
	{ F::YUV420P12LE, 123, "yuv420p12le" },
	{ F::YUV420P14LE, 125, "yuv420p14le" },
	{ F::YUV420P16LE, 45, "yuv420p16le" },
	{ F::YUV422P10LE, 64, "yuv422p10le" },
	{ F::YUV422P12LE, 127, "yuv422p12le" },
	{ F::YUV422P14LE, 129, "yuv422p14le" },
	{ F::YUV422P16LE, 47, "yuv422p16le" },
	{ F::YUV444P10LE, 68, "yuv444p10le" },
	{ F::YUV444P12LE, 131, "yuv444p12le" },
	{ F::YUV444P14LE, 133, "yuv444p14le" },
	{ F::YUV444P16LE, 49, "yuv444p16le" },
	{ F::NV16, 101, "nv16" },
	{ F::NV24, 189, "nv24" },
	{ F::YUVA444P10LE, 91, "yuva444p10le" },
	{ F::YUVA444P12LE, 188, "yuva444p12le" },
	{ F::UYVY422, 15, "uyvy422" },
	{ F::YUYV422, 1, "yuyv422" },
	{ F::AYUV64LE, 156, "ayuv64le" },
	{ F::Y210LE, 193, "y210le" },
	{ F::RGBA, 26, "rgba" },
	{ F::BGRA, 28, "bgra" },
	{ F::RGBX, 119, "rgb0" },
	{ F::BGRX, 121, "bgr0" },
	{ F::RGBA64LE, 105, "rgba64le" },
	{ F::BGRA64LE, 107, "bgra64le" },
	{ F::RGBAF16, 208, "rgbaf16le" }, // libavutil 57.33.101
	{ F::RGBAF32, 221, "rgbaf32le" }, // libavutil 57.37.100
	{ F::RGB48LE, 35, "rgb48le" },
	{ F::R32F, 184, "grayf32le" },
	{ F::P012LE, 210, "p012le" }, // libavutil 57.36.100
	{ F::Y212LE, 213, "y212le" }, // libavutil 57.36.100
	{ F::XV30, 215, "xv30le" },   // libavutil 57.36.100
	{ F::XV36, 217, "xv36le" },   // libavutil 57.36.100
	{ F::VUYA, 206, "vuya" },     // libavutil 57.32.100
	{ F::VUYX, 209, "vuyx" },     // libavutil 57.34.100
	{ F::GRAY8, 8, "gray" },
	{ F::GRAY10LE, 169, "gray10le" },
	{ F::GRAY16LE, 30, "gray16le" },
	{ F::YUVA420P, 33, "yuva420p" },
	{ F::X2RGB10LE, 194, "x2rgb10le" },
	{ F::X2BGR10LE, 196, "x2bgr10le" },
	{ F::RGB24, 2, "rgb24" },
	{ F::BGR24, 3, "bgr24" },
	{ F::ARGB, 25, "argb" },
	{ F::ABGR, 27, "abgr" },
	{ F::XRGB, 118, "0rgb" },
	{ F::XBGR, 120, "0bgr" },
	{ F::YVYU422, 108, "yvyu422" },
	{ F::YUV411P, 7, "yuv411p" },
	{ F::YUV411P, 138, "yuvj411p" },
	{ F::YUV410P, 6, "yuv410p" },
	{ F::GBRP, 71, "gbrp" },
	{ F::GBRP10LE, 75, "gbrp10le" },
	{ F::GBRP12LE, 135, "gbrp12le" },
	{ F::GBRAP, 111, "gbrap" },
	{ F::GBRAP10LE, 164, "gbrap10le" },
	{ F::GBRAP12LE, 162, "gbrap12le" },
	{ F::RGB565LE, 37, "rgb565le" },
	{ F::BGR565LE, 41, "bgr565le" },
	{ F::YUVA420P10LE, 87, "yuva420p10le" },
	{ F::YUVA422P10LE, 89, "yuva422p10le" },
	{ F::GRAY12LE, 167, "gray12le" },
};

} // namespace

std::span<const FormatMapping> ffmpegFormats() noexcept
{
	return kFfmpegFormats;
}

} // namespace gpuhandle::detail
