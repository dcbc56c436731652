// GStreamer's GL elements reading gpuhandle's GLMemory: gpuhandle calls EGL only on GL threads,
// and each consumer pipeline ends cleanly in many consecutive processes.
//
// Why both: any EGL call makes libglvnd keep state for the calling thread. When that thread is a
// pipeline's streaming thread that ends while the process exits, libEGL's destructor and the
// thread's own exit both free that state, and the heap is corrupted ("malloc_consolidate():
// invalid chunk size" in about 1 run in 15 of `... gpuhandledownload ! GLMemory ! glcolorscale`).
// The first test finds such a call deterministically, in one process; the second runs the
// pipelines as a user does, one gst-launch-1.0 process each, many times.
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <pthread.h>
#include <set>
#include <string>
#include <sys/wait.h>

#include <EGL/egl.h>
#include <gst/gst.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "launch_words.h"

#include "check_helpers.h"

namespace {

// The calls into EGL made from gpuhandle's libraries on a thread that is not a GL thread:
// "function from library on thread".
std::mutex gCallsMutex;
std::set<std::string> gStrayCalls;
int gGpuhandleCalls = 0;

// GStreamer's GL thread, and the GL backend's own.
bool isGlThreadName(const std::string &name)
{
	return name == "gstglcontext" || name == "gpuhandle-gl";
}

void noteCall(const char *function, void *returnAddress)
{
	Dl_info where{};
	if (!dladdr(returnAddress, &where) || !where.dli_fname)
		return;
	const std::string library = where.dli_fname;
	if (library.find("gpuhandle") == std::string::npos)
		return; // GStreamer's, Mesa's or the test's own call
	char thread[32] = {};
	pthread_getname_np(pthread_self(), thread, sizeof(thread));
	std::lock_guard<std::mutex> lock(gCallsMutex);
	++gGpuhandleCalls;
	if (!isGlThreadName(thread))
		gStrayCalls.insert(std::string(function) + " from " +
				   library.substr(library.rfind('/') + 1) + " on thread \"" +
				   thread + "\"");
}

template<typename F>
F real(const char *name)
{
	// dlsym returns a generic pointer; this is its documented use.
	return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

} // namespace

// The EGL entry points gpuhandle calls, interposed: this executable's definitions come first in
// the lookup of every library it loads. Each records its caller and forwards to libEGL.
extern "C" {
EGLContext eglGetCurrentContext(void)
{
	noteCall("eglGetCurrentContext", __builtin_return_address(0));
	static auto next = real<EGLContext (*)()>("eglGetCurrentContext");
	return next();
}
EGLDisplay eglGetCurrentDisplay(void)
{
	noteCall("eglGetCurrentDisplay", __builtin_return_address(0));
	static auto next = real<EGLDisplay (*)()>("eglGetCurrentDisplay");
	return next();
}
__eglMustCastToProperFunctionPointerType eglGetProcAddress(const char *name)
{
	noteCall("eglGetProcAddress", __builtin_return_address(0));
	static auto next = real<__eglMustCastToProperFunctionPointerType (*)(const char *)>(
		"eglGetProcAddress");
	return next(name);
}
const char *eglQueryString(EGLDisplay display, EGLint name)
{
	noteCall("eglQueryString", __builtin_return_address(0));
	static auto next = real<const char *(*)(EGLDisplay, EGLint)>("eglQueryString");
	return next(display, name);
}
EGLint eglGetError(void)
{
	noteCall("eglGetError", __builtin_return_address(0));
	static auto next = real<EGLint (*)()>("eglGetError");
	return next();
}
}

namespace {

constexpr const char *kUpload =
	"videotestsrc num-buffers=30 ! video/x-raw,format=RGBA,width=640,height=360 ! "
	"gpuhandleupload backend=vulkan ! gpuhandledownload ! video/x-raw(memory:GLMemory)";

// GStreamer's GL consumers of gpuhandle's GLMemory (Vulkan memory imported into GL), one
// pipeline each.
const std::string kConsumers[] = {
	std::string(kUpload) +
		" ! glcolorscale ! video/x-raw(memory:GLMemory),width=320,height=180 "
		"! gldownload ! fakesink",
	std::string(kUpload) + " ! glcolorconvert ! video/x-raw(memory:GLMemory),format=NV12 ! "
			       "gldownload ! fakesink",
	"glvideomixer name=m ! gldownload ! fakesink " + std::string(kUpload) +
		" ! m. videotestsrc num-buffers=30 pattern=ball ! "
		"video/x-raw,width=320,height=180 ! glupload ! m.",
	std::string(kUpload) + " ! gltransformation rotation-z=15 ! gldownload ! fakesink",
	std::string(kUpload) + " ! glfilterbin filter=glshader ! gldownload ! fakesink",
};

// gpuhandle's own GL thread: frames put on the GL backend's device and read back.
const std::string kOwnGlThread =
	"videotestsrc num-buffers=10 ! video/x-raw,format=NV12,width=320,height=240 ! "
	"gpuhandleupload backend=gl ! gpuhandledownload ! video/x-raw ! fakesink";

void runInProcess(const std::string &description)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s: %s", description.c_str(),
		      error ? error->message : "?");
	GstBus *bus = gst_element_get_bus(pipeline);
	ck_assert(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, 60 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	const bool eos = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
	if (msg)
		gst_message_unref(msg);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	ck_assert_msg(eos, "%s: no EOS within 60 s (an error, or stuck)", description.c_str());
}

// How many times each consumer pipeline runs in its own process: hundreds in all; a tenth under
// the sanitizers (the gst-launch-1.0 processes load the instrumented plugin); none under valgrind,
// which does not follow them into their processes, so they would only repeat the main build's
// runs (GPUHANDLE_GL_CONSUMER_RUNS sets it).
long runsPerPipeline()
{
	if (const char *runs = std::getenv("GPUHANDLE_GL_CONSUMER_RUNS"))
		return std::strtol(runs, nullptr, 10);
	if (std::getenv("GPUHANDLE_UNDER_VALGRIND"))
		return 0;
	// Under the validation layer, a few: the layer checks the hand-offs, which every run
	// repeats, at about three times the cost.
	if (std::getenv("GPUHANDLE_UNDER_VKVALIDATION"))
		return 4;
	return gpuhandle::test::scaledCount(40);
}

} // namespace

