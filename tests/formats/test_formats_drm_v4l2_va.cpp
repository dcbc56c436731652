// DRM, V4L2 and VA tables against their headers; round trips; agreement with DmaBuf validation.
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include "fd_count.h"

#include <cstring>
#include <drm_fourcc.h>
#include <linux/videodev2.h>
#include <span>
#include <string>

#include <va/va.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

// clang-format off
// One table row as the headers define it: the macro's value, its name, and how many colour planes
// the fourcc's documentation gives it. Writing the macro itself makes the compiler check it exists.
struct Expected {
	PixelFormat format;
	uint32_t value;
	const char *name;
	uint32_t planes;
};
#define ROW(format, macro, planes) { PixelFormat::format, (macro), #macro, (planes) }

const Expected kDrm[] = {
	ROW(NV12, DRM_FORMAT_NV12, 2),
	ROW(NV21, DRM_FORMAT_NV21, 2),
	ROW(P010LE, DRM_FORMAT_P010, 2),
	ROW(P012LE, DRM_FORMAT_P012, 2),
	ROW(P016LE, DRM_FORMAT_P016, 2),
	ROW(P210LE, DRM_FORMAT_P210, 2),
	ROW(NV16, DRM_FORMAT_NV16, 2),
	ROW(NV61, DRM_FORMAT_NV61, 2),
	ROW(NV24, DRM_FORMAT_NV24, 2),
	ROW(YUV420P, DRM_FORMAT_YUV420, 3),
	ROW(YV12, DRM_FORMAT_YVU420, 3),
	ROW(YUV422P, DRM_FORMAT_YUV422, 3),
	ROW(YUV444P, DRM_FORMAT_YUV444, 3),
	ROW(YUV411P, DRM_FORMAT_YUV411, 3),
	ROW(YUV410P, DRM_FORMAT_YUV410, 3),
	ROW(YUYV422, DRM_FORMAT_YUYV, 1),
	ROW(UYVY422, DRM_FORMAT_UYVY, 1),
	ROW(YVYU422, DRM_FORMAT_YVYU, 1),
	ROW(VYUY422, DRM_FORMAT_VYUY, 1),
	ROW(Y210LE, DRM_FORMAT_Y210, 1),
	ROW(Y212LE, DRM_FORMAT_Y212, 1),
	ROW(VUYA, DRM_FORMAT_AYUV, 1),
	ROW(VUYX, DRM_FORMAT_XYUV8888, 1),
	ROW(Y410, DRM_FORMAT_Y410, 1),
	ROW(XV30, DRM_FORMAT_XVYU2101010, 1),
	ROW(Y412LE, DRM_FORMAT_Y412, 1),
	ROW(XV36, DRM_FORMAT_XVYU12_16161616, 1),
	ROW(BGRX, DRM_FORMAT_XRGB8888, 1),
	ROW(BGRA, DRM_FORMAT_ARGB8888, 1),
	ROW(RGBX, DRM_FORMAT_XBGR8888, 1),
	ROW(RGBA, DRM_FORMAT_ABGR8888, 1),
	ROW(XRGB, DRM_FORMAT_BGRX8888, 1),
	ROW(ARGB, DRM_FORMAT_BGRA8888, 1),
	ROW(XBGR, DRM_FORMAT_RGBX8888, 1),
	ROW(ABGR, DRM_FORMAT_RGBA8888, 1),
	ROW(RGB24, DRM_FORMAT_BGR888, 1),
	ROW(BGR24, DRM_FORMAT_RGB888, 1),
	ROW(RGB565LE, DRM_FORMAT_RGB565, 1),
	ROW(BGR565LE, DRM_FORMAT_BGR565, 1),
	ROW(X2RGB10LE, DRM_FORMAT_XRGB2101010, 1),
	ROW(X2BGR10LE, DRM_FORMAT_XBGR2101010, 1),
	ROW(RGB10A2, DRM_FORMAT_ABGR2101010, 1),
	ROW(RGBA64LE, DRM_FORMAT_ABGR16161616, 1),
	ROW(BGRA64LE, DRM_FORMAT_ARGB16161616, 1),
	ROW(RGBAF16, DRM_FORMAT_ABGR16161616F, 1),
	ROW(BGRAF16, DRM_FORMAT_ARGB16161616F, 1),
	ROW(GRAY8, DRM_FORMAT_R8, 1),
	ROW(GRAY10LE, DRM_FORMAT_R10, 1),
	ROW(GRAY12LE, DRM_FORMAT_R12, 1),
	ROW(GRAY16LE, DRM_FORMAT_R16, 1),
	ROW(R16U, DRM_FORMAT_R16, 1),
	ROW(RGBA16U, DRM_FORMAT_ABGR16161616, 1),
};

