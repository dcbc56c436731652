// gpuhandleavdec in running pipelines: timestamps and every frame out at EOS, an accurate seek, a
// mid-stream resolution change, the latency it reports, odd sizes, memory:GpuHandle frames that
// are never copied, and GL and Vulkan memory where downstream asks for them; each picture
// compared with what the ffmpeg program decodes.
#include "avelements_run.h" // last: Check's fail() macro breaks standard headers after it

using namespace gpuhandle::test;

namespace {

constexpr GstClockTime kFrame = GST_SECOND / 25; // the clips' frame duration

// `frames` frames of testsrc2 at `size`, 25 per second, encoded by the ffmpeg program.
std::string makeClip(const ClipDir &dir, const std::string &file, const std::string &size,
		     int frames, const std::string &codec)
{
	const std::string path = dir / file;
	sh("ffmpeg -v error -y -f lavfi -i testsrc2=size=" + size + ":rate=25 -frames:v " +
	   std::to_string(frames) + " -c:v " + codec + " '" + path + "'");
	return path;
}

// What ffmpeg decodes of `clip` (its decoder's format, `format` in GStreamer's words), unpacked by
// GStreamer as the element's frames are: the two compare whatever their layouts.
Run reference(const ClipDir &dir, const std::string &clip, const char *format, int width,
	      int height, const std::string &ffmpegFormat, const std::string &convert = "")
{
	const std::string raw = dir / "reference.raw";
	sh("ffmpeg -v error -y -i '" + clip + "' -f rawvideo -pix_fmt " + ffmpegFormat + " '" +
	   raw + "'");
	// ffmpeg's rawvideo rows are tight: the strides and offsets of I420 at any width.
	const int cw = (width + 1) / 2, ch = (height + 1) / 2;
	const int y = width * height, c = cw * ch;
	char layout[256];
	std::snprintf(layout, sizeof layout,
		      "plane-strides=\"<%d,%d,%d>\" plane-offsets=\"<0,%d,%d>\" frame-size=%d",
		      width, cw, cw, y, y + c, y + 2 * c);
	return runPipeline("filesrc location=" + raw + " ! rawvideoparse format=" + format +
			   " width=" + std::to_string(width) + " height=" + std::to_string(height) +
			   " " + layout + " ! " + convert + " appsink name=sink sync=false");
}

// The bytes of frames [first, end) of a run whose frames all have `frameBytes` bytes.
std::vector<uint8_t> framesOf(const Run &run, size_t frameBytes, size_t first, size_t end)
{
	return { run.bytes.begin() + static_cast<std::ptrdiff_t>(first * frameBytes),
		 run.bytes.begin() + static_cast<std::ptrdiff_t>(end * frameBytes) };
}

// The decoder between a clip and an appsink, `after` between them.
std::string decodeTo(const std::string &clip, const std::string &decoder,
		     const std::string &after = "video/x-raw")
{
	return "filesrc location=" + clip + " ! parsebin ! gpuhandleavdec name=dec " + decoder +
	       " ! " + after + " ! appsink name=sink sync=false";
}

} // namespace

START_TEST(reordered_frames_keep_their_times_and_all_come_out_at_eos)
{
	ClipDir dir;
	// B-frames three deep, and frame threads holding frames: 30 in, 30 out in order.
	const std::string clip = makeClip(dir, "b.mkv", "320x240", 30, "libx264 -bf 3 -g 12");
	const Timed t = play(decodeTo(clip, "threads=3"));
	ck_assert_uint_eq(t.pts.size(), 30);
	for (size_t i = 0; i < t.pts.size(); ++i) {
		ck_assert_msg(t.pts[i] == i * kFrame, "frame %zu at %" GST_TIME_FORMAT, i,
			      GST_TIME_ARGS(t.pts[i]));
		ck_assert_uint_eq(t.durations[i], kFrame);
	}
	const Run ref = reference(dir, clip, "i420", 320, 240, "yuv420p");
	ck_assert_msg(t.run.bytes == ref.bytes, "differs from ffmpeg%s",
		      firstDifference(t.run.bytes, ref.bytes).c_str());
	ck_assert_uint_eq(t.run.stat("dec", "frames"), 30);
	ck_assert_uint_eq(t.run.stat("dec", "decode-errors"), 0);
	ck_assert_uint_eq(t.run.stat("dec", "stream-errors"), 0);
}
END_TEST

