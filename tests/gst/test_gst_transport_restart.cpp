// gpuhandlesink / gpuhandlesrc over process lives: one `reconnect=true` consumer outlives 20
// producer restarts (killed or stopped, with caps that change), frames resuming each time with a
// DISCONT buffer and the consumer's fds and memory flat, and the last producer's EOS still ends the
// stream; a second producer on a live path fails with one error naming the first, which stays
// reachable; every unbindable socket path fails the state change at once with one error.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "fd_count.h"
#include "timing_fixture.h"

#include "check_helpers.h"

extern char **environ;

using namespace gpuhandle::test::timing;
using namespace std::chrono_literals;

namespace {

// A gst-launch-1.0 producer of live NV12 frames of `width` x `height` into gpuhandlesink on
// `socket` (`frames` of them, or until killed when 0).
pid_t spawnProducer(const std::string &socket, int width, int height, int frames = 0)
{
	std::vector<std::string> args = { "gst-launch-1.0", "-q", "videotestsrc", "is-live=true" };
	if (frames)
		args.push_back("num-buffers=" + std::to_string(frames));
	for (const std::string &a :
	     { std::string("!"),
	       "video/x-raw,format=NV12,width=" + std::to_string(width) +
		       ",height=" + std::to_string(height) + ",framerate=30/1",
	       std::string("!"), std::string("gpuhandlesink"), "socket-path=" + socket })
		args.push_back(a);
	std::vector<char *> argv;
	for (std::string &a : args)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	pid_t pid = -1;
	ck_assert_int_eq(
		posix_spawnp(&pid, "gst-launch-1.0", nullptr, nullptr, argv.data(), environ), 0);
	return pid;
}

// Ends the producer: SIGKILL (a crash: no Bye, its socket file left behind) or SIGINT
// (gst-launch-1.0 stops the pipeline: Bye).
void endProducer(pid_t pid, bool crash)
{
	ck_assert_int_eq(kill(pid, crash ? SIGKILL : SIGINT), 0);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

// This process's resident memory, in KiB.
long residentKib()
{
	std::ifstream status("/proc/self/status");
	for (std::string line; std::getline(status, line);)
		if (line.rfind("VmRSS:", 0) == 0)
			return std::stol(line.substr(6));
	return -1;
}

// Pulls until `count` frames of `width` came (or 20 s); counts DISCONT buffers into `disconts`.
void pullFramesOf(GstAppSink *sink, int width, int count, int &disconts)
{
	int got = 0;
	const auto deadline = std::chrono::steady_clock::now() + 20s;
	while (got < count && std::chrono::steady_clock::now() < deadline) {
		GstSample *sample = gst_app_sink_try_pull_sample(sink, 50 * GST_MSECOND);
		if (!sample)
			continue;
		GstVideoInfo info;
		ck_assert(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
		if (GST_BUFFER_FLAG_IS_SET(gst_sample_get_buffer(sample), GST_BUFFER_FLAG_DISCONT))
			disconts++;
		if (GST_VIDEO_INFO_WIDTH(&info) == width)
			got++;
		gst_sample_unref(sample);
	}
	ck_assert_msg(got == count, "%d of %d frames %d wide came", got, count, width);
}

// The number of ERROR messages on `pipeline`'s bus now, and the first one's texts.
int errorsOn(GstElement *pipeline, std::string &first)
{
	GstBus *bus = gst_element_get_bus(pipeline);
	int errors = 0;
	while (GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
		if (errors++ == 0) {
			GError *err = nullptr;
			gchar *debug = nullptr;
			gst_message_parse_error(msg, &err, &debug);
			first = std::string(err->message) + " | " + (debug ? debug : "");
			g_clear_error(&err);
			g_free(debug);
		}
		gst_message_unref(msg);
	}
	gst_object_unref(bus);
	return errors;
}

} // namespace

START_TEST(one_consumer_outlives_twenty_producer_restarts)
{
	const std::string socket = socketPath("restart");
	constexpr int kRestarts = 20;
	pid_t producer = spawnProducer(socket, 64, 48);
	Pipeline consumer("gpuhandlesrc name=src reconnect=true reconnect-timeout=20000000000 "
			  "connect-timeout=10000000000 socket-path=" +
			  socket + " ! appsink name=sink sync=false max-buffers=4");
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	GstAppSink *sink = GST_APP_SINK(consumer.byName("sink"));
	int disconts = 0;
	pullFramesOf(sink, 64, 3, disconts);
	int fdsEarly = 0;
	long rssEarly = 0;
	for (int restart = 1; restart <= kRestarts; ++restart) {
		endProducer(producer, restart % 2 == 1);
		// The caps change every other producer: the consumer renegotiates.
		const int width = restart % 2 ? 80 : 64;
		const bool last = restart == kRestarts;
		producer = spawnProducer(socket, width, width * 3 / 4, last ? 15 : 0);
		pullFramesOf(sink, width, 3, disconts);
		if (restart == 5) {
			fdsEarly = gpuhandle::test::openFdCount();
			rssEarly = residentKib();
		}
		const std::string error = consumer.error();
		ck_assert_msg(error.empty(), "restart %d: %s", restart, error.c_str());
	}
	// Compared at the same point of a producer's life, 15 restarts apart.
	const int fdsLate = gpuhandle::test::openFdCount();
	const long rssLate = residentKib();
	ck_assert_msg(fdsLate <= fdsEarly + 3, "fds %d after restart 5, %d after restart %d",
		      fdsEarly, fdsLate, kRestarts);
	ck_assert_msg(rssLate <= rssEarly + 4096, "resident %ld KiB after restart 5, %ld after %d",
		      rssEarly, rssLate, kRestarts);
	// The last producer ends its stream: reconnect does not outlive an EOS.
	const std::vector<Stamp> rest = pullStamps(consumer);
	int status = 0;
	ck_assert_int_eq(waitpid(producer, &status, 0), producer);
	GstStructure *stats = nullptr;
	g_object_get(consumer.byName("src"), "stats", &stats, nullptr);
	guint64 reconnects = 0;
	ck_assert(gst_structure_get_uint64(stats, "reconnects", &reconnects));
	gst_structure_free(stats);
	ck_assert_uint_eq(reconnects, kRestarts);
	// The first buffer, and the first after each reconnect (pulled or still queued).
	for (const Stamp &s : rest)
		disconts += (s.flags & GST_BUFFER_FLAG_DISCONT) ? 1 : 0;
	ck_assert_int_eq(disconts, kRestarts + 1);
	std::printf("20 restarts: fds %d then %d, resident %ld then %ld KiB\n", fdsEarly, fdsLate,
		    rssEarly, rssLate);
}
END_TEST

// A consumer that waits for a producer that does not come back says so once its
// reconnect-timeout passed: an error that says why, not a hang.
START_TEST(a_producer_that_does_not_come_back_in_time_is_an_error)
{
	const std::string socket = socketPath("gone");
	const pid_t producer = spawnProducer(socket, 64, 48);
	Pipeline consumer("gpuhandlesrc reconnect=true reconnect-timeout=300000000 socket-path=" +
			  socket + " ! appsink name=sink sync=false");
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	int disconts = 0;
	pullFramesOf(GST_APP_SINK(consumer.byName("sink")), 64, 2, disconts);
	const auto killed = std::chrono::steady_clock::now();
	endProducer(producer, true);
	GstBus *bus = gst_element_get_bus(consumer.get());
	GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
	gst_object_unref(bus);
	ck_assert_msg(msg != nullptr, "no error within 10 s of the producer's end");
	ck_assert(std::chrono::steady_clock::now() - killed >= 250ms);
	GError *err = nullptr;
	gst_message_parse_error(msg, &err, nullptr);
	ck_assert_msg(std::string(err->message).find("did not come back") != std::string::npos,
		      "%s", err->message);
	g_clear_error(&err);
	gst_message_unref(msg);
	// After it, GstBaseSrc's own "Internal data stream error" (any source's GST_FLOW_ERROR).
	std::string more;
	ck_assert_int_le(errorsOn(consumer.get(), more), 1);
}
END_TEST

START_TEST(a_second_producer_on_a_live_path_fails_and_the_first_stays)
{
	const std::string socket = socketPath("owner");
	Pipeline first("videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! "
		       "gpuhandlesink socket-path=" +
		       socket);
	ck_assert(first.play() != GST_STATE_CHANGE_FAILURE);
	Pipeline second("videotestsrc ! video/x-raw,format=NV12,width=32,height=32 ! "
			"gpuhandlesink socket-path=" +
			socket);
	ck_assert_int_eq(second.play(), GST_STATE_CHANGE_FAILURE);
	std::string error;
	ck_assert_int_eq(errorsOn(second.get(), error), 1);
	const std::string pid = "process " + std::to_string(getpid());
	ck_assert_msg(error.find("Another producer") != std::string::npos &&
			      error.find(pid) != std::string::npos,
		      "the error does not say who holds the path: %s", error.c_str());
	// The first still serves its consumers, with its own caps.
	Pipeline consumer("gpuhandlesrc socket-path=" + socket + " num-buffers=3 ! " +
			  "appsink name=sink sync=false");
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(consumer.byName("sink")),
							 10 * GST_SECOND);
	ck_assert(sample != nullptr);
	GstVideoInfo info;
	ck_assert(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
	ck_assert_int_eq(GST_VIDEO_INFO_WIDTH(&info), 64);
	gst_sample_unref(sample);
}
END_TEST

// A path too long for a socket address, a regular file, a directory nobody may write in (as root,
// which may write anywhere else, a directory of /proc): 100 runs each fail the state change with
// one error, the element's, and none waits.
START_TEST(unbindable_paths_fail_at_once_with_one_error)
{
	const std::string file = socketPath("regular-file");
	std::ofstream(file) << "not a socket";
	std::string directory;
	if (geteuid() == 0) {
		directory = "/proc/1";
	} else {
		char dir[] = "/tmp/gpuhandle-unwritable-XXXXXX";
		ck_assert_ptr_nonnull(mkdtemp(dir));
		ck_assert_int_eq(chmod(dir, 0500), 0);
		directory = dir;
	}
	const std::vector<std::string> paths = { "/tmp/" + std::string(110, 'x') + ".sock", file,
						 directory + "/gpuhandle.sock" };
	const auto started = std::chrono::steady_clock::now();
	for (const std::string &path : paths) {
		for (int run = 0; run < 100; ++run) {
			Pipeline producer(
				"videotestsrc ! video/x-raw,format=NV12,width=16,height=16 "
				"! gpuhandlesink socket-path=" +
				path);
			ck_assert_int_eq(producer.play(), GST_STATE_CHANGE_FAILURE);
			std::string error;
			const int errors = errorsOn(producer.get(), error);
			ck_assert_msg(errors == 1, "%s, run %d: %d errors (%s)", path.c_str(), run,
				      errors, error.c_str());
			ck_assert_msg(error.find("socket") != std::string::npos, "%s: %s",
				      path.c_str(), error.c_str());
		}
	}
	// 300 failed starts take well under a second each.
	ck_assert(std::chrono::steady_clock::now() - started < 60s);
	unlink(file.c_str());
	if (geteuid() != 0)
		rmdir(directory.c_str());
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-transport-restart");
	TCase *tc = tcase_create("gst-transport-restart");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, one_consumer_outlives_twenty_producer_restarts);
	tcase_add_test(tc, a_producer_that_does_not_come_back_in_time_is_an_error);
	tcase_add_test(tc, a_second_producer_on_a_live_path_fails_and_the_first_stays);
	tcase_add_test(tc, unbindable_paths_fail_at_once_with_one_error);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
