// GL fence waiters on llvmpipe through surfaceless EGL: GLsync waited on a GL thread through an
// executor, EGLSync waited from any thread, bounded waits, failures, deletion with the last copy.
#include <gpuhandle/backends/gl_sync.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "check_helpers.h"
#include "egl_gl_thread.h"
#include "fd_count.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using test::hasExtension;

long long msSince(Clock::time_point start)
{
	return static_cast<long long>(
		std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)
			.count());
}

test::EglGlThread *g_gl = nullptr;

void setUp()
{
	g_gl = new test::EglGlThread();
	std::string why = g_gl->start();
	ck_assert_msg(why.empty(), "%s", why.c_str());
}

void tearDown()
{
	delete g_gl;
	g_gl = nullptr;
}

// Blocks the GL thread until the returned promise is set: a busy GL thread.
std::promise<void> blockGlThread()
{
	std::promise<void> release;
	auto released = std::make_shared<std::shared_future<void>>(release.get_future().share());
	g_gl->post([released] { released->wait(); });
	return release;
}

template<typename F>
F eglProc(const char *name)
{
	auto function = reinterpret_cast<F>(eglGetProcAddress(name));
	ck_assert_msg(function, "%s is missing", name);
	return function;
}

} // namespace

START_TEST(invalid_input_is_refused)
{
	int g_handle = 0;
	ck_assert_error(importGlSync(GlSyncSync{}, g_gl->blocking()), ErrorCode::NullHandle,
			"sync");
	ck_assert_error(importGlSync(GlSyncSync{ &g_handle, g_gl->context, GlFlavour::Egl },
				     nullptr),
			ErrorCode::NullHandle, "executor");
	ck_assert_error(importGlSync(GlSyncSync{ &g_handle, nullptr, static_cast<GlFlavour>(9) },
				     g_gl->blocking()),
			ErrorCode::InvalidArgument, "flavour");
	ck_assert_error(importEglSync(nullptr, &g_handle), ErrorCode::NullHandle, "display");
	ck_assert_error(importEglSync(g_gl->display, nullptr), ErrorCode::NullHandle, "sync");
	ck_assert_error(importEglSync(&g_handle, &g_handle), ErrorCode::Backend, "display");
	ck_assert_error(importEglSync(g_gl->display, &g_handle), ErrorCode::Backend, "sync");
}
END_TEST

START_TEST(glsync_after_clear_is_waited_and_deleted)
{
	GLsync sync = g_gl->clearAndFence();
	ck_assert_ptr_nonnull(sync);
	{
		auto point = importGlSync(GlSyncSync{ sync, g_gl->context, GlFlavour::Egl },
					  g_gl->blocking());
		ck_assert_ok(point);
		ck_assert_int_eq(static_cast<int>(point->kind()),
				 static_cast<int>(SyncKind::GlSync));
		ck_assert_int_eq(static_cast<int>(point->backend()),
				 static_cast<int>(BackendKind::OpenGL));
		ck_assert_int_eq(point->waiter()->pollFd(), -1);
		ck_assert_ok(point->wait(kDefaultWaitTimeout)); // done, not the 10 s Timeout
		auto done = point->isSignaled();
		ck_assert_ok(done);
		ck_assert(*done);
		SyncPoint copy = *point;
		ck_assert_ok(copy.wait(0ns));
		ck_assert(g_gl->isSync(sync)); // copies live: not deleted
	}
	ck_assert(!g_gl->isSync(sync)); // the last copy deleted it on the GL thread
}
END_TEST

START_TEST(glsync_polling_alone_makes_progress)
{
	// isSignaled() flushes on its first call, so a fence nobody flushed still signals.
	GLsync sync = g_gl->clearAndFence();
	auto point =
		importGlSync(GlSyncSync{ sync, g_gl->context, GlFlavour::Egl }, g_gl->posting());
	ck_assert_ok(point);
	auto start = Clock::now();
	bool signaled = false;
	while (!signaled && Clock::now() - start < 5s) {
		auto done = point->isSignaled();
		ck_assert_ok(done);
		signaled = *done;
		if (!signaled)
			std::this_thread::sleep_for(1ms);
	}
	ck_assert_msg(signaled, "the GLsync did not signal within 5 s of polling");
}
END_TEST

