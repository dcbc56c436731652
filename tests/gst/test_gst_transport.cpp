// gpuhandlesink / gpuhandlesrc across processes: bytes, fan-out, crashes on either side, zero copy.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gst/allocators/allocators.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "pipeline_run.h"

#include "check_helpers.h"

using gpuhandle::test::appendFrame;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using namespace std::chrono_literals;

namespace {

constexpr int kFrames = 30;
constexpr const char *kCaps = "video/x-raw,format=NV12,width=320,height=240,framerate=30/1";
constexpr const char *kSink = "appsink name=sink sync=false";

std::string source(int buffers, bool live = false)
{
	return "videotestsrc num-buffers=" + std::to_string(buffers) + " pattern=ball" +
	       (live ? " is-live=true" : "") + " ! " + kCaps;
}

// A socket path of this test process (Check forks each test).
std::string socketPath(const char *name)
{
	char path[108];
	std::snprintf(path, sizeof path, "/tmp/gpuhandle-gst-%s-%d.sock", name, getpid());
	return path;
}

// What a producer child checks in its sink's stats at EOS.
enum class Path { Any, ZeroCopy, Copy };

// Waits for the (playing) `pipeline`, whose gpuhandlesink is named "gsink", to reach EOS in
// this (forked) process and returns the exit status: 0 EOS with the stats `path` expects, 1 an
// error, 2 no EOS in 60 s, 3 other stats. Consumes the pipeline.
int awaitProducer(GstElement *pipeline, Path path, guint64 frames)
{
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 60 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	int status = !msg ? 2 : GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR ? 1 : 0;
	if (msg)
		gst_message_unref(msg);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "gsink");
	GstStructure *stats = nullptr;
	g_object_get(sink, "stats", &stats, nullptr);
	guint64 zeroCopy = 0, copied = 0;
	gst_structure_get_uint64(stats, "frames-zero-copy", &zeroCopy);
	gst_structure_get_uint64(stats, "frames-copied", &copied);
	gst_structure_free(stats);
	gst_object_unref(sink);
	if (status == 0 && ((path == Path::ZeroCopy && (zeroCopy != frames || copied != 0)) ||
			    (path == Path::Copy && (copied != frames || zeroCopy != 0))))
		status = 3;
	// NULL: the sender says Bye, so the consumers see the end of the stream.
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(bus);
	gst_object_unref(pipeline);
	return status;
}

// Runs `description` (with a gpuhandlesink named "gsink") to EOS: see awaitProducer.
int producerMain(const std::string &description, Path path, guint64 frames)
{
	GstElement *pipeline = gst_parse_launch(description.c_str(), nullptr);
	if (!pipeline)
		return 1;
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	return awaitProducer(pipeline, path, frames);
}

// Forks the producer (before this process made any GStreamer thread).
pid_t forkProducer(const std::string &description, Path path, guint64 frames)
{
	const pid_t pid = fork();
	if (pid == 0)
		_exit(producerMain(description, path, frames));
	return pid;
}

int exitStatusOf(pid_t pid)
{
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

// Producer in a child, consumer here: every frame's bytes as videotestsrc makes them.
void checkCrossing(const char *name, const std::string &producerTail, Path path)
{
	const std::string socket = socketPath(name);
	const pid_t producer = forkProducer(source(kFrames) + " ! " + producerTail +
						    " ! gpuhandlesink name=gsink socket-path=" +
						    socket + " wait-for-consumers=1",
					    path, kFrames);
	ck_assert_int_gt(producer, 0);
	Run reference = runPipeline(source(kFrames) + " ! " + kSink);
	ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
	Run run = runPipeline("gpuhandlesrc socket-path=" + socket + " ! " + kSink, nullptr, 60);
	ck_assert_msg(run.error.empty(), "%s: %s", name, run.error.c_str());
	ck_assert_uint_eq(run.frames, kFrames);
	ck_assert_msg(run.bytes == reference.bytes, "%s: bytes differ%s", name,
		      firstDifference(run.bytes, reference.bytes).c_str());
	ck_assert_int_eq(exitStatusOf(producer), 0);
}

// A producer whose caps change after 3 of 6 frames (320x240, then 160x120), each frame filled
// with its own value; returns the exit status as producerMain does.
int capsChangeProducer(const std::string &socket)
{
	GstElement *pipeline = gst_parse_launch(("appsrc name=src format=time ! gpuhandlesink "
						 "name=gsink socket-path=" +
						 socket + " wait-for-consumers=1")
							.c_str(),
						nullptr);
	if (!pipeline)
		return 1;
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	for (int i = 0; i < 6; ++i) {
		const int width = i < 3 ? 320 : 160, height = i < 3 ? 240 : 120;
		if (i == 0 || i == 3) {
			GstCaps *caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
							    "NV12", "width", G_TYPE_INT, width,
							    "height", G_TYPE_INT, height,
							    "framerate", GST_TYPE_FRACTION, 30, 1,
							    nullptr);
			g_object_set(src, "caps", caps, nullptr);
			gst_caps_unref(caps);
		}
		const auto size = static_cast<gsize>(width * height * 3 / 2);
		GstBuffer *buffer = gst_buffer_new_allocate(nullptr, size, nullptr);
		gst_buffer_memset(buffer, 0, static_cast<guint8>(i * 40 + 1), size);
		GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(i) * GST_SECOND / 30;
		gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
	}
	gst_app_src_end_of_stream(GST_APP_SRC(src));
	gst_object_unref(src);
	return awaitProducer(pipeline, Path::Any, 0);
}

