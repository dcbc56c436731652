// The FFmpeg table, FFmpeg layouts and AVColor* mapping, proved against the installed libavutil.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <set>
#include <string>

extern "C" {
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libavutil/pixfmt.h>
}

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

std::span<const FormatMapping> table()
{
	return formatMappings(FormatApi::FFmpeg);
}

const PixelFormatInfo &infoOf(PixelFormat format)
{
	auto info = pixelFormatInfo(format);
	ck_assert_ok(info);
	return **info;
}

// The table holds libavutil 57's numbers; a later major renumbers (it dropped AV_PIX_FMT_XVMC).
bool sameNumbering()
{
	return LIBAVUTIL_VERSION_MAJOR == 57 && (avutil_version() >> 16) == 57;
}

// Rows for formats that libavutil 57.28 (Debian 12, the oldest we build against) lacks: the
// libavutil 57 minor that added each (doc/APIchanges) and the number it was given.
struct NewerFormat {
	const char *name;
	uint32_t value;
	const char *since;
};
constexpr NewerFormat kNewerFormats[] = {
	{ "vuya", 206, "57.32.100" },   { "rgbaf16le", 208, "57.33.101" },
	{ "vuyx", 209, "57.34.100" },   { "p012le", 210, "57.36.100" },
	{ "y212le", 213, "57.36.100" }, { "xv30le", 215, "57.36.100" },
	{ "xv36le", 217, "57.36.100" }, { "rgbaf32le", 221, "57.37.100" },
};
constexpr uint32_t kLastLavu5728Format = 205; // AV_PIX_FMT_P416LE

const NewerFormat *newerFormat(const char *name)
{
	for (const NewerFormat &n : kNewerFormats) {
		if (std::strcmp(n.name, name) == 0)
			return &n;
	}
	return nullptr;
}

// Little-endian, CPU-memory FFmpeg formats with no gpuhandle equivalent, and why.
struct Unmapped {
	const char *name;
	const char *reason;
};
constexpr Unmapped kKnownUnmapped[] = {
	{ "uyyvyy411", "packed 4:1:1 at 12 bits per pixel; gpuhandle has only planar 4:1:1" },
	{ "bgr8", "3:3:2 RGB in one byte" },
	{ "bgr4_byte", "1:2:1 RGB in one byte" },
	{ "rgb8", "3:3:2 RGB in one byte" },
	{ "rgb4_byte", "1:2:1 RGB in one byte" },
	{ "yuv440p", "4:4:0 (vertical-only) subsampling" },
	{ "yuvj440p", "4:4:0 (vertical-only) subsampling" },
	{ "rgb555le", "5:5:5 RGB; gpuhandle has only 5:6:5" },
	{ "bgr555le", "5:5:5 RGB; gpuhandle has only 5:6:5" },
	{ "rgb444le", "4:4:4 RGB in 16 bits" },
	{ "bgr444le", "4:4:4 RGB in 16 bits" },
	{ "ya8", "grey with alpha" },
	{ "bgr48le", "BGR order at 16 bits; gpuhandle has only RGB48" },
	{ "yuv420p9le", "9-bit samples" },
	{ "yuv444p9le", "9-bit samples" },
	{ "yuv422p9le", "9-bit samples" },
	{ "gbrp9le", "9-bit samples" },
	{ "gbrp16le", "16-bit planar RGB" },
	{ "yuva422p", "8-bit 4:2:2 with alpha plane" },
	{ "yuva444p", "8-bit 4:4:4 with alpha plane" },
	{ "yuva420p9le", "9-bit samples" },
	{ "yuva422p9le", "9-bit samples" },
	{ "yuva444p9le", "9-bit samples" },
	{ "yuva420p16le", "16-bit YUV with alpha plane" },
	{ "yuva422p16le", "16-bit YUV with alpha plane" },
	{ "yuva444p16le", "16-bit YUV with alpha plane" },
	{ "xyz12le", "CIE XYZ samples" },
	{ "nv20le", "10-bit 4:2:2 semi-planar with LSB-aligned samples; P210 is MSB-aligned" },
	{ "ya16le", "grey with alpha" },
	{ "gbrap16le", "16-bit planar RGB with alpha" },
	{ "gbrp14le", "14-bit planar RGB" },
	{ "bayer_bggr8", "raw Bayer mosaic" },
	{ "bayer_rggb8", "raw Bayer mosaic" },
	{ "bayer_gbrg8", "raw Bayer mosaic" },
	{ "bayer_grbg8", "raw Bayer mosaic" },
	{ "bayer_bggr16le", "raw Bayer mosaic" },
	{ "bayer_rggb16le", "raw Bayer mosaic" },
	{ "bayer_gbrg16le", "raw Bayer mosaic" },
	{ "bayer_grbg16le", "raw Bayer mosaic" },
	{ "yuv440p10le", "4:4:0 (vertical-only) subsampling" },
	{ "yuv440p12le", "4:4:0 (vertical-only) subsampling" },
	{ "gray9le", "9-bit samples" },
	{ "gbrpf32le", "planar float RGB" },
	{ "gbrapf32le", "planar float RGB with alpha" },
	{ "gray14le", "14-bit grey" },
	{ "yuva422p12le", "12-bit 4:2:2 with alpha plane" },
	{ "nv42", "4:4:4 semi-planar with V before U; gpuhandle has only NV24" },
	// libavutil 57.37.100 and later only.
	{ "rgbf32le", "three-channel float RGB; gpuhandle's float formats have four channels" },
	// FFmpeg 6.1 and later (libavutil 58): listed by name, absent from FFmpeg 5.1.
	{ "p212le", "12-bit 4:2:2 semi-planar; gpuhandle has P210 and P216" },
	{ "p412le", "12-bit 4:4:4 semi-planar; gpuhandle has P410 and P416" },
	// FFmpeg 7.1 (libavutil 59).
	{ "gbrap14le", "14-bit planar RGB with alpha" },
};