START_TEST(an_accurate_seek_gives_the_frames_from_that_time)
{
	ClipDir dir;
	const std::string clip = makeClip(dir, "seek.mkv", "320x240", 40, "libx264 -bf 2 -g 10");
	const Run ref = reference(dir, clip, "i420", 320, 240, "yuv420p");
	// Frame 17 is not a key frame: the decoder starts at 10 and GstVideoDecoder clips.
	const Timed t = play(decodeTo(clip, ""), 17 * kFrame);
	ck_assert_uint_eq(t.pts.size(), 40 - 17);
	ck_assert_uint_eq(t.pts.front(), 17 * kFrame);
	const size_t frameBytes = ref.bytes.size() / 40;
	const std::vector<uint8_t> expected = framesOf(ref, frameBytes, 17, 40);
	ck_assert_msg(t.run.bytes == expected, "frames after the seek differ from ffmpeg's%s",
		      firstDifference(t.run.bytes, expected).c_str());
}
END_TEST

START_TEST(a_resolution_change_renegotiates_mid_stream)
{
	ClipDir dir;
	// Two H.264 byte streams of different sizes, one after the other in one file.
	const std::string a = makeClip(dir, "a.h264", "320x240", 8, "libx264 -bf 2");
	const std::string b = makeClip(dir, "b.h264", "176x144", 8, "libx264 -bf 2");
	sh("cat '" + a + "' '" + b + "' > '" + (dir / "ab.h264") + "'");
	const Timed t = play("filesrc location=" + (dir / "ab.h264") +
			     " ! h264parse ! gpuhandleavdec ! video/x-raw ! appsink name=sink "
			     "sync=false");
	ck_assert_uint_eq(t.sizes.size(), 16);
	for (size_t i = 0; i < 16; ++i)
		ck_assert(t.sizes[i] ==
			  (i < 8 ? std::make_pair(320, 240) : std::make_pair(176, 144)));
	const Run refA = reference(dir, a, "i420", 320, 240, "yuv420p");
	const Run refB = reference(dir, b, "i420", 176, 144, "yuv420p");
	std::vector<uint8_t> expected = refA.bytes;
	expected.insert(expected.end(), refB.bytes.begin(), refB.bytes.end());
	ck_assert_msg(t.run.bytes == expected, "differs from ffmpeg%s",
		      firstDifference(t.run.bytes, expected).c_str());
}
END_TEST

// The latency the pipeline reports after preroll.
GstClockTime latencyOf(const std::string &description)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s", error ? error->message : "?");
	gst_element_set_state(pipeline, GST_STATE_PAUSED);
	ck_assert(gst_element_get_state(pipeline, nullptr, nullptr, 60 * GST_SECOND) ==
		  GST_STATE_CHANGE_SUCCESS);
	GstElement *decoder = gst_bin_get_by_name(GST_BIN(pipeline), "dec");
	GstPad *src = gst_element_get_static_pad(decoder, "src");
	GstQuery *query = gst_query_new_latency();
	// The decoder answers for itself and what is upstream of it.
	ck_assert(gst_pad_query(src, query));
	GstClockTime min = 0;
	gst_query_parse_latency(query, nullptr, &min, nullptr);
	gst_query_unref(query);
	gst_object_unref(src);
	gst_object_unref(decoder);
	ck_assert(releasePipeline(pipeline));
	return min;
}

START_TEST(the_latency_is_the_decoders_delay)
{
	ClipDir dir;
	const std::string clip = makeClip(dir, "lat.mkv", "320x240", 20, "libx264 -bf 3");
	const std::string mjpeg = makeClip(dir, "lat_mjpeg.mkv", "320x240", 5, "mjpeg");
	const GstClockTime one = latencyOf(decodeTo(clip, "threads=1"));
	const GstClockTime three = latencyOf(decodeTo(clip, "threads=3"));
	ck_assert_msg(one > 0 && one % kFrame == 0, "reordering latency %" GST_TIME_FORMAT,
		      GST_TIME_ARGS(one));
	// Two more frame threads hold two more frames.
	ck_assert_msg(three == one + 2 * kFrame,
		      "%" GST_TIME_FORMAT " with 3 threads, %" GST_TIME_FORMAT " with 1",
		      GST_TIME_ARGS(three), GST_TIME_ARGS(one));
	ck_assert_uint_eq(latencyOf(decodeTo(mjpeg, "threads=1")), 0);
}
END_TEST

