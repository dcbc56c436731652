// Hybrid asynchronous waits (a bounded spin, then the waiter thread) and the C++20 awaitable.
#include <gpuhandle/async_wait.h>

#include <thread>

namespace gpuhandle {

namespace {

Error noThreadError()
{
	return Error::format(
		ErrorCode::InvalidState, "thread",
		"The shared waiter thread could not be started, so no asynchronous wait is possible.");
}

Error rawCarrierError(const SyncPoint &point)
{
	return Error::format(
		ErrorCode::NotSupported, "point",
		"The %s sync point is a raw carrier; import it with a backend before waiting on it.",
		syncKindName(point.kind()));
}

} // namespace

Result<WaitTicket> waitAsync(const SyncPoint &point, WaitDuration timeout, WaitCallback done,
			     WaiterThread *thread)
{
	if (!done)
		return Error::format(ErrorCode::NullHandle, "done",
				     "waitAsync: the completion callback is empty.");
	if (point.isRawCarrier())
		return rawCarrierError(point);
	// Most fences a consumer sees are already done: finishing here saves two context switches.
	for (int spin = 0; spin < kHybridSpins; spin++) {
		Result<bool> signaled = point.isSignaled();
		if (!signaled.ok()) {
			done(signaled.error());
			return WaitTicket{};
		}
		if (*signaled) {
			done(Status{});
			return WaitTicket{};
		}
		std::this_thread::yield();
	}
	if (thread)
		return thread->enqueue(point, timeout, std::move(done));
	auto shared = WaiterThread::shared();
	if (!shared)
		return noThreadError();
	return shared->enqueue(point, timeout, std::move(done));
}

SyncAwaitable::SyncAwaitable(SyncPoint point, WaitDuration timeout,
			     std::shared_ptr<WaiterThread> thread)
	: point_(std::move(point)), timeout_(timeout), thread_(std::move(thread)),
	  result_(std::make_shared<Status>())
{
}

bool SyncAwaitable::await_ready()
{
	if (point_.isRawCarrier()) {
		*result_ = rawCarrierError(point_);
		return true;
	}
	Result<bool> signaled = point_.isSignaled();
	if (!signaled.ok()) {
		*result_ = signaled.error();
		return true;
	}
	return *signaled;
}

bool SyncAwaitable::await_suspend(std::coroutine_handle<> handle)
{
	std::shared_ptr<WaiterThread> thread = thread_ ? thread_ : WaiterThread::shared();
	if (!thread) {
		*result_ = noThreadError();
		return false;
	}
	// Once enqueued, the callback may resume (and destroy) the coroutine at any moment, with
	// this awaitable in its frame: only the shared result and the handle are touched there.
	auto result = result_;
	auto ticket = thread->enqueue(point_, timeout_, [result, handle](Status status) {
		*result = std::move(status);
		handle.resume();
	});
	if (ticket.ok())
		return true;
	*result_ = std::move(ticket).error();
	return false;
}

Status SyncAwaitable::await_resume()
{
	return std::move(*result_);
}

SyncAwaitable asyncWait(SyncPoint point, WaitDuration timeout, std::shared_ptr<WaiterThread> thread)
{
	return SyncAwaitable(std::move(point), timeout, std::move(thread));
}

} // namespace gpuhandle
