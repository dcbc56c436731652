// GLib GSource that waits on a gpuhandle sync point inside a main loop (C API, C++ overload).
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/gpuhandle_sync.h>

#include <glib.h>

// libgpuhandle-glib's export macro (see gpuhandle/export.h).
#define GPUHANDLE_GLIB_API GPUHANDLE_EXPORT

G_BEGIN_DECLS

/*
 * GpuhandleSyncSourceFunc:
 * @status: 0 when the fence was signalled, else a gpuhandle ErrorCode value (10 = Timeout,
 *          12 = Cancelled, 17 = Backend, ...)
 * @message: (not nullable): a whole sentence describing the failure; "" when @status is 0.
 *           Borrowed for the call.
 * @user_data: the data given to g_source_set_callback()
 *
 * Set with g_source_set_callback (source, G_SOURCE_FUNC (func), data, notify). Runs once, in
 * the thread of the GMainContext the source is attached to. The source is removed after this
 * call whatever it returns (G_SOURCE_REMOVE semantics): return G_SOURCE_REMOVE.
 */
/* The sources' callback: runs once, with status 0 or an ErrorCode and a borrowed message. */
typedef gboolean (*GpuhandleSyncSourceFunc)(int status, const char *message, gpointer user_data);

/*
 * gpuhandle_sync_source_new_fd:
 * @fd: a fence fd (sync_file, eventfd, any fd that polls readable once signalled); borrowed:
 *      the source waits on its own duplicate
 * @timeout_us: the wait budget in microseconds, counted from the first main-loop iteration
 *              after g_source_attach(); negative waits forever
 *
 * A source that fires once the fd polls readable (no extra thread: the fd is polled by the
 * main loop), or with status Timeout once @timeout_us passed. An fd that is not open makes a
 * source that fires at once with status BadFd.
 *
 * Returns: (transfer full) (not nullable): a new GSource, not yet attached.
 */
/* A new source that fires once fd (borrowed) polls readable, or timeout_us (< 0: never) passed. */
GPUHANDLE_GLIB_API GSource *gpuhandle_sync_source_new_fd(int fd, gint64 timeout_us);

/*
 * gpuhandle_sync_source_new:
 * @point: (transfer none): a sync point of the C API (gpuhandle_sync.h); the source keeps its
 *         own reference to the fence. NULL makes a source that fires at once with NullHandle.
 * @timeout_us: the wait budget in microseconds, counted from the first main-loop iteration
 *              after g_source_attach(); negative waits forever
 *
 * A source that fires once @point is signalled: pollable fences are polled by the main loop
 * itself (Vulkan timeline points included, through a watch thread), others are re-checked every
 * 2 ms. The callback gets the outcome of the wait.
 *
 * Returns: (transfer full) (not nullable): a new GSource, not yet attached.
 */
/* A new source that fires once point (borrowed, nullable) is signalled or timeout_us passed. */
GPUHANDLE_GLIB_API GSource *gpuhandle_sync_source_new(const gpuhandle_sync_point *point,
						      gint64 timeout_us);

G_END_DECLS

#ifdef __cplusplus
#include <gpuhandle/sync_point.h>

namespace GPUHANDLE_GLIB_API gpuhandle {

// A source over any sync point: pollable waiters (pollFd() >= 0) are polled by the main loop,
// the others are checked with isSignaled() every kSyncSourceSlice; the outcome of the wait
// (ok, Timeout, the driver's error, NotSupported for a raw carrier) goes to the
// GpuhandleSyncSourceFunc callback. `timeout` counts from the first main-loop iteration after
// g_source_attach(). The source holds `point` until it is finalized.
// Returns a new, unattached source (transfer full); never null.
GPUHANDLE_GLIB_API GSource *makeSyncSource(SyncPoint point,
					   WaitDuration timeout = kDefaultWaitTimeout);

// How often a source re-checks a sync point whose waiter has no pollable fd.
inline constexpr WaitDuration kSyncSourceSlice = std::chrono::milliseconds(2);

} // namespace gpuhandle
#endif
