// The GStreamer format table, layouts and colorimetry mapping, proved against libgstvideo 1.22.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

// GLib's headers reach us with -I, not -isystem: keep their C casts out of our warnings.
#include <gst/gst.h>
#include <gst/video/video.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

std::span<const FormatMapping> table()
{
	return formatMappings(FormatApi::GStreamer);
}

const PixelFormatInfo &infoOf(PixelFormat format)
{
	auto info = pixelFormatInfo(format);
	ck_assert_ok(info);
	return **info;
}

const FormatMapping *rowNamed(const char *name)
{
	for (const FormatMapping &m : table()) {
		if (std::strcmp(m.name, name) == 0)
			return &m;
	}
	return nullptr;
}

GstVideoFormat gstFormat(uint32_t value)
{
	return static_cast<GstVideoFormat>(value);
}

// Samples and rows of plane `plane` as GstVideoInfo counts them (its first component's).
void gstPlaneSamples(const GstVideoInfo &info, uint32_t plane, int &width, int &height)
{
	gint comp[GST_VIDEO_MAX_COMPONENTS];
	gst_video_format_info_component(info.finfo, plane, comp);
	width = GST_VIDEO_INFO_COMP_WIDTH(&info, comp[0]);
	height = GST_VIDEO_INFO_COMP_HEIGHT(&info, comp[0]);
}

// GStreamer 1.22 formats with no gpuhandle equivalent, grouped by why. The test below fails when
// a format is mapped or unmapped without updating these lists.
// Big-endian: gpuhandle's formats are little-endian.
constexpr const char *kBigEndian[] = {
	"GRAY16_BE", "r210",      "I420_10BE", "I422_10BE", "Y444_10BE", "GBR_10BE",  "A420_10BE",
	"A422_10BE", "A444_10BE", "P010_10BE", "GBRA_10BE", "GBR_12BE",  "GBRA_12BE", "I420_12BE",
	"I422_12BE", "Y444_12BE", "Y444_16BE", "P016_BE",   "P012_BE",   "Y212_BE",   "Y412_BE",
	"ARGB64_BE", "RGBA64_BE", "BGRA64_BE", "ABGR64_BE",
};
// Tiled: a PixelFormat describes linear rows.
constexpr const char *kTiled[] = {
	"NV12_64Z32", "NV12_4L4", "NV12_32L32", "NV12_16L32S", "NV12_8L128", "NV12_10BE_8L128",
};
struct Unmapped {
	const char *name;
	const char *reason;
};
constexpr Unmapped kOtherUnmapped[] = {
	{ "AYUV", "8-bit A, Y, U, V bytes; gpuhandle has V, U, Y, A (VUYA)" },
	{ "v308", "packed 8-bit 4:4:4 Y, U, V at 24 bits per pixel" },
	{ "RGB15", "5:5:5 RGB; gpuhandle has only 5:6:5" },
	{ "BGR15", "5:5:5 RGB; gpuhandle has only 5:6:5" },
	{ "UYVP", "packed 10-bit 4:2:2 at 20 bits per pixel" },
	{ "RGB8P", "paletted" },
	{ "YVU9", "4:1:0 with V before U; gpuhandle has YUV9's order (YUV410P)" },
	{ "IYU1", "packed 4:1:1" },
	{ "ARGB64", "16-bit A, R, G, B; gpuhandle has R, G, B, A and B, G, R, A" },
	{ "IYU2", "packed 8-bit 4:4:4 U, Y, V at 24 bits per pixel" },
	{ "GRAY10_LE32", "three 10-bit samples packed in 32 bits" },
	{ "NV12_10LE32", "three 10-bit samples packed in 32 bits" },
	{ "NV16_10LE32", "three 10-bit samples packed in 32 bits" },
	{ "NV12_10LE40", "four 10-bit samples packed in 40 bits" },
	{ "BGR10A2_LE", "B in the low bits and 2-bit alpha; X2RGB10LE has padding, not alpha" },
	{ "RGBP", "planar R, G, B; gpuhandle has G, B, R plane order (GBRP)" },
	{ "BGRP", "planar B, G, R; gpuhandle has G, B, R plane order (GBRP)" },
	{ "ARGB64_LE", "16-bit A, R, G, B; gpuhandle has R, G, B, A and B, G, R, A" },
	{ "ABGR64_LE", "16-bit A, B, G, R; gpuhandle has R, G, B, A and B, G, R, A" },
};
constexpr size_t kUnmappedCount =
	std::size(kBigEndian) + std::size(kTiled) + std::size(kOtherUnmapped);

