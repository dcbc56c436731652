// A buffer's plain-data metas as bytes and back (what crosses from gpuhandlesink to gpuhandlesrc):
// every kind round trips field for field, what does not fit is counted, bad bytes add nothing.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlemetabytes.hpp>
#include <gst/video/video.h>

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace {

// Every meta of `buffer` that has bytes, field by field, one line each, in the buffer's order.
std::string describe(GstBuffer *buffer)
{
	std::string out;
	gpointer state = nullptr;
	while (GstMeta *meta = gst_buffer_iterate_meta(buffer, &state)) {
		if (!metaHasBytes(meta))
			continue;
		const GType api = meta->info->api;
		gchar *line = nullptr;
		if (api == GST_VIDEO_SEI_USER_DATA_UNREGISTERED_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoSEIUserDataUnregisteredMeta *>(meta);
			std::string data(reinterpret_cast<const char *>(m->data), m->size);
			line = g_strdup_printf("sei %02x%02x..%02x %s", m->uuid[0], m->uuid[1],
					       m->uuid[15], data.c_str());
		} else if (api == GST_VIDEO_TIME_CODE_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoTimeCodeMeta *>(meta);
			gchar *tc = gst_video_time_code_to_string(&m->tc);
			line = g_strdup_printf("timecode %s %u/%u flags %d", tc, m->tc.config.fps_n,
					       m->tc.config.fps_d, m->tc.config.flags);
			g_free(tc);
		} else if (api == GST_VIDEO_CAPTION_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoCaptionMeta *>(meta);
			line = g_strdup_printf("caption %d %zu %02x", m->caption_type, m->size,
					       m->data[m->size - 1]);
		} else if (api == GST_VIDEO_AFD_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoAFDMeta *>(meta);
			line = g_strdup_printf("afd %u %d %d", m->field, m->spec, m->afd);
		} else if (api == GST_VIDEO_BAR_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoBarMeta *>(meta);
			line = g_strdup_printf("bar %u %d %u %u", m->field, m->is_letterbox,
					       m->bar_data1, m->bar_data2);
		} else if (api == GST_VIDEO_CROP_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoCropMeta *>(meta);
			line = g_strdup_printf("crop %u %u %u %u", m->x, m->y, m->width, m->height);
		} else if (api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) {
			auto *m = reinterpret_cast<GstVideoRegionOfInterestMeta *>(meta);
			std::string params;
			for (GList *p = m->params; p; p = p->next) {
				gchar *text = gst_structure_to_string(
					static_cast<const GstStructure *>(p->data));
				params += std::string(" ") + text;
				g_free(text);
			}
			line = g_strdup_printf("roi %s %u %u %u %u id %d parent %d%s",
					       g_quark_to_string(m->roi_type), m->x, m->y, m->w,
					       m->h, m->id, m->parent_id, params.c_str());
		} else if (api == GST_REFERENCE_TIMESTAMP_META_API_TYPE) {
			auto *m = reinterpret_cast<GstReferenceTimestampMeta *>(meta);
			gchar *caps = gst_caps_to_string(m->reference);
			line = g_strdup_printf("reference %s %" G_GUINT64_FORMAT
					       " %" G_GUINT64_FORMAT,
					       caps, m->timestamp, m->duration);
			g_free(caps);
		}
		ck_assert_msg(line, "metaHasBytes() is true for %s, unknown to this test",
			      g_type_name(api));
		out += std::string(line) + "\n";
		g_free(line);
	}
	return out;
}

// One meta of every kind with bytes, and a GstVideoMeta (which does not cross).
GstBuffer *bufferWithEveryKind()
{
	GstBuffer *b = gst_buffer_new_allocate(nullptr, 320 * 240 * 3 / 2, nullptr);
	gst_buffer_add_video_meta(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_I420, 320, 240);
	guint8 uuid[16];
	for (guint8 i = 0; i < 16; ++i)
		uuid[i] = static_cast<guint8>(0xa0 + i);
	guint8 x264[] = "x264 - core 164 - H.264/MPEG-4 AVC codec";
	gst_buffer_add_video_sei_user_data_unregistered_meta(b, uuid, x264, sizeof x264 - 1);
	gst_buffer_add_video_time_code_meta_full(
		b, 30000, 1001, nullptr, GST_VIDEO_TIME_CODE_FLAGS_DROP_FRAME, 1, 2, 3, 4, 0);
	const guint8 cdp[] = { 0x96, 0x69, 0x10, 0x4f, 0x43, 0x00, 0x01, 0x72, 0xe1, 0xfc };
	gst_buffer_add_video_caption_meta(b, GST_VIDEO_CAPTION_TYPE_CEA708_CDP, cdp, sizeof cdp);
	gst_buffer_add_video_afd_meta(b, 1, GST_VIDEO_AFD_SPEC_ATSC_A53,
				      GST_VIDEO_AFD_16_9_LETTER_16_9_FULL);
	gst_buffer_add_video_bar_meta(b, 0, TRUE, 60, 420);
	GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta(b);
	crop->x = 8;
	crop->y = 4;
	crop->width = 304;
	crop->height = 232;
	GstVideoRegionOfInterestMeta *roi =
		gst_buffer_add_video_region_of_interest_meta(b, "face", 10, 20, 30, 40);
	roi->id = 7;
	roi->parent_id = -1;
	gst_video_region_of_interest_meta_add_param(
		roi, gst_structure_new("detection", "label", G_TYPE_STRING, "a face", "confidence",
				       G_TYPE_DOUBLE, 0.75, nullptr));
	GstCaps *clock = gst_caps_from_string("timestamp/x-ntp, host=pool.ntp.org, port=123");
	gst_buffer_add_reference_timestamp_meta(b, clock, 3900000000 * GST_SECOND, GST_SECOND / 30);
	gst_caps_unref(clock);
	// A second SEI meta: the order is kept.
	guint8 more[] = "second";
	gst_buffer_add_video_sei_user_data_unregistered_meta(b, uuid, more, sizeof more - 1);
	return b;
}

size_t write(GstBuffer *b, std::vector<std::byte> &out, unsigned &dropped)
{
	return writeMetaBytes(b, out, dropped);
}

} // namespace

