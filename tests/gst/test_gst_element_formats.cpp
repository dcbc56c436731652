// Every format the elements advertise, at an odd size: through gpuhandleupload ! gpuhandledownload
// with each backend, and across gpuhandlesink ! gpuhandlesrc, pixel-identical with the same source
// without gpuhandle. The formats come from gpuhandleupload's pad template, so a format added to
// the caps is tested here without a list to update.
#include <gpuhandle/backends/backend.h>

#include <string>
#include <unistd.h>
#include <vector>

#include <gst/gst.h>
#include <gst/video/video.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "elements_fixture.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using gpuhandle::test::Size;
using namespace gpuhandle::test::elements;

namespace {

// Odd in both directions: a chroma plane's last column and row hold one pixel's share, and no
// stride is the row's width.
constexpr Size kOddSize{ 33, 17 };

// Which backends opened here (probed in a child before gst_init, see main).
bool gHave[kBackendKindCount] = {};

// The formats of the first plain `video/x-raw` structure (system memory) of gpuhandleupload's
// sink pad template.
std::vector<std::string> advertisedFormats()
{
	GstElementFactory *factory = gst_element_factory_find("gpuhandleupload");
	ck_assert_msg(factory != nullptr, "gpuhandleupload is not registered");
	std::vector<std::string> formats;
	for (const GList *l = gst_element_factory_get_static_pad_templates(factory); l;
	     l = l->next) {
		auto *tmpl = static_cast<GstStaticPadTemplate *>(l->data);
		if (tmpl->direction != GST_PAD_SINK)
			continue;
		GstCaps *caps = gst_static_pad_template_get_caps(tmpl);
		for (guint i = 0; i < gst_caps_get_size(caps) && formats.empty(); ++i) {
			GstCapsFeatures *features = gst_caps_get_features(caps, i);
			if (features && !gst_caps_features_is_any(features) &&
			    !gst_caps_features_is_equal(features,
							GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
				continue;
			const GValue *list =
				gst_structure_get_value(gst_caps_get_structure(caps, i), "format");
			ck_assert(list != nullptr && GST_VALUE_HOLDS_LIST(list));
			for (guint f = 0; f < gst_value_list_get_size(list); ++f)
				formats.emplace_back(
					g_value_get_string(gst_value_list_get_value(list, f)));
		}
		gst_caps_unref(caps);
	}
	gst_object_unref(factory);
	// The template lists 61 formats on GStreamer 1.22; fewer would mean the lookup went wrong.
	ck_assert_uint_ge(formats.size(), 40);
	return formats;
}

// Every advertised format through `backend` and back.
void roundTripEveryFormat(const char *backend)
{
	for (const std::string &format : advertisedFormats()) {
		Run reference = runPipeline(source(format.c_str(), kOddSize) + " ! " + kSink);
		ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
		Run run = runPipeline(source(format.c_str(), kOddSize) +
				      " ! gpuhandleupload name=up backend=" + backend +
				      " ! gpuhandledownload ! " +
				      rawCaps(format.c_str(), kOddSize) + " ! " + kSink);
		ck_assert_msg(run.error.empty(), "%s %s: %s", backend, format.c_str(),
			      run.error.c_str());
		ck_assert_uint_eq(run.frames, 2);
		ck_assert_msg(run.bytes == reference.bytes, "%s %s: pixels differ%s", backend,
			      format.c_str(), firstDifference(run.bytes, reference.bytes).c_str());
		ck_assert_uint_eq(run.stat("up", "frames"), 2);
	}
}

START_TEST(every_format_round_trips_through_cpu)
{
	roundTripEveryFormat("cpu");
}
END_TEST

START_TEST(every_format_round_trips_through_memfd)
{
	roundTripEveryFormat("memfd");
}
END_TEST

START_TEST(every_format_round_trips_through_vulkan)
{
	roundTripEveryFormat("vulkan");
}
END_TEST

START_TEST(every_format_round_trips_through_gl)
{
	roundTripEveryFormat("gl");
}
END_TEST

START_TEST(every_format_round_trips_through_opencl)
{
	roundTripEveryFormat("opencl");
}
END_TEST

// Every advertised format from a producer pipeline to a consumer pipeline of this process through
// the transport's socket: the format, size and plane layout travel in the frame messages, and the
// producer's EOS ends the consumer's stream while the producer still runs (as unixfdsink's does).
START_TEST(every_format_crosses_sink_and_src)
{
	const std::string socket =
		"/tmp/gpuhandle-test-formats-" + std::to_string(getpid()) + ".sock";
	for (const std::string &format : advertisedFormats()) {
		Run reference = runPipeline(source(format.c_str(), kOddSize) + " ! " + kSink);
		ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
		GError *error = nullptr;
		GstElement *producer = gst_parse_launch(
			(source(format.c_str(), kOddSize) +
			 " ! gpuhandlesink wait-for-consumers=1 socket-path=" + socket)
				.c_str(),
			&error);
		ck_assert_msg(producer && !error, "%s", error ? error->message : "?");
		ck_assert(gst_element_set_state(producer, GST_STATE_PLAYING) !=
			  GST_STATE_CHANGE_FAILURE);
		Run run = runPipeline("gpuhandlesrc socket-path=" + socket +
				      " connect-timeout=10000000000 ! gpuhandledownload ! " +
				      rawCaps(format.c_str(), kOddSize) + " ! " + kSink);
		// The producer ends once its consumer took the last frame (EOS crossed).
		GstBus *bus = gst_element_get_bus(producer);
		GstMessage *end = gst_bus_timed_pop_filtered(
			bus, 30 * GST_SECOND,
			static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
		const bool eos = end && GST_MESSAGE_TYPE(end) == GST_MESSAGE_EOS;
		if (end)
			gst_message_unref(end);
		gst_object_unref(bus);
		gst_element_set_state(producer, GST_STATE_NULL);
		ck_assert(test::releasePipeline(producer));
		ck_assert_msg(run.error.empty(), "%s: %s", format.c_str(), run.error.c_str());
		ck_assert_msg(eos, "%s: the producer did not reach EOS", format.c_str());
		ck_assert_uint_eq(run.frames, 2);
		ck_assert_msg(run.bytes == reference.bytes, "%s: pixels differ%s", format.c_str(),
			      firstDifference(run.bytes, reference.bytes).c_str());
	}
}
END_TEST

} // namespace

int main(int argc, char **argv)
{
	// Probes in children, so that no driver thread exists when Check forks each test.
	for (BackendKind kind : kInteropBackends)
		gHave[static_cast<size_t>(kind)] = test::probeBackend(kind) == 0;
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-element-formats");
	TCase *tc = tcase_create("gst-element-formats");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, every_format_round_trips_through_cpu);
	tcase_add_test(tc, every_format_round_trips_through_memfd);
	tcase_add_test(tc, every_format_crosses_sink_and_src);
	// The GPU APIs' loops run in the main build only. Under AddressSanitizer, LeakSanitizer's
	// tracer crashed at the exit of one run in six of the Vulkan loop (the drivers' threads
	// then still running); there test_gst_elements' ten formats cover those backends.
	auto have = [](BackendKind kind) {
		return gHave[static_cast<size_t>(kind)] && !test::slowRuntime();
	};
	if (have(BackendKind::Vulkan))
		tcase_add_test(tc, every_format_round_trips_through_vulkan);
	if (have(BackendKind::OpenGL))
		tcase_add_test(tc, every_format_round_trips_through_gl);
	if (have(BackendKind::OpenCl))
		tcase_add_test(tc, every_format_round_trips_through_opencl);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
