// PixelFormat: every (format, shader ordinal) pair pinned, table invariants, geometry, HDR, alpha.
#include <gpuhandle/pixel_format.h>

#include <set>
#include <string>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

// Pinned literally: a reordered or renumbered format must fail here. The first 15 are the
// ordinals gpu-handle-types fixes; the rest are gpuhandle's own, append-only.
struct Pin {
	PixelFormat format;
	uint32_t ordinal;
};
constexpr Pin kPins[] = {
	{ PixelFormat::NV12, 0 },          { PixelFormat::NV21, 1 },
	{ PixelFormat::P010LE, 2 },        { PixelFormat::P016LE, 3 },
	{ PixelFormat::P210LE, 4 },        { PixelFormat::P216LE, 5 },
	{ PixelFormat::P410LE, 6 },        { PixelFormat::P416LE, 7 },
	{ PixelFormat::YUV420P, 8 },       { PixelFormat::YUV422P, 9 },
	{ PixelFormat::YUV444P, 10 },      { PixelFormat::YUV420P10LE, 11 },
	{ PixelFormat::YUV420P12LE, 12 },  { PixelFormat::YUV420P14LE, 13 },
	{ PixelFormat::YUV420P16LE, 14 },  { PixelFormat::YUV422P10LE, 15 },
	{ PixelFormat::YUV422P12LE, 16 },  { PixelFormat::YUV422P14LE, 17 },
	{ PixelFormat::YUV422P16LE, 18 },  { PixelFormat::YUV444P10LE, 19 },
	{ PixelFormat::YUV444P12LE, 20 },  { PixelFormat::YUV444P14LE, 21 },
	{ PixelFormat::YUV444P16LE, 22 },  { PixelFormat::NV16, 23 },
	{ PixelFormat::NV24, 24 },         { PixelFormat::NV12A, 25 },
	{ PixelFormat::YUVA444P10LE, 26 }, { PixelFormat::YUVA444P12LE, 27 },
	{ PixelFormat::UYVY422, 28 },      { PixelFormat::YUYV422, 29 },
	{ PixelFormat::AYUV64LE, 30 },     { PixelFormat::V216, 31 },
	{ PixelFormat::Y210LE, 32 },       { PixelFormat::RGBA, 33 },
	{ PixelFormat::BGRA, 34 },         { PixelFormat::RGBX, 35 },
	{ PixelFormat::BGRX, 36 },         { PixelFormat::RGBA64LE, 37 },
	{ PixelFormat::BGRA64LE, 38 },     { PixelFormat::RGBAF16, 39 },
	{ PixelFormat::BGRAF16, 40 },      { PixelFormat::RGBAF32, 41 },
	{ PixelFormat::BGRAF32, 42 },      { PixelFormat::RGB10A2, 43 },
	{ PixelFormat::RGB48LE, 44 },      { PixelFormat::R16U, 45 },
	{ PixelFormat::R32F, 46 },         { PixelFormat::RGBA16U, 47 },
	{ PixelFormat::P012LE, 48 },       { PixelFormat::Y212LE, 49 },
	{ PixelFormat::XV30, 50 },         { PixelFormat::XV36, 51 },
	{ PixelFormat::VUYA, 52 },         { PixelFormat::VUYX, 53 },
	{ PixelFormat::V210, 54 },         { PixelFormat::GRAY8, 55 },
	{ PixelFormat::GRAY10LE, 56 },     { PixelFormat::GRAY16LE, 57 },
	{ PixelFormat::YUVA420P, 58 },     { PixelFormat::X2RGB10LE, 59 },
	{ PixelFormat::X2BGR10LE, 60 },    { PixelFormat::RGB24, 61 },
	{ PixelFormat::BGR24, 62 },        { PixelFormat::ARGB, 63 },
	{ PixelFormat::ABGR, 64 },         { PixelFormat::XRGB, 65 },
	{ PixelFormat::XBGR, 66 },         { PixelFormat::YVYU422, 67 },
	{ PixelFormat::VYUY422, 68 },      { PixelFormat::YV12, 69 },
	{ PixelFormat::YUV411P, 70 },      { PixelFormat::YUV410P, 71 },
	{ PixelFormat::GBRP, 72 },         { PixelFormat::GBRP10LE, 73 },
	{ PixelFormat::GBRP12LE, 74 },     { PixelFormat::GBRAP, 75 },
	{ PixelFormat::GBRAP10LE, 76 },    { PixelFormat::GBRAP12LE, 77 },
	{ PixelFormat::RGB565LE, 78 },     { PixelFormat::BGR565LE, 79 },
	{ PixelFormat::YUVA420P10LE, 80 }, { PixelFormat::YUVA422P10LE, 81 },
	{ PixelFormat::Y410, 82 },         { PixelFormat::Y412LE, 83 },
	{ PixelFormat::NV61, 84 },         { PixelFormat::GRAY12LE, 85 },
};

} // namespace