START_TEST(every_kind_round_trips_in_order)
{
	GstBuffer *in = bufferWithEveryKind();
	std::vector<std::byte> bytes(4068);
	unsigned dropped = 0;
	const size_t size = write(in, bytes, dropped);
	ck_assert_uint_eq(dropped, 0);
	ck_assert_uint_gt(size, 0);
	GstBuffer *out = gst_buffer_new();
	ck_assert_ok(addMetasFromBytes(std::span(bytes).first(size), out));
	const std::string expected = describe(in);
	// Nine metas with bytes; the video meta is not among them.
	ck_assert_int_eq(static_cast<int>(std::count(expected.begin(), expected.end(), '\n')), 9);
	const std::string got = describe(out);
	ck_assert_str_eq(got.c_str(), expected.c_str());
	ck_assert(gst_buffer_get_video_meta(out) == nullptr);
	// The time code came back valid, drop-frame.
	auto *tc = reinterpret_cast<GstVideoTimeCodeMeta *>(
		gst_buffer_get_meta(out, GST_VIDEO_TIME_CODE_META_API_TYPE));
	ck_assert(tc && gst_video_time_code_is_valid(&tc->tc));
	gst_buffer_unref(in);
	gst_buffer_unref(out);
}
END_TEST

START_TEST(a_buffer_without_such_metas_writes_nothing)
{
	GstBuffer *b = gst_buffer_new();
	gst_buffer_add_video_meta(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 64, 64);
	std::vector<std::byte> bytes(4068);
	unsigned dropped = 0;
	ck_assert_uint_eq(write(b, bytes, dropped), 0);
	ck_assert_uint_eq(dropped, 0);
	ck_assert(!metaHasBytes(gst_buffer_get_meta(b, GST_VIDEO_META_API_TYPE)));
	ck_assert_ok(addMetasFromBytes({}, b)); // nothing to add
	gst_buffer_unref(b);
}
END_TEST