START_TEST(busy_gl_thread_bounds_the_wait_then_wakes_it)
{
	GLsync sync = g_gl->clearAndFence();
	auto point =
		importGlSync(GlSyncSync{ sync, g_gl->context, GlFlavour::Egl }, g_gl->posting());
	ck_assert_ok(point);

	std::promise<void> release = blockGlThread();
	auto start = Clock::now();
	Status status = point->wait(50ms);
	long long took = msSince(start);
	ck_assert_error(status, ErrorCode::Timeout, "timeout");
	ck_assert_int_eq(static_cast<int>(status.error().kind()),
			 static_cast<int>(ErrorKind::Recoverable));
	ck_assert_msg(took >= 50, "a 50 ms wait took %lld ms", took);
	// A poll does not block on the busy GL thread (it would hang: only this thread frees it).
	auto polled = point->isSignaled();
	ck_assert_ok(polled);
	ck_assert(!*polled);

	// Released from another thread while this one is blocked in a wait.
	std::thread releaser([&release] {
		std::this_thread::sleep_for(30ms);
		release.set_value();
	});
	status = point->wait(kDefaultWaitTimeout);
	releaser.join();
	ck_assert_ok(status); // woken, not the 10 s Timeout
}
END_TEST

START_TEST(gl_failures_are_errors)
{
	// Run where no context is current: refused, never called into GL.
	GlExecutor inlineHere = [](std::function<void()> work) { work(); };
	int g_handle = 0;
	{
		auto point = importGlSync(GlSyncSync{ &g_handle, g_gl->context, GlFlavour::Egl },
					  inlineHere);
		ck_assert_ok(point);
		ck_assert_error(point->wait(kDefaultWaitTimeout), ErrorCode::InvalidState,
				"executor");
		ck_assert_error(point->isSignaled(), ErrorCode::InvalidState, "executor");
	}
	// Not a GLsync of this context: GL_WAIT_FAILED.
	{
		auto point = importGlSync(GlSyncSync{ &g_handle, g_gl->context, GlFlavour::Egl },
					  g_gl->blocking());
		ck_assert_ok(point);
		Status status = point->wait(kDefaultWaitTimeout);
		ck_assert_error(status, ErrorCode::Backend, "sync");
		ck_assert_msg(status.error().message().find("GL_WAIT_FAILED") != std::string::npos,
			      "%s", status.error().message().c_str());
		ck_assert_error(point->isSignaled(), ErrorCode::Backend, "sync");
	}
	GLenum left = GL_NO_ERROR;
	g_gl->run([&left] {
		while (glGetError() != GL_NO_ERROR) {
		}
		left = glGetError();
	});
	ck_assert_int_eq(left, GL_NO_ERROR);
}
END_TEST

START_TEST(eglsync_is_waited_from_any_thread_and_destroyed)
{
	const char *extensions = eglQueryString(g_gl->display, EGL_EXTENSIONS);
	ck_assert(hasExtension(extensions, "EGL_KHR_fence_sync"));
	auto createSync = eglProc<PFNEGLCREATESYNCKHRPROC>("eglCreateSyncKHR");
	auto getSyncAttrib = eglProc<PFNEGLGETSYNCATTRIBKHRPROC>("eglGetSyncAttribKHR");
	EGLSyncKHR sync = EGL_NO_SYNC_KHR;
	g_gl->run([&sync, createSync] {
		glClear(GL_COLOR_BUFFER_BIT);
		sync = createSync(g_gl->display, EGL_SYNC_FENCE_KHR, nullptr);
		glFlush();
	});
	ck_assert_ptr_ne(sync, EGL_NO_SYNC_KHR);
	{
		auto point = importEglSync(g_gl->display, sync);
		ck_assert_ok(point);
		ck_assert_ptr_eq(point->raw<GlSyncSync>()->sync, sync);
		ck_assert_ok(point->wait(kDefaultWaitTimeout)); // this thread has no context
		auto done = point->isSignaled();
		ck_assert_ok(done);
		ck_assert(*done);
	}
	EGLint value = 0;
	ck_assert(!getSyncAttrib(g_gl->display, sync, EGL_SYNC_STATUS_KHR, &value)); // destroyed
	ck_assert_int_eq(eglGetError(), EGL_BAD_PARAMETER);
}
END_TEST

