// The table of every PixelFormat: planes, storage formats, subsampling, depth, packing, alpha.
#include <gpuhandle/pixel_format.h>

namespace gpuhandle {

namespace {

using F = PixelFormat;
using P = PlaneFormat;
using Fam = ColorFamily;
using Pk = SamplePacking;
using A = AlphaMode;

constexpr PlaneInfo full(P format)
{
	return { format, 1, 1, 1, 1 };
}
constexpr PlaneInfo sub(P format, uint8_t hsub, uint8_t vsub)
{
	return { format, hsub, vsub, 1, 1 };
}
// Several pixels share one block of texels: YUYV (2 pixels in one RGBA8), v210 (6 in 4 words).
constexpr PlaneInfo block(P format, uint8_t pixels, uint8_t texels)
{
	return { format, 1, 1, pixels, texels };
}

constexpr PixelFormatInfo one(F f, const char *name, Fam family, uint8_t depth, Pk packing, A alpha,
			      PlaneInfo p0)
{
	return { f,      name,  static_cast<uint32_t>(f) - 1,
		 family, depth, packing,
		 alpha,  1,     { p0, {}, {}, {} } };
}
// Semi-planar YUV: luma, then interleaved chroma.
constexpr PixelFormatInfo semi(F f, const char *name, uint8_t depth, Pk packing, P luma, P chroma,
			       uint8_t hsub, uint8_t vsub)
{
	return { f,        name,  static_cast<uint32_t>(f) - 1,
		 Fam::Yuv, depth, packing,
		 A::None,  2,     { full(luma), sub(chroma, hsub, vsub), {}, {} } };
}
// Planar: three colour planes (YUV or GBR), optionally a fourth alpha plane.
constexpr PixelFormatInfo planar(F f, const char *name, Fam family, uint8_t depth, Pk packing,
				 P plane, uint8_t hsub, uint8_t vsub, bool alpha = false)
{
	return { f,
		 name,
		 static_cast<uint32_t>(f) - 1,
		 family,
		 depth,
		 packing,
		 alpha ? A::Straight : A::None,
		 static_cast<uint8_t>(alpha ? 4 : 3),
		 { full(plane), sub(plane, hsub, vsub), sub(plane, hsub, vsub),
		   alpha ? full(plane) : PlaneInfo{} } };
}

constexpr PixelFormatInfo kFormats[] = {
	semi(F::NV12, "nv12", 8, Pk::ByteAligned, P::R8, P::RG8, 2, 2),
	semi(F::NV21, "nv21", 8, Pk::ByteAligned, P::R8, P::RG8, 2, 2),
	semi(F::P010LE, "p010le", 10, Pk::MsbAligned, P::R16, P::RG16, 2, 2),
	semi(F::P016LE, "p016le", 16, Pk::ByteAligned, P::R16, P::RG16, 2, 2),
	semi(F::P210LE, "p210le", 10, Pk::MsbAligned, P::R16, P::RG16, 2, 1),
	semi(F::P216LE, "p216le", 16, Pk::ByteAligned, P::R16, P::RG16, 2, 1),
	semi(F::P410LE, "p410le", 10, Pk::MsbAligned, P::R16, P::RG16, 1, 1),
	semi(F::P416LE, "p416le", 16, Pk::ByteAligned, P::R16, P::RG16, 1, 1),
	planar(F::YUV420P, "yuv420p", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 2, 2),
	planar(F::YUV422P, "yuv422p", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 2, 1),
	planar(F::YUV444P, "yuv444p", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 1, 1),
	planar(F::YUV420P10LE, "yuv420p10le", Fam::Yuv, 10, Pk::LsbAligned, P::R16, 2, 2),
	planar(F::YUV420P12LE, "yuv420p12le", Fam::Yuv, 12, Pk::LsbAligned, P::R16, 2, 2),
	planar(F::YUV420P14LE, "yuv420p14le", Fam::Yuv, 14, Pk::LsbAligned, P::R16, 2, 2),
	planar(F::YUV420P16LE, "yuv420p16le", Fam::Yuv, 16, Pk::ByteAligned, P::R16, 2, 2),
	planar(F::YUV422P10LE, "yuv422p10le", Fam::Yuv, 10, Pk::LsbAligned, P::R16, 2, 1),
	planar(F::YUV422P12LE, "yuv422p12le", Fam::Yuv, 12, Pk::LsbAligned, P::R16, 2, 1),
	planar(F::YUV422P14LE, "yuv422p14le", Fam::Yuv, 14, Pk::LsbAligned, P::R16, 2, 1),
	planar(F::YUV422P16LE, "yuv422p16le", Fam::Yuv, 16, Pk::ByteAligned, P::R16, 2, 1),
	planar(F::YUV444P10LE, "yuv444p10le", Fam::Yuv, 10, Pk::LsbAligned, P::R16, 1, 1),
	planar(F::YUV444P12LE, "yuv444p12le", Fam::Yuv, 12, Pk::LsbAligned, P::R16, 1, 1),
	planar(F::YUV444P14LE, "yuv444p14le", Fam::Yuv, 14, Pk::LsbAligned, P::R16, 1, 1),
	planar(F::YUV444P16LE, "yuv444p16le", Fam::Yuv, 16, Pk::ByteAligned, P::R16, 1, 1),
	semi(F::NV16, "nv16", 8, Pk::ByteAligned, P::R8, P::RG8, 2, 1),
	semi(F::NV24, "nv24", 8, Pk::ByteAligned, P::R8, P::RG8, 1, 1),
	{ F::NV12A,
	  "nv12a",
	  static_cast<uint32_t>(F::NV12A) - 1,
	  Fam::Yuv,
	  8,
	  Pk::ByteAligned,
	  A::Straight,
	  3,
	  { full(P::R8), sub(P::RG8, 2, 2), full(P::R8), {} } },
	planar(F::YUVA444P10LE, "yuva444p10le", Fam::Yuv, 10, Pk::LsbAligned, P::R16, 1, 1, true),
	planar(F::YUVA444P12LE, "yuva444p12le", Fam::Yuv, 12, Pk::LsbAligned, P::R16, 1, 1, true),
	one(F::UYVY422, "uyvy422", Fam::Yuv, 8, Pk::ByteAligned, A::None, block(P::RGBA8, 2, 1)),
	one(F::YUYV422, "yuyv422", Fam::Yuv, 8, Pk::ByteAligned, A::None, block(P::RGBA8, 2, 1)),
	one(F::AYUV64LE, "ayuv64le", Fam::Yuv, 16, Pk::ByteAligned, A::Straight, full(P::RGBA16)),
	one(F::V216, "v216", Fam::Yuv, 16, Pk::ByteAligned, A::None, block(P::RGBA16, 2, 1)),
	one(F::Y210LE, "y210le", Fam::Yuv, 10, Pk::MsbAligned, A::None, block(P::RGBA16, 2, 1)),
	one(F::RGBA, "rgba", Fam::Rgb, 8, Pk::ByteAligned, A::Straight, full(P::RGBA8)),
	one(F::BGRA, "bgra", Fam::Rgb, 8, Pk::ByteAligned, A::Straight, full(P::BGRA8)),
	one(F::RGBX, "rgb0", Fam::Rgb, 8, Pk::ByteAligned, A::Padding, full(P::RGBA8)),
	one(F::BGRX, "bgr0", Fam::Rgb, 8, Pk::ByteAligned, A::Padding, full(P::BGRA8)),
	one(F::RGBA64LE, "rgba64le", Fam::Rgb, 16, Pk::ByteAligned, A::Straight, full(P::RGBA16)),
	one(F::BGRA64LE, "bgra64le", Fam::Rgb, 16, Pk::ByteAligned, A::Straight, full(P::RGBA16)),
	one(F::RGBAF16, "rgbaf16le", Fam::Rgb, 16, Pk::Float, A::Straight, full(P::RGBA16F)),
	one(F::BGRAF16, "bgraf16le", Fam::Rgb, 16, Pk::Float, A::Straight, full(P::RGBA16F)),
	one(F::RGBAF32, "rgbaf32le", Fam::Rgb, 32, Pk::Float, A::Straight, full(P::RGBA32F)),
	one(F::BGRAF32, "bgraf32le", Fam::Rgb, 32, Pk::Float, A::Straight, full(P::RGBA32F)),
	one(F::RGB10A2, "rgb10a2le", Fam::Rgb, 10, Pk::Packed, A::Straight, full(P::RGB10A2)),
	one(F::RGB48LE, "rgb48le", Fam::Rgb, 16, Pk::ByteAligned, A::None, full(P::RGB16)),
	one(F::R16U, "r16u", Fam::Gray, 16, Pk::ByteAligned, A::None, full(P::R16Uint)),
	one(F::R32F, "grayf32le", Fam::Gray, 32, Pk::Float, A::None, full(P::R32Float)),
	one(F::RGBA16U, "rgba16u", Fam::Rgb, 16, Pk::ByteAligned, A::Straight, full(P::RGBA16Uint)),
	semi(F::P012LE, "p012le", 12, Pk::MsbAligned, P::R16, P::RG16, 2, 2),
	one(F::Y212LE, "y212le", Fam::Yuv, 12, Pk::MsbAligned, A::None, block(P::RGBA16, 2, 1)),
	one(F::XV30, "xv30le", Fam::Yuv, 10, Pk::Packed, A::Padding, full(P::RGB10A2)),
	one(F::XV36, "xv36le", Fam::Yuv, 12, Pk::MsbAligned, A::Padding, full(P::RGBA16)),
	one(F::VUYA, "vuya", Fam::Yuv, 8, Pk::ByteAligned, A::Straight, full(P::RGBA8)),
	one(F::VUYX, "vuyx", Fam::Yuv, 8, Pk::ByteAligned, A::Padding, full(P::RGBA8)),
	one(F::V210, "v210", Fam::Yuv, 10, Pk::Packed, A::None, block(P::RGB10A2, 6, 4)),
	one(F::GRAY8, "gray", Fam::Gray, 8, Pk::ByteAligned, A::None, full(P::R8)),
	one(F::GRAY10LE, "gray10le", Fam::Gray, 10, Pk::LsbAligned, A::None, full(P::R16)),
	one(F::GRAY16LE, "gray16le", Fam::Gray, 16, Pk::ByteAligned, A::None, full(P::R16)),
	planar(F::YUVA420P, "yuva420p", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 2, 2, true),
	one(F::X2RGB10LE, "x2rgb10le", Fam::Rgb, 10, Pk::Packed, A::Padding, full(P::RGB10A2)),
	one(F::X2BGR10LE, "x2bgr10le", Fam::Rgb, 10, Pk::Packed, A::Padding, full(P::RGB10A2)),
	one(F::RGB24, "rgb24", Fam::Rgb, 8, Pk::ByteAligned, A::None, full(P::RGB8)),
	one(F::BGR24, "bgr24", Fam::Rgb, 8, Pk::ByteAligned, A::None, full(P::RGB8)),
	one(F::ARGB, "argb", Fam::Rgb, 8, Pk::ByteAligned, A::Straight, full(P::RGBA8)),
	one(F::ABGR, "abgr", Fam::Rgb, 8, Pk::ByteAligned, A::Straight, full(P::RGBA8)),
	one(F::XRGB, "0rgb", Fam::Rgb, 8, Pk::ByteAligned, A::Padding, full(P::RGBA8)),
	one(F::XBGR, "0bgr", Fam::Rgb, 8, Pk::ByteAligned, A::Padding, full(P::RGBA8)),
	one(F::YVYU422, "yvyu422", Fam::Yuv, 8, Pk::ByteAligned, A::None, block(P::RGBA8, 2, 1)),
	one(F::VYUY422, "vyuy422", Fam::Yuv, 8, Pk::ByteAligned, A::None, block(P::RGBA8, 2, 1)),
	planar(F::YV12, "yv12", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 2, 2),
	planar(F::YUV411P, "yuv411p", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 4, 1),
	planar(F::YUV410P, "yuv410p", Fam::Yuv, 8, Pk::ByteAligned, P::R8, 4, 4),
	planar(F::GBRP, "gbrp", Fam::Rgb, 8, Pk::ByteAligned, P::R8, 1, 1),
	planar(F::GBRP10LE, "gbrp10le", Fam::Rgb, 10, Pk::LsbAligned, P::R16, 1, 1),
	planar(F::GBRP12LE, "gbrp12le", Fam::Rgb, 12, Pk::LsbAligned, P::R16, 1, 1),
	planar(F::GBRAP, "gbrap", Fam::Rgb, 8, Pk::ByteAligned, P::R8, 1, 1, true),
	planar(F::GBRAP10LE, "gbrap10le", Fam::Rgb, 10, Pk::LsbAligned, P::R16, 1, 1, true),
	planar(F::GBRAP12LE, "gbrap12le", Fam::Rgb, 12, Pk::LsbAligned, P::R16, 1, 1, true),
	one(F::RGB565LE, "rgb565le", Fam::Rgb, 5, Pk::Packed, A::None, full(P::RGB565)),
	one(F::BGR565LE, "bgr565le", Fam::Rgb, 5, Pk::Packed, A::None, full(P::RGB565)),
	planar(F::YUVA420P10LE, "yuva420p10le", Fam::Yuv, 10, Pk::LsbAligned, P::R16, 2, 2, true),
	planar(F::YUVA422P10LE, "yuva422p10le", Fam::Yuv, 10, Pk::LsbAligned, P::R16, 2, 1, true),
	one(F::Y410, "y410le", Fam::Yuv, 10, Pk::Packed, A::Straight, full(P::RGB10A2)),
	one(F::Y412LE, "y412le", Fam::Yuv, 12, Pk::MsbAligned, A::Straight, full(P::RGBA16)),
	semi(F::NV61, "nv61", 8, Pk::ByteAligned, P::R8, P::RG8, 2, 1),
	one(F::GRAY12LE, "gray12le", Fam::Gray, 12, Pk::LsbAligned, A::None, full(P::R16)),
};

static_assert(std::size(kFormats) == kPixelFormatCount - 1, "one entry per PixelFormat");

constexpr bool tableInEnumOrder()
{
	for (uint32_t i = 0; i < std::size(kFormats); ++i) {
		if (static_cast<uint32_t>(kFormats[i].format) != i + 1)
			return false;
	}
	return true;
}
static_assert(tableInEnumOrder(), "kFormats lists the formats in enum order");

} // namespace

std::span<const PixelFormatInfo> allPixelFormats() noexcept
{
	return kFormats;
}

// These two live beside the table, so that a lookup is one bounds check and no further call.
const PixelFormatInfo *findPixelFormatInfo(PixelFormat format) noexcept
{
	const auto index = static_cast<uint32_t>(format) - 1; // Unknown (0) wraps past the end
	return index < kPixelFormatCount - 1 ? &kFormats[index] : nullptr;
}

Result<const PixelFormatInfo *> pixelFormatInfo(PixelFormat format)
{
	auto value = static_cast<uint32_t>(format);
	if (value == 0 || value >= kPixelFormatCount)
		return Error::format(ErrorCode::NotSupported, "format",
				     "Pixel format %u is not one gpuhandle knows (1..%u).", value,
				     kPixelFormatCount - 1);
	return &kFormats[value - 1];
}

} // namespace gpuhandle