// With a null buffer av_image_fill_arrays leaves data[] null; this stand-in address (never
// dereferenced) makes it fill in the plane pointers whose offsets the layout test compares.
const uint8_t *const kFakeBuffer = reinterpret_cast<const uint8_t *>(uintptr_t{ 0x1000000 });

// The formats the coverage test considers: in CPU memory, byte-addressed, not paletted, not BE.
bool isCandidate(const AVPixFmtDescriptor *desc)
{
	constexpr uint64_t excluded = AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_BITSTREAM |
				      AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BE;
	return desc && !(desc->flags & excluded);
}

} // namespace

START_TEST(test_round_trip)
{
	// 73 of the 86 formats, four of them also under their yuvj (full range) spelling.
	auto rows = table();
	ck_assert_uint_eq(rows.size(), 77);
	std::set<PixelFormat> firstSeen;
	std::set<uint32_t> canonicalValues;
	for (const FormatMapping &m : rows) {
		// The first row of a format is canonical, so toApiFormat's answer maps back.
		if (firstSeen.insert(m.format).second)
			ck_assert_msg(m.canonical, "first row of %s is not canonical", m.name);
		if (m.canonical) {
			ck_assert_msg(canonicalValues.insert(m.value).second,
				      "value %u is canonical twice", m.value);
			auto back = fromApiFormat(FormatApi::FFmpeg, m.value);
			ck_assert_ok(back);
			ck_assert_uint_eq(static_cast<uint32_t>(*back),
					  static_cast<uint32_t>(m.format));
		}
		ck_assert(canRepresent(FormatApi::FFmpeg, m.format));
	}
	ck_assert_uint_eq(firstSeen.size(), 73);
	for (const FormatMapping &m : rows) {
		if (!m.canonical)
			ck_assert_msg(canonicalValues.count(m.value),
				      "%s shares no canonical value", m.name);
	}
	for (const PixelFormatInfo &info : allPixelFormats()) {
		auto value = toApiFormat(FormatApi::FFmpeg, info.format);
		if (!value.ok()) {
			ck_assert_error(value, ErrorCode::NotSupported, "format");
			ck_assert(!canRepresent(FormatApi::FFmpeg, info.format));
			continue;
		}
		auto back = fromApiFormat(FormatApi::FFmpeg, *value);
		ck_assert_ok(back);
		ck_assert_uint_eq(static_cast<uint32_t>(*back), static_cast<uint32_t>(info.format));
	}
	// 44 is AV_PIX_FMT_VAAPI: a hardware surface, no memory layout.
	ck_assert_error(fromApiFormat(FormatApi::FFmpeg, 44), ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::FFmpeg, 0xffffffffu), ErrorCode::NotSupported,
			"value");
}
END_TEST

