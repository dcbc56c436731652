// gpuhandleupload / gpuhandledownload over a pipeline's life: caps changes, DMA-BUF output or a
// clear error, buffers that outlive their pipeline, fds stable over 10,000 frames, bad input.
#include <gpuhandle/backends/backend.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "elements_fixture.h"
#include "fd_count.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::appendFrame;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using gpuhandle::test::Size;
using namespace gpuhandle::test::elements;

namespace {

// Caps change mid-stream (size and format): the elements renegotiate (new pool, new layout) and
// every frame still arrives intact.
START_TEST(caps_change_renegotiates)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time ! gpuhandleupload backend=memfd name=up ! "
		"gpuhandledownload ! appsink name=sink sync=false",
		&error);
	ck_assert(pipeline && !error);
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	struct Step {
		const char *format;
		Size size;
	};
	const Step steps[] = { { "NV12", { 64, 48 } },
			       { "I420", { 33, 17 } },
			       { "RGBA", { 320, 240 } } };
	guint64 pts = 0;
	for (const Step &step : steps) {
		GstCaps *caps = gst_caps_from_string(rawCaps(step.format, step.size).c_str());
		gst_app_src_set_caps(GST_APP_SRC(src), caps);
		GstVideoInfo info;
		ck_assert(gst_video_info_from_caps(&info, caps));
		gst_caps_unref(caps);
		for (int i = 0; i < 2; ++i) {
			GstBuffer *frame = gst_buffer_new_allocate(
				nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
			GstMapInfo map;
			gst_buffer_map(frame, &map, GST_MAP_WRITE);
			for (gsize b = 0; b < map.size; ++b)
				map.data[b] = static_cast<guint8>(b * 7 + i);
			gst_buffer_unmap(frame, &map);
			GST_BUFFER_PTS(frame) = pts++ * GST_MSECOND;
			ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(src),
								 gst_buffer_ref(frame)),
					 GST_FLOW_OK);
			GstSample *sample =
				gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
			ck_assert_msg(sample != nullptr, "no frame for %s", step.format);
			Run got, want;
			appendFrame(got, sample);
			GstSample *expected = gst_sample_new(frame, gst_sample_get_caps(sample),
							     nullptr, nullptr);
			appendFrame(want, expected);
			ck_assert_msg(got.bytes == want.bytes, "%s %dx%d: bytes differ%s",
				      step.format, step.size.width, step.size.height,
				      firstDifference(got.bytes, want.bytes).c_str());
			gst_sample_unref(expected);
			gst_sample_unref(sample);
			gst_buffer_unref(frame);
		}
	}
	GstElement *up = gst_bin_get_by_name(GST_BIN(pipeline), "up");
	GstStructure *stats = nullptr;
	g_object_get(up, "stats", &stats, nullptr);
	guint64 frames = 0;
	ck_assert(gst_structure_get_uint64(stats, "frames", &frames));
	ck_assert_uint_eq(frames, 6);
	gst_structure_free(stats);
	gst_object_unref(up);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(src);
	gst_object_unref(sink);
	ck_assert(test::releasePipeline(pipeline));
}
END_TEST

// memory:DMABuf out: memfd frames leave as DMA-BUFs where the kernel makes them (udmabuf), with
// the same bytes; without /dev/udmabuf (and no GPU exporter) the element says why it cannot.
START_TEST(dmabuf_out_or_a_clear_error)
{
	const Size size{ 64, 48 };
	Run reference = runPipeline(source("NV12", size) + " ! " + kSink);
	Run run = runPipeline(source("NV12", size) +
			      " ! gpuhandleupload backend=memfd ! gpuhandledownload name=down ! "
			      "video/x-raw(memory:DMABuf) ! " +
			      kSink);
	if (access("/dev/udmabuf", R_OK | W_OK) == 0) {
		ck_assert_msg(run.error.empty(), "%s", run.error.c_str());
		ck_assert_msg(run.bytes == reference.bytes, "bytes differ%s",
			      firstDifference(run.bytes, reference.bytes).c_str());
	} else {
		std::printf("No /dev/udmabuf here: checking the error instead of DMA-BUF bytes.\n");
		ck_assert_msg(run.error.find("DMABuf") != std::string::npos &&
				      run.error.find("DMA-BUF") != std::string::npos,
			      "expected an error naming DMABuf and why, got '%s'",
			      run.error.c_str());
	}
}
END_TEST

