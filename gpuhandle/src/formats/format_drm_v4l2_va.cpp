// DRM, V4L2 and VA-API fourcc tables, and the VA render-target class of each VA format.
#include "format_tables.h"

namespace gpuhandle::detail {

namespace {

using F = PixelFormat;

// The numbers are written here rather than taken from drm_fourcc.h, videodev2.h and va.h because
// the core links nothing; tests/formats/test_formats_drm_v4l2_va.cpp checks each against them.
constexpr uint32_t fourcc(char a, char b, char c, char d)
{
	return static_cast<uint32_t>(a) | static_cast<uint32_t>(b) << 8 |
	       static_cast<uint32_t>(c) << 16 | static_cast<uint32_t>(d) << 24;
}

constexpr FormatMapping drm(F format, char a, char b, char c, char d, const char *name,
			    bool canonical = true)
{
	return { format, fourcc(a, b, c, d), name, canonical };
}

// DRM fourccs name little-endian words, written from the most significant bits down:
// DRM_FORMAT_ABGR8888 is A:B:G:R in a 32-bit word, so R, G, B, A bytes in memory (our RGBA).
constexpr FormatMapping kDrm[] = {
	// semi-planar YUV: "Cr:Cb" is a 16-bit word, so Cb comes first in memory
	drm(F::NV12, 'N', 'V', '1', '2', "DRM_FORMAT_NV12"),
	drm(F::NV21, 'N', 'V', '2', '1', "DRM_FORMAT_NV21"),
	drm(F::P010LE, 'P', '0', '1', '0', "DRM_FORMAT_P010"),
	drm(F::P012LE, 'P', '0', '1', '2', "DRM_FORMAT_P012"),
	drm(F::P016LE, 'P', '0', '1', '6', "DRM_FORMAT_P016"),
	drm(F::P210LE, 'P', '2', '1', '0', "DRM_FORMAT_P210"),
	drm(F::NV16, 'N', 'V', '1', '6', "DRM_FORMAT_NV16"),
	drm(F::NV61, 'N', 'V', '6', '1', "DRM_FORMAT_NV61"),
	drm(F::NV24, 'N', 'V', '2', '4', "DRM_FORMAT_NV24"),
	// planar YUV, 8 bits (Q410/Q401 are 10-bit but MSB-aligned, unlike yuv444p10le: not mapped)
	drm(F::YUV420P, 'Y', 'U', '1', '2', "DRM_FORMAT_YUV420"),
	drm(F::YV12, 'Y', 'V', '1', '2', "DRM_FORMAT_YVU420"),
	drm(F::YUV422P, 'Y', 'U', '1', '6', "DRM_FORMAT_YUV422"),
	drm(F::YUV444P, 'Y', 'U', '2', '4', "DRM_FORMAT_YUV444"),
	drm(F::YUV411P, 'Y', 'U', '1', '1', "DRM_FORMAT_YUV411"),
	drm(F::YUV410P, 'Y', 'U', 'V', '9', "DRM_FORMAT_YUV410"),
	// packed YUV
	drm(F::YUYV422, 'Y', 'U', 'Y', 'V', "DRM_FORMAT_YUYV"),
	drm(F::UYVY422, 'U', 'Y', 'V', 'Y', "DRM_FORMAT_UYVY"),
	drm(F::YVYU422, 'Y', 'V', 'Y', 'U', "DRM_FORMAT_YVYU"),
	drm(F::VYUY422, 'V', 'Y', 'U', 'Y', "DRM_FORMAT_VYUY"),
	drm(F::Y210LE, 'Y', '2', '1', '0', "DRM_FORMAT_Y210"),
	drm(F::Y212LE, 'Y', '2', '1', '2', "DRM_FORMAT_Y212"),
	// A:Y:Cb:Cr in a little-endian word is V, U, Y, A in memory
	drm(F::VUYA, 'A', 'Y', 'U', 'V', "DRM_FORMAT_AYUV"),
	drm(F::VUYX, 'X', 'Y', 'U', 'V', "DRM_FORMAT_XYUV8888"),
	drm(F::Y410, 'Y', '4', '1', '0', "DRM_FORMAT_Y410"),
	drm(F::XV30, 'X', 'V', '3', '0', "DRM_FORMAT_XVYU2101010"),
	drm(F::Y412LE, 'Y', '4', '1', '2', "DRM_FORMAT_Y412"),
	drm(F::XV36, 'X', 'V', '3', '6', "DRM_FORMAT_XVYU12_16161616"),
	// 8-bit RGB
	drm(F::BGRX, 'X', 'R', '2', '4', "DRM_FORMAT_XRGB8888"),
	drm(F::BGRA, 'A', 'R', '2', '4', "DRM_FORMAT_ARGB8888"),
	drm(F::RGBX, 'X', 'B', '2', '4', "DRM_FORMAT_XBGR8888"),
	drm(F::RGBA, 'A', 'B', '2', '4', "DRM_FORMAT_ABGR8888"),
	drm(F::XRGB, 'B', 'X', '2', '4', "DRM_FORMAT_BGRX8888"),
	drm(F::ARGB, 'B', 'A', '2', '4', "DRM_FORMAT_BGRA8888"),
	drm(F::XBGR, 'R', 'X', '2', '4', "DRM_FORMAT_RGBX8888"),
	drm(F::ABGR, 'R', 'A', '2', '4', "DRM_FORMAT_RGBA8888"),
	drm(F::RGB24, 'B', 'G', '2', '4', "DRM_FORMAT_BGR888"),
	drm(F::BGR24, 'R', 'G', '2', '4', "DRM_FORMAT_RGB888"),
	drm(F::RGB565LE, 'R', 'G', '1', '6', "DRM_FORMAT_RGB565"),
	drm(F::BGR565LE, 'B', 'G', '1', '6', "DRM_FORMAT_BGR565"),
	// 10-bit RGB: R in bits 0..9 is DRM's "xBGR"
	drm(F::X2RGB10LE, 'X', 'R', '3', '0', "DRM_FORMAT_XRGB2101010"),
	drm(F::X2BGR10LE, 'X', 'B', '3', '0', "DRM_FORMAT_XBGR2101010"),
	drm(F::RGB10A2, 'A', 'B', '3', '0', "DRM_FORMAT_ABGR2101010"),
	// 16-bit and half-float RGB
	drm(F::RGBA64LE, 'A', 'B', '4', '8', "DRM_FORMAT_ABGR16161616"),
	drm(F::BGRA64LE, 'A', 'R', '4', '8', "DRM_FORMAT_ARGB16161616"),
	drm(F::RGBAF16, 'A', 'B', '4', 'H', "DRM_FORMAT_ABGR16161616F"),
	drm(F::BGRAF16, 'A', 'R', '4', 'H', "DRM_FORMAT_ARGB16161616F"),
	// single channel: R10/R12 keep the sample in the low bits, as gray10le/gray12le do
	drm(F::GRAY8, 'R', '8', ' ', ' ', "DRM_FORMAT_R8"),
	drm(F::GRAY10LE, 'R', '1', '0', ' ', "DRM_FORMAT_R10"),
	drm(F::GRAY12LE, 'R', '1', '2', ' ', "DRM_FORMAT_R12"),
	drm(F::GRAY16LE, 'R', '1', '6', ' ', "DRM_FORMAT_R16"),
	// A fourcc names bytes, not how they are read: integer data travels under the same codes.
	drm(F::R16U, 'R', '1', '6', ' ', "DRM_FORMAT_R16", false),
	drm(F::RGBA16U, 'A', 'B', '4', '8', "DRM_FORMAT_ABGR16161616", false),
};

constexpr FormatMapping v4l2(F format, char a, char b, char c, char d, const char *name)
{
	return { format, fourcc(a, b, c, d), name, true };
}

// V4L2 names RGB formats by memory byte order, unlike DRM: V4L2_PIX_FMT_RGBA32 is R, G, B, A
// bytes. Its fourcc then happens to equal the DRM one of the same layout ('AB24').
constexpr FormatMapping kV4l2[] = {
	// single buffer
	v4l2(F::NV12, 'N', 'V', '1', '2', "V4L2_PIX_FMT_NV12"),
	v4l2(F::NV21, 'N', 'V', '2', '1', "V4L2_PIX_FMT_NV21"),
	v4l2(F::P010LE, 'P', '0', '1', '0', "V4L2_PIX_FMT_P010"),
	v4l2(F::NV16, 'N', 'V', '1', '6', "V4L2_PIX_FMT_NV16"),
	v4l2(F::NV61, 'N', 'V', '6', '1', "V4L2_PIX_FMT_NV61"),
	v4l2(F::NV24, 'N', 'V', '2', '4', "V4L2_PIX_FMT_NV24"),
	v4l2(F::YUV420P, 'Y', 'U', '1', '2', "V4L2_PIX_FMT_YUV420"),
	v4l2(F::YV12, 'Y', 'V', '1', '2', "V4L2_PIX_FMT_YVU420"),
	// videodev2.h comments these two "YVU", but the documented plane order is Y, Cb, Cr.
	v4l2(F::YUV422P, '4', '2', '2', 'P', "V4L2_PIX_FMT_YUV422P"),
	v4l2(F::YUV411P, '4', '1', '1', 'P', "V4L2_PIX_FMT_YUV411P"),
	v4l2(F::YUV410P, 'Y', 'U', 'V', '9', "V4L2_PIX_FMT_YUV410"),
	v4l2(F::YUYV422, 'Y', 'U', 'Y', 'V', "V4L2_PIX_FMT_YUYV"),
	v4l2(F::UYVY422, 'U', 'Y', 'V', 'Y', "V4L2_PIX_FMT_UYVY"),
	v4l2(F::YVYU422, 'Y', 'V', 'Y', 'U', "V4L2_PIX_FMT_YVYU"),
	v4l2(F::VYUY422, 'V', 'Y', 'U', 'Y', "V4L2_PIX_FMT_VYUY"),
	v4l2(F::VUYA, 'V', 'U', 'Y', 'A', "V4L2_PIX_FMT_VUYA32"),
	v4l2(F::VUYX, 'V', 'U', 'Y', 'X', "V4L2_PIX_FMT_VUYX32"),
	v4l2(F::BGRX, 'X', 'R', '2', '4', "V4L2_PIX_FMT_XBGR32"),
	v4l2(F::BGRA, 'A', 'R', '2', '4', "V4L2_PIX_FMT_ABGR32"),
	v4l2(F::RGBX, 'X', 'B', '2', '4', "V4L2_PIX_FMT_RGBX32"),
	v4l2(F::RGBA, 'A', 'B', '2', '4', "V4L2_PIX_FMT_RGBA32"),
	v4l2(F::XRGB, 'B', 'X', '2', '4', "V4L2_PIX_FMT_XRGB32"),
	v4l2(F::ARGB, 'B', 'A', '2', '4', "V4L2_PIX_FMT_ARGB32"),
	v4l2(F::XBGR, 'R', 'X', '2', '4', "V4L2_PIX_FMT_BGRX32"),
	v4l2(F::ABGR, 'R', 'A', '2', '4', "V4L2_PIX_FMT_BGRA32"),
	v4l2(F::RGB24, 'R', 'G', 'B', '3', "V4L2_PIX_FMT_RGB24"),
	v4l2(F::BGR24, 'B', 'G', 'R', '3', "V4L2_PIX_FMT_BGR24"),
	v4l2(F::RGB565LE, 'R', 'G', 'B', 'P', "V4L2_PIX_FMT_RGB565"),
	v4l2(F::GRAY8, 'G', 'R', 'E', 'Y', "V4L2_PIX_FMT_GREY"),
	v4l2(F::GRAY10LE, 'Y', '1', '0', ' ', "V4L2_PIX_FMT_Y10"),
	v4l2(F::GRAY12LE, 'Y', '1', '2', ' ', "V4L2_PIX_FMT_Y12"),
	v4l2(F::GRAY16LE, 'Y', '1', '6', ' ', "V4L2_PIX_FMT_Y16"),
	// multi-planar API, one buffer per plane: extra spellings of the formats above, except
	// YUV444M, the only form of planar 4:4:4 (V4L2_PIX_FMT_YUV444 is a packed 4-bit format).
	v4l2(F::YUV444P, 'Y', 'M', '2', '4', "V4L2_PIX_FMT_YUV444M"),
	v4l2(F::NV12, 'N', 'M', '1', '2', "V4L2_PIX_FMT_NV12M"),
	v4l2(F::NV21, 'N', 'M', '2', '1', "V4L2_PIX_FMT_NV21M"),
	v4l2(F::NV16, 'N', 'M', '1', '6', "V4L2_PIX_FMT_NV16M"),
	v4l2(F::NV61, 'N', 'M', '6', '1', "V4L2_PIX_FMT_NV61M"),
	v4l2(F::YUV420P, 'Y', 'M', '1', '2', "V4L2_PIX_FMT_YUV420M"),
	v4l2(F::YV12, 'Y', 'M', '2', '1', "V4L2_PIX_FMT_YVU420M"),
	v4l2(F::YUV422P, 'Y', 'M', '1', '6', "V4L2_PIX_FMT_YUV422M"),
};

constexpr FormatMapping va(F format, char a, char b, char c, char d, const char *name,
			   bool canonical = true)
{
	return { format, fourcc(a, b, c, d), name, canonical };
}

// va.h spells 8-bit RGB by memory byte order (VA_FOURCC_ARGB: A, R, G, B bytes), as FFmpeg
// maps them; the 10-bit RGB and packed YUV codes follow DRM's little-endian word notation.
constexpr FormatMapping kVa[] = {
	va(F::NV12, 'N', 'V', '1', '2', "VA_FOURCC_NV12"),
	va(F::NV21, 'N', 'V', '2', '1', "VA_FOURCC_NV21"),
	va(F::P010LE, 'P', '0', '1', '0', "VA_FOURCC_P010"),
	va(F::P012LE, 'P', '0', '1', '2', "VA_FOURCC_P012"),
	va(F::P016LE, 'P', '0', '1', '6', "VA_FOURCC_P016"),
	va(F::NV16, 'P', '2', '0', '8', "VA_FOURCC_P208"),
	va(F::YUV420P, 'I', '4', '2', '0', "VA_FOURCC_I420"),
	va(F::YV12, 'Y', 'V', '1', '2', "VA_FOURCC_YV12"),
	va(F::YUV422P, '4', '2', '2', 'H', "VA_FOURCC_422H"),
	va(F::YUV444P, '4', '4', '4', 'P', "VA_FOURCC_444P"),
	va(F::YUV411P, '4', '1', '1', 'P', "VA_FOURCC_411P"),
	va(F::YUYV422, 'Y', 'U', 'Y', '2', "VA_FOURCC_YUY2"),
	va(F::UYVY422, 'U', 'Y', 'V', 'Y', "VA_FOURCC_UYVY"),
	va(F::YVYU422, 'Y', 'V', 'Y', 'U', "VA_FOURCC_YVYU"),
	va(F::VYUY422, 'V', 'Y', 'U', 'Y', "VA_FOURCC_VYUY"),
	va(F::Y210LE, 'Y', '2', '1', '0', "VA_FOURCC_Y210"),
	va(F::Y212LE, 'Y', '2', '1', '2', "VA_FOURCC_Y212"),
	va(F::VUYA, 'A', 'Y', 'U', 'V', "VA_FOURCC_AYUV"),
	va(F::VUYX, 'X', 'Y', 'U', 'V', "VA_FOURCC_XYUV"),
	va(F::Y410, 'Y', '4', '1', '0', "VA_FOURCC_Y410"),
	va(F::Y412LE, 'Y', '4', '1', '2', "VA_FOURCC_Y412"),
	va(F::BGRA, 'B', 'G', 'R', 'A', "VA_FOURCC_BGRA"),
	va(F::BGRX, 'B', 'G', 'R', 'X', "VA_FOURCC_BGRX"),
	va(F::RGBA, 'R', 'G', 'B', 'A', "VA_FOURCC_RGBA"),
	va(F::RGBX, 'R', 'G', 'B', 'X', "VA_FOURCC_RGBX"),
	va(F::ARGB, 'A', 'R', 'G', 'B', "VA_FOURCC_ARGB"),
	va(F::XRGB, 'X', 'R', 'G', 'B', "VA_FOURCC_XRGB"),
	va(F::ABGR, 'A', 'B', 'G', 'R', "VA_FOURCC_ABGR"),
	va(F::XBGR, 'X', 'B', 'G', 'R', "VA_FOURCC_XBGR"),
	va(F::X2RGB10LE, 'X', 'R', '3', '0', "VA_FOURCC_X2R10G10B10"),
	va(F::X2BGR10LE, 'X', 'B', '3', '0', "VA_FOURCC_X2B10G10R10"),
	va(F::RGB10A2, 'A', 'B', '3', '0', "VA_FOURCC_A2B10G10R10"),
	va(F::RGB565LE, 'R', 'G', '1', '6', "VA_FOURCC_RGB565"),
	va(F::BGR565LE, 'B', 'G', '1', '6', "VA_FOURCC_BGR565"),
	va(F::GRAY8, 'Y', '8', '0', '0', "VA_FOURCC_Y800"),
	va(F::GRAY16LE, 'Y', '1', '6', ' ', "VA_FOURCC_Y16"),
	// Other spellings of the same layouts.
	va(F::YUV420P, 'I', 'Y', 'U', 'V', "VA_FOURCC_IYUV"),
	va(F::GRAY8, 'Y', '8', ' ', ' ', "VA_FOURCC_Y8"),
	// VA has no padded 4:4:4 10/12-bit codes; drivers decode xv30/xv36 into Y410/Y412 surfaces
	// (FFmpeg maps them so) whose top bits then carry no alpha.
	va(F::XV30, 'Y', '4', '1', '0', "VA_FOURCC_Y410", false),
	va(F::XV36, 'Y', '4', '1', '2', "VA_FOURCC_Y412", false),
};

// VA_RT_FORMAT_* values (va.h).
constexpr uint32_t kRtYuv420 = 0x00000001;
constexpr uint32_t kRtYuv422 = 0x00000002;
constexpr uint32_t kRtYuv444 = 0x00000004;
constexpr uint32_t kRtYuv411 = 0x00000008;
constexpr uint32_t kRtYuv400 = 0x00000010;
constexpr uint32_t kRtYuv420_10 = 0x00000100;
constexpr uint32_t kRtYuv422_10 = 0x00000200;
constexpr uint32_t kRtYuv444_10 = 0x00000400;
constexpr uint32_t kRtYuv420_12 = 0x00001000;
constexpr uint32_t kRtYuv422_12 = 0x00002000;
constexpr uint32_t kRtYuv444_12 = 0x00004000;
constexpr uint32_t kRtRgb16 = 0x00010000;
constexpr uint32_t kRtRgb32 = 0x00020000;
constexpr uint32_t kRtRgb32_10 = 0x00200000;

} // namespace

std::span<const FormatMapping> drmFormats() noexcept
{
	return kDrm;
}

std::span<const FormatMapping> v4l2Formats() noexcept
{
	return kV4l2;
}

std::span<const FormatMapping> vaFormats() noexcept
{
	return kVa;
}

// The class vaCreateSurfaces is given for a surface of each VA fourcc above, as libva drivers and
// FFmpeg pair them. P016 shares YUV420_12 with P012: VA has no 16-bit class.
uint32_t vaRtFormatOf(PixelFormat format) noexcept
{
	switch (format) {
	case F::NV12:
	case F::NV21:
	case F::YUV420P:
	case F::YV12: return kRtYuv420;
	case F::P010LE: return kRtYuv420_10;
	case F::P012LE:
	case F::P016LE: return kRtYuv420_12;
	case F::NV16:
	case F::YUV422P:
	case F::YUYV422:
	case F::UYVY422:
	case F::YVYU422:
	case F::VYUY422: return kRtYuv422;
	case F::Y210LE: return kRtYuv422_10;
	case F::Y212LE: return kRtYuv422_12;
	case F::YUV444P:
	case F::VUYA:
	case F::VUYX: return kRtYuv444;
	case F::Y410:
	case F::XV30: return kRtYuv444_10;
	case F::Y412LE:
	case F::XV36: return kRtYuv444_12;
	case F::YUV411P: return kRtYuv411;
	case F::GRAY8: return kRtYuv400;
	case F::RGBA:
	case F::BGRA:
	case F::RGBX:
	case F::BGRX:
	case F::ARGB:
	case F::XRGB:
	case F::ABGR:
	case F::XBGR: return kRtRgb32;
	case F::X2RGB10LE:
	case F::X2BGR10LE:
	case F::RGB10A2: return kRtRgb32_10;
	case F::RGB565LE:
	case F::BGR565LE: return kRtRgb16;
	default: return 0; // GRAY16LE included: VA_RT_FORMAT_YUV400 is 8-bit only
	}
}

} // namespace gpuhandle::detail