template<size_t N>
bool listed(const char *const (&names)[N], const char *name)
{
	return std::any_of(names, names + N,
			   [name](const char *n) { return std::strcmp(n, name) == 0; });
}

bool knownUnmapped(const char *name)
{
	return listed(kBigEndian, name) || listed(kTiled, name) ||
	       std::any_of(std::begin(kOtherUnmapped), std::end(kOtherUnmapped),
			   [name](const Unmapped &u) { return std::strcmp(u.name, name) == 0; });
}

// GStreamer 1.22 carries alpha in these without setting GST_VIDEO_FORMAT_FLAG_ALPHA.
constexpr const char *kAlphaWithoutFlag[] = { "Y410", "Y412_LE", "AV12" };

} // namespace

START_TEST(test_names_and_numbers)
{
	ck_assert_uint_gt(table().size(), 0);
	for (const FormatMapping &m : table()) {
		GstVideoFormat byName = gst_video_format_from_string(m.name);
		ck_assert_msg(static_cast<uint32_t>(byName) == m.value,
			      "%s: GStreamer numbers it %d, the table %u", m.name,
			      static_cast<int>(byName), m.value);
		const char *name = gst_video_format_to_string(gstFormat(m.value));
		ck_assert_ptr_nonnull(name);
		ck_assert_str_eq(name, m.name);
	}
}
END_TEST

// X -> PixelFormat -> X for every row; one canonical row per value; extra rows share a value.
START_TEST(test_round_trip)
{
	std::set<uint32_t> canonicalValues;
	for (const FormatMapping &m : table()) {
		auto value = toApiFormat(FormatApi::GStreamer, m.format);
		ck_assert_ok(value);
		auto back = fromApiFormat(FormatApi::GStreamer, *value);
		ck_assert_ok(back);
		ck_assert_msg(*back == m.format, "%s does not map back to %s", m.name,
			      pixelFormatName(m.format));
		ck_assert(canRepresent(FormatApi::GStreamer, m.format));
		if (m.canonical) {
			ck_assert_msg(canonicalValues.insert(m.value).second,
				      "%u has two canonical rows", m.value);
			auto format = fromApiFormat(FormatApi::GStreamer, m.value);
			ck_assert_ok(format);
			ck_assert(*format == m.format);
		}
	}
	for (const FormatMapping &m : table()) {
		if (!m.canonical)
			ck_assert_msg(canonicalValues.count(m.value), "%s has no canonical row",
				      m.name);
	}
	for (const PixelFormatInfo &info : allPixelFormats()) {
		if (!canRepresent(FormatApi::GStreamer, info.format))
			ck_assert_error(toApiFormat(FormatApi::GStreamer, info.format),
					ErrorCode::NotSupported, "format");
	}
	ck_assert_error(fromApiFormat(FormatApi::GStreamer, GST_VIDEO_FORMAT_UNKNOWN),
			ErrorCode::NotSupported, "value");
}
END_TEST

