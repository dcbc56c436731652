// The memory budget in running pipelines: gpuhandleupload's `memory-budget` caps the process's
// budget, an allocation past the cap is an element error with its numbers, idle pooled frames of
// another pipeline are freed first, and a DeviceSet given through a GstContext brings its own.
#include <gpuhandle/layout.h>

#include <string>
#include <thread>

#include <gst/gpuhandle/gstgpuhandlebudget.hpp>
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gst.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

constexpr const char *kCaps = "video/x-raw,format=NV12,width=320,height=240";

// What one 320x240 NV12 frame reserves.
uint64_t frameBytes()
{
	Result<uint64_t> bytes = estimateTextureBytes(PixelFormat::NV12, 320, 240);
	ck_assert(bytes.ok());
	return *bytes;
}

GstElement *launch(const std::string &middle, int buffers = 10)
{
	const std::string description = "videotestsrc num-buffers=" + std::to_string(buffers) +
					" ! " + kCaps + " ! " + middle + " ! fakesink name=sink";
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s", error ? error->message : description.c_str());
	return pipeline;
}

struct Ending {
	bool eos = false;
	std::string text, debug, code;
};

// Plays until EOS or an error (30 s at most); the pipeline stays PLAYING.
Ending play(GstElement *pipeline)
{
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 30 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	gst_object_unref(bus);
	ck_assert_ptr_nonnull(msg);
	Ending end;
	end.eos = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
	if (!end.eos) {
		GError *e = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(msg, &e, &debug);
		end.text = e->message;
		end.debug = debug ? debug : "";
		const GstStructure *details = nullptr;
		gst_message_parse_error_details(msg, &details);
		if (details && gst_structure_has_name(details, "gpuhandle-error"))
			end.code = gst_structure_get_string(details, "code");
		g_clear_error(&e);
		g_free(debug);
	}
	gst_message_unref(msg);
	return end;
}