const Expected kV4l2[] = {
	ROW(NV12, V4L2_PIX_FMT_NV12, 2),
	ROW(NV21, V4L2_PIX_FMT_NV21, 2),
	ROW(P010LE, V4L2_PIX_FMT_P010, 2),
	ROW(NV16, V4L2_PIX_FMT_NV16, 2),
	ROW(NV61, V4L2_PIX_FMT_NV61, 2),
	ROW(NV24, V4L2_PIX_FMT_NV24, 2),
	ROW(YUV420P, V4L2_PIX_FMT_YUV420, 3),
	ROW(YV12, V4L2_PIX_FMT_YVU420, 3),
	ROW(YUV422P, V4L2_PIX_FMT_YUV422P, 3),
	ROW(YUV411P, V4L2_PIX_FMT_YUV411P, 3),
	ROW(YUV410P, V4L2_PIX_FMT_YUV410, 3),
	ROW(YUYV422, V4L2_PIX_FMT_YUYV, 1),
	ROW(UYVY422, V4L2_PIX_FMT_UYVY, 1),
	ROW(YVYU422, V4L2_PIX_FMT_YVYU, 1),
	ROW(VYUY422, V4L2_PIX_FMT_VYUY, 1),
	ROW(VUYA, V4L2_PIX_FMT_VUYA32, 1),
	ROW(VUYX, V4L2_PIX_FMT_VUYX32, 1),
	ROW(BGRX, V4L2_PIX_FMT_XBGR32, 1),
	ROW(BGRA, V4L2_PIX_FMT_ABGR32, 1),
	ROW(RGBX, V4L2_PIX_FMT_RGBX32, 1),
	ROW(RGBA, V4L2_PIX_FMT_RGBA32, 1),
	ROW(XRGB, V4L2_PIX_FMT_XRGB32, 1),
	ROW(ARGB, V4L2_PIX_FMT_ARGB32, 1),
	ROW(XBGR, V4L2_PIX_FMT_BGRX32, 1),
	ROW(ABGR, V4L2_PIX_FMT_BGRA32, 1),
	ROW(RGB24, V4L2_PIX_FMT_RGB24, 1),
	ROW(BGR24, V4L2_PIX_FMT_BGR24, 1),
	ROW(RGB565LE, V4L2_PIX_FMT_RGB565, 1),
	ROW(GRAY8, V4L2_PIX_FMT_GREY, 1),
	ROW(GRAY10LE, V4L2_PIX_FMT_Y10, 1),
	ROW(GRAY12LE, V4L2_PIX_FMT_Y12, 1),
	ROW(GRAY16LE, V4L2_PIX_FMT_Y16, 1),
	ROW(YUV444P, V4L2_PIX_FMT_YUV444M, 3),
	ROW(NV12, V4L2_PIX_FMT_NV12M, 2),
	ROW(NV21, V4L2_PIX_FMT_NV21M, 2),
	ROW(NV16, V4L2_PIX_FMT_NV16M, 2),
	ROW(NV61, V4L2_PIX_FMT_NV61M, 2),
	ROW(YUV420P, V4L2_PIX_FMT_YUV420M, 3),
	ROW(YV12, V4L2_PIX_FMT_YVU420M, 3),
	ROW(YUV422P, V4L2_PIX_FMT_YUV422M, 3),
};