START_TEST(egl_is_called_only_on_gl_threads)
{
	for (const std::string &consumer : kConsumers)
		runInProcess(consumer);
	runInProcess(kOwnGlThread);
	std::lock_guard<std::mutex> lock(gCallsMutex);
	// The interposition works: gpuhandle's GL code asked EGL on its GL threads.
	ck_assert_int_gt(gGpuhandleCalls, 0);
	std::string stray;
	for (const std::string &call : gStrayCalls)
		stray += "\n  " + call;
	ck_assert_msg(gStrayCalls.empty(), "gpuhandle called EGL outside a GL thread:%s",
		      stray.c_str());
}
END_TEST

START_TEST(consumer_pipelines_end_cleanly_in_many_processes)
{
	const long runs = runsPerPipeline();
	if (runs == 0) {
		std::printf("consumer processes: not under valgrind (it does not follow them)\n");
		return;
	}
	ck_assert_int_gt(runs, 0);
	const std::string log = "/tmp/gpuhandle-gl-consumer-" + std::to_string(getpid()) + ".log";
	long total = 0;
	for (const std::string &consumer : kConsumers) {
		// One quoted shell word per token, as a user types it.
		std::string command = "timeout 60 gst-launch-1.0 -q";
		for (const std::string &word : gpuhandle::test::launchWords(consumer))
			command += " '" + word + "'";
		command += " >" + log + " 2>&1";
		for (long i = 0; i < runs; ++i, ++total) {
			const int status = std::system(command.c_str());
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				continue;
			std::string output;
			if (FILE *f = std::fopen(log.c_str(), "r")) {
				char line[512];
				while (std::fgets(line, sizeof(line), f))
					output += line;
				std::fclose(f);
			}
			std::remove(log.c_str());
			ck_abort_msg("run %ld of `%s` ended with %s %d:\n%s", i + 1,
				     consumer.c_str(), WIFEXITED(status) ? "exit status" : "signal",
				     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				     output.c_str());
		}
	}
	std::remove(log.c_str());
	std::printf("%ld consumer runs (%ld per pipeline), all ended cleanly\n", total, runs);
	ck_assert_int_eq(total, runs * static_cast<long>(std::size(kConsumers)));
}
END_TEST

int main(int argc, char **argv)
{
	for (gpuhandle::BackendKind kind :
	     { gpuhandle::BackendKind::Vulkan, gpuhandle::BackendKind::OpenGL })
		if (int why = gpuhandle::test::probeBackend(kind))
			return why; // printed why
	gst_init(&argc, &argv);
	if (!gst_registry_check_feature_version(gst_registry_get(), "glcolorscale", 1, 22, 0) ||
	    !gst_registry_check_feature_version(gst_registry_get(), "gpuhandledownload", 0, 0, 0)) {
		std::printf("SKIP: GStreamer's GL elements (gstreamer1.0-gl) or the gpuhandle "
			    "plugin are not here\n");
		return 77;
	}
	Suite *s = suite_create("gst-gl-consumers");
	TCase *tc = tcase_create("gl-consumers");
	tcase_set_timeout(tc, 540);
	tcase_add_test(tc, egl_is_called_only_on_gl_threads);
	tcase_add_test(tc, consumer_pipelines_end_cleanly_in_many_processes);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
