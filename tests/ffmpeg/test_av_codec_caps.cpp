// The codecs' GStreamer caps (ffmpeg-bridge/av/av_codec_caps), checked against what nobody here
// wrote: every row parses as GstCaps, names a codec this libavcodec decodes or says it does not,
// and meets the sink caps of gst-libav's decoder of the same codec (avdec_<name>) wherever that
// element is installed, so that a stream gst-libav takes, gpuhandleavdec takes too.
#include "av_codec_caps.h"

#include <set>
#include <string>

extern "C" {
#include <libavcodec/avcodec.h>
}

#include <gst/gst.h>

#include "check_helpers.h"

using namespace gpuhandle::av;

namespace {

// gst-libav names its decoders avdec_ + FFmpeg's decoder name, hevc as h265.
std::string gstLibavName(const AVCodec *decoder)
{
	const std::string name = decoder->name;
	return "avdec_" + (name == "hevc" ? std::string("h265") : name);
}

// The sink template caps of `factory` (transfer full), or null.
GstCaps *sinkCapsOf(GstElementFactory *factory)
{
	for (const GList *l = gst_element_factory_get_static_pad_templates(factory); l;
	     l = l->next) {
		auto *templ = static_cast<GstStaticPadTemplate *>(l->data);
		if (templ->direction == GST_PAD_SINK)
			return gst_static_caps_get(&templ->static_caps);
	}
	return nullptr;
}

} // namespace

START_TEST(rows_meet_gst_libav_decoders)
{
	std::set<AVCodecID> seen;
	int compared = 0;
	for (const CodecCaps &row : codecCaps()) {
		ck_assert_msg(seen.insert(row.codec).second, "%s: twice",
			      avcodec_get_name(row.codec));
		ck_assert_ptr_eq(capsOfCodec(row.codec), row.caps);
		GstCaps *ours = gst_caps_from_string(row.caps);
		ck_assert_msg(ours && gst_caps_get_size(ours) == 1, "%s does not parse", row.caps);
		const AVCodec *decoder = avcodec_find_decoder(row.codec);
		if (!decoder) {
			std::printf("%s: this libavcodec has no decoder\n",
				    avcodec_get_name(row.codec));
			gst_caps_unref(ours);
			continue;
		}
		GstElementFactory *factory =
			gst_element_factory_find(gstLibavName(decoder).c_str());
		if (!factory) {
			std::printf("%s: no %s here\n", decoder->name,
				    gstLibavName(decoder).c_str());
			gst_caps_unref(ours);
			continue;
		}
		GstCaps *theirs = sinkCapsOf(factory);
		ck_assert_ptr_nonnull(theirs);
		gchar *text = gst_caps_to_string(theirs);
		ck_assert_msg(gst_caps_can_intersect(ours, theirs), "%s: ours %s, %s's %s",
			      decoder->name, row.caps, gstLibavName(decoder).c_str(), text);
		g_free(text);
		++compared;
		gst_caps_unref(theirs);
		gst_object_unref(factory);
		gst_caps_unref(ours);
	}
	ck_assert_ptr_null(capsOfCodec(AV_CODEC_ID_NONE));
	// gst-libav is installed with the project's packages: at least H.264, H.265, VP9, MPEG-2
	// and MJPEG have an avdec_ element to compare with.
	std::printf("%d rows compared with gst-libav's decoders\n", compared);
	ck_assert_int_ge(compared, 5);
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *s = suite_create("av_codec_caps");
	TCase *tc = tcase_create("caps");
	tcase_add_test(tc, rows_meet_gst_libav_decoders);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
