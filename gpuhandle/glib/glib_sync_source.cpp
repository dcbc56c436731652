// GSource over a SyncPoint: polls the waiter's fd in the main loop, or re-checks it in slices.
#include <gpuhandle/c_bridge.h>
#include <gpuhandle/glib_sync_source.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <optional>

namespace gpuhandle {

namespace {

// The C++ side of one source. Touched only by the GMainContext's thread (prepare, check,
// dispatch), except in finalize, which runs wherever the last reference is dropped.
struct SourceState {
	SyncPoint point;
	WaitDuration timeout;
	// Started on the first prepare, when a main loop begins waiting on the source: counted from
	// creation, a source made well before its loop runs (or on a loaded machine) would time out
	// before it had waited its budget. (GLib's own timeout sources count from creation; a wait
	// budget is the time spent waiting.)
	std::optional<Deadline> deadline{};
	gpointer fdTag = nullptr; // set when the waiter's fd is polled by the main loop
	std::optional<Status> outcome{};
};

// The GSource must come first: GLib allocates `sizeof(SyncSource)` and hands back the GSource.
struct SyncSource {
	GSource source;
	SourceState *state;
};

SourceState &stateOf(GSource *source)
{
	return *reinterpret_cast<SyncSource *>(source)->state;
}

// Records the outcome once it is known. `query` asks the point itself: always for sources that
// are not polled, and for polled ones only once the fd woke up (isSignaled() then turns a
// POLLERR into the waiter's error instead of reading it as "done").
bool decide(SourceState &state, bool query)
{
	if (state.outcome)
		return true;
	if (query) {
		Result<bool> signaled = state.point.isSignaled();
		if (!signaled.ok()) {
			state.outcome = Status(signaled.error());
			return true;
		}
		if (*signaled) {
			state.outcome = Status();
			return true;
		}
	}
	if (state.deadline && state.deadline->expired()) {
		state.outcome = Status(waitTimeoutError(state.point.backend(), state.timeout));
		return true;
	}
	return false;
}

// Milliseconds until the next check, rounded up so that a deadline is never woken early.
gint pollTimeoutMs(const SourceState &state)
{
	WaitDuration left = state.deadline->remaining();
	if (!state.fdTag)
		left = std::min(left, kSyncSourceSlice);
	else if (state.deadline->isNever())
		return -1;
	auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
	return static_cast<gint>(std::clamp<decltype(ms)>(ms, 0, INT_MAX));
}

gboolean sourcePrepare(GSource *source, gint *timeout)
{
	SourceState &state = stateOf(source);
	if (!state.deadline)
		state.deadline = Deadline::after(state.timeout);
	if (decide(state, !state.fdTag)) {
		*timeout = 0;
		return TRUE;
	}
	*timeout = pollTimeoutMs(state);
	return FALSE;
}

gboolean sourceCheck(GSource *source)
{
	SourceState &state = stateOf(source);
	bool woke = !state.fdTag || g_source_query_unix_fd(source, state.fdTag) != 0;
	return decide(state, woke);
}

gboolean sourceDispatch(GSource *source, GSourceFunc callback, gpointer userData)
{
	SourceState &state = stateOf(source);
	Status outcome = state.outcome ? std::move(*state.outcome) : Status();
	// Stop polling before the point (and with it the fd) may be released.
	if (state.fdTag) {
		g_source_remove_unix_fd(source, state.fdTag);
		state.fdTag = nullptr;
	}
	state.point = SyncPoint::noop();
	if (callback) {
		// GLib stores every callback as a GSourceFunc; the cast through void (*)() is the
		// one C++ allows without a function-type warning.
		auto func = reinterpret_cast<GpuhandleSyncSourceFunc>(
			reinterpret_cast<void (*)()>(callback));
		int status = outcome.ok() ? 0 : static_cast<int>(outcome.error().code());
		const char *message = outcome.ok() ? "" : outcome.error().message().c_str();
		func(status, message, userData);
	}
	// Fires once: the callback's return value is deliberately ignored.
	return G_SOURCE_REMOVE;
}

void sourceFinalize(GSource *source)
{
	auto *sync = reinterpret_cast<SyncSource *>(source);
	delete sync->state;
	sync->state = nullptr;
}

GSourceFuncs kSyncSourceFuncs = {
	sourcePrepare, sourceCheck, sourceDispatch, sourceFinalize, nullptr, nullptr,
};

GSource *newSource(SyncPoint point, WaitDuration timeout, std::optional<Error> failure)
{
	GSource *source = g_source_new(&kSyncSourceFuncs, sizeof(SyncSource));
	g_source_set_name(source, "gpuhandle sync source");
	auto state = std::make_unique<SourceState>(SourceState{ std::move(point), timeout });
	if (failure)
		state->outcome = Status(std::move(*failure));
	else if (state->point.waiter() && state->point.waiter()->pollFd() >= 0)
		state->fdTag =
			g_source_add_unix_fd(source, state->point.waiter()->pollFd(), G_IO_IN);
	reinterpret_cast<SyncSource *>(source)->state = state.release();
	return source;
}

} // namespace

/**
 * \brief A GSource that fires once when \a point is signalled, fails, or \a timeout passes
 * \param[in] point The sync point; the source holds a copy until it fires or is finalized
 * \param[in] timeout The wait budget; kWaitForever waits without limit
 *
 * A waiter with a pollable fd (CpuFence, fence fds) is polled by the main loop itself, with no
 * thread and no slicing. Other waiters are asked isSignaled() on every main-loop iteration and at
 * least every kSyncSourceSlice. The callback (a GpuhandleSyncSourceFunc set with
 * g_source_set_callback()) receives what SyncPoint::wait() would return: 0, Timeout, the
 * driver's error, or NotSupported for a raw carrier. A Noop point fires on the next iteration.
 * The timeout counts from the first time a main loop polls the source (the first iteration of
 * its context after g_source_attach()), not from creation.
 *
 * \return A new GSource (transfer full), not attached to any context; never null
 */
GSource *makeSyncSource(SyncPoint point, WaitDuration timeout)
{
	return newSource(std::move(point), timeout, std::nullopt);
}

} // namespace gpuhandle