const Expected kVa[] = {
	ROW(NV12, VA_FOURCC_NV12, 2),
	ROW(NV21, VA_FOURCC_NV21, 2),
	ROW(P010LE, VA_FOURCC_P010, 2),
	ROW(P012LE, VA_FOURCC_P012, 2),
	ROW(P016LE, VA_FOURCC_P016, 2),
	ROW(NV16, VA_FOURCC_P208, 2),
	ROW(YUV420P, VA_FOURCC_I420, 3),
	ROW(YV12, VA_FOURCC_YV12, 3),
	ROW(YUV422P, VA_FOURCC_422H, 3),
	ROW(YUV444P, VA_FOURCC_444P, 3),
	ROW(YUV411P, VA_FOURCC_411P, 3),
	ROW(YUYV422, VA_FOURCC_YUY2, 1),
	ROW(UYVY422, VA_FOURCC_UYVY, 1),
	ROW(YVYU422, VA_FOURCC_YVYU, 1),
	ROW(VYUY422, VA_FOURCC_VYUY, 1),
	ROW(Y210LE, VA_FOURCC_Y210, 1),
	ROW(Y212LE, VA_FOURCC_Y212, 1),
	ROW(VUYA, VA_FOURCC_AYUV, 1),
	ROW(VUYX, VA_FOURCC_XYUV, 1),
	ROW(Y410, VA_FOURCC_Y410, 1),
	ROW(Y412LE, VA_FOURCC_Y412, 1),
	ROW(BGRA, VA_FOURCC_BGRA, 1),
	ROW(BGRX, VA_FOURCC_BGRX, 1),
	ROW(RGBA, VA_FOURCC_RGBA, 1),
	ROW(RGBX, VA_FOURCC_RGBX, 1),
	ROW(ARGB, VA_FOURCC_ARGB, 1),
	ROW(XRGB, VA_FOURCC_XRGB, 1),
	ROW(ABGR, VA_FOURCC_ABGR, 1),
	ROW(XBGR, VA_FOURCC_XBGR, 1),
	ROW(X2RGB10LE, VA_FOURCC_X2R10G10B10, 1),
	ROW(X2BGR10LE, VA_FOURCC_X2B10G10R10, 1),
	ROW(RGB10A2, VA_FOURCC_A2B10G10R10, 1),
	ROW(RGB565LE, VA_FOURCC_RGB565, 1),
	ROW(BGR565LE, VA_FOURCC_BGR565, 1),
	ROW(GRAY8, VA_FOURCC_Y800, 1),
	ROW(GRAY16LE, VA_FOURCC_Y16, 1),
	ROW(YUV420P, VA_FOURCC_IYUV, 3),
	ROW(GRAY8, VA_FOURCC_Y8, 1),
	ROW(XV30, VA_FOURCC_Y410, 1),
	ROW(XV36, VA_FOURCC_Y412, 1),
};

