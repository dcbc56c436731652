// Faults injected into running gpuhandle pipelines (GPUHANDLE_FAULT_INJECTION) at every step
// (allocate, export, import, map, copy, wait): each reaches the application as an element error
// naming the fault, the pipeline stops without hanging, and the same pipeline restarted
// afterwards runs to the end; an out-of-memory route instead sends the frame by a copy.
#include <gpuhandle/backends/fault_injection.h>

#include "fd_count.h"
#include "pipeline_release.h"

#include <cstdlib>
#include <string>

#include <gst/gst.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

struct Outcome {
	bool eos = false;
	std::string error;      // message and debug string of the first error
	std::string code, kind; // its "gpuhandle-error" details, when it has them
};

Outcome play(GstElement *pipeline)
{
	Outcome out;
	if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
		out.error = "state change failed";
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 60 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
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

// The pipeline to play again: the same one, as an application restarts it; a new one when it
// holds vulkanupload or vulkandownload. GStreamer's (1.22, and 1.26 alike) keep their upload
// method's state across NULL (vkupload.c frees its buffer pools, command pool and trash list
// only at finalize) while the device is made anew at the next start: the second run records
// command buffers of the old device's pool, submits them to the new device's queue and copies
// between the two devices' buffers and images. The validation layer reports it for
// `videotestsrc ! vulkanupload ! vulkandownload` played twice, with no gpuhandle element
// (VUID-vkCmdCopyBufferToImage-commonparent, VUID-VkSubmitInfo-commonparent), and lavapipe
// crashes on it now and then (`vulkanupload ! gpuhandleupload ! fakesink` played three times in
// one pipeline: 15 SIGSEGVs in 60 processes two at a time; made anew for each run: 0 in 120).
// See docs/gstreamer.md.
GstElement *forTheRestart(GstElement *pipeline, const std::string &description)
{
	if (description.find("vulkanupload") == std::string::npos &&
	    description.find("vulkandownload") == std::string::npos)
		return pipeline;
	ck_assert(test::releasePipeline(pipeline));
	GstElement *fresh = gst_parse_launch(description.c_str(), nullptr);
	ck_assert_ptr_nonnull(fresh);
	return fresh;
}

// What a fault leads to: an element error (then a restart to EOS), or, for an out-of-memory
// route, the frame sent another way (a copy, counted in the element's stats) and EOS.
enum class Expect { Error, Fallback };

struct Case {
	const char *plan;
	const char *pipeline; // between the test source's caps and fakesink
	Expect expect = Expect::Error;
};
// Into system memory (memfd, vulkan): the pool's allocations, the mapping that fills a frame
// and the one that reads it, and the wait for a frame's fence before either.
#define SYSTEM(backend) "gpuhandleupload backend=" backend " ! gpuhandledownload name=down"
// Into GLMemory and VulkanImage: Vulkan memory exported as opaque fds that GL imports, memfds
// that Vulkan imports, and GStreamer's Vulkan images (not exportable) copied on the device into
// an export of GL's memory.
#define INTO_GL "gpuhandledownload name=down ! video/x-raw(memory:GLMemory) ! gldownload"
#define VULKAN_INTO_GL "gpuhandleupload backend=vulkan ! " INTO_GL
#define MEMFD_INTO_VULKAN                                                                          \
	"gpuhandleupload backend=memfd ! gpuhandledownload name=down ! "                           \
	"video/x-raw(memory:VulkanImage) ! vulkandownload"
#define GST_VULKAN_INTO_GL                                                                         \
	"vulkanupload ! video/x-raw(memory:VulkanImage) ! gpuhandleupload ! " INTO_GL
constexpr Case kCases[] = {
	{ "allocate:1:out-of-memory", SYSTEM("memfd") },
	{ "allocate:1:device-lost", SYSTEM("memfd") },
	{ "map:5:device-lost", SYSTEM("memfd") },
	{ "map:5:out-of-memory", SYSTEM("memfd") },
	{ "map:5:timeout", SYSTEM("memfd") },
	{ "wait:5:timeout", SYSTEM("memfd") },
	{ "wait:5:device-lost", SYSTEM("memfd") },
	{ "map:5:device-lost", SYSTEM("vulkan") },
	{ "wait:5:timeout", SYSTEM("vulkan") },
	{ "allocate:1:out-of-memory", SYSTEM("vulkan") },
	{ "export:3:device-lost", VULKAN_INTO_GL },
	{ "export:3:timeout", VULKAN_INTO_GL },
	{ "export:3:out-of-memory", VULKAN_INTO_GL, Expect::Fallback },
	{ "import:3:device-lost", VULKAN_INTO_GL },
	{ "import:3:timeout", MEMFD_INTO_VULKAN },
	{ "import:3:device-lost", MEMFD_INTO_VULKAN },
	{ "import:3:out-of-memory", VULKAN_INTO_GL, Expect::Fallback },
	{ "copy:3:device-lost", GST_VULKAN_INTO_GL },
	{ "copy:3:timeout", GST_VULKAN_INTO_GL },
	{ "copy:3:out-of-memory", GST_VULKAN_INTO_GL, Expect::Fallback },
};

// The paths the download element's frames took in its last run, from its stats.
struct Paths {
	guint64 frames = 0, zeroCopy = 0, gpuCopies = 0, cpuCopies = 0;
	bool operator==(const Paths &) const = default;
};

Paths pathsOf(GstElement *pipeline)
{
	GstElement *down = gst_bin_get_by_name(GST_BIN(pipeline), "down");
	ck_assert_ptr_nonnull(down);
	GstStructure *stats = nullptr;
	g_object_get(down, "stats", &stats, nullptr);
	Paths paths;
	ck_assert(gst_structure_get_uint64(stats, "frames", &paths.frames));
	ck_assert(gst_structure_get_uint64(stats, "zero-copy", &paths.zeroCopy));
	ck_assert(gst_structure_get_uint64(stats, "gpu-copies", &paths.gpuCopies));
	ck_assert(gst_structure_get_uint64(stats, "cpu-copies", &paths.cpuCopies));
	gst_structure_free(stats);
	gst_object_unref(down);
	return paths;
}

} // namespace

