// GStreamer's GstVideoColorimetry against our H.273 colorimetry, checked with GStreamer's own
// ISO conversions and colorimetry strings.
#include <gpuhandle/colorimetry_mappings.h>

#include <cstdint>
#include <string>

#include <gst/gst.h>
#include <gst/video/video.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {
// A colorimetry field on both sides, with GStreamer's own H.273 conversions for it.
struct Field {
	const char *name;
	guint lastGstValue; // in GStreamer 1.22
	uint32_t GstColorimetry::*gst;
	guint (*toIso)(guint gst);
	guint (*fromIso)(guint code);
	void (*set)(Colorimetry &colorimetry, unsigned code);
	unsigned (*get)(const Colorimetry &colorimetry);
};
const Field kFields[] = {
	{ "matrix", GST_VIDEO_COLOR_MATRIX_BT2020, &GstColorimetry::matrix,
	  [](guint v) {
		  return gst_video_color_matrix_to_iso(static_cast<GstVideoColorMatrix>(v));
	  },
	  [](guint c) { return static_cast<guint>(gst_video_color_matrix_from_iso(c)); },
	  [](Colorimetry &c, unsigned v) { c.matrix = static_cast<ColorMatrix>(v); },
	  [](const Colorimetry &c) { return static_cast<unsigned>(c.matrix); } },
	{ "transfer", GST_VIDEO_TRANSFER_BT601, &GstColorimetry::transfer,
	  [](guint v) {
		  return gst_video_transfer_function_to_iso(
			  static_cast<GstVideoTransferFunction>(v));
	  },
	  [](guint c) { return static_cast<guint>(gst_video_transfer_function_from_iso(c)); },
	  [](Colorimetry &c, unsigned v) { c.transfer = static_cast<ColorTransfer>(v); },
	  [](const Colorimetry &c) { return static_cast<unsigned>(c.transfer); } },
	{ "primaries", GST_VIDEO_COLOR_PRIMARIES_EBU3213, &GstColorimetry::primaries,
	  [](guint v) {
		  return gst_video_color_primaries_to_iso(static_cast<GstVideoColorPrimaries>(v));
	  },
	  [](guint c) { return static_cast<guint>(gst_video_color_primaries_from_iso(c)); },
	  [](Colorimetry &c, unsigned v) { c.primaries = static_cast<ColorPrimaries>(v); },
	  [](const Colorimetry &c) { return static_cast<unsigned>(c.primaries); } },
};
constexpr unsigned kH273Unspecified = 2;

} // namespace

// Each GStreamer value of each field against gst_video_*_to_iso() and back.
START_TEST(test_colorimetry_fields_match_gst_iso)
{
	for (const Field &f : kFields) {
		for (guint v = 0; v <= f.lastGstValue; ++v) {
			GstColorimetry gst;
			gst.*f.gst = v;
			auto ours = fromGstColorimetry(gst);
			guint code = f.toIso(v); // UNKNOWN (0) and values H.273 lacks give 2
			if (v != 0 && code == kH273Unspecified) {
				ck_assert_error(ours, ErrorCode::NotSupported, f.name);
				continue;
			}
			ck_assert_ok(ours);
			ck_assert_msg(f.get(*ours) == code,
				      "GStreamer %s %u: ours %u, GStreamer %u", f.name, v,
				      f.get(*ours), code);
			auto back = toGstColorimetry(*ours);
			ck_assert_ok(back);
			ck_assert_uint_eq((*back).*f.gst, v);
		}
	}
	ck_assert_error(fromGstColorimetry({ 0, GST_VIDEO_COLOR_MATRIX_BT2020 + 1, 0, 0 }),
			ErrorCode::NotSupported, "matrix");
}
END_TEST