struct RtRow {
	PixelFormat format;
	uint32_t rt;
};
const RtRow kVaRt[] = {
	{ PixelFormat::NV12, VA_RT_FORMAT_YUV420 },	{ PixelFormat::NV21, VA_RT_FORMAT_YUV420 },
	{ PixelFormat::YUV420P, VA_RT_FORMAT_YUV420 },	{ PixelFormat::YV12, VA_RT_FORMAT_YUV420 },
	{ PixelFormat::P010LE, VA_RT_FORMAT_YUV420_10 }, { PixelFormat::P012LE, VA_RT_FORMAT_YUV420_12 },
	{ PixelFormat::P016LE, VA_RT_FORMAT_YUV420_12 }, { PixelFormat::NV16, VA_RT_FORMAT_YUV422 },
	{ PixelFormat::YUV422P, VA_RT_FORMAT_YUV422 },	{ PixelFormat::YUYV422, VA_RT_FORMAT_YUV422 },
	{ PixelFormat::UYVY422, VA_RT_FORMAT_YUV422 },	{ PixelFormat::YVYU422, VA_RT_FORMAT_YUV422 },
	{ PixelFormat::VYUY422, VA_RT_FORMAT_YUV422 },	{ PixelFormat::Y210LE, VA_RT_FORMAT_YUV422_10 },
	{ PixelFormat::Y212LE, VA_RT_FORMAT_YUV422_12 }, { PixelFormat::YUV444P, VA_RT_FORMAT_YUV444 },
	{ PixelFormat::VUYA, VA_RT_FORMAT_YUV444 },	{ PixelFormat::VUYX, VA_RT_FORMAT_YUV444 },
	{ PixelFormat::Y410, VA_RT_FORMAT_YUV444_10 },	{ PixelFormat::XV30, VA_RT_FORMAT_YUV444_10 },
	{ PixelFormat::Y412LE, VA_RT_FORMAT_YUV444_12 }, { PixelFormat::XV36, VA_RT_FORMAT_YUV444_12 },
	{ PixelFormat::YUV411P, VA_RT_FORMAT_YUV411 },	{ PixelFormat::GRAY8, VA_RT_FORMAT_YUV400 },
	{ PixelFormat::RGBA, VA_RT_FORMAT_RGB32 },	{ PixelFormat::BGRA, VA_RT_FORMAT_RGB32 },
	{ PixelFormat::RGBX, VA_RT_FORMAT_RGB32 },	{ PixelFormat::BGRX, VA_RT_FORMAT_RGB32 },
	{ PixelFormat::ARGB, VA_RT_FORMAT_RGB32 },	{ PixelFormat::XRGB, VA_RT_FORMAT_RGB32 },
	{ PixelFormat::ABGR, VA_RT_FORMAT_RGB32 },	{ PixelFormat::XBGR, VA_RT_FORMAT_RGB32 },
	{ PixelFormat::X2RGB10LE, VA_RT_FORMAT_RGB32_10 }, { PixelFormat::X2BGR10LE, VA_RT_FORMAT_RGB32_10 },
	{ PixelFormat::RGB10A2, VA_RT_FORMAT_RGB32_10 }, { PixelFormat::RGB565LE, VA_RT_FORMAT_RGB16 },
	{ PixelFormat::BGR565LE, VA_RT_FORMAT_RGB16 },
};

