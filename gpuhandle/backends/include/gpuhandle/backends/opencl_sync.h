// OpenCL fence waiter: a cl_event adopted into a SyncPoint, with an exact, pollable wait.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// Retains raw.event (clRetainEvent; the caller keeps its own reference) and releases it with the
// last copy of the point, then `owner`. clWaitForEvents has no timeout, so a CL_COMPLETE callback
// signals an internal CpuFence instead: completion wakes a wait at once, and the point's waiter
// has a pollFd() for epoll and main loops. The event's queue is flushed once here, as
// clWaitForEvents would. isSignaled() reads CL_EVENT_COMMAND_EXECUTION_STATUS; a command that
// terminated abnormally (a negative status) makes wait() and isSignaled() return Backend with the
// status. Drivers that skip the callback for failed commands (PoCL 3.1) leave the pollFd()
// unreadable: wait() still reads the status at least every 8 ms, fd-only waiters time out.
// Errors: NullHandle (event), Backend (not a valid cl_event, clSetEventCallback failed), Io (no
// eventfd), NotSupported (a build without OpenCL).
// An event that never completes keeps a few bytes of callback state alive (OpenCL has no way to
// unregister a callback); its eventfd is closed with the last copy all the same.
GPUHANDLE_INTEROP_API Result<SyncPoint> importOpenClEvent(const OpenClEventSync &raw,
							  KeepAliveRef owner = {});

} // namespace gpuhandle
