// GLsync waits through the host's GL-thread executor, and EGLSync waits from any thread.
#include <gpuhandle/backends/gl_sync.h>

#include "validation.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

#include <EGL/egl.h>
#include <EGL/eglext.h>

namespace gpuhandle {

namespace {

// The backend links EGL only (GL comes through eglGetProcAddress), so the GL headers are not a
// dependency: these are the few GL names it needs, with the values of the GL registry.
using GLenum = unsigned int;
using GLbitfield = unsigned int;
using GLuint64 = uint64_t;
constexpr GLenum kGlVersion = 0x1F02;
constexpr GLenum kGlExtensions = 0x1F03;
constexpr GLbitfield kGlSyncFlushCommandsBit = 0x1;
constexpr GLenum kGlAlreadySignaled = 0x911A;
constexpr GLenum kGlTimeoutExpired = 0x911B;
constexpr GLenum kGlConditionSatisfied = 0x911C;
constexpr GLenum kGlWaitFailed = 0x911D;

// GLsync is an opaque pointer: passing it as void * is the same call.
struct GlEntryPoints {
	GLenum (*clientWaitSync)(void *sync, GLbitfield flags, GLuint64 timeout) = nullptr;
	void (*deleteSync)(void *sync) = nullptr;
	const unsigned char *(*getString)(GLenum name) = nullptr;
	GLenum (*getError)() = nullptr;
};

template<typename F>
bool resolve(F &function, const char *name)
{
	// eglGetProcAddress returns a generic function pointer; this is its documented use.
	function = reinterpret_cast<F>(eglGetProcAddress(name));
	return function != nullptr;
}

// Whole-token match in a space-separated extension list ("GL_ARB_sync" is not "GL_ARB_sync2").
bool hasExtension(const char *list, const char *name)
{
	size_t length = std::strlen(name);
	for (const char *at = list; at && (at = std::strstr(at, name)) != nullptr; at += length) {
		bool startsToken = at == list || at[-1] == ' ';
		bool endsToken = at[length] == ' ' || at[length] == '\0';
		if (startsToken && endsToken)
			return true;
	}
	return false;
}

// True when the current context has sync objects: GLES 3.0, GL 3.2 or GL_ARB_sync. Checked on
// the GL thread before the first sync call, since an absent entry point may crash the driver.
bool currentContextHasSync(const GlEntryPoints &gl)
{
	const char *version = reinterpret_cast<const char *>(gl.getString(kGlVersion));
	if (!version)
		return false;
	bool es = std::strncmp(version, "OpenGL ES", 9) == 0;
	const char *numbers = version;
	while (*numbers && (*numbers < '0' || *numbers > '9'))
		++numbers;
	int major = 0;
	int minor = 0;
	if (std::sscanf(numbers, "%d.%d", &major, &minor) != 2)
		return false;
	if (es)
		return major >= 3;
	if (major > 3 || (major == 3 && minor >= 2))
		return true;
	return hasExtension(reinterpret_cast<const char *>(gl.getString(kGlExtensions)),
			    "GL_ARB_sync");
}

// How long isSignaled() waits for the GL thread to answer before it says "not yet".
constexpr WaitDuration kGlQueryWindow = std::chrono::milliseconds(10);

constexpr int kSupportUnknown = 0;
constexpr int kSupportYes = 1;
constexpr int kSupportNo = 2;

// What posted GL-thread work needs: it may run after the waiter is gone (an executor that posts
// and returns), so it holds this by shared_ptr rather than the waiter.
struct GlSyncState {
	GlSyncSync raw;
	GlEntryPoints gl;
	std::atomic<bool> flushed{ false };
	std::atomic<int> support{ kSupportUnknown };
	std::atomic<bool> signaled{ false }; // seen signalled once: no more GL-thread round trips