START_TEST(fault_is_an_element_error_and_the_pipeline_restarts)
{
	const Case &c = kCases[_i];
	// Each case runs in its own process (Check forks): the plan and its count are its own.
	setenv("GPUHANDLE_FAULT_INJECTION", c.plan, 1);
	const std::string description =
		std::string(
			"videotestsrc num-buffers=30 ! video/x-raw,format=NV12,width=320,height=240"
			" ! ") +
		c.pipeline + " ! fakesink";
	GstElement *pipeline = gst_parse_launch(description.c_str(), nullptr);
	ck_assert_ptr_nonnull(pipeline);
	const int fdsBefore = test::openFdCount();
	Outcome first = play(pipeline);
	ck_assert_uint_ge(faultsInjected(), 1);
	if (c.expect == Expect::Fallback) {
		// Out of memory on one route is not the end: every frame arrives, one of them by
		// another (no cheaper) path than the same pipeline takes without the fault.
		ck_assert_msg(first.eos, "%s in %s: %s", c.plan, c.pipeline, first.error.c_str());
		const Paths faulted = pathsOf(pipeline);
		pipeline = forTheRestart(pipeline, description);
		Outcome clean = play(pipeline);
		ck_assert_msg(clean.eos, "%s in %s, rerun: %s", c.plan, c.pipeline,
			      clean.error.c_str());
		const Paths usual = pathsOf(pipeline);
		ck_assert_uint_eq(faulted.frames, usual.frames);
		ck_assert_msg(!(faulted == usual) && faulted.zeroCopy <= usual.zeroCopy &&
				      faulted.cpuCopies >= usual.cpuCopies,
			      "%s: paths %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
			      "/%" G_GUINT64_FORMAT
			      " (zero-copy/gpu/cpu) with the fault, %" G_GUINT64_FORMAT
			      "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " without",
			      c.plan, faulted.zeroCopy, faulted.gpuCopies, faulted.cpuCopies,
			      usual.zeroCopy, usual.gpuCopies, usual.cpuCopies);
		// Released on this thread: see pipeline_release.h.
		ck_assert(test::releasePipeline(pipeline));
		ck_assert_int_le(test::openFdCount(), fdsBefore + 2);
		return;
	}
	ck_assert_msg(!first.eos && !first.error.empty(), "%s in %s: no error", c.plan, c.pipeline);
	// The fault's own words reach the application (or the pool's, for allocations).
	ck_assert_msg(first.error.find("injected fault") != std::string::npos ||
			      first.error.find("allocate") != std::string::npos,
		      "%s: %s", c.plan, first.error.c_str());
	// Faults of a step that has the error at hand (all but the pool's allocations) carry its
	// code and ErrorKind, so that the application knows whether to retry or rebuild.
	const std::string plan = c.plan;
	const std::string code = plan.substr(plan.rfind(':') + 1);
	if (plan.rfind("allocate", 0) != 0) {
		ck_assert_msg(first.code == code, "%s: details say \"%s\"", c.plan,
			      first.code.c_str());
		ErrorCode expected = code == "device-lost"     ? ErrorCode::DeviceLost
				     : code == "out-of-memory" ? ErrorCode::OutOfMemory
							       : ErrorCode::Timeout;
		ck_assert_str_eq(first.kind.c_str(), errorKindName(errorKindOf(expected)));
	}
	// Restarted, the same pipeline plays to the end: the plan fails its step once.
	pipeline = forTheRestart(pipeline, description);
	Outcome second = play(pipeline);
	ck_assert_msg(second.eos, "%s in %s, restarted: %s", c.plan, c.pipeline,
		      second.error.c_str());
	ck_assert(test::releasePipeline(pipeline));
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
	size_t fallbacks = 0;
	for (const Case &c : kCases)
		fallbacks += c.expect == Expect::Fallback;
	std::printf(
		"gst faults: %zu faults injected into running pipelines (allocate, export, "
		"import, map, copy, wait; device-lost, out-of-memory, timeout): %zu element "
		"errors, each pipeline restarted to EOS; %zu out-of-memory routes sent the frame "
		"by a copy\n",
		std::size(kCases), std::size(kCases) - fallbacks, fallbacks);
	return status;
}