// Each H.273 code against gst_video_*_from_iso(): the same GStreamer value, or NotSupported.
START_TEST(test_colorimetry_codes_match_gst_from_iso)
{
	for (const Field &f : kFields) {
		for (unsigned code = 0; code <= 22; ++code) {
			Colorimetry c;
			f.set(c, code);
			if (!c.isValid() || code == kH273Unspecified)
				continue;
			guint gst = f.fromIso(code);
			auto ours = toGstColorimetry(c);
			if (gst == 0) {
				ck_assert_error(ours, ErrorCode::NotSupported, f.name);
				continue;
			}
			ck_assert_ok(ours);
			ck_assert_msg((*ours).*f.gst == gst, "H.273 %s %u: ours %u, GStreamer %u",
				      f.name, code, (*ours).*f.gst, gst);
		}
	}
	// Ranges have no _iso functions: UNKNOWN, 0_255 and 16_235.
	ck_assert_uint_eq(toGstColorimetry({ ColorRange::Full })->range,
			  GST_VIDEO_COLOR_RANGE_0_255);
	ck_assert_uint_eq(toGstColorimetry({ ColorRange::Limited })->range,
			  GST_VIDEO_COLOR_RANGE_16_235);
	for (guint v = GST_VIDEO_COLOR_RANGE_UNKNOWN; v <= GST_VIDEO_COLOR_RANGE_16_235; ++v)
		ck_assert_uint_eq(toGstColorimetry(*fromGstColorimetry({ v, 0, 0, 0 }))->range, v);
	// Unknown maps to UNKNOWN both ways.
	auto unknown = toGstColorimetry(Colorimetry{});
	ck_assert_ok(unknown);
	ck_assert(*unknown == GstColorimetry{});
	ck_assert(*fromGstColorimetry(GstColorimetry{}) == Colorimetry{});
}
END_TEST

// GStreamer's own colorimetry strings read and written through our mapping.
START_TEST(test_colorimetry_strings)
{
	using R = ColorRange;
	using M = ColorMatrix;
	using P = ColorPrimaries;
	using T = ColorTransfer;
	const struct {
		const char *name;
		Colorimetry ours;
	} cases[] = {
		{ "bt709", { R::Limited, M::Bt709, P::Bt709, T::Bt709 } },
		{ "bt601", { R::Limited, M::Smpte170M, P::Smpte170M, T::Smpte170M } },
		{ "bt2100-pq", { R::Limited, M::Bt2020Ncl, P::Bt2020, T::Pq } },
		{ "bt2100-hlg", { R::Limited, M::Bt2020Ncl, P::Bt2020, T::Hlg } },
		{ "sRGB", { R::Full, M::Rgb, P::Bt709, T::Srgb } },
	};
	for (const auto &c : cases) {
		GstVideoColorimetry parsed;
		ck_assert(gst_video_colorimetry_from_string(&parsed, c.name));
		auto ours = fromGstColorimetry({ static_cast<uint32_t>(parsed.range),
						 static_cast<uint32_t>(parsed.matrix),
						 static_cast<uint32_t>(parsed.transfer),
						 static_cast<uint32_t>(parsed.primaries) });
		ck_assert_ok(ours);
		ck_assert_msg(*ours == c.ours, "%s read differently", c.name);
		auto gst = toGstColorimetry(c.ours);
		ck_assert_ok(gst);
		GstVideoColorimetry written = {
			static_cast<GstVideoColorRange>(gst->range),
			static_cast<GstVideoColorMatrix>(gst->matrix),
			static_cast<GstVideoTransferFunction>(gst->transfer),
			static_cast<GstVideoColorPrimaries>(gst->primaries)
		};
		gchar *name = gst_video_colorimetry_to_string(&written);
		ck_assert_ptr_nonnull(name);
		const std::string text = name;
		g_free(name);
		ck_assert_string_eq(text, c.name);
	}
	ck_assert_error(toGstColorimetry({ ColorRange::Limited, ColorMatrix::ICtCp }),
			ErrorCode::NotSupported, "matrix");
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *suite = suite_create("colorimetry_gstreamer");
	TCase *tc = tcase_create("colorimetry");
	tcase_add_test(tc, test_colorimetry_fields_match_gst_iso);
	tcase_add_test(tc, test_colorimetry_codes_match_gst_from_iso);
	tcase_add_test(tc, test_colorimetry_strings);
	suite_add_tcase(suite, tc);
	return gpuhandle::test::runSuite(suite);
}