START_TEST(reusable_eglsync_times_out_then_wakes)
{
	if (!hasExtension(eglQueryString(g_gl->display, EGL_EXTENSIONS), "EGL_KHR_reusable_sync")) {
		std::printf(
			"EGL_KHR_reusable_sync is missing: no never-signalled EGLSync to time out\n");
		ck_assert(true);
		return;
	}
	auto createSync = eglProc<PFNEGLCREATESYNCKHRPROC>("eglCreateSyncKHR");
	auto signalSync = eglProc<PFNEGLSIGNALSYNCKHRPROC>("eglSignalSyncKHR");
	EGLSyncKHR sync = createSync(g_gl->display, EGL_SYNC_REUSABLE_KHR, nullptr);
	ck_assert_ptr_ne(sync, EGL_NO_SYNC_KHR);
	auto point = importEglSync(g_gl->display, sync);
	ck_assert_ok(point);
	auto done = point->isSignaled();
	ck_assert_ok(done);
	ck_assert(!*done);

	auto start = Clock::now();
	Status status = point->wait(50ms);
	long long took = msSince(start);
	ck_assert_error(status, ErrorCode::Timeout, "timeout");
	ck_assert_msg(took >= 50, "a 50 ms wait took %lld ms", took);
	ck_assert_error(point->wait(0ns), ErrorCode::Timeout, "timeout");

	std::thread signaller([sync, signalSync] {
		std::this_thread::sleep_for(30ms);
		signalSync(g_gl->display, sync, EGL_SIGNALED_KHR);
	});
	status = point->wait(kDefaultWaitTimeout);
	signaller.join();
	ck_assert_ok(status); // woken by the signal, not the 10 s Timeout
}
END_TEST

START_TEST(no_fd_leaked)
{
	auto createSync = eglProc<PFNEGLCREATESYNCKHRPROC>("eglCreateSyncKHR");
	// Warm up the driver's lazily opened fds first.
	{
		auto point = importGlSync(GlSyncSync{ g_gl->clearAndFence(), g_gl->context,
						      GlFlavour::Egl },
					  g_gl->blocking());
		ck_assert_ok(point);
		ck_assert_ok(point->wait(kDefaultWaitTimeout));
	}
	int before = gpuhandle::test::openFdCount();
	for (int i = 0; i < 20; ++i) {
		auto gl = importGlSync(GlSyncSync{ g_gl->clearAndFence(), g_gl->context,
						   GlFlavour::Egl },
				       g_gl->posting());
		ck_assert_ok(gl);
		ck_assert_ok(gl->wait(kDefaultWaitTimeout));
		EGLSyncKHR sync = EGL_NO_SYNC_KHR;
		g_gl->run([&sync, createSync] {
			sync = createSync(g_gl->display, EGL_SYNC_FENCE_KHR, nullptr);
			glFlush();
		});
		auto egl = importEglSync(g_gl->display, sync);
		ck_assert_ok(egl);
		ck_assert_ok(egl->wait(kDefaultWaitTimeout));
	}
	g_gl->run([] {}); // the posted deletes ran
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

int main()
{
	// Skips (exit 77) when no surfaceless EGL display opens.
	int probed = test::probeInChild([] { return test::EglGlThread().start(); });
	if (probed != 0)
		return probed;
	Suite *s = suite_create("gl-sync");
	TCase *tc = tcase_create("gl-sync");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setUp, tearDown);
	tcase_add_test(tc, invalid_input_is_refused);
	tcase_add_test(tc, glsync_after_clear_is_waited_and_deleted);
	tcase_add_test(tc, glsync_polling_alone_makes_progress);
	tcase_add_test(tc, busy_gl_thread_bounds_the_wait_then_wakes_it);
	tcase_add_test(tc, gl_failures_are_errors);
	tcase_add_test(tc, eglsync_is_waited_from_any_thread_and_destroyed);
	tcase_add_test(tc, reusable_eglsync_times_out_then_wakes);
	tcase_add_test(tc, no_fd_leaked);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