// Planes, components, alpha, family, depth and subsampling agree with GstVideoFormatInfo.
START_TEST(test_format_info)
{
	for (const FormatMapping &m : table()) {
		const PixelFormatInfo &ours = infoOf(m.format);
		const GstVideoFormatInfo *gst = gst_video_format_get_info(gstFormat(m.value));
		ck_assert_ptr_nonnull(gst);
		ck_assert_msg(gst->n_planes == ours.numPlanes, "%s: %u planes, ours %u", m.name,
			      gst->n_planes, ours.numPlanes);
		uint32_t components = ours.family == ColorFamily::Gray ? 1
				      : ours.hasAlpha()                ? 4
								       : 3;
		ck_assert_msg(gst->n_components == components, "%s: %u components, ours %u", m.name,
			      gst->n_components, components);
		bool flagged = GST_VIDEO_FORMAT_INFO_HAS_ALPHA(gst);
		ck_assert_msg(flagged ? ours.hasAlpha()
				      : !ours.hasAlpha() || listed(kAlphaWithoutFlag, m.name),
			      "%s: GStreamer alpha flag %d, ours %d", m.name, flagged,
			      ours.hasAlpha());
		ck_assert_msg(GST_VIDEO_FORMAT_INFO_IS_YUV(gst) ==
					      (ours.family == ColorFamily::Yuv) &&
				      GST_VIDEO_FORMAT_INFO_IS_RGB(gst) ==
					      (ours.family == ColorFamily::Rgb),
			      "%s: colour family differs", m.name);
		ck_assert_msg(gst->depth[0] == ours.depth, "%s: depth %u, ours %u", m.name,
			      gst->depth[0], ours.depth);
		for (uint32_t p = 0; p < ours.numPlanes; ++p) {
			gint comp[GST_VIDEO_MAX_COMPONENTS];
			gst_video_format_info_component(gst, p, comp);
			ck_assert_int_ge(comp[0], 0);
			ck_assert_msg((1u << gst->w_sub[comp[0]]) == ours.planes[p].hsub &&
					      (1u << gst->h_sub[comp[0]]) == ours.planes[p].vsub,
				      "%s plane %u: subsampling differs", m.name, p);
		}
	}
}
END_TEST