// Six NV12 320x240 frames, each filled with its own value, in fd memory (DMA-BUF memory when
// `dmaBuf`) over memfds not sealed against shrinking, which consumers refuse: gpuhandlesink must
// copy every one. Exit status as awaitProducer's (3: not all copied).
int unsealedProducer(const std::string &socket, bool dmaBuf)
{
	GstElement *pipeline = gst_parse_launch(("appsrc name=src format=time ! " +
						 std::string(kCaps) + " ! gpuhandlesink name=gsink " +
						 "socket-path=" + socket + " wait-for-consumers=1")
							.c_str(),
						nullptr);
	if (!pipeline)
		return 1;
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	GstAllocator *allocator = dmaBuf ? gst_dmabuf_allocator_new() : gst_fd_allocator_new();
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	constexpr gsize kSize = 320 * 240 * 3 / 2;
	for (int i = 0; i < 6; ++i) {
		const int fd = memfd_create("unsealed", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, kSize) != 0)
			return 1;
		// The memory owns the fd from here.
		GstMemory *mem = dmaBuf ? gst_dmabuf_allocator_alloc(allocator, fd, kSize)
					: gst_fd_allocator_alloc(allocator, fd, kSize,
								 GST_FD_MEMORY_FLAG_NONE);
		GstBuffer *buffer = gst_buffer_new();
		gst_buffer_append_memory(buffer, mem);
		gst_buffer_memset(buffer, 0, static_cast<guint8>(i * 40 + 1), kSize);
		GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(i) * GST_SECOND / 30;
		gst_app_src_push_buffer(GST_APP_SRC(src), buffer);
	}
	gst_app_src_end_of_stream(GST_APP_SRC(src));
	gst_object_unref(allocator);
	gst_object_unref(src);
	return awaitProducer(pipeline, Path::Copy, 6);
}

// Consumer of the six filled frames (capsChangeProducer, unsealedProducer): frame i is filled
// with i * 40 + 1, and 160x120 from frame `smallFrom` on.
void checkFilledFrames(const std::string &socket, pid_t producer, int smallFrom)
{
	GstElement *pipeline = gst_parse_launch(
		("gpuhandlesrc socket-path=" + socket + " ! " + kSink).c_str(), nullptr);
	ck_assert(pipeline != nullptr);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	int frames = 0;
	const auto deadline = std::chrono::steady_clock::now() + 30s;
	while (std::chrono::steady_clock::now() < deadline &&
	       !gst_app_sink_is_eos(GST_APP_SINK(sink))) {
		GstSample *sample =
			gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_MSECOND);
		if (!sample)
			continue;
		GstVideoInfo info;
		ck_assert(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
		ck_assert_int_eq(GST_VIDEO_INFO_WIDTH(&info), frames < smallFrom ? 320 : 160);
		ck_assert_int_eq(GST_VIDEO_INFO_HEIGHT(&info), frames < smallFrom ? 240 : 120);
		GstVideoFrame frame;
		ck_assert(gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample),
					      GST_MAP_READ));
		const auto *luma =
			static_cast<const guint8 *>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
		const auto *chroma =
			static_cast<const guint8 *>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 1));
		ck_assert_uint_eq(luma[0], frames * 40 + 1);
		ck_assert_uint_eq(chroma[0], frames * 40 + 1);
		gst_video_frame_unmap(&frame);
		gst_sample_unref(sample);
		frames++;
	}
	ck_assert_int_eq(frames, 6);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(sink);
	gst_object_unref(pipeline);
	ck_assert_int_eq(exitStatusOf(producer), 0);
}

