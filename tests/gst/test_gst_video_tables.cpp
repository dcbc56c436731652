// GStreamer's tables against gpuhandle's: video formats both ways, colorimetry, GstVideoInfo and
// buffer layouts, DMA_DRM caps.
#include <gpuhandle/format_mappings.h>

#include <cstring>
#include <string>

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "convert_fixture.h"

using namespace gpuhandle;
using namespace gpuhandle::test::convert;
using namespace std::chrono_literals;

// Every GstVideoFormat gpuhandle maps goes both ways with GStreamer's own spelling; every other
// raw format is refused with NotSupported.
START_TEST(format_tables_go_both_ways)
{
	size_t mapped = 0;
	for (const FormatMapping &row : formatMappings(FormatApi::GStreamer)) {
		const auto format = static_cast<GstVideoFormat>(row.value);
		Result<PixelFormat> pixel = gst::pixelFormatOf(format);
		ck_assert_ok(pixel);
		ck_assert(*pixel == row.format);
		Result<GstVideoFormat> back = gst::videoFormatOf(row.format);
		ck_assert_ok(back);
		ck_assert_int_eq(*back, format);
		ck_assert_str_eq(gst_video_format_to_string(format), row.name);
		mapped++;
	}
	guint count = 0;
	const GstVideoFormat *raw = gst_video_formats_raw(&count);
	size_t rawMapped = 0;
	for (guint i = 0; i < count; i++) {
		Result<PixelFormat> pixel = gst::pixelFormatOf(raw[i]);
		if (pixel)
			rawMapped++;
		else
			ck_assert_error(pixel, ErrorCode::NotSupported, "format");
	}
	ck_assert_uint_eq(rawMapped, mapped);
	for (GstVideoFormat format :
	     { GST_VIDEO_FORMAT_UNKNOWN, GST_VIDEO_FORMAT_ENCODED, GST_VIDEO_FORMAT_r210 })
		ck_assert_error(gst::pixelFormatOf(format), ErrorCode::NotSupported, "format");
	for (const PixelFormatInfo &info : allPixelFormats())
		ck_assert(gst::videoFormatOf(info.format).ok() ==
			  canRepresent(FormatApi::GStreamer, info.format));
	ck_assert_error(gst::videoFormatOf(PixelFormat::P210LE), ErrorCode::NotSupported, "format");
}
END_TEST

// GStreamer's named colorimetries survive the trip through gpuhandle; fields one side lacks
// stay unknown on the other.
START_TEST(colorimetry_round_trips)
{
	for (const char *name : { "bt709", "bt601", "bt2020", "bt2100-pq", "bt2100-hlg", "sRGB",
				  "smpte240m", "bt2020-10" }) {
		GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 64 });
		ck_assert(gst_video_colorimetry_from_string(&info.colorimetry, name));
		const Colorimetry ours = gst::colorimetryOf(info);
		GstVideoInfo back = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 64 });
		gst::setColorimetry(back, ours);
		ck_assert_msg(gst_video_colorimetry_is_equal(&info.colorimetry, &back.colorimetry),
			      "%s", name);
	}
	GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 64 });
	const Colorimetry hdr{ ColorRange::Limited, ColorMatrix::Bt2020Ncl, ColorPrimaries::Bt2020,
			       ColorTransfer::Pq };
	gst::setColorimetry(info, hdr);
	ck_assert_int_eq(info.colorimetry.range, GST_VIDEO_COLOR_RANGE_16_235);
	ck_assert_int_eq(info.colorimetry.matrix, GST_VIDEO_COLOR_MATRIX_BT2020);
	ck_assert_int_eq(info.colorimetry.transfer, GST_VIDEO_TRANSFER_SMPTE2084);
	ck_assert_int_eq(info.colorimetry.primaries, GST_VIDEO_COLOR_PRIMARIES_BT2020);
	ck_assert(gst::colorimetryOf(info) == hdr);
	// GAMMA18 has no H.273 code; ICtCp no GstVideoColorMatrix: each leaves only itself unset.
	info.colorimetry.transfer = GST_VIDEO_TRANSFER_GAMMA18;
	ck_assert(gst::colorimetryOf(info).transfer == ColorTransfer::Unknown);
	ck_assert(gst::colorimetryOf(info).matrix == ColorMatrix::Bt2020Ncl);
	gst::setColorimetry(info, { ColorRange::Full, ColorMatrix::ICtCp, ColorPrimaries::Bt709,
				    ColorTransfer::Bt709 });
	ck_assert_int_eq(info.colorimetry.matrix, GST_VIDEO_COLOR_MATRIX_UNKNOWN);
	ck_assert_int_eq(info.colorimetry.range, GST_VIDEO_COLOR_RANGE_0_255);
	ck_assert_int_eq(info.colorimetry.primaries, GST_VIDEO_COLOR_PRIMARIES_BT709);
}
END_TEST

