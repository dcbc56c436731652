// Private to the C sync API: the structs behind its opaque handles and its shared helpers.
#pragma once

#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/gpuhandle_sync.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/sync_point.h>
#include <gpuhandle/waiter_thread.h>

#include "c_internal.h"

struct gpuhandle_sync_point {
	explicit gpuhandle_sync_point(gpuhandle::SyncPoint p) : value(std::move(p)) {}
	std::atomic<int> refs{ 1 };
	const gpuhandle::SyncPoint value;
};

struct gpuhandle_cpu_fence {
	explicit gpuhandle_cpu_fence(std::shared_ptr<gpuhandle::CpuFence> f) : value(std::move(f))
	{
	}
	std::atomic<int> refs{ 1 };
	const std::shared_ptr<gpuhandle::CpuFence> value; // never null
};

struct gpuhandle_release_gate {
	explicit gpuhandle_release_gate(gpuhandle::ReleaseGate g) : value(std::move(g)) {}
	std::atomic<int> refs{ 1 };
	const gpuhandle::ReleaseGate value; // never none(): a frame without a gate gives NULL
};

struct gpuhandle_wait_ticket {
	std::atomic<int> refs{ 1 };
	// Set once, before the ticket is handed out: the object is allocated before the wait
	// starts, so that running out of memory cannot fail a call whose callback will still run.
	gpuhandle::WaitTicket value;
};

namespace gpuhandle::capi {

// A new C sync point over `point` (throws std::bad_alloc).
inline gpuhandle_sync_point *newSyncPoint(SyncPoint point)
{
	return new gpuhandle_sync_point(std::move(point));
}

// A C timeout as a WaitDuration: GPUHANDLE_WAIT_FOREVER is kWaitForever; a negative one is
// refused, because C callers often mean -1 as "forever" and would otherwise get a zero wait.
Result<WaitDuration> timeoutOf(int64_t timeoutNs, const char *function);

} // namespace gpuhandle::capi
