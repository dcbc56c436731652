// GL debug output (KHR_debug) for test runs: with GPUHANDLE_GL_DEBUG set, every context the GL
// backend works in reports GL errors synchronously, on stderr, where the test wrapper reads them.
#include "egl/gl_backend_internal.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <EGL/egl.h>

namespace gpuhandle::gl {

namespace {

constexpr GLenum kDebugOutput = 0x92E0;
constexpr GLenum kDebugOutputSynchronous = 0x8242;
constexpr GLenum kDebugCallbackFunction = 0x8244;
constexpr GLenum kDebugTypeError = 0x824C;
constexpr GLenum kDebugTypeUndefinedBehavior = 0x824E;

using DebugProc = void (*)(GLenum source, GLenum type, GLuint id, GLenum severity, GLsizei length,
			   const char *message, const void *user);

// Errors and undefined behaviour only: what a test must fail on (performance and portability
// notes are not wrong). The prefix is what the wrapper looks for.
void report(GLenum, GLenum type, GLuint id, GLenum, GLsizei, const char *message, const void *)
{
	if (type != kDebugTypeError && type != kDebugTypeUndefinedBehavior)
		return;
	std::fprintf(stderr, "gpuhandle-gl-debug: GL %s (id %u): %s\n",
		     type == kDebugTypeError ? "error" : "undefined behaviour", id,
		     message ? message : "");
	std::fflush(stderr);
}

template<typename F>
F resolveDebug(const char *name, bool desktop)
{
	// GLES names the KHR_debug entry points with a KHR suffix.
	std::string full = std::string(name) + (desktop ? "" : "KHR");
	// eglGetProcAddress returns a generic function pointer; this is its documented use.
	return reinterpret_cast<F>(eglGetProcAddress(full.c_str()));
}

} // namespace

void enableDebugOutput(const Features &features, bool khrDebug)
{
	const char *wanted = std::getenv("GPUHANDLE_GL_DEBUG");
	if (!wanted || !*wanted || std::strcmp(wanted, "0") == 0 || !khrDebug)
		return;
	auto enable = resolveDebug<void (*)(GLenum)>("glEnable", true);
	auto getPointer =
		resolveDebug<void (*)(GLenum, void **)>("glGetPointerv", features.desktop);
	auto setCallback = resolveDebug<void (*)(DebugProc, const void *)>("glDebugMessageCallback",
									   features.desktop);
	if (!enable || !getPointer || !setCallback)
		return;
	enable(kDebugOutput);
	enable(kDebugOutputSynchronous);
	// A host context may have a callback of its own (GStreamer's, with GST_DEBUG=gldebug:1):
	// it stays, and now hears the messages too.
	void *current = nullptr;
	getPointer(kDebugCallbackFunction, &current);
	if (!current)
		setCallback(report, nullptr);
}

} // namespace gpuhandle::gl