// Every fourcc drm_fourcc_geometry.cpp (DmaBuf validation) knows, in its order.
const uint32_t kGeometryFourccs[] = {
	DRM_FORMAT_R8, DRM_FORMAT_R10, DRM_FORMAT_R12, DRM_FORMAT_R16, DRM_FORMAT_GR88, DRM_FORMAT_RG88, DRM_FORMAT_GR1616,
	DRM_FORMAT_RG1616, DRM_FORMAT_RGB565, DRM_FORMAT_BGR565, DRM_FORMAT_RGB888, DRM_FORMAT_BGR888,
	DRM_FORMAT_XRGB8888, DRM_FORMAT_XBGR8888, DRM_FORMAT_RGBX8888, DRM_FORMAT_BGRX8888,
	DRM_FORMAT_ARGB8888, DRM_FORMAT_ABGR8888, DRM_FORMAT_RGBA8888, DRM_FORMAT_BGRA8888,
	DRM_FORMAT_XRGB2101010, DRM_FORMAT_XBGR2101010, DRM_FORMAT_RGBX1010102, DRM_FORMAT_BGRX1010102,
	DRM_FORMAT_ARGB2101010, DRM_FORMAT_ABGR2101010, DRM_FORMAT_RGBA1010102, DRM_FORMAT_BGRA1010102,
	DRM_FORMAT_XRGB16161616F, DRM_FORMAT_XBGR16161616F, DRM_FORMAT_ARGB16161616F,
	DRM_FORMAT_ABGR16161616F, DRM_FORMAT_XRGB16161616, DRM_FORMAT_XBGR16161616,
	DRM_FORMAT_ARGB16161616, DRM_FORMAT_ABGR16161616, DRM_FORMAT_YUYV, DRM_FORMAT_YVYU,
	DRM_FORMAT_UYVY, DRM_FORMAT_VYUY, DRM_FORMAT_Y210, DRM_FORMAT_Y212, DRM_FORMAT_Y216,
	DRM_FORMAT_AYUV, DRM_FORMAT_XYUV8888, DRM_FORMAT_VUY888, DRM_FORMAT_Y410, DRM_FORMAT_Y412,
	DRM_FORMAT_Y416, DRM_FORMAT_XVYU2101010, DRM_FORMAT_XVYU12_16161616, DRM_FORMAT_XVYU16161616,
	DRM_FORMAT_NV12, DRM_FORMAT_NV21, DRM_FORMAT_NV16, DRM_FORMAT_NV61, DRM_FORMAT_NV24,
	DRM_FORMAT_NV42, DRM_FORMAT_P010, DRM_FORMAT_P012, DRM_FORMAT_P016, DRM_FORMAT_P210,
	DRM_FORMAT_YUV420, DRM_FORMAT_YVU420, DRM_FORMAT_YUV422, DRM_FORMAT_YVU422, DRM_FORMAT_YUV444,
	DRM_FORMAT_YVU444, DRM_FORMAT_YUV411, DRM_FORMAT_YUV410, DRM_FORMAT_Q410, DRM_FORMAT_Q401,
};

// clang-format on

// The table must hold exactly the expected rows: same count, each row found once by format and
// name, with the header's value.
void checkAgainstHeaders(FormatApi api, std::span<const Expected> expected, const char *prefix)
{
	std::span<const FormatMapping> table = formatMappings(api);
	ck_assert_uint_eq(table.size(), expected.size());
	for (const FormatMapping &m : table)
		ck_assert_msg(std::strncmp(m.name, prefix, std::strlen(prefix)) == 0,
			      "%s: %s lacks the %s prefix", formatApiName(api), m.name, prefix);
	for (const Expected &e : expected) {
		uint32_t found = 0;
		for (const FormatMapping &m : table) {
			if (m.format != e.format || std::strcmp(e.name, m.name) != 0)
				continue;
			++found;
			ck_assert_msg(m.value == e.value,
				      "%s: %s is 0x%08x, the header says 0x%08x",
				      formatApiName(api), m.name, m.value, e.value);
		}
		ck_assert_msg(found == 1, "%s: %s as %s appears %u times", formatApiName(api),
			      pixelFormatName(e.format), e.name, found);
		auto info = pixelFormatInfo(e.format);
		ck_assert_ok(info);
		ck_assert_msg((*info)->numPlanes == e.planes, "%s has %u planes, %s has %u",
			      (*info)->name, (*info)->numPlanes, e.name, e.planes);
	}
}

bool hasCanonicalEntry(std::span<const FormatMapping> table, PixelFormat format)
{
	for (const FormatMapping &m : table) {
		if (m.format == format && m.canonical)
			return true;
	}
	return false;
}