// The flags that describe the frame cross, before the metas; those of the producer's process and
// pipeline (TAG_MEMORY, LIVE, SYNC_AFTER) do not. A buffer with only those writes nothing.
START_TEST(frame_flags_cross_and_process_flags_stay)
{
	const guint frameFlags = GST_VIDEO_BUFFER_FLAG_INTERLACED | GST_VIDEO_BUFFER_FLAG_TFF |
				 GST_VIDEO_BUFFER_FLAG_RFF | GST_BUFFER_FLAG_CORRUPTED |
				 GST_BUFFER_FLAG_GAP | GST_BUFFER_FLAG_DISCONT;
	const guint processFlags = GST_BUFFER_FLAG_TAG_MEMORY | GST_BUFFER_FLAG_LIVE |
				   GST_BUFFER_FLAG_SYNC_AFTER;
	GstBuffer *in = gst_buffer_new();
	GST_BUFFER_FLAG_SET(in, frameFlags | processFlags);
	gst_buffer_add_video_bar_meta(in, 0, FALSE, 1, 2);
	std::vector<std::byte> bytes(4068);
	unsigned dropped = 0;
	const size_t size = write(in, bytes, dropped);
	ck_assert_uint_gt(size, 0);
	GstBuffer *out = gst_buffer_new();
	ck_assert_ok(addMetasFromBytes(std::span(bytes).first(size), out));
	ck_assert_uint_eq(GST_BUFFER_FLAGS(out), frameFlags);
	const std::string got = describe(out), expected = describe(in);
	ck_assert_str_eq(got.c_str(), expected.c_str());
	gst_buffer_unref(out);
	// Only the process's flags: nothing to send.
	GST_BUFFER_FLAGS(in) = processFlags;
	gst_buffer_remove_meta(in, gst_buffer_get_meta(in, GST_VIDEO_BAR_META_API_TYPE));
	ck_assert_uint_eq(write(in, bytes, dropped), 0);
	gst_buffer_unref(in);
	// A newer writer's flags: those this version does not carry are left unset.
	const uint32_t all = 0xffffffffu;
	std::vector<std::byte> record{ std::byte(1), std::byte(9), std::byte(0), std::byte(4),
				       std::byte(0), std::byte(0), std::byte(0) };
	for (int i = 0; i < 4; ++i)
		record.push_back(std::byte(all >> (8 * i)));
	out = gst_buffer_new();
	ck_assert_ok(addMetasFromBytes(record, out));
	ck_assert(GST_BUFFER_FLAG_IS_SET(out, GST_VIDEO_BUFFER_FLAG_INTERLACED));
	ck_assert_uint_eq(GST_BUFFER_FLAGS(out) & processFlags, 0);
	gst_buffer_unref(out);
	// A record of the wrong size refuses the set.
	record.pop_back();
	record[3] = std::byte(3);
	out = gst_buffer_new();
	ck_assert_error(addMetasFromBytes(record, out), ErrorCode::InvalidArgument, "metas");
	ck_assert_uint_eq(GST_BUFFER_FLAGS(out), 0);
	gst_buffer_unref(out);
}
END_TEST

// Metas that do not fit are counted and left out; the smaller ones after them still go.
START_TEST(what_does_not_fit_is_counted_and_left_out)
{
	GstBuffer *b = gst_buffer_new();
	guint8 uuid[16] = {};
	std::vector<guint8> big(3000, 0x55);
	gst_buffer_add_video_sei_user_data_unregistered_meta(b, uuid, big.data(), big.size());
	gst_buffer_add_video_sei_user_data_unregistered_meta(b, uuid, big.data(), big.size());
	gst_buffer_add_video_bar_meta(b, 0, FALSE, 1, 2);
	std::vector<std::byte> bytes(4068);
	unsigned dropped = 0;
	const size_t size = write(b, bytes, dropped);
	ck_assert_uint_eq(dropped, 1);
	GstBuffer *out = gst_buffer_new();
	ck_assert_ok(addMetasFromBytes(std::span(bytes).first(size), out));
	const std::string got = describe(out);
	ck_assert_int_eq(static_cast<int>(std::count(got.begin(), got.end(), '\n')), 2);
	ck_assert(got.find("bar 0 0 1 2") != std::string::npos);
	// Not even the version byte fits: nothing, and nothing counted as written.
	std::vector<std::byte> none;
	dropped = 0;
	ck_assert_uint_eq(write(b, none, dropped), 0);
	gst_buffer_unref(b);
	gst_buffer_unref(out);
}
END_TEST