// Every row: FFmpeg spells it as the table does and gives it the table's number.
START_TEST(test_names_and_numbers)
{
	uint32_t newer = 0;
	for (const FormatMapping &m : table()) {
		AVPixelFormat av = av_get_pix_fmt(m.name);
		const NewerFormat *n = newerFormat(m.name);
		if (n) {
			++newer;
			ck_assert_uint_eq(n->value, m.value);
			ck_assert_uint_gt(m.value, kLastLavu5728Format);
		} else {
			ck_assert_uint_le(m.value, kLastLavu5728Format);
			ck_assert_msg(av != AV_PIX_FMT_NONE, "libavutil does not know \"%s\"",
				      m.name);
		}
		// Added after this libavutil: only the pinned number above can be checked.
		if (av == AV_PIX_FMT_NONE)
			continue;
		if (sameNumbering())
			ck_assert_int_eq(av, static_cast<int>(m.value));
		ck_assert_str_eq(av_get_pix_fmt_name(av), m.name);
	}
	ck_assert_uint_eq(newer, std::size(kNewerFormats));
}
END_TEST

// Every row: FFmpeg's descriptor agrees with ours on depth, subsampling, planes, alpha, float.
START_TEST(test_descriptors)
{
	for (const FormatMapping &m : table()) {
		AVPixelFormat av = av_get_pix_fmt(m.name);
		if (av == AV_PIX_FMT_NONE)
			continue;
		const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(av);
		ck_assert_ptr_nonnull(desc);
		const PixelFormatInfo &info = infoOf(m.format);
		ck_assert_msg(desc->comp[0].depth == info.depth, "%s: depth %d, ours %u", m.name,
			      desc->comp[0].depth, info.depth);
		ck_assert_msg(desc->log2_chroma_w == info.chromaShiftX(),
			      "%s: log2_chroma_w %u, chromaShiftX %u", m.name, desc->log2_chroma_w,
			      info.chromaShiftX());
		ck_assert_msg(desc->log2_chroma_h == info.chromaShiftY(),
			      "%s: log2_chroma_h %u, chromaShiftY %u", m.name, desc->log2_chroma_h,
			      info.chromaShiftY());
		ck_assert_msg(av_pix_fmt_count_planes(av) == info.numPlanes,
			      "%s: %d planes, ours %u", m.name, av_pix_fmt_count_planes(av),
			      info.numPlanes);
		bool avAlpha = desc->flags & AV_PIX_FMT_FLAG_ALPHA;
		ck_assert_msg(avAlpha == info.hasAlpha(), "%s: alpha flag %d, ours %d", m.name,
			      avAlpha, info.hasAlpha());
		bool avFloat = desc->flags & AV_PIX_FMT_FLAG_FLOAT;
		ck_assert_msg(avFloat == (info.packing == SamplePacking::Float),
			      "%s: float flag differs", m.name);
		ck_assert_msg(!(desc->flags & AV_PIX_FMT_FLAG_BE), "%s is big-endian", m.name);
		ck_assert_msg(!(desc->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL)),
			      "%s", m.name);
		bool avRgb = desc->flags & AV_PIX_FMT_FLAG_RGB;
		ck_assert_msg(avRgb == (info.family == ColorFamily::Rgb), "%s: RGB flag differs",
			      m.name);
	}
}
END_TEST

