// Faults injected into running gpuhandle pipelines (GPUHANDLE_FAULT_INJECTION): each reaches the
// application as an element error naming the fault, the pipeline stops without hanging, and the
// same pipeline restarted afterwards runs to the end.
#include <gpuhandle/backends/fault_injection.h>

#include <gst/gst.h>

#include <cstdlib>
#include <string>

#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

struct Outcome {
	bool eos = false;
	std::string error; // message and debug string of the first error
	std::string code, kind; // its "gpuhandle-error" details, when it has them
};

Outcome play(GstElement *pipeline)
{
	Outcome out;
	if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
		out.error = "state change failed";
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 60 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
		GError *e = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(msg, &e, &debug);
		out.error = std::string(e ? e->message : "") + " | " + (debug ? debug : "");
		const GstStructure *details = nullptr;
		gst_message_parse_error_details(msg, &details);
		if (details && gst_structure_has_name(details, "gpuhandle-error")) {
			out.code = gst_structure_get_string(details, "code");
			out.kind = gst_structure_get_string(details, "kind");
		}
		g_clear_error(&e);
		g_free(debug);
	}
	out.eos = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
	if (msg)
		gst_message_unref(msg);
	gst_object_unref(bus);
	ck_assert_int_eq(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
	return out;
}

struct Case {
	const char *plan;
	const char *backend;
};
// Steps a system-memory upload/download pipeline takes: the pool's allocations, the mapping
// that fills a frame and the one that reads it, and the wait for a frame's fence before either.
constexpr Case kCases[] = {
	{ "allocate:1:out-of-memory", "memfd" }, { "allocate:1:device-lost", "memfd" },
	{ "map:5:device-lost", "memfd" },        { "map:5:out-of-memory", "memfd" },
	{ "map:5:timeout", "memfd" },            { "wait:5:timeout", "memfd" },
	{ "wait:5:device-lost", "memfd" },       { "map:5:device-lost", "vulkan" },
	{ "wait:5:timeout", "vulkan" },          { "allocate:1:out-of-memory", "vulkan" },
};

} // namespace

START_TEST(fault_is_an_element_error_and_the_pipeline_restarts)
{
	const Case &c = kCases[_i];
	// Each case runs in its own process (Check forks): the plan and its count are its own.
	setenv("GPUHANDLE_FAULT_INJECTION", c.plan, 1);
	const std::string description =
		std::string("videotestsrc num-buffers=30 ! video/x-raw,format=NV12,width=320,height=240"
			    " ! gpuhandleupload backend=") +
		c.backend + " ! gpuhandledownload ! fakesink";
	GstElement *pipeline = gst_parse_launch(description.c_str(), nullptr);
	ck_assert_ptr_nonnull(pipeline);
	const int fdsBefore = test::openFdCount();
	Outcome first = play(pipeline);
	ck_assert_msg(!first.eos && !first.error.empty(), "%s on %s: no error", c.plan, c.backend);
	// The fault's own words reach the application (or the pool's, for allocations).
	ck_assert_msg(first.error.find("injected fault") != std::string::npos ||
			      first.error.find("allocate") != std::string::npos,
		      "%s: %s", c.plan, first.error.c_str());
	ck_assert_uint_ge(faultsInjected(), 1);
	// Faults of a step that has the error at hand (all but the pool's allocations) carry its
	// code and ErrorKind, so that the application knows whether to retry or rebuild.
	const std::string plan = c.plan;
	const std::string code = plan.substr(plan.rfind(':') + 1);
	if (plan.rfind("allocate", 0) != 0) {
		ck_assert_msg(first.code == code, "%s: details say \"%s\"", c.plan, first.code.c_str());
		ErrorCode expected = code == "device-lost"     ? ErrorCode::DeviceLost
				     : code == "out-of-memory" ? ErrorCode::OutOfMemory
							       : ErrorCode::Timeout;
		ck_assert_str_eq(first.kind.c_str(), errorKindName(errorKindOf(expected)));
	}
	// Restarted, the same pipeline plays to the end: the plan fails its step once.
	Outcome second = play(pipeline);
	ck_assert_msg(second.eos, "%s on %s, restarted: %s", c.plan, c.backend, second.error.c_str());
	gst_object_unref(pipeline);
	ck_assert_int_le(test::openFdCount(), fdsBefore + 2); // GStreamer's own (bus, clock)
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *s = suite_create("gst_faults");
	TCase *tc = tcase_create("faults");
	tcase_set_timeout(tc, 180);
	tcase_add_loop_test(tc, fault_is_an_element_error_and_the_pipeline_restarts, 0,
			    static_cast<int>(std::size(kCases)));
	suite_add_tcase(s, tc);
	const int status = gpuhandle::test::runSuite(s);
	std::printf("gst faults: %zu faults injected into running pipelines (allocate, map, wait; "
		    "device-lost, out-of-memory, timeout), each an element error, each pipeline "
		    "restarted to EOS\n",
		    std::size(kCases));
	return status;
}