// Each malformed record refuses the whole set: nothing is added.
START_TEST(malformed_bytes_add_nothing)
{
	GstBuffer *in = bufferWithEveryKind();
	std::vector<std::byte> bytes(4068);
	unsigned dropped = 0;
	const size_t size = write(in, bytes, dropped);
	bytes.resize(size);
	// Every truncation: refused with nothing added, or (at a record's end) a prefix of the
	// metas added.
	const std::string all = describe(in);
	for (size_t n = 1; n < size; ++n) {
		GstBuffer *out = gst_buffer_new();
		Status s = addMetasFromBytes(std::span(bytes).first(n), out);
		const std::string got = describe(out);
		if (!s.ok())
			ck_assert_msg(got.empty(), "refused at %zu bytes but added:\n%s", n,
				      got.c_str());
		else
			ck_assert_msg(all.compare(0, got.size(), got) == 0,
				      "%zu bytes added metas that are not a prefix", n);
		gst_buffer_unref(out);
	}
	// Records built by hand: header (version 1), then kind, length, payload.
	auto record = [](uint16_t kind, std::vector<uint8_t> payload) {
		std::vector<std::byte> r{ std::byte(1) };
		const uint32_t length = static_cast<uint32_t>(payload.size());
		for (int i = 0; i < 2; ++i)
			r.push_back(std::byte(kind >> (8 * i)));
		for (int i = 0; i < 4; ++i)
			r.push_back(std::byte(length >> (8 * i)));
		for (uint8_t v : payload)
			r.push_back(std::byte(v));
		return r;
	};
	auto u32 = [](std::initializer_list<uint32_t> values) {
		std::vector<uint8_t> out;
		for (uint32_t v : values)
			for (int i = 0; i < 4; ++i)
				out.push_back(static_cast<uint8_t>(v >> (8 * i)));
		return out;
	};
	const std::vector<std::vector<std::byte>> bad = {
		{ std::byte(2) },                             // version
		record(1, std::vector<uint8_t>(16, 1)),       // SEI without data
		record(2, u32({ 0, 1, 0, 1, 2, 3, 4, 0 })),   // time code without a rate
		record(2, u32({ 25, 1, 0, 1, 2, 3, 40, 0 })), // frame 40 at 25 fps
		record(2, u32({ 25, 1, 0, 1, 2, 3 })),        // short
		record(3, u32({ 9, 0xff })),                  // caption type
		record(4, { 2, 0, 0, 0, 0, 8, 0, 0, 0 }),     // AFD field
		record(4, { 0, 0, 0, 0, 0, 0x20, 0, 0, 0 }),  // AFD value
		record(5, { 0, 2, 0, 0, 0, 0, 0, 0, 0, 0 }),  // bar letterbox flag
		record(6, u32({ 1, 2, 3 })),                  // crop short
		record(7,
		       [&] { // ROI param named as GStreamer refuses ("1x": starts with a digit)
			       std::vector<uint8_t> p = u32({ 1, 2, 3, 4, 0, 0 });
			       for (uint8_t v : std::initializer_list<uint8_t>{ 1, 0, 'x', 1, 0, 2,
										0, '1', 'x', 0, 0 })
				       p.push_back(v);
			       return p;
		       }()),
		record(7,
		       [&] { // ROI param with a field of an unknown type (9)
			       std::vector<uint8_t> p = u32({ 1, 2, 3, 4, 0, 0 });
			       for (uint8_t v : std::initializer_list<uint8_t>{
					    1, 0, 'x', 1, 0, 1, 0, 'p', 1, 0, 1, 0, 'f', 9 })
				       p.push_back(v);
			       return p;
		       }()),
		record(7, u32({ 1, 2, 3, 4, 0, 0 })), // ROI without its type
		record(8,
		       [&] { // a reference named as GStreamer's parser posts a critical for
			       std::vector<uint8_t> p(16, 0);
			       for (uint8_t v :
				    std::initializer_list<uint8_t>{ 3, 0, '"', 'e', 't', 0, 0 })
				       p.push_back(v);
			       return p;
		       }()),
	};
	for (size_t i = 0; i < bad.size(); ++i) {
		// After a valid record, so that "nothing added" means the whole set was refused
		// (the first is a bad version byte alone).
		std::vector<std::byte> set = bad[i];
		if (i > 0) {
			set = record(6, u32({ 1, 2, 3, 4 }));
			set.insert(set.end(), bad[i].begin() + 1, bad[i].end());
		}
		GstBuffer *out = gst_buffer_new();
		Status s = addMetasFromBytes(set, out);
		ck_assert_msg(!s.ok(), "bad set %zu was accepted", i);
		ck_assert_int_eq(static_cast<int>(s.error().code()),
				 static_cast<int>(ErrorCode::InvalidArgument));
		ck_assert_msg(describe(out).empty(), "bad set %zu added metas", i);
		gst_buffer_unref(out);
	}
	// A kind of a newer writer is skipped; the records around it are added.
	std::vector<std::byte> newer = record(6, u32({ 1, 2, 3, 4 }));
	std::vector<std::byte> unknown = record(99, { 1, 2, 3 });
	newer.insert(newer.end(), unknown.begin() + 1, unknown.end());
	GstBuffer *out = gst_buffer_new();
	ck_assert_ok(addMetasFromBytes(newer, out));
	const std::string cropOnly = describe(out);
	ck_assert_str_eq(cropOnly.c_str(), "crop 1 2 3 4\n");
	// A buffer that is not writable is refused.
	GstBuffer *shared = gst_buffer_ref(out);
	ck_assert_error(addMetasFromBytes(newer, shared), ErrorCode::InvalidArgument, "buffer");
	gst_buffer_unref(shared);
	gst_buffer_unref(out);
	gst_buffer_unref(in);
}
END_TEST