START_TEST(odd_sizes_decode_byte_for_byte)
{
	// FFV1 at sizes whose rows GStreamer pads and whose chroma planes are rounded up.
	for (const auto &[w, h] : { std::make_pair(97, 61), std::make_pair(318, 238) }) {
		ClipDir dir;
		const std::string size = std::to_string(w) + "x" + std::to_string(h);
		const std::string clip = dir / "odd.mkv";
		sh("ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -vf scale=" +
		   std::to_string(w) + ":" + std::to_string(h) +
		   " -frames:v 5 -c:v ffv1 -pix_fmt yuv420p '" + clip + "'");
		const Run ref = reference(dir, clip, "i420", w, h, "yuv420p");
		// appsink reads no GstVideoMeta: GStreamer's default layout, so a copy of FFmpeg's
		// planes (apart, rows aligned its own way) each frame.
		const Timed t = play(decodeTo(clip, ""));
		ck_assert_uint_eq(t.pts.size(), 5);
		ck_assert_msg(t.run.bytes == ref.bytes, "%s differs from ffmpeg%s", size.c_str(),
			      firstDifference(t.run.bytes, ref.bytes).c_str());
		ck_assert_uint_eq(t.run.stat("dec", "copies"), 5);
		// videoconvert reads GstVideoMeta: FFmpeg's own frames, not copied.
		const std::string toY444 = "videoconvert ! video/x-raw,format=Y444 ! ";
		const Run refY444 = reference(dir, clip, "i420", w, h, "yuv420p", toY444);
		const Timed meta = play(decodeTo(clip, "", "video/x-raw ! " + toY444 + "queue"));
		ck_assert_msg(meta.run.bytes == refY444.bytes, "%s with GstVideoMeta%s",
			      size.c_str(), firstDifference(meta.run.bytes, refY444.bytes).c_str());
		ck_assert_uint_eq(meta.run.stat("dec", "copies"), 0);
		const Timed gh = play(decodeTo(clip, "", "gpuhandledownload"));
		ck_assert_msg(gh.run.bytes == ref.bytes, "%s through memory:GpuHandle%s",
			      size.c_str(), firstDifference(gh.run.bytes, ref.bytes).c_str());
	}
}
END_TEST

START_TEST(gpuhandle_frames_are_never_copied)
{
	ClipDir dir;
	const std::string clip = makeClip(dir, "gh.mkv", "320x240", 10, "libx264 -bf 2");
	const Timed t =
		play(decodeTo(clip, "", "video/x-raw(memory:GpuHandle) ! gpuhandledownload"));
	ck_assert_uint_eq(t.pts.size(), 10);
	ck_assert_uint_eq(t.run.stat("dec", "frames"), 10);
	ck_assert_uint_eq(t.run.stat("dec", "frames-gpuhandle"), 10);
	ck_assert_uint_eq(t.run.stat("dec", "copies"), 0);
	// A peer that names no memory (ANY, as fakesink's) gets system memory.
	const Timed sys = play(decodeTo(clip, "", "identity"));
	ck_assert_uint_eq(sys.run.stat("dec", "frames"), 10);
	ck_assert_uint_eq(sys.run.stat("dec", "frames-gpuhandle"), 0);
}
END_TEST

std::pair<std::string, guint> firstCaps(const std::string &description);

// Downstream that takes only a GPU memory gets the frames in it, on the device it shares (GL and
// Vulkan here; software frames are uploaded, a copy counted per frame), and the bytes are what
// ffmpeg decodes once GStreamer's own gldownload and vulkandownload read them back; odd sizes
// too. A peer that takes system memory as well gets system memory from a software decoder.
START_TEST(gpu_memories_that_downstream_asks_for)
{
	struct Case {
		const char *memory;
		const char *readBack;
		std::pair<int, int> oddSize;
	};
	// GStreamer's vulkandownload (1.22) copies each plane with a row length of the plane's
	// width into rows of the default stride: where the two differ (I420 at widths not a
	// multiple of 8) even `vulkanupload ! vulkandownload` gives other bytes, some of them
	// different from run to run (97x61 and 318x238, measured). So Vulkan's second size has
	// rows it reads right, and GL's is odd.
	for (const Case &c : { Case{ "GLMemory", "gldownload", { 97, 61 } },
			       Case{ "VulkanImage", "vulkandownload", { 96, 64 } } }) {
		for (const auto &[w, h] : { std::make_pair(320, 240), c.oddSize }) {
			ClipDir dir;
			const std::string clip = dir / "clip.mkv";
			sh("ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -vf scale=" +
			   std::to_string(w) + ":" + std::to_string(h) +
			   " -frames:v 6 -c:v ffv1 -pix_fmt yuv420p '" + clip + "'");
			const Run ref = reference(dir, clip, "i420", w, h, "yuv420p");
			const Timed t =
				play(decodeTo(clip, "",
					      std::string("video/x-raw(memory:") + c.memory +
						      ") ! " + c.readBack + " ! video/x-raw"));
			ck_assert_msg(t.run.error.empty(), "%s %dx%d: %s", c.memory, w, h,
				      t.run.error.c_str());
			ck_assert_uint_eq(t.pts.size(), 6);
			ck_assert_msg(t.run.bytes == ref.bytes, "%s %dx%d differs from ffmpeg%s",
				      c.memory, w, h,
				      firstDifference(t.run.bytes, ref.bytes).c_str());
			ck_assert_uint_eq(t.run.stat("dec", "frames"), 6);
			ck_assert_uint_eq(t.run.stat("dec", "frames-gpuhandle"), 0);
			ck_assert_uint_eq(t.run.stat("dec", "copies"), 6); // uploaded
		}
		// GL or Vulkan memory, or system memory: software frames stay in system memory.
		ClipDir dir;
		const std::string clip = makeClip(dir, "both.mkv", "320x240", 3, "libx264");
		const auto caps =
			firstCaps(decodeTo(clip, "",
					   std::string("capsfilter caps=\"video/x-raw(memory:") +
						   c.memory + "); video/x-raw\""));
		ck_assert_msg(caps.first.find("memory:") == std::string::npos, "%s: %s", c.memory,
			      caps.first.c_str());
	}
}
END_TEST