START_TEST(every_ordinal_is_pinned)
{
	ck_assert_uint_eq(std::size(kPins), kPixelFormatCount - 1);
	for (const Pin &pin : kPins) {
		auto info = pixelFormatInfo(pin.format);
		ck_assert_ok(info);
		ck_assert_msg((*info)->shaderOrdinal == pin.ordinal, "%s has ordinal %u, pinned %u",
			      (*info)->name, (*info)->shaderOrdinal, pin.ordinal);
		ck_assert_uint_eq(static_cast<uint32_t>(pin.format), pin.ordinal + 1);
	}
	// The crate's fixed ordinals, spelled out once more.
	ck_assert_uint_eq((*pixelFormatInfo(PixelFormat::NV12))->shaderOrdinal, 0);
	ck_assert_uint_eq((*pixelFormatInfo(PixelFormat::P416LE))->shaderOrdinal, 7);
	ck_assert_uint_eq((*pixelFormatInfo(PixelFormat::YUV420P16LE))->shaderOrdinal, 14);
}
END_TEST

START_TEST(names_are_unique_and_round_trip)
{
	std::set<std::string> names;
	for (const PixelFormatInfo &info : allPixelFormats()) {
		ck_assert(names.insert(info.name).second);
		ck_assert_str_eq(pixelFormatName(info.format), info.name);
		auto back = pixelFormatFromName(info.name);
		ck_assert_ok(back);
		ck_assert(*back == info.format);
	}
	ck_assert_error(pixelFormatFromName("nv13"), ErrorCode::NotSupported, "name");
	ck_assert_error(pixelFormatFromName(""), ErrorCode::NotSupported, "name");
	ck_assert_str_eq(pixelFormatName(PixelFormat::Unknown), "unknown");
	ck_assert_str_eq(pixelFormatName(static_cast<PixelFormat>(9999)), "unknown");
	ck_assert_error(pixelFormatInfo(PixelFormat::Unknown), ErrorCode::NotSupported, "format");
	ck_assert_error(pixelFormatInfo(static_cast<PixelFormat>(kPixelFormatCount)),
			ErrorCode::NotSupported, "format");
	// The nullptr-returning lookup finds the same rows and nothing else.
	for (const PixelFormatInfo &info : allPixelFormats()) {
		auto found = pixelFormatInfo(info.format);
		ck_assert_ok(found);
		ck_assert_ptr_eq(findPixelFormatInfo(info.format), *found);
	}
	ck_assert_ptr_null(findPixelFormatInfo(PixelFormat::Unknown));
	ck_assert_ptr_null(findPixelFormatInfo(static_cast<PixelFormat>(kPixelFormatCount)));
	ck_assert_ptr_null(findPixelFormatInfo(static_cast<PixelFormat>(0xffffffffu)));
}
END_TEST

START_TEST(table_invariants)
{
	for (const PixelFormatInfo &info : allPixelFormats()) {
		ck_assert_msg(info.numPlanes >= 1 && info.numPlanes <= 4, "%s", info.name);
		ck_assert_msg(info.depth >= 5 && info.depth <= 32, "%s", info.name);
		for (uint32_t i = 0; i < info.numPlanes; ++i) {
			const PlaneInfo &p = info.planes[i];
			ck_assert_msg(bytesPerTexel(p.format) > 0, "%s plane %u", info.name, i);
			ck_assert_msg(p.hsub == 1 || p.hsub == 2 || p.hsub == 4, "%s", info.name);
			ck_assert_msg(p.vsub == 1 || p.vsub == 2 || p.vsub == 4, "%s", info.name);
			ck_assert_msg(p.pixelsPerBlock >= 1 && p.texelsPerBlock >= 1, "%s",
				      info.name);
			// Enough bits in each texel block for the samples it holds.
			ck_assert_msg(uint32_t(p.texelsPerBlock) * bytesPerTexel(p.format) * 8 >=
					      uint32_t(p.pixelsPerBlock) * info.depth,
				      "%s plane %u holds too few bits", info.name, i);
		}
		// Luma / first plane is never subsampled.
		ck_assert_msg(info.planes[0].hsub == 1 && info.planes[0].vsub == 1, "%s",
			      info.name);
		if (info.family != ColorFamily::Yuv) {
			ck_assert_msg(info.chromaShiftX() == 0 && info.chromaShiftY() == 0, "%s",
				      info.name);
		}
		ck_assert_msg((info.alpha == AlphaMode::Straight) == info.hasAlpha(), "%s",
			      info.name);
	}
}
END_TEST