// Pulls every sample of the `count` appsinks into `runs` until each is at EOS, the pipeline
// posts an error (false), or `limit` passes.
bool pullUntilEos(GstElement *pipeline, GstElement *const *sinks, Run *runs, int count,
		  std::chrono::seconds limit)
{
	GstBus *bus = gst_element_get_bus(pipeline);
	const auto deadline = std::chrono::steady_clock::now() + limit;
	bool failed = false;
	while (std::chrono::steady_clock::now() < deadline && !failed) {
		bool allEos = true;
		for (int i = 0; i < count; ++i) {
			GstAppSink *sink = GST_APP_SINK(sinks[i]);
			while (GstSample *sample =
				       gst_app_sink_try_pull_sample(sink, 10 * GST_MSECOND)) {
				appendFrame(runs[i], sample);
				gst_sample_unref(sample);
			}
			allEos = allEos && gst_app_sink_is_eos(sink);
		}
		if (allEos)
			break;
		if (GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
			failed = true;
			gst_message_unref(msg);
		}
	}
	gst_object_unref(bus);
	return !failed;
}

// Two consumers, one of which never lets go of its frames (its appsink is never pulled): the
// other gets every frame at once (not after a wait per frame, nor the producer stalled on the
// pool the stuck one holds), and the producer sends on the `path` it is meant to.
void checkStuckConsumer(const char *name, const std::string &producerTail, Path path)
{
	const std::string socket = socketPath(name);
	const pid_t producer = forkProducer(source(kFrames) + " ! " + producerTail +
						    " ! gpuhandlesink name=gsink socket-path=" +
						    socket + " wait-for-consumers=2 max-consumers=2",
					    path, kFrames);
	ck_assert_int_gt(producer, 0);
	Run reference = runPipeline(source(kFrames) + " ! " + kSink);
	GstElement *pipeline = gst_parse_launch(("gpuhandlesrc socket-path=" + socket + " ! " +
						 kSink + " gpuhandlesrc socket-path=" + socket +
						 " ! appsink name=stuck sync=false")
							.c_str(),
						nullptr);
	ck_assert(pipeline != nullptr);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	GstElement *stuck = gst_bin_get_by_name(GST_BIN(pipeline), "stuck");
	Run run;
	const auto started = std::chrono::steady_clock::now();
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	ck_assert_msg(pullUntilEos(pipeline, &sink, &run, 1, 60s), "%s: an error", name);
	const auto took = std::chrono::steady_clock::now() - started;
	ck_assert_uint_eq(run.frames, kFrames);
	ck_assert_msg(run.bytes == reference.bytes, "%s: bytes differ%s", name,
		      firstDifference(run.bytes, reference.bytes).c_str());
	// One wait of 1 s for the stuck consumer, then it is skipped (a wait per frame: 26 s).
	ck_assert_msg(took < 10s, "%s: %lld ms for %d frames", name,
		      static_cast<long long>(
			      std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
		      kFrames);
	// The stuck consumer got what it may hold (max-in-flight), then nothing more.
	Run held;
	ck_assert(pullUntilEos(pipeline, &stuck, &held, 1, 10s));
	ck_assert_uint_eq(held.frames, 4);
	ck_assert_int_eq(exitStatusOf(producer), 0);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(sink);
	gst_object_unref(stuck);
	gst_object_unref(pipeline);
}

} // namespace

START_TEST(caps_change_reaches_the_consumer)
{
	const std::string socket = socketPath("caps");
	const pid_t producer = fork();
	if (producer == 0)
		_exit(capsChangeProducer(socket));
	ck_assert_int_gt(producer, 0);
	checkFilledFrames(socket, producer, 3);
}
END_TEST

START_TEST(unsealed_fd_memory_is_copied)
{
	const std::string socket = socketPath("unsealedfd");
	const pid_t producer = fork();
	if (producer == 0)
		_exit(unsealedProducer(socket, false));
	ck_assert_int_gt(producer, 0);
	checkFilledFrames(socket, producer, 6);
}
END_TEST