// Random bytes, and valid sets with random bytes flipped: refused or added, never a crash or a
// GLib critical (fatal here).
START_TEST(random_bytes_are_refused_or_added_safely)
{
	GstBuffer *in = bufferWithEveryKind();
	std::vector<std::byte> valid(4068);
	unsigned dropped = 0;
	valid.resize(write(in, valid, dropped));
	std::mt19937 random(17);
	unsigned refused = 0;
	const long runs = gpuhandle::test::scaledCount(4000);
	for (long i = 0; i < runs; ++i) {
		std::vector<std::byte> bytes = valid;
		if (i % 2) {
			bytes.resize(random() % 200);
			for (std::byte &b : bytes)
				b = std::byte(random());
			if (!bytes.empty())
				bytes[0] = std::byte(1);
		} else {
			for (int flips = 0; flips < 3; ++flips)
				bytes[random() % bytes.size()] = std::byte(random());
		}
		GstBuffer *out = gst_buffer_new();
		Status s = addMetasFromBytes(bytes, out);
		refused += !s.ok();
		if (!s.ok())
			ck_assert(describe(out).empty());
		gst_buffer_unref(out);
	}
	ck_assert_uint_gt(refused, 0);
	std::printf("%ld random sets: %u refused\n", runs, refused);
	gst_buffer_unref(in);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *suite = suite_create("gst-meta-bytes");
	TCase *tc = tcase_create("meta-bytes");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_kind_round_trips_in_order);
	tcase_add_test(tc, a_buffer_without_such_metas_writes_nothing);
	tcase_add_test(tc, frame_flags_cross_and_process_flags_stay);
	tcase_add_test(tc, what_does_not_fit_is_counted_and_left_out);
	tcase_add_test(tc, malformed_bytes_add_nothing);
	tcase_add_test(tc, random_bytes_are_refused_or_added_safely);
	suite_add_tcase(suite, tc);
	return gpuhandle::test::runSuite(suite);
}
