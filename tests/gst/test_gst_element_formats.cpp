// Every format the elements advertise, at an odd size, through gpuhandleupload ! gpuhandledownload
// with each backend, pixel-identical with the same source without gpuhandle. The formats come from
// gpuhandleupload's pad template, so a format added to the caps is tested here without a list to
// update (test_gst_transport_pipelines sends them across gpuhandlesink ! gpuhandlesrc).
#include <gpuhandle/backends/backend.h>

#include <string>

#include <gst/gst.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "elements_fixture.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::Size;
using namespace gpuhandle::test::elements;

namespace {

// Which backends opened here (probed in a child before gst_init, see main).
bool gHave[kBackendKindCount] = {};

// Every advertised format through `backend` and back; returns how many round-tripped.
size_t roundTripEveryFormat(const char *backend)
{
	size_t formats = 0;
	for (const std::string &format : advertisedFormats())
		formats += checkRoundTrip(backend, format.c_str(), kOddSize) == 2 ? 1 : 0;
	return formats;
}

START_TEST(every_format_round_trips_through_cpu)
{
	ck_assert_uint_eq(roundTripEveryFormat("cpu"), advertisedFormats().size());
}
END_TEST

START_TEST(every_format_round_trips_through_memfd)
{
	ck_assert_uint_eq(roundTripEveryFormat("memfd"), advertisedFormats().size());
}
END_TEST

START_TEST(every_format_round_trips_through_vulkan)
{
	ck_assert_uint_eq(roundTripEveryFormat("vulkan"), advertisedFormats().size());
}
END_TEST

START_TEST(every_format_round_trips_through_gl)
{
	ck_assert_uint_eq(roundTripEveryFormat("gl"), advertisedFormats().size());
}
END_TEST

START_TEST(every_format_round_trips_through_opencl)
{
	ck_assert_uint_eq(roundTripEveryFormat("opencl"), advertisedFormats().size());
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
