// GL fence waiters: a GLsync waited on the host's GL thread, an EGLSync waited from any thread.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <chrono>
#include <functional>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// Runs `work` on the thread where the GLsync's context is current, called from any thread. It may
// post the work and return at once (waits are then bounded by their timeout even while the GL
// thread is busy), or block until the GL thread ran it, as gst_gl_context_thread_add does: such
// an executor must run the work inline when called on the GL thread itself (the last copy of a
// point may be dropped there), and a wait lasts as long as the GL thread takes to get to it.
using GlExecutor = std::function<void(std::function<void()>)>;

// Longest glClientWaitSync call a wait makes on the GL thread, so that other posted GL work is
// never held up longer than this.
inline constexpr std::chrono::milliseconds kGlWaitSlice{ 2 };

// Adopts a GLsync (raw.sync; GL 3.2, GL_ARB_sync or GLES 3.0): the point waits with
// glClientWaitSync in kGlWaitSlice slices on `executor` (flushing on the first call), and the
// last copy deletes the sync there with glDeleteSync. isSignaled() asks the GL thread too, and
// answers false when it does not reply within 10 ms (busy): polls never block on the GL thread.
// `owner` is released after that delete. On error nothing is adopted. Errors: NullHandle (sync,
// executor), NotSupported (a build without EGL, no GL entry points); waits: Timeout, Backend
// (GL_WAIT_FAILED), InvalidState (the executor ran the work where raw.context is not current),
// NotSupported (a context without sync objects).
GPUHANDLE_INTEROP_API Result<SyncPoint> importGlSync(const GlSyncSync &raw, GlExecutor executor,
						     KeepAliveRef owner = {});

// Adopts an EGLSync (EGL_KHR_fence_sync) of an initialized EGLDisplay: waited from any thread
// with eglClientWaitSyncKHR, polled with eglGetSyncAttribKHR, destroyed with eglDestroySyncKHR
// by the last copy, after which `owner` (keep the display initialized with it) is released.
// The producer flushes its context after creating the sync. On error nothing is adopted.
// Errors: NullHandle (display, sync), Backend (the display is not initialized), NotSupported (no
// EGL_KHR_fence_sync, a build without EGL).
GPUHANDLE_INTEROP_API Result<SyncPoint> importEglSync(void *display, void *eglSync,
						      KeepAliveRef owner = {});

} // namespace gpuhandle