START_TEST(unsealed_memfd_dmabufs_are_copied)
{
	// The encoder takes any DMA-BUF object, but consumers refuse unsealed memfds as one.
	const std::string socket = socketPath("unsealeddmabuf");
	const pid_t producer = fork();
	if (producer == 0)
		_exit(unsealedProducer(socket, true));
	ck_assert_int_gt(producer, 0);
	checkFilledFrames(socket, producer, 6);
}
END_TEST

START_TEST(a_stuck_consumer_does_not_throttle_zero_copy)
{
	checkStuckConsumer("stuckzero", "identity", Path::ZeroCopy);
	ck_assert(true);
}
END_TEST

START_TEST(a_stuck_consumer_does_not_throttle_copies)
{
	// Copies: the stuck consumer's slots stay held, new ones are made for the others.
	checkStuckConsumer("stuckcopy", "identity drop-allocation=true", Path::Copy);
	ck_assert(true);
}
END_TEST

START_TEST(frames_cross_processes_without_a_copy)
{
	// videotestsrc writes into the memfd pool gpuhandlesink proposes: nothing is copied.
	checkCrossing("zerocopy", "identity", Path::ZeroCopy);
	ck_assert(true);
}
END_TEST

START_TEST(frames_of_other_memory_are_copied_into_memfds)
{
	// identity drop-allocation=true hides the pool: videotestsrc's own system memory arrives.
	checkCrossing("copy", "identity drop-allocation=true", Path::Copy);
	ck_assert(true);
}
END_TEST

// One crossing per test: a fork after a pipeline ran here would copy its threads' locks.
START_TEST(gpuhandle_memfd_frames_cross_without_a_copy)
{
	checkCrossing("memfd", "gpuhandleupload backend=memfd", Path::ZeroCopy);
	ck_assert(true);
}
END_TEST

START_TEST(gpuhandle_cpu_frames_are_copied)
{
	checkCrossing("cpu", "gpuhandleupload backend=cpu", Path::Copy);
	ck_assert(true);
}
END_TEST

START_TEST(two_consumers_get_every_frame)
{
	const std::string socket = socketPath("two");
	const pid_t producer = forkProducer(source(kFrames) +
						    " ! gpuhandlesink name=gsink "
						    "socket-path=" +
						    socket + " wait-for-consumers=2",
					    Path::Any, kFrames);
	Run reference = runPipeline(source(kFrames) + " ! " + kSink);
	GstElement *pipeline = gst_parse_launch(("gpuhandlesrc socket-path=" + socket + " ! " +
						 kSink + " gpuhandlesrc socket-path=" + socket +
						 " ! appsink name=sink2 sync=false")
							.c_str(),
						nullptr);
	ck_assert(pipeline != nullptr);
	GstElement *sinks[2] = { gst_bin_get_by_name(GST_BIN(pipeline), "sink"),
				 gst_bin_get_by_name(GST_BIN(pipeline), "sink2") };
	Run runs[2];
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	const bool ok = pullUntilEos(pipeline, sinks, runs, 2, 60s);
	ck_assert_msg(ok, "the consumers' pipeline posted an error");
	for (Run &run : runs) {
		ck_assert_uint_eq(run.frames, kFrames);
		ck_assert_msg(run.bytes == reference.bytes, "bytes differ%s",
			      firstDifference(run.bytes, reference.bytes).c_str());
	}
	gst_element_set_state(pipeline, GST_STATE_NULL);
	for (GstElement *sink : sinks)
		gst_object_unref(sink);
	gst_object_unref(pipeline);
	ck_assert_int_eq(exitStatusOf(producer), 0);
}
END_TEST

START_TEST(producer_killed_is_an_error_not_a_hang)
{
	const std::string socket = socketPath("killproducer");
	const pid_t producer =
		forkProducer(source(100000, true) + " ! gpuhandlesink name=gsink socket-path=" +
				     socket + " wait-for-consumers=1",
			     Path::Any, 0);
	GstElement *pipeline = gst_parse_launch(
		("gpuhandlesrc socket-path=" + socket + " ! " + kSink).c_str(), nullptr);
	ck_assert(pipeline != nullptr);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	int frames = 0;
	for (int tries = 0; tries < 500 && frames < 5; ++tries) {
		if (GstSample *sample =
			    gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_MSECOND)) {
			frames++;
			gst_sample_unref(sample);
		}
	}
	ck_assert_int_eq(frames, 5);
	kill(producer, SIGKILL);
	int status = 0;
	ck_assert_int_eq(waitpid(producer, &status, 0), producer);
	const auto killed = std::chrono::steady_clock::now();
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
	ck_assert_msg(msg != nullptr, "no error within 5 s of the producer's death");
	ck_assert(std::chrono::steady_clock::now() - killed < 5s);
	GError *err = nullptr;
	gst_message_parse_error(msg, &err, nullptr);
	ck_assert(g_error_matches(err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ));
	g_clear_error(&err);
	gst_message_unref(msg);
	ck_assert_int_eq(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
	ck_assert(std::chrono::steady_clock::now() - killed < 10s);
	gst_object_unref(bus);
	gst_object_unref(sink);
	gst_object_unref(pipeline);
}
END_TEST