// LayoutPolicy::FFmpeg is what av_image_fill_arrays and av_image_get_buffer_size compute.
namespace {

// One FFmpeg layout: computeLayout's planes and total against av_image_fill_arrays,
// av_image_fill_plane_sizes and av_image_get_buffer_size.
void checkLayout(const FormatMapping &m, AVPixelFormat av, uint32_t width, uint32_t height,
		 uint32_t align)
{
	const int w = static_cast<int>(width);
	const int h = static_cast<int>(height);
	const int a = static_cast<int>(align);
	auto layout = computeLayout(m.format, width, height, LayoutPolicy::FFmpeg, align);
	ck_assert_ok(layout);

	int unaligned[4] = {};
	ck_assert_int_ge(av_image_fill_linesizes(unaligned, av, w), 0);
	uint8_t *data[4] = {};
	int linesize[4] = {};
	int total = av_image_fill_arrays(data, linesize, kFakeBuffer, av, w, h, a);
	ck_assert_int_gt(total, 0);
	ck_assert_int_eq(av_image_get_buffer_size(av, w, h, a), total);
	ptrdiff_t linesize64[4] = { linesize[0], linesize[1], linesize[2], linesize[3] };
	size_t planeSizes[4] = {};
	ck_assert_int_ge(av_image_fill_plane_sizes(planeSizes, av, h, linesize64), 0);

	ck_assert_uint_eq(layout->numPlanes, static_cast<uint32_t>(av_pix_fmt_count_planes(av)));
	for (uint32_t i = 0; i < layout->numPlanes; ++i) {
		// av_image_fill_arrays rounds each unaligned linesize up, not the width.
		ck_assert_int_eq(linesize[i], (unaligned[i] + a - 1) / a * a);
		const PlaneLayout &p = layout->planes[i];
		uintptr_t offset =
			reinterpret_cast<uintptr_t>(data[i]) - reinterpret_cast<uintptr_t>(data[0]);
		ck_assert_msg(
			p.stride == static_cast<uint32_t>(linesize[i]) && p.size == planeSizes[i] &&
				p.offset == offset,
			"%s %ux%u align %u plane %u: stride %u size %llu offset %llu, FFmpeg %d %zu %llu",
			m.name, width, height, align, i, p.stride,
			static_cast<unsigned long long>(p.size),
			static_cast<unsigned long long>(p.offset), linesize[i], planeSizes[i],
			static_cast<unsigned long long>(offset));
	}
	ck_assert_msg(layout->size == static_cast<uint64_t>(total),
		      "%s %ux%u align %u: %llu bytes, FFmpeg %d", m.name, width, height, align,
		      static_cast<unsigned long long>(layout->size), total);
}

} // namespace

// LayoutPolicy::FFmpeg is what av_image_fill_arrays and av_image_get_buffer_size compute.
START_TEST(test_layouts)
{
	constexpr uint32_t sizes[][2] = { { 1, 1 },       { 2, 2 },       { 17, 9 },
					  { 33, 17 },     { 640, 480 },   { 1918, 1078 },
					  { 1920, 1080 }, { 3840, 2160 }, { 4096, 2304 } };
	constexpr uint32_t aligns[] = { 1, 16, 32, 64 };
	uint32_t checked = 0;
	for (const FormatMapping &m : table()) {
		AVPixelFormat av = av_get_pix_fmt(m.name);
		if (av == AV_PIX_FMT_NONE || !m.canonical)
			continue;
		for (const auto &size : sizes) {
			for (uint32_t align : aligns) {
				checkLayout(m, av, size[0], size[1], align);
				++checked;
			}
		}
	}
	ck_assert_uint_gt(checked, 2000);
}
END_TEST