	// On the GL thread: the sync's context must be current and have sync objects.
	std::optional<Error> checkThread()
	{
		if (raw.flavour == GlFlavour::Egl) {
			void *current = eglGetCurrentContext();
			if (current == EGL_NO_CONTEXT || (raw.context && current != raw.context))
				return Error::format(
					ErrorCode::InvalidState, "executor",
					"The GL executor ran the GLsync %p wait on a thread where its "
					"context %p is not current (current: %p).",
					raw.sync, raw.context, current);
		}
		int known = support.load();
		if (known == kSupportUnknown) {
			known = currentContextHasSync(gl) ? kSupportYes : kSupportNo;
			support.store(known);
		}
		if (known == kSupportNo)
			return Error::format(
				ErrorCode::NotSupported, "sync",
				"The GL context %p has no sync objects (it needs GLES 3.0, GL 3.2 "
				"or GL_ARB_sync).",
				raw.context);
		return std::nullopt;
	}
};

// One glClientWaitSync posted to the GL thread, and its outcome.
struct GlCall {
	std::mutex mutex;
	std::condition_variable ran;
	bool done = false;
	bool abandoned = false; // the waiter gave up: the work skips the GL call
	GLenum status = 0;
	std::optional<Error> error;
};

class GlSyncWaiter final : public SyncWaiter
{
public:
	GlSyncWaiter(std::shared_ptr<GlSyncState> state, GlExecutor executor, KeepAliveRef owner)
		: state_(std::move(state)), executor_(std::move(executor)), owner_(std::move(owner))
	{
	}

	~GlSyncWaiter() override
	{
		// The owner rides along so that it is released only after the delete ran.
		executor_([state = state_, owner = std::move(owner_)]() {
			if (!state->checkThread())
				state->gl.deleteSync(state->raw.sync);
		});
	}

	BackendKind backend() const noexcept override { return BackendKind::OpenGL; }

	Status wait(WaitDuration timeout) override
	{
		if (state_->signaled.load())
			return {};
		Deadline deadline = Deadline::after(timeout);
		for (;;) {
			WaitDuration slice =
				std::min<WaitDuration>(deadline.remaining(), kGlWaitSlice);
			auto status = clientWait(static_cast<GLuint64>(slice.count()), deadline);
			if (!status.ok()) {
				if (status.error().code() == ErrorCode::Timeout)
					return waitTimeoutError(BackendKind::OpenGL, timeout);
				return std::move(status).error();
			}
			if (*status != kGlTimeoutExpired)
				return {};
			if (deadline.expired())
				return waitTimeoutError(BackendKind::OpenGL, timeout);
		}
	}

	Result<bool> isSignaled() override
	{
		if (state_->signaled.load())
			return true;
		// A zero-timeout glClientWaitSync: unlike glGetSynciv it flushes on the first call,
		// so polling alone makes progress. A poll must not block on a busy GL thread: when
		// it does not answer within kGlQueryWindow the fence is not known to be signalled
		// yet.
		auto status = clientWait(0, Deadline::after(kGlQueryWindow));
		if (!status.ok()) {
			if (status.error().code() == ErrorCode::Timeout)
				return false;
			return std::move(status).error();
		}
		return *status != kGlTimeoutExpired;
	}

private:
	// Runs one glClientWaitSync(timeoutNs) on the GL thread and waits for it until `deadline`:
	// GL_ALREADY_SIGNALED / GL_CONDITION_SATISFIED / GL_TIMEOUT_EXPIRED, or an error (Timeout
	// when the GL thread did not run it in time).
	Result<GLenum> clientWait(GLuint64 timeoutNs, const Deadline &deadline)
	{
		auto call = std::make_shared<GlCall>();
		executor_([state = state_, call, timeoutNs]() {
			GLenum status = 0;
			std::optional<Error> error;
			{
				std::lock_guard<std::mutex> lock(call->mutex);
				if (call->abandoned)
					return;
			}
			error = state->checkThread();
			if (!error) {
				GLbitfield flags =
					state->flushed.exchange(true) ? 0 : kGlSyncFlushCommandsBit;
				status =
					state->gl.clientWaitSync(state->raw.sync, flags, timeoutNs);
				if (status == kGlAlreadySignaled || status == kGlConditionSatisfied)
					// A signalled GLsync stays signalled.
					state->signaled.store(true);
				else if (status != kGlTimeoutExpired)
					error = waitFailed(*state, status);
			}
			std::lock_guard<std::mutex> lock(call->mutex);
			call->status = status;
			call->error = std::move(error);
			call->done = true;
			call->ran.notify_all();
		});

		std::unique_lock<std::mutex> lock(call->mutex);
		auto ran = [&call] { return call->done; };
		if (deadline.isNever())
			call->ran.wait(lock, ran);
		else if (!call->ran.wait_until(lock, deadline.when(), ran)) {
			call->abandoned = true;
			return Error::format(
				ErrorCode::Timeout, "executor",
				"The GL executor did not run the GLsync %p wait on the GL thread in time.",
				state_->raw.sync);
		}
		if (call->error)
			return std::move(*call->error);
		return call->status;
	}