// videoInfoOf: a frame in one range gives its own offsets and strides, CpuPlanes GStreamer's
// defaults; bufferLayout reads the video meta (offsets across memories) or the info.
START_TEST(video_info_and_buffer_layout)
{
	BackendRef cpu = open(BackendKind::Cpu);
	FrameDesc desc = allocate(*cpu, PixelFormat::NV12, { 33, 17 }).desc();
	desc.colorimetry = { ColorRange::Full, ColorMatrix::Bt709, ColorPrimaries::Bt709,
			     ColorTransfer::Bt709 };
	Frame frame = *Frame::create(desc);
	Result<GstVideoInfo> info = gst::videoInfoOf(frame);
	ck_assert_ok(info);
	ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&*info), GST_VIDEO_FORMAT_NV12);
	ck_assert_int_eq(info->width, 33);
	ck_assert_int_eq(info->colorimetry.range, GST_VIDEO_COLOR_RANGE_0_255);
	for (uint32_t p = 0; p < 2; p++) {
		ck_assert_uint_eq(info->offset[p], frame.plane(p).offset);
		ck_assert_int_eq(info->stride[p], frame.plane(p).stride);
	}
	ck_assert_uint_eq(info->size, frame.resource(0).byteSize(0));
	ck_assert_error(gst::videoInfoOf(allocate(*cpu, PixelFormat::P210LE, { 33, 17 })),
			ErrorCode::NotSupported, "format");

	// Without a video meta: the info's layout, and the whole of info.size is needed.
	GstVideoInfo i420 = videoInfo(GST_VIDEO_FORMAT_I420, { 33, 17 });
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, i420.size, nullptr);
	Result<FrameLayout> layout = gst::bufferLayout(buffer, i420);
	ck_assert_ok(layout);
	ck_assert_uint_eq(layout->numPlanes, 3);
	ck_assert_uint_eq(layout->size, i420.size);
	for (uint32_t p = 0; p < 3; p++) {
		ck_assert_uint_eq(layout->planes[p].offset, i420.offset[p]);
		ck_assert_int_eq(layout->planes[p].stride, i420.stride[p]);
	}
	ck_assert_uint_eq(layout->planes[1].height, 9);
	gst_buffer_set_size(buffer, static_cast<gssize>(i420.size - 1));
	ck_assert_error(gst::bufferLayout(buffer, i420), ErrorCode::InvalidArgument, "buffer");
	gst_buffer_unref(buffer);
	ck_assert_error(gst::bufferLayout(nullptr, i420), ErrorCode::NullHandle, "buffer");

	// With one: two memories, the chroma plane's offset counted from the first one's start.
	GstVideoInfo nv12 = videoInfo(GST_VIDEO_FORMAT_NV12, { 33, 17 });
	buffer = gst_buffer_new_allocate(nullptr, 64 * 17, nullptr);
	gst_buffer_append_memory(buffer, gst_allocator_alloc(nullptr, 64 * 9, nullptr));
	gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, 64 * 17 };
	gint strides[GST_VIDEO_MAX_PLANES] = { 64, 64 };
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 33,
				       17, 2, offsets, strides);
	layout = gst::bufferLayout(buffer, nv12);
	ck_assert_ok(layout);
	ck_assert_uint_eq(layout->planes[1].offset, 64 * 17);
	ck_assert_uint_eq(layout->planes[1].stride, 64);
	ck_assert_uint_eq(layout->size, 64 * 26);
	gst_buffer_get_video_meta(buffer)->offset[1] = 64 * 18;
	ck_assert_error(gst::bufferLayout(buffer, nv12), ErrorCode::InvalidArgument, "buffer");
	gst_buffer_get_video_meta(buffer)->stride[1] = 16;
	ck_assert_error(gst::bufferLayout(buffer, nv12), ErrorCode::InvalidArgument, "stride");
	gst_buffer_unref(buffer);
}
END_TEST