// Every little-endian CPU format of this libavutil is mapped or listed with a reason.
START_TEST(test_coverage)
{
	uint32_t unmapped = 0;
	std::string neither; // every format neither mapped nor listed, named at once
	for (int v = 0; v < AV_PIX_FMT_NB; ++v) {
		const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(v));
		if (!isCandidate(desc))
			continue;
		// By name, as the bridge looks formats up: the table's numbers are libavutil 57's,
		// and a later major (FFmpeg 7.1's 59) numbers formats after AV_PIX_FMT_XVMC anew.
		bool mapped = false;
		for (const FormatMapping &m : table())
			mapped = mapped || std::strcmp(m.name, desc->name) == 0;
		bool listed = false;
		for (const Unmapped &u : kKnownUnmapped)
			listed = listed || std::strcmp(u.name, desc->name) == 0;
		if (mapped) {
			ck_assert_msg(!listed, "%s is mapped but listed as unmapped", desc->name);
			continue;
		}
		if (!listed) {
			neither += std::string(neither.empty() ? "" : ", ") + desc->name;
			continue;
		}
		++unmapped;
	}
	ck_assert_msg(neither.empty(), "neither mapped nor listed as unmapped: %s",
		      neither.c_str());
	uint32_t present = 0;
	for (const Unmapped &u : kKnownUnmapped) {
		ck_assert(std::strlen(u.reason) > 0);
		AVPixelFormat av = av_get_pix_fmt(u.name);
		if (av == AV_PIX_FMT_NONE)
			continue; // newer than this libavutil
		++present;
		ck_assert_msg(isCandidate(av_pix_fmt_desc_get(av)), "%s should not be listed",
			      u.name);
	}
	// Every listed format this libavutil has is a candidate left unmapped (none is stale).
	ck_assert_uint_eq(unmapped, present);
}
END_TEST

// Every AVColor* value libavutil 57 names round-trips; the reserved and unnamed ones are
// refused, and so are the ones a later libavutil added (FFmpeg 7.1's ipt-c2, ycgco-re and
// ycgco-ro spaces), which gpuhandle's H.273 enums do not have yet: NotSupported names the field.
START_TEST(test_colorimetry_round_trip)
{
	struct Field {
		const char *name;
		const char *(*avName)(uint32_t);
		uint32_t AvColor::*member;
		uint32_t last57; // the last value libavutil 57 defines
	};
	const Field fields[] = {
		{ "range",
		  [](uint32_t v) { return av_color_range_name(static_cast<AVColorRange>(v)); },
		  &AvColor::range, AVCOL_RANGE_JPEG },
		{ "space",
		  [](uint32_t v) { return av_color_space_name(static_cast<AVColorSpace>(v)); },
		  &AvColor::space, AVCOL_SPC_ICTCP },
		{ "primaries",
		  [](uint32_t v) {
			  return av_color_primaries_name(static_cast<AVColorPrimaries>(v));
		  },
		  &AvColor::primaries, AVCOL_PRI_EBU3213 },
		{ "transfer",
		  [](uint32_t v) {
			  return av_color_transfer_name(
				  static_cast<AVColorTransferCharacteristic>(v));
		  },
		  &AvColor::transfer, AVCOL_TRC_ARIB_STD_B67 },
	};
	uint32_t known = 0;
	for (const Field &field : fields) {
		for (uint32_t v = 0; v < 256; ++v) {
			AvColor av;
			av.*field.member = v;
			const char *name = field.avName(v);
			auto c = fromAvColor(av);
			if (!name || std::strcmp(name, "reserved") == 0 || v > field.last57) {
				ck_assert_error(c, ErrorCode::NotSupported, field.name);
				continue;
			}
			ck_assert_msg(c.ok(), "%s %u (%s) refused", field.name, v, name);
			ck_assert(c->isValid());
			auto back = toAvColor(*c);
			ck_assert_ok(back);
			ck_assert(*back == av);
			++known;
		}
	}
	// 3 ranges, 14 spaces, 12 primaries and 17 transfers in libavutil 57.
	ck_assert_uint_eq(known, 3 + 14 + 12 + 17);
	ck_assert_uint_eq(AVCOL_SPC_CHROMA_DERIVED_NCL,
			  static_cast<uint32_t>(ColorMatrix::ChromaNcl));
	ck_assert_uint_eq(AVCOL_SPC_ICTCP, static_cast<uint32_t>(ColorMatrix::ICtCp));
	ck_assert_uint_eq(AVCOL_PRI_EBU3213, static_cast<uint32_t>(ColorPrimaries::Ebu3213));
	ck_assert_uint_eq(AVCOL_TRC_ARIB_STD_B67, static_cast<uint32_t>(ColorTransfer::Hlg));
	ck_assert_uint_eq(AVCOL_TRC_SMPTE2084, static_cast<uint32_t>(ColorTransfer::Pq));
	ck_assert_uint_eq(AVCOL_RANGE_JPEG, static_cast<uint32_t>(ColorRange::Full));
}
END_TEST