START_TEST(consumer_killed_leaves_the_producer_running)
{
	const std::string socket = socketPath("killconsumer");
	const pid_t consumer = fork();
	if (consumer == 0) {
		// Takes frames until it is killed.
		GstElement *pipeline = gst_parse_launch(("gpuhandlesrc socket-path=" + socket +
							 " connect-timeout=20000000000 ! "
							 "fakesink sync=false")
								.c_str(),
							nullptr);
		if (pipeline)
			gst_element_set_state(pipeline, GST_STATE_PLAYING);
		for (;;)
			pause();
	}
	constexpr int kLiveFrames = 60;
	GstElement *pipeline = gst_parse_launch(
		(source(kLiveFrames, true) + " ! gpuhandlesink name=gsink socket-path=" + socket +
		 " wait-for-consumers=1")
			.c_str(),
		nullptr);
	ck_assert(pipeline != nullptr);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "gsink");
	auto stat = [sink](const char *field) {
		GstStructure *stats = nullptr;
		g_object_get(sink, "stats", &stats, nullptr);
		guint64 value = 0;
		gst_structure_get_uint64(stats, field, &value);
		gst_structure_free(stats);
		return value;
	};
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	for (int tries = 0; tries < 1000 && stat("frames-sent") < 10; ++tries)
		std::this_thread::sleep_for(10ms);
	ck_assert_uint_ge(stat("frames-sent"), 10);
	kill(consumer, SIGKILL);
	int status = 0;
	ck_assert_int_eq(waitpid(consumer, &status, 0), consumer);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 30 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	ck_assert_msg(msg != nullptr, "no EOS after the consumer died");
	ck_assert_int_eq(GST_MESSAGE_TYPE(msg), GST_MESSAGE_EOS);
	gst_message_unref(msg);
	ck_assert_uint_eq(stat("frames"), kLiveFrames);
	ck_assert_uint_eq(stat("consumers-lost"), 1);
	ck_assert_uint_eq(stat("consumers"), 0);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(bus);
	gst_object_unref(sink);
	gst_object_unref(pipeline);
}
END_TEST

START_TEST(missing_socket_path_is_an_element_error)
{
	GstElement *pipeline = gst_parse_launch("gpuhandlesrc ! fakesink", nullptr);
	ck_assert(pipeline != nullptr);
	ck_assert_int_eq(gst_element_set_state(pipeline, GST_STATE_PAUSED),
			 GST_STATE_CHANGE_FAILURE);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
	ck_assert(msg != nullptr);
	GError *err = nullptr;
	gst_message_parse_error(msg, &err, nullptr);
	ck_assert(g_error_matches(err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND));
	g_clear_error(&err);
	gst_message_unref(msg);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(bus);
	gst_object_unref(pipeline);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-transport");
	TCase *tc = tcase_create("gst-transport");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, frames_cross_processes_without_a_copy);
	tcase_add_test(tc, frames_of_other_memory_are_copied_into_memfds);
	tcase_add_test(tc, gpuhandle_memfd_frames_cross_without_a_copy);
	tcase_add_test(tc, gpuhandle_cpu_frames_are_copied);
	tcase_add_test(tc, two_consumers_get_every_frame);
	tcase_add_test(tc, producer_killed_is_an_error_not_a_hang);
	tcase_add_test(tc, consumer_killed_leaves_the_producer_running);
	tcase_add_test(tc, caps_change_reaches_the_consumer);
	tcase_add_test(tc, unsealed_fd_memory_is_copied);
	tcase_add_test(tc, unsealed_memfd_dmabufs_are_copied);
	tcase_add_test(tc, a_stuck_consumer_does_not_throttle_zero_copy);
	tcase_add_test(tc, a_stuck_consumer_does_not_throttle_copies);
	tcase_add_test(tc, missing_socket_path_is_an_element_error);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