// X -> PixelFormat -> X, canonical entries unique per value, the first entry of a format
// canonical. A format listed only as a non-canonical alias (R16U on DRM_FORMAT_R16) goes out as
// that value and comes back as the value's canonical format, whose bytes are the same.
void checkRoundTrip(FormatApi api)
{
	std::span<const FormatMapping> table = formatMappings(api);
	ck_assert_uint_gt(table.size(), 0);
	for (const FormatMapping &m : table) {
		ck_assert(m.format != PixelFormat::Unknown);
		ck_assert(canRepresent(api, m.format));
		auto value = toApiFormat(api, m.format);
		ck_assert_ok(value);
		auto back = fromApiFormat(api, *value);
		ck_assert_ok(back);
		if (hasCanonicalEntry(table, m.format)) {
			ck_assert_msg(*back == m.format, "%s: %s -> 0x%08x -> %s",
				      formatApiName(api), pixelFormatName(m.format), *value,
				      pixelFormatName(*back));
		} else {
			const PixelFormatInfo *alias = *pixelFormatInfo(m.format);
			const PixelFormatInfo *owner = *pixelFormatInfo(*back);
			ck_assert_uint_eq(alias->numPlanes, owner->numPlanes);
			for (uint32_t i = 0; i < alias->numPlanes; ++i)
				ck_assert_uint_eq(bytesPerTexel(alias->planes[i].format),
						  bytesPerTexel(owner->planes[i].format));
		}

		uint32_t canonicalWithValue = 0;
		for (const FormatMapping &other : table)
			canonicalWithValue += (other.value == m.value && other.canonical) ? 1 : 0;
		ck_assert_msg(canonicalWithValue == 1, "%s: %s (0x%08x) has %u canonical entries",
			      formatApiName(api), m.name, m.value, canonicalWithValue);

		if (m.canonical) {
			auto format = fromApiFormat(api, m.value);
			ck_assert_ok(format);
			ck_assert(*format == m.format);
		}
		for (const FormatMapping &first : table) {
			if (first.format == m.format) {
				ck_assert_msg(first.canonical ||
						      !hasCanonicalEntry(table, m.format),
					      "%s: the first entry of %s is not canonical",
					      formatApiName(api), pixelFormatName(m.format));
				break;
			}
		}
	}
}

} // namespace

START_TEST(drm_values_match_drm_fourcc_h)
{
	checkAgainstHeaders(FormatApi::DrmFourcc, kDrm, "DRM_FORMAT_");
	ck_assert_uint_eq(toApiFormat(FormatApi::DrmFourcc, PixelFormat::NV12).value(),
			  DRM_FORMAT_NV12);
}
END_TEST

START_TEST(v4l2_values_match_videodev2_h)
{
	checkAgainstHeaders(FormatApi::V4l2Fourcc, kV4l2, "V4L2_PIX_FMT_");
	ck_assert_uint_eq(toApiFormat(FormatApi::V4l2Fourcc, PixelFormat::NV12).value(),
			  V4L2_PIX_FMT_NV12);
}
END_TEST

START_TEST(va_values_match_va_h)
{
	checkAgainstHeaders(FormatApi::VaFourcc, kVa, "VA_FOURCC_");
	ck_assert_uint_eq(toApiFormat(FormatApi::VaFourcc, PixelFormat::P010LE).value(),
			  VA_FOURCC_P010);
}
END_TEST

START_TEST(every_table_round_trips)
{
	checkRoundTrip(FormatApi::DrmFourcc);
	checkRoundTrip(FormatApi::V4l2Fourcc);
	checkRoundTrip(FormatApi::VaFourcc);
	ck_assert(fromApiFormat(FormatApi::DrmFourcc, DRM_FORMAT_ABGR8888).value() ==
		  PixelFormat::RGBA);
}
END_TEST

START_TEST(v4l2_lists_single_buffer_forms_first)
{
	bool multiPlanar = false;
	for (const FormatMapping &m : formatMappings(FormatApi::V4l2Fourcc)) {
		size_t length = std::strlen(m.name);
		bool isM = m.name[length - 1] == 'M';
		ck_assert_msg(isM || !multiPlanar, "%s comes after the multi-planar forms", m.name);
		multiPlanar = multiPlanar || isM;
	}
	ck_assert(multiPlanar);
	// The single-buffer spelling answers toApiFormat; the _M one still maps back.
	ck_assert_uint_eq(*toApiFormat(FormatApi::V4l2Fourcc, PixelFormat::NV12),
			  V4L2_PIX_FMT_NV12);
	ck_assert(*fromApiFormat(FormatApi::V4l2Fourcc, V4L2_PIX_FMT_NV12M) == PixelFormat::NV12);
	ck_assert_uint_eq(*toApiFormat(FormatApi::V4l2Fourcc, PixelFormat::YUV444P),
			  V4L2_PIX_FMT_YUV444M);
}
END_TEST