// toAvColor refuses a Colorimetry holding numbers H.273 reserves, naming the field, as isValid
// does.
START_TEST(test_colorimetry_invalid)
{
	Colorimetry hdr{ ColorRange::Limited, ColorMatrix::Bt2020Ncl, ColorPrimaries::Bt2020,
			 ColorTransfer::Pq };
	auto av = toAvColor(hdr);
	ck_assert_ok(av);
	ck_assert(*av == (AvColor{ AVCOL_RANGE_MPEG, AVCOL_SPC_BT2020_NCL, AVCOL_PRI_BT2020,
				   AVCOL_TRC_SMPTE2084 }));

	for (uint32_t v = 0; v < 256; ++v) {
		Colorimetry c;
		c.matrix = static_cast<ColorMatrix>(v);
		ck_assert_int_eq(toAvColor(c).ok(), c.isValid());
		if (!c.isValid())
			ck_assert_error(toAvColor(c), ErrorCode::InvalidArgument, "matrix");
		c = Colorimetry{};
		c.primaries = static_cast<ColorPrimaries>(v);
		ck_assert_int_eq(toAvColor(c).ok(), c.isValid());
		if (!c.isValid())
			ck_assert_error(toAvColor(c), ErrorCode::InvalidArgument, "primaries");
		c = Colorimetry{};
		c.transfer = static_cast<ColorTransfer>(v);
		ck_assert_int_eq(toAvColor(c).ok(), c.isValid());
		if (!c.isValid())
			ck_assert_error(toAvColor(c), ErrorCode::InvalidArgument, "transfer");
		c = Colorimetry{};
		c.range = static_cast<ColorRange>(v);
		ck_assert_int_eq(toAvColor(c).ok(), c.isValid());
		if (!c.isValid())
			ck_assert_error(toAvColor(c), ErrorCode::InvalidArgument, "range");
	}
	ck_assert_error(fromAvColor(AvColor{ 0, 2, 2, 0 }), ErrorCode::NotSupported, "transfer");
	ck_assert_error(fromAvColor(AvColor{ 3, 2, 2, 2 }), ErrorCode::NotSupported, "range");
	auto unspecified = fromAvColor(AvColor{});
	ck_assert_ok(unspecified);
	ck_assert(*unspecified == Colorimetry{});
}
END_TEST

static Suite *ffmpegSuite()
{
	Suite *s = suite_create("formats-ffmpeg");
	TCase *formats = tcase_create("formats");
	tcase_add_test(formats, test_round_trip);
	tcase_add_test(formats, test_names_and_numbers);
	tcase_add_test(formats, test_descriptors);
	tcase_add_test(formats, test_layouts);
	tcase_add_test(formats, test_coverage);
	tcase_set_timeout(formats, 60);
	suite_add_tcase(s, formats);
	TCase *color = tcase_create("colorimetry");
	tcase_add_test(color, test_colorimetry_round_trip);
	tcase_add_test(color, test_colorimetry_invalid);
	suite_add_tcase(s, color);
	return s;
}

int main()
{
	return gpuhandle::test::runSuite(ffmpegSuite());
}
