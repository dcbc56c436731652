// Stress: gpuhandle elements under a 4-branch tee with queues, and pipelines switched between
// PLAYING and NULL 500 times; no error, no hang (every wait bounded), every frame accounted for.
#include <chrono>
#include <string>

#include <gst/gst.h>

#include "check_helpers.h"

namespace {

// Runs `description` to EOS within `timeout`; returns "" or the first error's text.
std::string runToEos(const std::string &description, std::chrono::seconds timeout)
{
	GError *parseError = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &parseError);
	if (!pipeline) {
		std::string why = parseError ? parseError->message : "unparsable";
		g_clear_error(&parseError);
		return why;
	}
	std::string error;
	if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
		error = "could not start";
	GstBus *bus = gst_element_get_bus(pipeline);
	const auto types = static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
	GstMessage *msg = error.empty()
				  ? gst_bus_timed_pop_filtered(
					    bus, std::chrono::nanoseconds(timeout).count(), types)
				  : nullptr;
	if (error.empty() && !msg)
		error = "no EOS in time";
	if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
		GError *e = nullptr;
		gst_message_parse_error(msg, &e, nullptr);
		error = e ? e->message : "error";
		g_clear_error(&e);
	}
	if (msg)
		gst_message_unref(msg);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	return error;
}

guint64 renderedBy(GstElement *pipeline, const char *name)
{
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), name);
	guint64 rendered = 0;
	GstStructure *stats = nullptr;
	g_object_get(sink, "stats", &stats, nullptr);
	gst_structure_get_uint64(stats, "rendered", &rendered);
	gst_structure_free(stats);
	gst_object_unref(sink);
	return rendered;
}

} // namespace

START_TEST(tee_with_four_branches)
{
	constexpr int kFrames = 300;
	std::string description =
		"videotestsrc num-buffers=" + std::to_string(kFrames) +
		" ! video/x-raw,format=NV12,width=320,height=240 ! gpuhandleupload backend=cpu"
		" ! tee name=t";
	for (int b = 0; b < 4; ++b)
		description +=
			" t. ! queue max-size-buffers=3 ! gpuhandledownload ! fakesink name=s" +
			std::to_string(b) + " sync=false";
	GstElement *pipeline = gst_parse_launch(description.c_str(), nullptr);
	ck_assert_ptr_nonnull(pipeline);
	ck_assert_int_ne(gst_element_set_state(pipeline, GST_STATE_PLAYING),
			 GST_STATE_CHANGE_FAILURE);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 60 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	ck_assert_ptr_nonnull(msg);
	ck_assert_int_eq(GST_MESSAGE_TYPE(msg), GST_MESSAGE_EOS);
	gst_message_unref(msg);
	for (int b = 0; b < 4; ++b)
		ck_assert_uint_eq(renderedBy(pipeline, ("s" + std::to_string(b)).c_str()), kFrames);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
}
END_TEST

START_TEST(five_hundred_state_changes)
{
	// A live source, so that NULL may come at any point of the stream.
	GstElement *pipeline = gst_parse_launch(
		"videotestsrc is-live=true ! video/x-raw,format=NV12,width=160,height=120,"
		"framerate=1000/1 ! gpuhandleupload backend=cpu ! queue max-size-buffers=2"
		" ! gpuhandledownload ! fakesink sync=false",
		nullptr);
	ck_assert_ptr_nonnull(pipeline);
	GstBus *bus = gst_element_get_bus(pipeline);
	int reachedPlaying = 0;
	for (int i = 0; i < 500; ++i) {
		ck_assert_int_ne(gst_element_set_state(pipeline, GST_STATE_PLAYING),
				 GST_STATE_CHANGE_FAILURE);
		// Every other time, wait until it really plays; otherwise switch back at once.
		if (i % 2 == 0) {
			GstState state;
			ck_assert_int_eq(gst_element_get_state(pipeline, &state, nullptr,
							       10 * GST_SECOND),
					 GST_STATE_CHANGE_SUCCESS);
			reachedPlaying += state == GST_STATE_PLAYING;
		}
		ck_assert_int_eq(gst_element_set_state(pipeline, GST_STATE_NULL),
				 GST_STATE_CHANGE_SUCCESS);
		GstMessage *error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
		ck_assert_msg(error == nullptr, "an error after %d state changes", i);
	}
	ck_assert_int_eq(reachedPlaying, 250);
	gst_object_unref(bus);
	gst_object_unref(pipeline);
	// And the elements still work after all that.
	ck_assert_string_eq(runToEos("videotestsrc num-buffers=10 ! gpuhandleupload backend=cpu"
				     " ! gpuhandledownload ! fakesink",
				     std::chrono::seconds(30)),
			    "");
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("stress_pipelines");
	TCase *tc = tcase_create("pipelines");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, tee_with_four_branches);
	tcase_add_test(tc, five_hundred_state_changes);
	suite_add_tcase(s, tc);
	const int status = gpuhandle::test::runSuite(s);
	return status;
}