	static Error waitFailed(const GlSyncState &state, GLenum status)
	{
		GLenum glError = state.gl.getError();
		if (status == kGlWaitFailed)
			return Error::format(
				ErrorCode::Backend, "sync",
				"glClientWaitSync on GLsync %p failed (GL_WAIT_FAILED, GL error 0x%x).",
				state.raw.sync, glError);
		return Error::format(
			ErrorCode::Backend, "sync",
			"glClientWaitSync on GLsync %p returned 0x%x, not a wait status (GL error 0x%x).",
			state.raw.sync, status, glError);
	}

	std::shared_ptr<GlSyncState> state_;
	GlExecutor executor_;
	KeepAliveRef owner_;
};

// EGL_KHR_fence_sync entry points, resolved once per import after the extension check.
struct EglEntryPoints {
	PFNEGLCLIENTWAITSYNCKHRPROC clientWaitSync = nullptr;
	PFNEGLGETSYNCATTRIBKHRPROC getSyncAttrib = nullptr;
	PFNEGLDESTROYSYNCKHRPROC destroySync = nullptr;
};

// EGL waits need no current context: eglClientWaitSyncKHR takes a real timeout, so no slices.
class EglSyncWaiter final : public SyncWaiter
{
public:
	EglSyncWaiter(EGLDisplay display, EGLSyncKHR sync, EglEntryPoints egl, KeepAliveRef owner)
		: display_(display), sync_(sync), egl_(egl), owner_(std::move(owner))
	{
	}

	// owner_ (the display's anchor) is released after this body, once the sync is gone.
	~EglSyncWaiter() override { egl_.destroySync(display_, sync_); }

	BackendKind backend() const noexcept override { return BackendKind::OpenGL; }

	Status wait(WaitDuration timeout) override
	{
		Deadline deadline = Deadline::after(timeout);
		for (;;) {
			EGLTimeKHR left =
				deadline.isNever()
					? EGL_FOREVER_KHR
					: static_cast<EGLTimeKHR>(deadline.remaining().count());
			// The flush bit flushes the calling thread's current context, if any: it is
			// what makes a wait on the producer's own thread terminate.
			EGLint flags = flushed_.exchange(true) ? 0
							       : EGL_SYNC_FLUSH_COMMANDS_BIT_KHR;
			EGLint status = egl_.clientWaitSync(display_, sync_, flags, left);
			if (status == EGL_CONDITION_SATISFIED_KHR)
				return {};
			if (status != EGL_TIMEOUT_EXPIRED_KHR) {
				EGLint error = eglGetError();
				if (error != EGL_SUCCESS)
					return Error::format(
						ErrorCode::Backend, "sync",
						"eglClientWaitSyncKHR on EGLSync %p failed (EGL error 0x%x).",
						sync_, static_cast<unsigned>(error));
				// EGL_FALSE with no error: Mesa 22's timed wait on a reusable sync
				// returns its condition variable's result on wake-ups, spurious
				// ones included. The status decides.
				auto done = isSignaled();
				if (!done.ok() || *done)
					return done.ok() ? Status()
							 : Status(std::move(done).error());
			}
			if (deadline.expired())
				return waitTimeoutError(BackendKind::OpenGL, timeout);
		}
	}