START_TEST(shared_values_map_back_to_the_canonical_format)
{
	ck_assert_uint_eq(*toApiFormat(FormatApi::DrmFourcc, PixelFormat::R16U), DRM_FORMAT_R16);
	ck_assert(*fromApiFormat(FormatApi::DrmFourcc, DRM_FORMAT_R16) == PixelFormat::GRAY16LE);
	ck_assert_uint_eq(*toApiFormat(FormatApi::VaFourcc, PixelFormat::XV30), VA_FOURCC_Y410);
	ck_assert(*fromApiFormat(FormatApi::VaFourcc, VA_FOURCC_Y410) == PixelFormat::Y410);
	ck_assert(*fromApiFormat(FormatApi::VaFourcc, VA_FOURCC_Y8) == PixelFormat::GRAY8);
	ck_assert_uint_eq(*toApiFormat(FormatApi::VaFourcc, PixelFormat::GRAY8), VA_FOURCC_Y800);
}
END_TEST

// Layouts that look alike but differ in bits, order or planes stay unmapped.
START_TEST(look_alike_layouts_are_not_mapped)
{
	ck_assert_error(fromApiFormat(FormatApi::DrmFourcc, DRM_FORMAT_Q410),
			ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::DrmFourcc, DRM_FORMAT_Y416),
			ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::DrmFourcc, DRM_FORMAT_ARGB2101010),
			ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::V4l2Fourcc, V4L2_PIX_FMT_YUV444),
			ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::V4l2Fourcc, V4L2_PIX_FMT_AYUV32),
			ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::V4l2Fourcc, V4L2_PIX_FMT_RGB32),
			ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::VaFourcc, VA_FOURCC_Y416), ErrorCode::NotSupported,
			"value");
	ck_assert_error(fromApiFormat(FormatApi::VaFourcc, VA_FOURCC_YV24), ErrorCode::NotSupported,
			"value");
	ck_assert_error(fromApiFormat(FormatApi::VaFourcc, VA_FOURCC_RGBP), ErrorCode::NotSupported,
			"value");
	ck_assert_error(toApiFormat(FormatApi::DrmFourcc, PixelFormat::GBRP),
			ErrorCode::NotSupported, "format");
	ck_assert_error(toApiFormat(FormatApi::V4l2Fourcc, PixelFormat::V210),
			ErrorCode::NotSupported, "format");
	ck_assert_error(toApiFormat(FormatApi::VaFourcc, PixelFormat::AYUV64LE),
			ErrorCode::NotSupported, "format");
}
END_TEST

START_TEST(va_rt_formats_match_va_h)
{
	for (const PixelFormatInfo &info : allPixelFormats()) {
		const RtRow *row = nullptr;
		for (const RtRow &r : kVaRt) {
			if (r.format == info.format)
				row = &r;
		}
		auto rt = vaRtFormat(info.format);
		if (!row) {
			ck_assert_error(rt, ErrorCode::NotSupported, "format");
			continue;
		}
		ck_assert_ok(rt);
		ck_assert_msg(*rt == row->rt, "%s: VA RT 0x%x, expected 0x%x", info.name, *rt,
			      row->rt);
		ck_assert_msg(canRepresent(FormatApi::VaFourcc, info.format),
			      "%s has an RT class but no fourcc", info.name);
	}
	// Every VA fourcc has a class, except 16-bit grey: VA_RT_FORMAT_YUV400 is 8-bit only.
	for (const FormatMapping &m : formatMappings(FormatApi::VaFourcc)) {
		if (m.format != PixelFormat::GRAY16LE)
			ck_assert_msg(vaRtFormat(m.format).ok(), "%s has no VA RT format", m.name);
	}
	ck_assert_error(vaRtFormat(PixelFormat::GRAY16LE), ErrorCode::NotSupported, "format");
}
END_TEST