// The open fd count once it is at most `limit`, or after 10 s.
int settledFdCount(int limit)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	int count = test::openFdCount();
	while (count > limit && std::chrono::steady_clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		count = test::openFdCount();
	}
	return count;
}

// The application holds a buffer after the pipeline is gone: it still maps, with the right
// bytes, and freeing it closes every fd the pipeline opened.
void bufferOutlivesPipeline(const char *backend)
{
	const Size size{ 160, 120 };
	Run reference = runPipeline(source("NV12", size, 1) + " ! " + kSink);
	{
		Run warmup = runPipeline(source("NV12", size, 1) +
					 " ! gpuhandleupload backend=" + backend + " ! " + kSink);
	}
	const int fdsBefore = test::openFdCount();
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		(source("NV12", size, 1) + " ! gpuhandleupload backend=" + backend + " ! " + kSink)
			.c_str(),
		&error);
	ck_assert(pipeline && !error);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND);
	ck_assert(sample != nullptr);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(sink);
	ck_assert(test::releasePipeline(pipeline));
	// Only the sample's buffer is left: its memories hold the frame and the device.
	GstCaps *caps = gst_caps_from_string(rawCaps("NV12", size).c_str());
	GstSample *plain = gst_sample_new(gst_sample_get_buffer(sample), caps, nullptr, nullptr);
	gst_caps_unref(caps);
	gst_sample_unref(sample);
	Run run;
	appendFrame(run, plain);
	gst_sample_unref(plain);
	ck_assert_msg(run.bytes == reference.bytes, "%s: bytes differ after the pipeline went",
		      backend);
	// No growth. Mesa's threads close a device's fds a little after it is destroyed (the
	// warm-up's, and this run's), so the count may settle late; a leak never settles.
	ck_assert_int_le(settledFdCount(fdsBefore), fdsBefore);
}

START_TEST(buffer_outlives_pipeline_memfd)
{
	bufferOutlivesPipeline("memfd");
	ck_assert(true);
}
END_TEST

START_TEST(buffer_outlives_pipeline_vulkan)
{
	bufferOutlivesPipeline("vulkan");
	ck_assert(true);
}
END_TEST