// GStreamer 1.22's plain DMA-BUF caps round-trip through text; DMA_DRM caps need 1.24.
START_TEST(dma_drm_caps)
{
	gst::DmaDrmInfo info;
	info.info = videoInfo(GST_VIDEO_FORMAT_NV12, { 1920, 1080 });
	info.drmFourcc = *toApiFormat(FormatApi::DrmFourcc, PixelFormat::NV12);
	GstCaps *caps = gst::dmaDrmInfoToCaps(info);
	ck_assert_ptr_nonnull(caps);
	ck_assert(gst_caps_features_contains(gst_caps_get_features(caps, 0),
					     GST_CAPS_FEATURE_MEMORY_DMABUF));
	gchar *text = gst_caps_to_string(caps);
	GstCaps *parsed = gst_caps_from_string(text);
	g_free(text);
	ck_assert(gst_caps_is_equal(caps, parsed));
	Result<gst::DmaDrmInfo> back = gst::dmaDrmInfoFromCaps(parsed);
	ck_assert_ok(back);
	ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&back->info), GST_VIDEO_FORMAT_NV12);
	ck_assert_int_eq(back->info.width, 1920);
	ck_assert_int_eq(back->info.height, 1080);
	ck_assert_uint_eq(back->drmFourcc, GST_MAKE_FOURCC('N', 'V', '1', '2'));
	ck_assert_uint_eq(back->modifier, kDrmModifierLinear);
	ck_assert(!back->drmFormatCaps);
	gst_caps_unref(parsed);
	gst_caps_unref(caps);

	GstCaps *drm =
		gst_caps_from_string("video/x-raw(memory:DMABuf),format=DMA_DRM,"
				     "drm-format=NV12:0x0100000000000002,width=64,height=64");
	Result<gst::DmaDrmInfo> drmInfo = gst::dmaDrmInfoFromCaps(drm);
	if (gst::hasDmaDrmCaps()) {
		ck_assert_ok(drmInfo);
		ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&drmInfo->info), GST_VIDEO_FORMAT_NV12);
		ck_assert_uint_eq(drmInfo->modifier, 0x0100000000000002ULL);
		ck_assert(drmInfo->drmFormatCaps);
		// Printed again (with the fields gst_video_info_to_caps() adds), it reads the same.
		GstCaps *again = gst::dmaDrmInfoToCaps(*drmInfo);
		ck_assert(gst_caps_is_subset(again, drm));
		Result<gst::DmaDrmInfo> reread = gst::dmaDrmInfoFromCaps(again);
		ck_assert_ok(reread);
		ck_assert_uint_eq(reread->drmFourcc, drmInfo->drmFourcc);
		ck_assert_uint_eq(reread->modifier, drmInfo->modifier);
		ck_assert(reread->drmFormatCaps);
		gst_caps_unref(again);
	} else {
		ck_assert_error(drmInfo, ErrorCode::NotSupported, "caps.format");
		ck_assert(drmInfo.error().message().find("1.24") != std::string::npos);
	}
	gst_caps_unref(drm);

	GstCaps *loose = gst_caps_from_string("video/x-raw,format=NV12,width=[1,100],height=64");
	ck_assert_error(gst::dmaDrmInfoFromCaps(loose), ErrorCode::InvalidArgument, "caps");
	gst_caps_unref(loose);
	GstCaps *audio = gst_caps_from_string("audio/x-raw,format=S16LE,rate=48000,channels=2");
	ck_assert_error(gst::dmaDrmInfoFromCaps(audio), ErrorCode::InvalidArgument, "caps");
	gst_caps_unref(audio);
	GstCaps *v210 =
		gst_caps_from_string("video/x-raw(memory:DMABuf),format=v210,width=64,height=64");
	ck_assert_error(gst::dmaDrmInfoFromCaps(v210), ErrorCode::NotSupported, "caps.format");
	gst_caps_unref(v210);
	ck_assert_error(gst::dmaDrmInfoFromCaps(nullptr), ErrorCode::InvalidArgument, "caps");
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-video-tables");
	TCase *tc = tcase_create("gst-video-tables");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, format_tables_go_both_ways);
	tcase_add_test(tc, colorimetry_round_trips);
	tcase_add_test(tc, video_info_and_buffer_layout);
	tcase_add_test(tc, dma_drm_caps);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