// The caps of the first frame `description` gives (an appsink "sink"), and its buffer's flags.
std::pair<std::string, guint> firstCaps(const std::string &description)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s", error ? error->message : "?");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 60 * GST_SECOND);
	ck_assert_msg(sample != nullptr, "no frame from %s", description.c_str());
	gchar *caps = gst_caps_to_string(gst_sample_get_caps(sample));
	const std::pair<std::string, guint> result{ caps, GST_BUFFER_FLAGS(
								  gst_sample_get_buffer(sample)) };
	g_free(caps);
	gst_sample_unref(sample);
	gst_object_unref(sink);
	ck_assert(releasePipeline(pipeline));
	return result;
}

START_TEST(hdr_metadata_and_interlacing_reach_the_caps)
{
	ClipDir dir;
	// HEVC with HDR10 mastering display and content light level SEI, 10 bits.
	const std::string hdr = dir / "hdr.mkv";
	sh("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 3 "
	   "-pix_fmt yuv420p10le -c:v libx265 -x265-params "
	   "'log-level=none:hdr10=1:repeat-headers=1:colorprim=bt2020:transfer=smpte2084:"
	   "colormatrix=bt2020nc:master-display=G(13250,34500)B(7500,3000)R(34000,16000)"
	   "WP(15635,16450)L(10000000,1):max-cll=1000,400' '" +
	   hdr + "'");
	const auto [hdrCaps, hdrFlags] = firstCaps(decodeTo(hdr, ""));
	(void)hdrFlags;
	ck_assert_msg(hdrCaps.find("I420_10LE") != std::string::npos, "%s", hdrCaps.c_str());
	ck_assert_msg(hdrCaps.find("mastering-display-info=(string)") != std::string::npos, "%s",
		      hdrCaps.c_str());
	ck_assert_msg(hdrCaps.find("content-light-level=(string)1000:400") != std::string::npos,
		      "%s", hdrCaps.c_str());
	ck_assert_msg(hdrCaps.find("bt2100-pq") != std::string::npos ||
			      hdrCaps.find("bt2020") != std::string::npos,
		      "%s", hdrCaps.c_str());
	// Interlaced H.264 (field-coded, top field first).
	const std::string interlaced = dir / "interlaced.mkv";
	sh("ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 3 "
	   "-vf setfield=tff -c:v libx264 -flags +ilme+ildct '" +
	   interlaced + "'");
	const auto [iCaps, iFlags] = firstCaps(decodeTo(interlaced, ""));
	ck_assert_msg(iCaps.find("interlace-mode=(string)mixed") != std::string::npos, "%s",
		      iCaps.c_str());
	ck_assert(iFlags & GST_VIDEO_BUFFER_FLAG_INTERLACED);
	ck_assert(iFlags & GST_VIDEO_BUFFER_FLAG_TFF);
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *s = suite_create("gst_avdec");
	TCase *tc = tcase_create("avdec");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, reordered_frames_keep_their_times_and_all_come_out_at_eos);
	tcase_add_test(tc, an_accurate_seek_gives_the_frames_from_that_time);
	tcase_add_test(tc, a_resolution_change_renegotiates_mid_stream);
	tcase_add_test(tc, the_latency_is_the_decoders_delay);
	tcase_add_test(tc, odd_sizes_decode_byte_for_byte);
	tcase_add_test(tc, gpuhandle_frames_are_never_copied);
	tcase_add_test(tc, gpu_memories_that_downstream_asks_for);
	tcase_add_test(tc, hdr_metadata_and_interlacing_reach_the_caps);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
