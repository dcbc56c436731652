// Producer and consumer processes for the gpuhandlesink / gpuhandlesrc tests: pipelines, forked
// producers and what they report, and consumers that pull until EOS.
#pragma once

#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "pipeline_run.h"

#include "check_helpers.h"

namespace gpuhandle::test::transport {

using gpuhandle::test::appendFrame;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;

inline constexpr int kFrames = 30;
inline constexpr const char *kCaps = "video/x-raw,format=NV12,width=320,height=240,framerate=30/1";
inline constexpr const char *kSink = "appsink name=sink sync=false";

inline std::string source(int buffers, bool live = false)
{
	return "videotestsrc num-buffers=" + std::to_string(buffers) + " pattern=ball" +
	       (live ? " is-live=true" : "") + " ! " + kCaps;
}

// A socket path of this test process (Check forks each test).
inline std::string socketPath(const char *name)
{
	char path[108];
	std::snprintf(path, sizeof path, "/tmp/gpuhandle-gst-%s-%d.sock", name, getpid());
	return path;
}

// One guint64 field of a gpuhandlesink's `stats` (0 when it has none).
inline guint64 sinkStat(GstElement *sink, const char *field)
{
	GstStructure *stats = nullptr;
	g_object_get(sink, "stats", &stats, nullptr);
	guint64 value = 0;
	if (stats) {
		gst_structure_get_uint64(stats, field, &value);
		gst_structure_free(stats);
	}
	return value;
}

// What a producer child checks in its sink's stats at EOS.
enum class Path { Any, ZeroCopy, Copy };

// Waits for the (playing) `pipeline`, whose gpuhandlesink is named "gsink", to reach EOS in
// this (forked) process and returns the exit status: 0 EOS with the stats `path` expects, 1 an
// error, 2 no EOS in 60 s, 3 other stats, 4 a pooled path whose memfds crossed with every frame
// (the consumers keep them: most frames name a kept file). Consumes the pipeline.
inline int awaitProducer(GstElement *pipeline, Path path, guint64 frames)
{
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 60 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	int status = !msg ? 2 : GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR ? 1 : 0;
	if (msg)
		gst_message_unref(msg);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "gsink");
	const guint64 zeroCopy = sinkStat(sink, "frames-zero-copy");
	const guint64 copied = sinkStat(sink, "frames-copied");
	const guint64 overKeptFiles = sinkStat(sink, "frames-over-kept-files");
	const guint64 sent = sinkStat(sink, "frames-sent");
	gst_object_unref(sink);
	if (status == 0 && ((path == Path::ZeroCopy && (zeroCopy != frames || copied != 0)) ||
			    (path == Path::Copy && (copied != frames || zeroCopy != 0))))
		status = 3;
	// The first frames may go before the consumer's Features came in.
	if (status == 0 && path != Path::Any && sent >= 20 && overKeptFiles < sent / 2)
		status = 4;
	// NULL: the sender says Bye, so the consumers see the end of the stream.
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(bus);
	gst_object_unref(pipeline);
	return status;
}

// Runs `description` (with a gpuhandlesink named "gsink") to EOS: see awaitProducer.
inline int producerMain(const std::string &description, Path path, guint64 frames)
{
	GstElement *pipeline = gst_parse_launch(description.c_str(), nullptr);
	if (!pipeline)
		return 1;
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	return awaitProducer(pipeline, path, frames);
}

// Forks the producer (before this process made any GStreamer thread).
inline pid_t forkProducer(const std::string &description, Path path, guint64 frames)
{
	const pid_t pid = fork();
	if (pid == 0)
		_exit(producerMain(description, path, frames));
	return pid;
}

inline int exitStatusOf(pid_t pid)
{
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

// Forks a producer of kFrames test frames through `producerTail` into a gpuhandlesink on
// `socket` with `sinkOptions`.
inline pid_t forkSinkProducer(const std::string &socket, const std::string &producerTail,
			      const char *sinkOptions, Path path)
{
	return forkProducer(source(kFrames) + " ! " + producerTail +
				    " ! gpuhandlesink name=gsink sync=false socket-path=" + socket +
				    " " + sinkOptions,
			    path, kFrames);
}

// Two gpuhandlesrc on `socket` in one pipeline, into appsinks named "sink" and `secondSink`
// (with `secondOptions`).
inline GstElement *twoConsumers(const std::string &socket, const char *secondSink,
				const std::string &secondOptions = "")
{
	GstElement *pipeline =
		gst_parse_launch(("gpuhandlesrc socket-path=" + socket + " ! " + kSink +
				  " gpuhandlesrc socket-path=" + socket + " ! appsink sync=false " +
				  secondOptions + " name=" + secondSink)
					 .c_str(),
				 nullptr);
	ck_assert(pipeline != nullptr);
	return pipeline;
}

// Producer in a child, consumer here: every frame's bytes as videotestsrc makes them.
inline void checkCrossing(const char *name, const std::string &producerTail, Path path)
{
	const std::string socket = socketPath(name);
	const pid_t producer = forkSinkProducer(socket, producerTail, "wait-for-consumers=1", path);
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

// Pulls every sample of the `count` appsinks into `runs` until each is at EOS, the pipeline
// posts an error (false), or `limit` passes.
inline bool pullUntilEos(GstElement *pipeline, GstElement *const *sinks, Run *runs, int count,
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

// gst_init (criticals and warnings fatal, as gst-check makes them), then `tests` as one suite
// named `name`, 120 s each; returns the exit status.
inline int runTransportSuite(int argc, char **argv, const char *name,
			     std::initializer_list<const TTest *> tests)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 120);
	for (const TTest *test : tests)
		tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
	return runSuite(s);
}

} // namespace gpuhandle::test::transport
