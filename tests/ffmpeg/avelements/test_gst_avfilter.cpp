// gpuhandleavfilter in running pipelines: Vulkan and OpenCL frames in and out without a copy (its
// stats), the times a frame-rate graph gives, frames a graph adds at EOS, and a graph rebuilt
// when the input caps change mid-stream.
#include "avelements_run.h" // last: Check's fail() macro breaks standard headers after it

#include <gst/app/gstappsrc.h>

using namespace gpuhandle::test;

namespace {

constexpr const char *kNv12 = "video/x-raw,format=NV12,width=320,height=240,framerate=25/1";

// Whether the ffmpeg program makes a device of `type` (vulkan, opencl) here.
bool ffmpegHasDevice(const std::string &type)
{
	return std::system(("ffmpeg -nostdin -v error -init_hw_device " + type +
			    " -f lavfi -i nullsrc=size=64x64 -frames:v 1 -f null - >/dev/null 2>&1")
				   .c_str()) == 0;
}

std::string filterOf(const std::string &upstream, const std::string &options,
		     const std::string &downstream = "video/x-raw")
{
	return std::string("videotestsrc num-buffers=20 ! ") + kNv12 + " ! " + upstream +
	       " gpuhandleavfilter name=f " + options + " ! " + downstream +
	       " ! appsink name=sink sync=false";
}

} // namespace

START_TEST(gpu_frames_go_through_ffmpeg_without_a_copy)
{
	if (!ffmpegHasDevice("vulkan")) {
		std::printf("not run: FFmpeg cannot create a Vulkan device here\n");
		return;
	}
	if (std::getenv("GPUHANDLE_UNDER_VALGRIND")) { // lavapipe's JIT: 50x slower under memcheck
		std::printf("not run under valgrind: Vulkan on lavapipe\n");
		return;
	}
	const Timed t =
		play(filterOf("gpuhandleupload backend=vulkan !", "graph=scale_vulkan=w=160:h=120",
			      "video/x-raw(memory:GpuHandle) ! gpuhandledownload"));
	ck_assert_uint_eq(t.pts.size(), 20);
	for (const auto &size : t.sizes)
		ck_assert(size == std::make_pair(160, 120));
	ck_assert_uint_eq(t.run.stat("f", "frames-in"), 20);
	ck_assert_uint_eq(t.run.stat("f", "frames-out"), 20);
	ck_assert_uint_eq(t.run.stat("f", "frames-gpuhandle"), 20);
	ck_assert_uint_eq(t.run.stat("f", "copies-in"), 0);
	ck_assert_uint_eq(t.run.stat("f", "copies-out"), 0);
	// The same frames to system memory: FFmpeg's download, one copy each.
	const Timed sys = play(
		filterOf("gpuhandleupload backend=vulkan !", "graph=scale_vulkan=w=160:h=120"));
	ck_assert_uint_eq(sys.run.stat("f", "copies-out"), 20);
	ck_assert_uint_eq(sys.run.stat("f", "frames-gpuhandle"), 0);
	ck_assert_uint_eq(sys.run.bytes.size(), t.run.bytes.size());
	// (Not byte for byte: FFmpeg 7.1's Vulkan filters on lavapipe differ from run to run;
	// avfilter_test.sh compares with ffmpeg where they do not.)
}
END_TEST

// gpuhandle's OpenCL frames (PoCL here) into an OpenCL graph and out, without a copy either way;
// the bytes are compared with ffmpeg's in avfilter_test.sh.
START_TEST(opencl_frames_go_through_ffmpeg_without_a_copy)
{
	if (!ffmpegHasDevice("opencl")) {
		std::printf("not run: FFmpeg cannot create an OpenCL device here\n");
		return;
	}
	if (std::getenv("GPUHANDLE_UNDER_VALGRIND")) { // PoCL's JIT, as lavapipe's
		std::printf("not run under valgrind: OpenCL on PoCL\n");
		return;
	}
	// (PoCL downloads no NV12 OpenCL frames, in ffmpeg either: I420.)
	const Timed t = play(filterOf(
		"videoconvert ! video/x-raw,format=I420 ! gpuhandleupload backend=opencl !",
		"graph=avgblur_opencl=sizeX=3",
		"video/x-raw(memory:GpuHandle) ! gpuhandledownload ! video/x-raw"));
	ck_assert_uint_eq(t.pts.size(), 20);
	ck_assert_uint_eq(t.run.stat("f", "frames-in"), 20);
	ck_assert_uint_eq(t.run.stat("f", "frames-gpuhandle"), 20);
	ck_assert_uint_eq(t.run.stat("f", "copies-in"), 0);
	ck_assert_uint_eq(t.run.stat("f", "copies-out"), 0);
}
END_TEST

