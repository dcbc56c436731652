// gpuhandlesink / gpuhandlesrc across processes: two consumers of one producer, and SIGKILL of
// either side (the other carries on, with an error or EOS, never a hang).
#include <chrono>
#include <csignal>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "transport_processes.h"

using namespace gpuhandle::test::transport;
using namespace std::chrono_literals;

START_TEST(two_consumers_get_every_frame)
{
	const std::string socket = socketPath("two");
	const pid_t producer =
		forkSinkProducer(socket, "identity", "wait-for-consumers=2", Path::Any);
	Run reference = runPipeline(source(kFrames) + " ! " + kSink);
	GstElement *pipeline = twoConsumers(socket, "sink2");
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
	GstBus *bus = gst_element_get_bus(pipeline);
	// A hang posts nothing: the bound only keeps a failing run short.
	GstMessage *msg = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND, GST_MESSAGE_ERROR);
	ck_assert_msg(msg != nullptr, "no error within 30 s of the producer's death");
	GError *err = nullptr;
	gst_message_parse_error(msg, &err, nullptr);
	ck_assert(g_error_matches(err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_READ));
	g_clear_error(&err);
	gst_message_unref(msg);
	// A state change stuck on the dead producer hangs here, until the test's timeout.
	ck_assert_int_eq(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
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
	auto stat = [sink](const char *field) { return sinkStat(sink, field); };
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

int main(int argc, char **argv)
{
	return runTransportSuite(argc, argv, "gst-transport-crashes",
				 { two_consumers_get_every_frame,
				   producer_killed_is_an_error_not_a_hang,
				   consumer_killed_leaves_the_producer_running });
}