using namespace gpuhandle;

namespace {

WaitDuration timeoutFromMicroseconds(gint64 timeout_us)
{
	// Capped so that the conversion to nanoseconds cannot overflow; Deadline saturates anyway.
	constexpr gint64 kMaxUs = INT64_MAX / 1000;
	return timeout_us < 0
		       ? kWaitForever
		       : WaitDuration(std::chrono::microseconds(std::min(timeout_us, kMaxUs)));
}

} // namespace

GSource *gpuhandle_sync_source_new(const gpuhandle_sync_point *point, gint64 timeout_us)
{
	WaitDuration timeout = timeoutFromMicroseconds(timeout_us);
	const SyncPoint *value = syncPointOf(point);
	if (!value)
		return newSource(
			{}, timeout,
			Error(ErrorCode::NullHandle, "point",
			      "gpuhandle_sync_source_new: point is NULL; a sync point is required."));
	return newSource(*value, timeout, std::nullopt);
}

GSource *gpuhandle_sync_source_new_fd(int fd, gint64 timeout_us)
{
	WaitDuration timeout = timeoutFromMicroseconds(timeout_us);
	if (!isOpenFd(fd))
		return newSource(
			{}, timeout,
			Error::format(
				ErrorCode::BadFd, "fd",
				"gpuhandle_sync_source_new_fd: fd %d is not an open file descriptor.",
				fd));
	UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (!copy.isValid())
		return newSource(
			{}, timeout,
			Error::format(ErrorCode::Io, "fd",
				      "gpuhandle_sync_source_new_fd: duplicating fd %d failed: %s.",
				      fd, std::strerror(errno)));
	Result<SyncPoint> point = SyncPoint::fromFenceFd(SharedFd(std::move(copy)));
	if (!point.ok())
		return newSource({}, timeout, point.error());
	return newSource(std::move(*point), timeout, std::nullopt);
}