START_TEST(a_frame_rate_graph_times_its_frames)
{
	// 20 frames at 25 per second are 0.8 s: fps=10 gives 8, 100 ms apart, the last flushed at
	// EOS.
	const Timed t = play(filterOf("", "graph=fps=10"));
	ck_assert_uint_eq(t.pts.size(), 8);
	for (size_t i = 0; i < t.pts.size(); ++i) {
		ck_assert_uint_eq(t.pts[i], i * GST_SECOND / 10);
		ck_assert_uint_eq(t.durations[i], GST_SECOND / 10);
	}
	ck_assert_uint_eq(t.run.stat("f", "frames-in"), 20);
	ck_assert_uint_eq(t.run.stat("f", "frames-out"), 8);
}
END_TEST

START_TEST(frames_a_graph_adds_at_eos_come_out)
{
	// tpad clones the last frame three times when its input ends: only a drained graph gives
	// them.
	const Timed t = play(filterOf("", "graph=tpad=stop=3:stop_mode=clone"));
	ck_assert_uint_eq(t.pts.size(), 23);
	for (size_t i = 1; i < t.pts.size(); ++i)
		ck_assert(t.pts[i] >= t.pts[i - 1]);
	const size_t frameBytes = t.run.bytes.size() / 23;
	for (size_t i = 20; i < 23; ++i)
		ck_assert(std::equal(
			t.run.bytes.begin() + static_cast<std::ptrdiff_t>(19 * frameBytes),
			t.run.bytes.begin() + static_cast<std::ptrdiff_t>(20 * frameBytes),
			t.run.bytes.begin() + static_cast<std::ptrdiff_t>(i * frameBytes)));
}
END_TEST

START_TEST(new_input_caps_rebuild_the_graph)
{
	// Five 320x240 frames, then five 160x120, through a graph that halves them.
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time ! gpuhandleavfilter name=f graph=scale=iw/2:ih/2 ! "
		"video/x-raw ! appsink name=sink sync=false",
		&error);
	ck_assert_msg(pipeline && !error, "%s", error ? error->message : "?");
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	for (int i = 0; i < 10; ++i) {
		const int w = i < 5 ? 320 : 160, h = i < 5 ? 240 : 120;
		GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "I420",
						    "width", G_TYPE_INT, w, "height", G_TYPE_INT, h,
						    "framerate", GST_TYPE_FRACTION, 25, 1, nullptr);
		if (i == 0 || i == 5)
			gst_app_src_set_caps(GST_APP_SRC(src), caps);
		GstVideoInfo info;
		ck_assert(gst_video_info_from_caps(&info, caps));
		gst_caps_unref(caps);
		GstBuffer *buffer =
			gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
		gst_buffer_memset(buffer, 0, static_cast<guint8>(16 * i),
				  GST_VIDEO_INFO_SIZE(&info));
		GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(i) * GST_SECOND / 25;
		GST_BUFFER_DURATION(buffer) = GST_SECOND / 25;
		ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(src), buffer), GST_FLOW_OK);
	}
	gst_app_src_end_of_stream(GST_APP_SRC(src));
	std::vector<std::pair<int, int>> sizes;
	while (GstSample *sample =
		       gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND)) {
		GstVideoInfo info;
		ck_assert(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
		sizes.emplace_back(GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info));
		gst_sample_unref(sample);
	}
	ck_assert_uint_eq(sizes.size(), 10);
	for (size_t i = 0; i < 10; ++i)
		ck_assert(sizes[i] == (i < 5 ? std::make_pair(160, 120) : std::make_pair(80, 60)));
	gst_object_unref(src);
	gst_object_unref(sink);
	ck_assert(releasePipeline(pipeline));
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *s = suite_create("gst_avfilter");
	TCase *tc = tcase_create("avfilter");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gpu_frames_go_through_ffmpeg_without_a_copy);
	tcase_add_test(tc, opencl_frames_go_through_ffmpeg_without_a_copy);
	tcase_add_test(tc, a_frame_rate_graph_times_its_frames);
	tcase_add_test(tc, frames_a_graph_adds_at_eos_come_out);
	tcase_add_test(tc, new_input_caps_rebuild_the_graph);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
