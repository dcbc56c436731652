// C API: asynchronous waits on the shared waiter thread, with C callbacks and cancel tickets.
#include <gpuhandle/async_wait.h>
#include <gpuhandle/gpuhandle_sync.h>

#include "c_sync_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

namespace {

// Hands the outcome to the C callback. The error object is borrowed for the call only; when it
// cannot be built (memory ran out) the callback still runs, with the status and a NULL error.
void deliver(gpuhandle_wait_callback callback, void *userData, Status status) noexcept
{
	if (status) {
		callback(GPUHANDLE_OK, nullptr, userData);
		return;
	}
	gpuhandle_status code = statusOf(status.error().code());
	gpuhandle_error *error = nullptr;
	try {
		error = new gpuhandle_error(std::move(status).error());
	} catch (...) {
		error = nullptr;
	}
	callback(code, error, userData);
	unref(error);
}

} // namespace

extern "C" {

gpuhandle_status gpuhandle_sync_point_wait_async(const gpuhandle_sync_point *point,
						 int64_t timeout_ns,
						 gpuhandle_wait_callback callback, void *user_data,
						 gpuhandle_wait_ticket **out,
						 gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!point)
			return failNull(error, function, "point");
		if (!callback)
			return failNull(error, function, "callback");
		Result<WaitDuration> timeout = timeoutOf(timeout_ns, function);
		if (!timeout)
			return fail(error, std::move(timeout).error());
		// Everything that may throw is done before the wait starts: once it has, this call
		// must succeed, since the callback will run.
		std::unique_ptr<gpuhandle_wait_ticket> ticket;
		if (out)
			ticket = std::make_unique<gpuhandle_wait_ticket>();
		WaitCallback done = [callback, user_data](Status status) {
			deliver(callback, user_data, std::move(status));
		};
		Result<WaitTicket> started = waitAsync(point->value, *timeout, std::move(done));
		if (!started)
			return fail(error, std::move(started).error());
		if (ticket) {
			ticket->value = std::move(*started);
			*out = ticket.release();
		}
		return GPUHANDLE_OK;
	});
}

bool gpuhandle_wait_ticket_cancel(const gpuhandle_wait_ticket *ticket) noexcept
{
	if (!ticket)
		return false;
	try {
		return ticket->value.cancel();
	} catch (...) {
		return false; // cancel() is not noexcept: nothing may cross into C
	}
}

gpuhandle_wait_ticket *gpuhandle_wait_ticket_ref(gpuhandle_wait_ticket *ticket) noexcept
{
	return ref(ticket);
}

void gpuhandle_wait_ticket_unref(gpuhandle_wait_ticket *ticket) noexcept
{
	unref(ticket);
}

} // extern "C"