START_TEST(fd_count_stable_over_10000_frames)
{
	const int frames = static_cast<int>(test::scaledCount(10000)); // 1,000 in slow runtimes
	const std::string description = source("I420", { 64, 48 }, frames) +
					" ! gpuhandleupload name=up backend=memfd"
					" ! gpuhandledownload name=down ! " +
					kSink;
	{
		Run warmup = runPipeline(source("I420", { 64, 48 }, 10) +
					 " ! gpuhandleupload backend=memfd ! gpuhandledownload ! " +
					 kSink);
	}
	const int fdsBefore = test::openFdCount();
	{
		Run run = runPipeline(description, nullptr, 240);
		ck_assert_msg(run.error.empty(), "%s", run.error.c_str());
		ck_assert_uint_eq(run.frames, frames);
		ck_assert_uint_eq(run.stat("up", "frames"), frames);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Caps that fix a format gpuhandle has no entry for. Linked in gst-launch syntax, the link fails
// naming the caps; set at run time (appsrc), negotiation fails and gpuhandleupload's warning
// names the format (the source's error alone says only "not-negotiated").
START_TEST(unsupported_format_fails_negotiation_with_a_clear_message)
{
	GError *error = nullptr;
	GstElement *linked = gst_parse_launch(
		"videotestsrc num-buffers=1 ! video/x-raw,format=RGB15,width=64,height=48 ! "
		"gpuhandleupload name=up ! gpuhandledownload ! fakesink",
		&error);
	ck_assert_msg(error && std::strstr(error->message, "RGB15"), "%s",
		      error ? error->message : "linked");
	g_clear_error(&error);
	gst_clear_object(&linked);
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time caps=\"video/x-raw,format=RGB15,width=64,height=48,"
		"framerate=30/1\" ! gpuhandleupload name=up ! gpuhandledownload ! fakesink",
		&error);
	ck_assert(pipeline && !error);
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBuffer *frame = gst_buffer_new_allocate(nullptr, 64 * 48 * 2, nullptr);
	GST_BUFFER_PTS(frame) = 0;
	gst_app_src_push_buffer(GST_APP_SRC(src), frame);
	gst_object_unref(src);
	GstBus *bus = gst_element_get_bus(pipeline);
	std::string warning;
	bool failed = false;
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (!failed && std::chrono::steady_clock::now() < deadline) {
		GstMessage *msg = gst_bus_timed_pop_filtered(
			bus, 100 * GST_MSECOND,
			static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING));
		if (!msg)
			continue;
		GError *err = nullptr;
		gchar *debug = nullptr;
		if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING) {
			gst_message_parse_warning(msg, &err, &debug);
			if (g_str_equal(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), "up"))
				warning = err->message;
		} else {
			gst_message_parse_error(msg, &err, &debug);
			failed = true;
		}
		g_clear_error(&err);
		g_free(debug);
		gst_message_unref(msg);
	}
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	ck_assert(test::releasePipeline(pipeline));
	ck_assert_msg(failed, "the pipeline did not fail");
	ck_assert_msg(warning.find("RGB15") != std::string::npos &&
			      warning.find("not supported by gpuhandle") != std::string::npos,
		      "warning: '%s'", warning.c_str());
}
END_TEST

START_TEST(wrong_size_buffer_is_an_element_error)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time caps=\"video/x-raw,format=RGBA,width=64,height=64,"
		"framerate=30/1\" ! gpuhandleupload name=up ! gpuhandledownload ! fakesink",
		&error);
	ck_assert(pipeline && !error);
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBuffer *small = gst_buffer_new_allocate(nullptr, 100, nullptr);
	GST_BUFFER_PTS(small) = 0;
	gst_app_src_push_buffer(GST_APP_SRC(src), small);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
	ck_assert_msg(msg != nullptr, "no error for a 100-byte 64x64 RGBA buffer");
	ck_assert_str_eq(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), "up");
	GError *err = nullptr;
	gchar *debug = nullptr;
	gst_message_parse_error(msg, &err, &debug);
	ck_assert(g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT));
	ck_assert_msg(debug && std::strlen(debug) > 0, "no debug string");
	g_clear_error(&err);
	g_free(debug);
	gst_message_unref(msg);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(src);
	ck_assert(test::releasePipeline(pipeline));
}
END_TEST

} // namespace

int main(int argc, char **argv)
{
	// Probed in a child, so that no driver thread exists when Check forks each test.
	const bool vulkan = test::probeBackend(BackendKind::Vulkan) == 0;
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-element-lifetime");
	TCase *tc = tcase_create("gst-element-lifetime");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, caps_change_renegotiates);
	tcase_add_test(tc, dmabuf_out_or_a_clear_error);
	tcase_add_test(tc, buffer_outlives_pipeline_memfd);
	tcase_add_test(tc, fd_count_stable_over_10000_frames);
	tcase_add_test(tc, wrong_size_buffer_is_an_element_error);
	tcase_add_test(tc, unsupported_format_fails_negotiation_with_a_clear_message);
	if (vulkan)
		tcase_add_test(tc, buffer_outlives_pipeline_vulkan);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
