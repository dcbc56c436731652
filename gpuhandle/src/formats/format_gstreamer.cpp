// GstVideoFormat table: every gpuhandle format GStreamer 1.22 has, with GStreamer's own spelling.
//
// GstVideoFormat numbers are ABI: GStreamer only appends to the enum, so these values (those of
// GStreamer 1.22's video-format.h) hold for every later 1.x. The library links nothing, so the
// numbers are written out here; tests/formats/test_formats_gstreamer.cpp checks each number and
// name against gst_video_format_from_string() and gst_video_format_to_string().
//
// Formats GStreamer marks "native endianness" (AYUV64, RGB16, BGR16) are listed as their
// little-endian meaning: gpuhandle's formats are little-endian, and so is every host it runs on.
#include "format_tables.h"

namespace gpuhandle::detail {

namespace {

using F = PixelFormat;

// In enum order of PixelFormat. Each GstVideoFormat appears once, so every row is canonical.
constexpr FormatMapping kGstreamerFormats[] = {
	{ F::NV12, 23, "NV12" },
	{ F::NV21, 24, "NV21" },
	{ F::P010LE, 62, "P010_10LE" },
	{ F::P016LE, 90, "P016_LE" },
	{ F::YUV420P, 2, "I420" },
	{ F::YUV422P, 18, "Y42B" },
	{ F::YUV444P, 20, "Y444" },
	{ F::YUV420P10LE, 43, "I420_10LE" },
	{ F::YUV420P12LE, 73, "I420_12LE" },
	{ F::YUV422P10LE, 45, "I422_10LE" },
	{ F::YUV422P12LE, 75, "I422_12LE" },
	{ F::YUV444P10LE, 47, "Y444_10LE" },
	{ F::YUV444P12LE, 77, "Y444_12LE" },
	{ F::YUV444P16LE, 88, "Y444_16LE" },
	{ F::NV16, 51, "NV16" },
	{ F::NV24, 52, "NV24" },
	{ F::NV12A, 101, "AV12" },
	{ F::YUVA444P10LE, 59, "A444_10LE" },
	{ F::UYVY422, 5, "UYVY" },
	{ F::YUYV422, 4, "YUY2" },
	{ F::AYUV64LE, 40, "AYUV64" }, // A, Y, U, V 16-bit words, native endianness
	{ F::V216, 22, "v216" },
	{ F::Y210LE, 82, "Y210" },
	{ F::RGBA, 11, "RGBA" },
	{ F::BGRA, 12, "BGRA" },
	{ F::RGBX, 7, "RGBx" },
	{ F::BGRX, 8, "BGRx" },
	{ F::RGBA64LE, 104, "RGBA64_LE" },
	{ F::BGRA64LE, 106, "BGRA64_LE" },
	{ F::RGB10A2, 86, "RGB10A2_LE" }, // R in bits 0..9, A in 30..31 of a little-endian word
	{ F::P012LE, 92, "P012_LE" },
	{ F::Y212LE, 94, "Y212_LE" },
	{ F::VUYA, 84, "VUYA" },
	{ F::V210, 21, "v210" },
	{ F::GRAY8, 25, "GRAY8" },
	{ F::GRAY16LE, 27, "GRAY16_LE" },
	{ F::YUVA420P, 34, "A420" },
	{ F::RGB24, 15, "RGB" },
	{ F::BGR24, 16, "BGR" },
	{ F::ARGB, 13, "ARGB" },
	{ F::ABGR, 14, "ABGR" },
	{ F::XRGB, 9, "xRGB" },
	{ F::XBGR, 10, "xBGR" },
	{ F::YVYU422, 19, "YVYU" },
	{ F::VYUY422, 64, "VYUY" },
	{ F::YV12, 3, "YV12" },
	{ F::YUV411P, 17, "Y41B" },
	{ F::YUV410P, 36, "YUV9" },
	{ F::GBRP, 48, "GBR" },
	{ F::GBRP10LE, 50, "GBR_10LE" },
	{ F::GBRP12LE, 69, "GBR_12LE" },
	{ F::GBRAP, 65, "GBRA" },
	{ F::GBRAP10LE, 67, "GBRA_10LE" },
	{ F::GBRAP12LE, 71, "GBRA_12LE" },
	{ F::RGB565LE, 29, "RGB16" }, // R in bits 11..15 of a native-endian word
	{ F::BGR565LE, 30, "BGR16" }, // B in bits 11..15
	{ F::YUVA420P10LE, 55, "A420_10LE" },
	{ F::YUVA422P10LE, 57, "A422_10LE" },
	{ F::Y410, 83, "Y410" },
	{ F::Y412LE, 96, "Y412_LE" },
	{ F::NV61, 60, "NV61" },
	// Not in GStreamer 1.22 (toApiFormat says NotSupported): P210LE, P216LE, P410LE, P416LE,
	// YUV4xxP14LE, YUV420P16LE, YUV422P16LE and YUVA444P12LE (later versions add some); the
	// float formats; RGB48LE; R16U, RGBA16U and R32F (GStreamer has no integer or float gray);
	// XV30 and XV36 (Y410 and Y412_LE carry alpha where these have padding); X2RGB10LE and
	// X2BGR10LE (RGB10A2_LE and BGR10A2_LE carry alpha; r210 is big-endian); VUYX; GRAY10LE
	// and GRAY12LE (GRAY10_LE32 packs three samples in 32 bits).
};

} // namespace

std::span<const FormatMapping> gstreamerFormats() noexcept
{
	return kGstreamerFormats;
}

} // namespace gpuhandle::detail