void stop(GstElement *pipeline)
{
	ck_assert_int_eq(gst_element_set_state(pipeline, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
	gst_object_unref(pipeline);
}

guint64 statOf(GstElement *pipeline, const char *name, const char *field)
{
	GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
	ck_assert_ptr_nonnull(element);
	GstStructure *stats = nullptr;
	g_object_get(element, "stats", &stats, nullptr);
	guint64 value = 0;
	ck_assert_msg(gst_structure_get_uint64(stats, field, &value), "no %s in the stats", field);
	gst_structure_free(stats);
	gst_object_unref(element);
	return value;
}

std::string bytes(uint64_t n)
{
	return std::to_string(n) + " bytes";
}

} // namespace

// Past the cap: downstream holds frames (a queue in front of a clock-synced sink), so the
// upload's pool has to grow, and its third frame does not fit.
START_TEST(an_allocation_past_the_cap_is_an_element_error_with_its_numbers)
{
	const uint64_t frame = frameBytes();
	const uint64_t cap = frame * 5 / 2;
	GstElement *pipeline = launch(
		"gpuhandleupload name=up backend=memfd memory-budget=" + std::to_string(cap) +
			" ! queue max-size-buffers=10 ! identity sleep-time=20000",
		30);
	const Ending end = play(pipeline);
	ck_assert_msg(!end.eos, "the pipeline ran to EOS under a cap of %llu bytes",
		      static_cast<unsigned long long>(cap));
	ck_assert_str_eq(end.text.c_str(), "Could not allocate gpuhandle frames.");
	ck_assert_str_eq(end.code.c_str(), "out-of-memory");
	// Asked, cap, in use (two frames held downstream or in the pool).
	for (const std::string &figure : { bytes(frame), bytes(cap), bytes(2 * frame) })
		ck_assert_msg(end.debug.find(figure) != std::string::npos, "no \"%s\" in: %s",
			      figure.c_str(), end.debug.c_str());
	ck_assert_uint_eq(statOf(pipeline, "up", "budget-cap-bytes"), cap);
	ck_assert_uint_le(statOf(pipeline, "up", "budget-peak-bytes"), cap);
	stop(pipeline);
	// Everything the pipeline held is given back.
	ck_assert_uint_eq(gst::processBudget()->usage(BackendKind::Fd), 0);
}
END_TEST

// Pipeline A ends with idle frames in its pool (it stays PLAYING after EOS); B, with a cap that
// A's frames leave no room under, gets its frames because A's pool gives idle ones back.
START_TEST(idle_frames_of_another_pipeline_are_freed_under_pressure)
{
	const uint64_t frame = frameBytes();
	GstElement *a = launch("gpuhandleupload name=up backend=memfd");
	ck_assert(play(a).eos);
	const uint64_t heldByA = gst::processBudget()->usage(BackendKind::Fd);
	ck_assert_uint_ge(heldByA, 2 * frame); // the pool's two frames, idle now
	ck_assert_uint_eq(statOf(a, "up", "budget-bytes"), heldByA);
	ck_assert_uint_eq(statOf(a, "up", "pool-evictions"), 0);

	const uint64_t cap = heldByA + frame; // B needs three at once: its probe and two
	GstElement *b = launch("gpuhandleupload name=up backend=memfd memory-budget=" +
			       std::to_string(cap));
	const Ending end = play(b);
	ck_assert_msg(end.eos, "B failed: %s | %s", end.text.c_str(), end.debug.c_str());
	ck_assert_uint_ge(statOf(a, "up", "pool-evictions"), 1);
	ck_assert_uint_eq(statOf(b, "up", "pool-evictions"), 0);
	ck_assert_uint_le(gst::processBudget()->peakUsage(BackendKind::Fd), cap);
	ck_assert_uint_le(statOf(b, "up", "budget-bytes"), cap);
	// A plays again from its smaller pool: the cap is B's, shared by the process.
	stop(b);
	gst_element_set_state(a, GST_STATE_NULL);
	ck_assert(play(a).eos);
	stop(a);
	ck_assert_uint_eq(gst::processBudget()->usage(BackendKind::Fd), 0);
}
END_TEST

// Evictions racing the other pipeline's stop: B's allocations take A's idle frames while another
// thread sets A to NULL (GstBufferPool takes its lock there, and a returning buffer of a pool
// that is flushing takes it too). B either gets its frames or fails with the budget's error;
// nothing hangs, and everything is given back.
START_TEST(evictions_racing_a_stop_end_without_a_hang_or_a_leak)
{
	const uint64_t frame = frameBytes();
	for (int round = 0; round < 20; ++round) {
		GstElement *a = launch("gpuhandleupload name=up backend=memfd", 3);
		ck_assert(play(a).eos);
		const uint64_t cap = gst::processBudget()->usage(BackendKind::Fd) + frame;
		GstElement *b = launch("gpuhandleupload name=up backend=memfd memory-budget=" +
					       std::to_string(cap),
				       3);
		std::thread stopper([a] { gst_element_set_state(a, GST_STATE_NULL); });
		const Ending end = play(b);
		stopper.join();
		ck_assert_msg(end.eos || end.code == "out-of-memory", "round %d: %s | %s", round,
			      end.text.c_str(), end.debug.c_str());
		stop(b);
		stop(a);
		ck_assert_uint_eq(gst::processBudget()->usage(BackendKind::Fd), 0);
	}
}
END_TEST

// An application's own DeviceSet, given to the pipeline through a GstContext, charges its own
// budget: its cap refuses, while the process's budget sees nothing.
START_TEST(a_device_set_from_the_application_brings_its_budget)
{
	const uint64_t frame = frameBytes();
	auto budget = MemoryBudget::create({ { BackendKind::Fd, { std::nullopt, frame / 2 } } });
	ck_assert(budget.ok());
	auto devices = std::make_shared<gst::DeviceSet>(*budget);
	ck_assert(devices->budget() == *budget);
	ck_assert(gst::DeviceSet().budget() == gst::processBudget());
	GstElement *pipeline = launch("gpuhandleupload name=up backend=memfd");
	GstContext *context = gst::devicesContextNew(devices);
	gst_element_set_context(pipeline, context);
	gst_context_unref(context);
	const Ending end = play(pipeline);
	ck_assert(!end.eos);
	ck_assert_str_eq(end.code.c_str(), "out-of-memory");
	ck_assert_msg(end.debug.find(bytes(frame / 2)) != std::string::npos, "%s",
		      end.debug.c_str());
	ck_assert_uint_eq(gst::processBudget()->usage(BackendKind::Fd), 0);
	ck_assert_uint_eq(gst::processBudget()->peakUsage(BackendKind::Fd), 0);
	stop(pipeline);
}
END_TEST

// What the property takes, and a clear error for what it does not.
START_TEST(the_property_takes_bytes_or_a_share)
{
	const uint64_t gib = uint64_t{ 1 } << 30;
	struct Good {
		const char *text;
		std::optional<uint64_t> bytes;
	};
	for (const Good &g :
	     { Good{ "", std::nullopt }, Good{ "none", std::nullopt }, Good{ "1048576", 1048576 },
	       Good{ "512M", 512ull << 20 }, Good{ "512MiB", 512ull << 20 },
	       Good{ "1.5G", gib + gib / 2 }, Good{ "2 GB", 2 * gib }, Good{ "64k", 64 << 10 },
	       Good{ "25%", gib }, Good{ "12.5%", gib / 2 } }) {
		Result<std::optional<uint64_t>> cap = gst::parseBudgetCap(g.text, 4 * gib);
		ck_assert_msg(cap.ok(), "%s: %s", g.text,
			      cap.ok() ? "" : cap.error().message().c_str());
		ck_assert_msg(*cap == g.bytes, "%s", g.text);
	}
	for (const char *bad : { "abc", "-5M", "0", "12Q", "101%", "1e30", "0.1" }) {
		Result<std::optional<uint64_t>> cap = gst::parseBudgetCap(bad, 4 * gib);
		ck_assert_msg(!cap.ok(), "%s was taken", bad);
		ck_assert(cap.error().code() == ErrorCode::InvalidArgument);
		ck_assert_msg(cap.error().message().find(bad) != std::string::npos, "%s",
			      cap.error().message().c_str());
	}
	ck_assert(!gst::parseBudgetCap("10%", 0).ok()); // no device size known
	// Every backend checks the text, cpu and auto too (cpu frames charge nothing, but a
	// value that names no cap is still an error), and takes one that names a cap.
	for (const char *backend : { "memfd", "cpu", "auto" }) {
		GstElement *pipeline = launch(std::string("gpuhandleupload backend=") + backend +
					      " memory-budget=lots");
		const Ending end = play(pipeline);
		ck_assert_msg(!end.eos, "backend=%s took memory-budget=lots", backend);
		ck_assert_msg(end.text.find("\"lots\"") != std::string::npos, "%s: %s", backend,
			      end.text.c_str());
		stop(pipeline);
		pipeline = launch(std::string("gpuhandleupload backend=") + backend +
				  " memory-budget=1G");
		ck_assert_msg(play(pipeline).eos, "backend=%s refused memory-budget=1G", backend);
		stop(pipeline);
	}
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *s = suite_create("gst_budget");
	TCase *tc = tcase_create("budget");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, an_allocation_past_the_cap_is_an_element_error_with_its_numbers);
	tcase_add_test(tc, idle_frames_of_another_pipeline_are_freed_under_pressure);
	tcase_add_test(tc, evictions_racing_a_stop_end_without_a_hang_or_a_leak);
	tcase_add_test(tc, a_device_set_from_the_application_brings_its_budget);
	tcase_add_test(tc, the_property_takes_bytes_or_a_share);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