START_TEST(plane_geometry)
{
	const PixelFormatInfo &nv12 = **pixelFormatInfo(PixelFormat::NV12);
	ck_assert_uint_eq(nv12.planes[1].rowTexels(1920), 960);
	ck_assert_uint_eq(nv12.planes[1].rows(1080), 540);
	ck_assert_uint_eq(nv12.planes[1].rowBytes(1921), 1922); // 961 UV pairs: odd widths round up
	ck_assert_uint_eq(nv12.planes[1].rows(1081), 541);
	const PixelFormatInfo &yuv420 = **pixelFormatInfo(PixelFormat::YUV420P);
	ck_assert_uint_eq(yuv420.planes[2].rowTexels(1920), 960);
	ck_assert_uint_eq(yuv420.chromaShiftX(), 1);
	ck_assert_uint_eq(yuv420.chromaShiftY(), 1);
	const PixelFormatInfo &yuv410 = **pixelFormatInfo(PixelFormat::YUV410P);
	ck_assert_uint_eq(yuv410.chromaShiftX(), 2);
	ck_assert_uint_eq(yuv410.planes[1].rowBytes(17), 5);
	// YUYV: one RGBA8 texel per two pixels; v210: 4 words (16 bytes) per 6 pixels.
	const PixelFormatInfo &yuyv = **pixelFormatInfo(PixelFormat::YUYV422);
	ck_assert_uint_eq(yuyv.planes[0].rowTexels(1919), 960);
	ck_assert_uint_eq(yuyv.planes[0].rowBytes(1920), 3840);
	const PixelFormatInfo &v210 = **pixelFormatInfo(PixelFormat::V210);
	ck_assert_uint_eq(v210.planes[0].rowBytes(1920), 1920 / 6 * 16);
	ck_assert_uint_eq(v210.planes[0].rowBytes(1), 16);
	ck_assert_uint_eq(bytesPerTexel(PlaneFormat::RGB16), 6);
	ck_assert_uint_eq(bytesPerTexel(static_cast<PlaneFormat>(200)), 0);
	ck_assert_str_eq(planeFormatName(PlaneFormat::RGB10A2), "rgb10a2");
}
END_TEST

START_TEST(hdr_depth_packing_alpha)
{
	auto info = [](PixelFormat f) { return **pixelFormatInfo(f); };
	ck_assert(info(PixelFormat::P010LE).isHdrCapable());
	ck_assert(info(PixelFormat::RGBAF16).isHdrCapable());
	ck_assert(info(PixelFormat::RGBA64LE).isHdrCapable());
	ck_assert(!info(PixelFormat::NV12).isHdrCapable());
	ck_assert(!info(PixelFormat::RGBA).isHdrCapable());
	ck_assert_uint_eq(info(PixelFormat::NV12).depth, 8);
	ck_assert_uint_eq(info(PixelFormat::P012LE).depth, 12);
	ck_assert(info(PixelFormat::P010LE).packing == SamplePacking::MsbAligned);
	ck_assert(info(PixelFormat::YUV420P10LE).packing == SamplePacking::LsbAligned);
	ck_assert(info(PixelFormat::V210).packing == SamplePacking::Packed);
	ck_assert(info(PixelFormat::RGBAF32).packing == SamplePacking::Float);
	ck_assert(info(PixelFormat::RGBX).alpha == AlphaMode::Padding);
	ck_assert(info(PixelFormat::XV30).alpha == AlphaMode::Padding);
	ck_assert(info(PixelFormat::Y410).alpha == AlphaMode::Straight);
	ck_assert(info(PixelFormat::NV12A).hasAlpha());
	ck_assert_uint_eq(info(PixelFormat::NV12A).numPlanes, 3);
	ck_assert(info(PixelFormat::GRAY10LE).family == ColorFamily::Gray);
	ck_assert(info(PixelFormat::GBRP).family == ColorFamily::Rgb);
}
END_TEST

int main()
{
	Suite *s = suite_create("pixel-format");
	TCase *tc = tcase_create("pixel-format");
	tcase_add_test(tc, every_ordinal_is_pinned);
	tcase_add_test(tc, names_are_unique_and_round_trip);
	tcase_add_test(tc, table_invariants);
	tcase_add_test(tc, plane_geometry);
	tcase_add_test(tc, hdr_depth_packing_alpha);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
