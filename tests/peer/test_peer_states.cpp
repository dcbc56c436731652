// GStreamer's generic state-change sequences (as its tests/check/generic/states.c runs them over
// every element of a plugin) over every gpuhandle element: up and down step by step, jumps up
// from NULL and down to NULL, repeated, each change bounded; the element ends with one reference.
#include <string>
#include <unistd.h>
#include <vector>

#include <gst/base/gstbasesink.h>
#include <gst/gst.h>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

namespace {

constexpr GstState kUp[] = { GST_STATE_READY, GST_STATE_PAUSED, GST_STATE_PLAYING };

std::string socketPath()
{
	return "/tmp/gpuhandle-states-" + std::to_string(getpid()) + ".sock";
}

// `factory` made and configured as a user would (the transport pair needs its socket).
GstElement *makeElement(const char *factory)
{
	GstElement *element = gst_element_factory_make(factory, nullptr);
	ck_assert_msg(element != nullptr, "no element %s", factory);
	if (g_object_class_find_property(G_OBJECT_GET_CLASS(element), "socket-path"))
		g_object_set(element, "socket-path", socketPath().c_str(), nullptr);
	return element;
}

// Sets `state` and waits (10 s at most) for an asynchronous change to finish.
void reach(GstElement *element, GstState state)
{
	const GstStateChangeReturn ret = gst_element_set_state(element, state);
	ck_assert_msg(ret != GST_STATE_CHANGE_FAILURE, "%s: the change to %s failed",
		      GST_ELEMENT_NAME(element), gst_element_state_get_name(state));
	// A sink alone prerolls only on data, so its way up from READY stays ASYNC (as every
	// sink's: states.c does not wait for it either); the next change takes over.
	if (ret == GST_STATE_CHANGE_ASYNC && GST_IS_BASE_SINK(element))
		return;
	GstState now = GST_STATE_VOID_PENDING;
	ck_assert_msg(gst_element_get_state(element, &now, nullptr, 10 * GST_SECOND) !=
			      GST_STATE_CHANGE_FAILURE,
		      "%s: %s did not complete", GST_ELEMENT_NAME(element),
		      gst_element_state_get_name(state));
	// A live source (gpuhandlesrc) answers NO_PREROLL in PAUSED: it is there all the same.
	ck_assert_msg(now == state, "%s: in %s, not %s", GST_ELEMENT_NAME(element),
		      gst_element_state_get_name(now), gst_element_state_get_name(state));
}

// Runs the sequences three times over a new `factory` element; returns the rounds that ended in
// NULL with only the test's reference left (every state reached is asserted on the way).
int sequences(const char *factory)
{
	int clean = 0;
	for (int round = 0; round < 3; ++round) {
		GstElement *element = makeElement(factory);
		// Up and down, one step at a time.
		for (GstState s : kUp)
			reach(element, s);
		reach(element, GST_STATE_PAUSED);
		reach(element, GST_STATE_READY);
		reach(element, GST_STATE_NULL);
		// Up from NULL in one jump, then down to NULL in one jump.
		for (GstState s : kUp) {
			reach(element, s);
			reach(element, GST_STATE_NULL);
		}
		// Down from PLAYING step by step after going up in one jump.
		reach(element, GST_STATE_PLAYING);
		reach(element, GST_STATE_PAUSED);
		reach(element, GST_STATE_READY);
		reach(element, GST_STATE_NULL);
		clean += GST_OBJECT_REFCOUNT_VALUE(element) == 1;
		gst_object_unref(element);
	}
	return clean;
}

} // namespace

START_TEST(upload_state_sequences)
{
	ck_assert_int_eq(sequences("gpuhandleupload"), 3);
}
END_TEST

START_TEST(download_state_sequences)
{
	ck_assert_int_eq(sequences("gpuhandledownload"), 3);
}
END_TEST

START_TEST(sink_state_sequences)
{
	ck_assert_int_eq(sequences("gpuhandlesink"), 3);
}
END_TEST

// gpuhandlesrc connects when it starts: a producer listens on its socket meanwhile.
START_TEST(src_state_sequences)
{
	GstElement *producer = gst_parse_launch(
		("videotestsrc is-live=true ! video/x-raw,format=NV12,width=64,height=48 ! "
		 "gpuhandleupload backend=memfd ! gpuhandlesink socket-path=" +
		 socketPath())
			.c_str(),
		nullptr);
	ck_assert_ptr_nonnull(producer);
	ck_assert(gst_element_set_state(producer, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
	for (int i = 0; i < 200 && access(socketPath().c_str(), F_OK) != 0; ++i)
		g_usleep(20 * 1000);
	ck_assert_int_eq(access(socketPath().c_str(), F_OK), 0);
	ck_assert_int_eq(sequences("gpuhandlesrc"), 3);
	gst_element_set_state(producer, GST_STATE_NULL);
	gst_object_unref(producer);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("peer-states");
	TCase *tc = tcase_create("states");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, upload_state_sequences);
	tcase_add_test(tc, download_state_sequences);
	tcase_add_test(tc, sink_state_sequences);
	tcase_add_test(tc, src_state_sequences);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