// Each fourcc DmaBuf validation knows and gpuhandle maps: a tight layout of that format is
// accepted; one plane too few or too many, or any pitch one byte short, is refused. So the plane
// count and every row size agree between the two tables.
START_TEST(dmabuf_validation_agrees_with_the_drm_table)
{
	constexpr uint32_t kWidth = 64, kHeight = 32;
	uint32_t checked = 0;
	for (uint32_t code : kGeometryFourccs) {
		auto format = fromApiFormat(FormatApi::DrmFourcc, code);
		if (!format.ok())
			continue;
		auto layout = computeLayout(*format, kWidth, kHeight);
		ck_assert_ok(layout);
		DmaBufDesc d;
		d.fourcc = code;
		d.modifier = kDrmModifierLinear;
		d.width = kWidth;
		d.height = kHeight;
		d.numObjects = 1;
		d.objects[0] = { SharedFd(test::makeMemfd(layout->size)), layout->size };
		d.numPlanes = layout->numPlanes;
		for (uint32_t i = 0; i < layout->numPlanes; ++i)
			d.planes[i] = { 0, layout->planes[i].offset, layout->planes[i].stride };
		ck_assert_ok(DmaBuf::create(d));

		DmaBufDesc fewer = d;
		fewer.numPlanes -= 1;
		if (fewer.numPlanes)
			ck_assert_error(DmaBuf::create(fewer), ErrorCode::InvalidArgument,
					"numPlanes");
		DmaBufDesc more = d;
		more.planes[more.numPlanes] = { 0, 0, d.planes[0].pitch };
		more.numPlanes += 1;
		ck_assert_error(DmaBuf::create(more), ErrorCode::InvalidArgument, "numPlanes");
		for (uint32_t i = 0; i < d.numPlanes; ++i) {
			DmaBufDesc shortRow = d;
			shortRow.planes[i].pitch -= 1;
			std::string field = "planes[" + std::to_string(i) + "].pitch";
			ck_assert_error(DmaBuf::create(shortRow), ErrorCode::OutOfRange,
					field.c_str());
		}
		++checked;
	}
	// Every mapped DRM format is one DmaBuf validation knows the geometry of.
	ck_assert_uint_ge(checked, 45);
	for (const FormatMapping &m : formatMappings(FormatApi::DrmFourcc)) {
		bool known = false;
		for (uint32_t code : kGeometryFourccs)
			known = known || code == m.value;
		ck_assert_msg(known,
			      "%s is mapped but DmaBuf validation does not know its geometry",
			      m.name);
	}
}
END_TEST

int main()
{
	Suite *suite = suite_create("formats_drm_v4l2_va");
	TCase *tc = tcase_create("tables");
	tcase_add_test(tc, drm_values_match_drm_fourcc_h);
	tcase_add_test(tc, v4l2_values_match_videodev2_h);
	tcase_add_test(tc, va_values_match_va_h);
	tcase_add_test(tc, every_table_round_trips);
	tcase_add_test(tc, v4l2_lists_single_buffer_forms_first);
	tcase_add_test(tc, shared_values_map_back_to_the_canonical_format);
	tcase_add_test(tc, look_alike_layouts_are_not_mapped);
	tcase_add_test(tc, va_rt_formats_match_va_h);
	tcase_add_test(tc, dmabuf_validation_agrees_with_the_drm_table);
	suite_add_tcase(suite, tc);
	return gpuhandle::test::runSuite(suite);
}