// Where packed formats put each channel: one probe pixel unpacked by GStreamer (to A, R, G, B or
// A, Y, U, V; 16-bit results for formats over 8 bits) against the layout gpuhandle documents.
START_TEST(test_packed_channel_positions)
{
	// The bytes are a little-endian number: 0x4433 is the bytes 33, 44. RGB565LE has B in bits
	// 0..4, BGR565LE R; Y410 has U in bits 0..9; XRGB's x byte is copied through as alpha.
	const struct {
		PixelFormat format;
		uint64_t bytes;
		uint16_t expected[4];
	} probes[] = {
		{ PixelFormat::RGB565LE, 0x001f, { 0xff, 0, 0, 0xf8 } },
		{ PixelFormat::BGR565LE, 0x001f, { 0xff, 0xf8, 0, 0 } },
		{ PixelFormat::RGB10A2, 0xc00003ff, { 0xc000, 0xffc0, 0, 0 } },
		{ PixelFormat::Y410, 0xc00003ff, { 0xc000, 0, 0xffc0, 0 } },
		{ PixelFormat::Y412LE, 0x0040'0030'0020'0010, { 0x40, 0x20, 0x10, 0x30 } },
		{ PixelFormat::AYUV64LE,
		  0x4444'3333'2222'1111,
		  { 0x1111, 0x2222, 0x3333, 0x4444 } },
		{ PixelFormat::Y210LE, 0x0080'0000'0040'ffc0, { 0xffff, 0xffc0, 0x40, 0x80 } },
		{ PixelFormat::V216, 0x0000'3333'2222'1111, { 0xffff, 0x2222, 0x1111, 0x3333 } },
		{ PixelFormat::VUYA, 0x04030201, { 4, 3, 2, 1 } },
		{ PixelFormat::XRGB, 0x33221100, { 0, 0x11, 0x22, 0x33 } },
		{ PixelFormat::ABGR, 0x11223344, { 0x44, 0x11, 0x22, 0x33 } },
		{ PixelFormat::YVYU422, 0x40302010, { 0xff, 0x10, 0x40, 0x20 } },
	};
	for (const auto &probe : probes) {
		const GstVideoFormatInfo *info = gst_video_format_get_info(
			gstFormat(*toApiFormat(FormatApi::GStreamer, probe.format)));
		uint8_t line[16] = {};
		std::memcpy(line, &probe.bytes, sizeof(probe.bytes)); // little-endian host
		gpointer planes[GST_VIDEO_MAX_PLANES] = { line };
		gint strides[GST_VIDEO_MAX_PLANES] = { sizeof(line) };
		bool wide = info->unpack_format == GST_VIDEO_FORMAT_AYUV64 ||
			    info->unpack_format == GST_VIDEO_FORMAT_ARGB64;
		uint16_t out16[8] = {};
		uint8_t out8[8] = {};
		// Two pixels: the 4:2:2 formats unpack pairs.
		info->unpack_func(info, GST_VIDEO_PACK_FLAG_TRUNCATE_RANGE,
				  wide ? static_cast<void *>(out16) : out8, planes, strides, 0, 0,
				  2);
		for (int c = 0; c < 4; ++c) {
			uint16_t got = wide ? out16[c] : out8[c];
			ck_assert_msg(got == probe.expected[c],
				      "%s channel %d: 0x%x, expected 0x%x", info->name, c, got,
				      probe.expected[c]);
		}
	}
}
END_TEST

// Every GStreamer 1.22 format is either in the table or in an unmapped list, never both.
START_TEST(test_unmapped_formats_are_known)
{
	uint32_t unmapped = 0;
	for (int f = GST_VIDEO_FORMAT_I420; f <= GST_VIDEO_FORMAT_NV12_10BE_8L128; ++f) {
		const char *name = gst_video_format_to_string(static_cast<GstVideoFormat>(f));
		ck_assert_ptr_nonnull(name);
		if (rowNamed(name)) {
			ck_assert_msg(!knownUnmapped(name), "%s is mapped and listed as unmapped",
				      name);
			continue;
		}
		ck_assert_msg(knownUnmapped(name),
			      "GStreamer format %s (%d) is neither mapped nor listed", name, f);
		unmapped++;
	}
	ck_assert_uint_eq(unmapped, kUnmappedCount);
	ck_assert_uint_eq(unmapped + table().size(),
			  GST_VIDEO_FORMAT_NV12_10BE_8L128 - GST_VIDEO_FORMAT_I420 + 1);
}
END_TEST

constexpr struct {
	uint32_t width;
	uint32_t height;
} kSizes[] = {
	{ 1, 1 },       { 2, 2 },       { 17, 9 },      { 33, 17 },     { 640, 480 },
	{ 1918, 1078 }, { 1920, 1080 }, { 3840, 2160 }, { 4096, 2304 },
};

// One plane as both sides describe it; `span` runs to the next plane's offset (or the end).
struct PlaneFacts {
	uint64_t width, height, stride, offset, span;
};

// "20x9 stride 20 at 0 spans 200, ..., total 320"
std::string describe(const std::vector<PlaneFacts> &planes, uint64_t size)
{
	std::string text;
	for (const PlaneFacts &p : planes)
		text += std::to_string(p.width) + "x" + std::to_string(p.height) + " stride " +
			std::to_string(p.stride) + " at " + std::to_string(p.offset) + " spans " +
			std::to_string(p.span) + ", ";
	return text + "total " + std::to_string(size);
}

// LayoutPolicy::GStreamer equals GstVideoInfo: samples, rows, strides, offsets, spans and size.
START_TEST(test_layouts_match_gst_video_info)
{
	for (const FormatMapping &m : table()) {
		for (const auto &size : kSizes) {
			GstVideoInfo gst;
			gst_video_info_init(&gst);
			ck_assert(gst_video_info_set_format(&gst, gstFormat(m.value), size.width,
							    size.height));
			auto layout = computeLayout(m.format, size.width, size.height,
						    LayoutPolicy::GStreamer);
			ck_assert_ok(layout);
			std::vector<PlaneFacts> ours, theirs;
			for (uint32_t p = 0; p < layout->numPlanes; ++p) {
				const PlaneLayout &plane = layout->planes[p];
				ours.push_back({ plane.width, plane.height, plane.stride,
						 plane.offset, plane.size });
			}
			for (uint32_t p = 0; p < GST_VIDEO_INFO_N_PLANES(&gst); ++p) {
				uint64_t end = p + 1 < GST_VIDEO_INFO_N_PLANES(&gst)
						       ? gst.offset[p + 1]
						       : gst.size;
				int width = 0, height = 0;
				gstPlaneSamples(gst, p, width, height);
				theirs.push_back({ uint64_t(width), uint64_t(height),
						   uint64_t(gst.stride[p]), gst.offset[p],
						   end - gst.offset[p] });
			}
			std::string expected = describe(theirs, gst.size);
			std::string actual = describe(ours, layout->size);
			ck_assert_msg(actual == expected, "%s %ux%u: ours %s; GStreamer %s", m.name,
				      size.width, size.height, actual.c_str(), expected.c_str());
		}
	}
}
END_TEST

// Formats GStreamer lacks get 4-byte-aligned rows and planes in order.
START_TEST(test_layouts_of_formats_gstreamer_lacks)
{
	uint32_t checked = 0;
	for (const PixelFormatInfo &info : allPixelFormats()) {
		if (canRepresent(FormatApi::GStreamer, info.format))
			continue;
		checked++;
		for (const auto &size : kSizes) {
			auto layout = computeLayout(info.format, size.width, size.height,
						    LayoutPolicy::GStreamer);
			ck_assert_ok(layout);
			uint64_t offset = 0;
			for (uint32_t p = 0; p < info.numPlanes; ++p) {
				const PlaneLayout &plane = layout->planes[p];
				ck_assert_uint_eq(plane.stride % 4, 0);
				ck_assert_uint_ge(plane.stride,
						  info.planes[p].rowBytes(size.width));
				ck_assert_uint_eq(plane.offset, offset);
				ck_assert_uint_ge(plane.size,
						  uint64_t(plane.stride) * plane.height);
				offset += plane.size;
			}
			ck_assert_uint_eq(layout->size, offset);
		}
	}
	ck_assert_uint_eq(checked, allPixelFormats().size() - table().size());
}
END_TEST

START_TEST(test_layout_overflow)
{
	// A row past 32 bits, and planes whose sum passes 64 bits.
	ck_assert_error(computeLayout(PixelFormat::RGBAF32, 0xffffffffu, 1,
				      LayoutPolicy::GStreamer),
			ErrorCode::OutOfRange, "width");
	ck_assert_error(computeLayout(PixelFormat::GBRAP, 0xfffffffcu, 0xffffffffu,
				      LayoutPolicy::GStreamer),
			ErrorCode::OutOfRange, "height");
	// The tallest 4:2:0 frame: its height rounds up to 2^32 without wrapping.
	auto tall = computeLayout(PixelFormat::NV12, 1, 0xffffffffu, LayoutPolicy::GStreamer);
	ck_assert_ok(tall);
	ck_assert_uint_eq(tall->planes[0].height, 0xffffffffu);
	ck_assert_uint_eq(tall->planes[0].size, 4ull << 32);
	ck_assert_uint_eq(tall->size, (4ull << 32) + (4ull << 31));
}
END_TEST

// GStreamer 1.22 has no DRM fourcc table (gst_video_dma_drm_fourcc_from_format() came in 1.24);
// its legacy fourccs (gst_video_format_to_fourcc) coincide with DRM's for the formats both name
// alike (NV12, YV12, UYVY, Y210, Y410, YUV9 ...). Where such a fourcc is in our DRM table, it
// must name the same format. Empty while the DRM table is unfilled.
START_TEST(test_legacy_fourccs_agree_with_drm_table)
{
	uint32_t compared = 0;
	for (const FormatMapping &m : table()) {
		guint32 fourcc = gst_video_format_to_fourcc(gstFormat(m.value));
		if (!fourcc)
			continue;
		auto drm = fromApiFormat(FormatApi::DrmFourcc, fourcc);
		if (!drm.ok())
			continue;
		ck_assert_msg(*drm == m.format, "fourcc %.4s: GStreamer %s, our DRM table %s",
			      reinterpret_cast<const char *>(&fourcc), m.name,
			      pixelFormatName(*drm));
		compared++;
	}
	if (formatMappings(FormatApi::DrmFourcc).empty())
		ck_assert_uint_eq(compared, 0);
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *suite = suite_create("formats_gstreamer");
	TCase *tc = tcase_create("gstreamer");
	tcase_add_test(tc, test_names_and_numbers);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_format_info);
	tcase_add_test(tc, test_packed_channel_positions);
	tcase_add_test(tc, test_unmapped_formats_are_known);
	tcase_add_test(tc, test_layouts_match_gst_video_info);
	tcase_add_test(tc, test_layouts_of_formats_gstreamer_lacks);
	tcase_add_test(tc, test_layout_overflow);
	tcase_add_test(tc, test_legacy_fourccs_agree_with_drm_table);
	suite_add_tcase(suite, tc);
	return gpuhandle::test::runSuite(suite);
}