	Result<bool> isSignaled() override
	{
		EGLint value = 0;
		if (!egl_.getSyncAttrib(display_, sync_, EGL_SYNC_STATUS_KHR, &value))
			return Error::format(
				ErrorCode::Backend, "sync",
				"eglGetSyncAttribKHR(EGL_SYNC_STATUS_KHR) on EGLSync %p failed (EGL error 0x%x).",
				sync_, static_cast<unsigned>(eglGetError()));
		return value == EGL_SIGNALED_KHR;
	}

private:
	EGLDisplay display_;
	EGLSyncKHR sync_;
	EglEntryPoints egl_;
	std::atomic<bool> flushed_{ false };
	KeepAliveRef owner_;
};

} // namespace

Result<SyncPoint> importGlSync(const GlSyncSync &raw, GlExecutor executor, KeepAliveRef owner)
{
	if (!raw.sync)
		return detail::nullHandle("GlSyncSync", "sync");
	if (!executor)
		return detail::nullHandle("GlExecutor", "executor");
	auto state = std::make_shared<GlSyncState>();
	state->raw = raw;
	GlEntryPoints &gl = state->gl;
	if (!resolve(gl.clientWaitSync, "glClientWaitSync") ||
	    !resolve(gl.deleteSync, "glDeleteSync") || !resolve(gl.getString, "glGetString") ||
	    !resolve(gl.getError, "glGetError"))
		return Error(
			ErrorCode::NotSupported, "sync",
			"eglGetProcAddress found no glClientWaitSync, glDeleteSync, glGetString or glGetError.");
	// Validates the rest of the raw fields before anything is adopted.
	auto checked = SyncPoint::create(raw, nullptr);
	if (!checked.ok())
		return std::move(checked).error();
	return SyncPoint::create(raw, std::make_shared<GlSyncWaiter>(std::move(state),
								     std::move(executor),
								     std::move(owner)));
}

Result<SyncPoint> importEglSync(void *display, void *eglSync, KeepAliveRef owner)
{
	if (!display)
		return detail::nullHandle("EGLDisplay", "display");
	if (!eglSync)
		return detail::nullHandle("EGLSync", "sync");
	const char *extensions = eglQueryString(display, EGL_EXTENSIONS);
	if (!extensions)
		return Error::format(
			ErrorCode::Backend, "display",
			"EGL display %p is not initialized (eglQueryString failed with EGL error 0x%x).",
			display, static_cast<unsigned>(eglGetError()));
	if (!hasExtension(extensions, "EGL_KHR_fence_sync"))
		return Error::format(ErrorCode::NotSupported, "display",
				     "EGL display %p does not offer EGL_KHR_fence_sync.", display);
	EglEntryPoints egl;
	if (!resolve(egl.clientWaitSync, "eglClientWaitSyncKHR") ||
	    !resolve(egl.getSyncAttrib, "eglGetSyncAttribKHR") ||
	    !resolve(egl.destroySync, "eglDestroySyncKHR"))
		return Error(ErrorCode::NotSupported, "display",
			     "EGL_KHR_fence_sync is listed but its entry points were not found.");
	// Asking for the type proves the handle is a sync of this display before it is adopted.
	EGLint type = 0;
	if (!egl.getSyncAttrib(display, eglSync, EGL_SYNC_TYPE_KHR, &type))
		return Error::format(ErrorCode::Backend, "sync",
				     "%p is not an EGLSync of display %p (EGL error 0x%x).",
				     eglSync, display, static_cast<unsigned>(eglGetError()));
	GlSyncSync raw{ eglSync, nullptr, GlFlavour::Egl };
	return SyncPoint::create(raw, std::make_shared<EglSyncWaiter>(display, eglSync, egl,
								      std::move(owner)));
}

} // namespace gpuhandle
