// Async waits: the hybrid spin-then-hand-off callback form and the C++20 awaitable.
#include <gpuhandle/async_wait.h>
#include <gpuhandle/cpu_fence.h>

#include "fd_count.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <exception>
#include <mutex>
#include <optional>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// One outcome, filled by a callback or a coroutine on any thread and awaited with a bound.
struct Outcome {
	std::mutex mutex;
	std::condition_variable changed;
	int calls = 0;
	std::optional<Status> status;
	std::thread::id thread{};

	void set(Status value)
	{
		std::lock_guard<std::mutex> lock(mutex);
		calls++;
		status = std::move(value);
		thread = std::this_thread::get_id();
		changed.notify_all();
	}
	WaitCallback callback()
	{
		return [this](Status value) { set(std::move(value)); };
	}
	bool done()
	{
		std::lock_guard<std::mutex> lock(mutex);
		return calls > 0;
	}
	bool waitDone(std::chrono::seconds bound = 10s)
	{
		std::unique_lock<std::mutex> lock(mutex);
		return changed.wait_for(lock, bound, [&] { return calls > 0; });
	}
};

// The smallest coroutine type that can co_await: starts at once, frees itself when it ends.
struct Task {
	struct promise_type {
		Task get_return_object() { return {}; }
		std::suspend_never initial_suspend() noexcept { return {}; }
		std::suspend_never final_suspend() noexcept { return {}; }
		void return_void() {}
		void unhandled_exception() { std::terminate(); }
	};
};

Task awaitPoint(SyncPoint point, WaitDuration timeout, std::shared_ptr<WaiterThread> thread,
		Outcome *outcome)
{
	Status status = co_await asyncWait(std::move(point), timeout, std::move(thread));
	outcome->set(std::move(status));
}

class FailingWaiter final : public SyncWaiter
{
public:
	BackendKind backend() const noexcept override { return BackendKind::OpenCl; }
	Status wait(WaitDuration) override { return isSignaled().error(); }
	Result<bool> isSignaled() override
	{
		return Error::format(ErrorCode::Backend, "event",
				     "The fake OpenCL event failed with %d.", -5);
	}
};

std::shared_ptr<WaiterThread> makeThread()
{
	auto thread = WaiterThread::create("test-async");
	ck_assert_ok(thread);
	return *thread;
}

std::shared_ptr<CpuFence> makeFence()
{
	auto fence = CpuFence::create();
	ck_assert_ok(fence);
	return *fence;
}

SyncPoint rawCarrier()
{
	auto point = SyncPoint::create(OpenClEventSync{ test::fakeHandle(0x20) }, nullptr);
	ck_assert_ok(point);
	return *point;
}

SyncPoint failingPoint()
{
	auto point = SyncPoint::fromWaiter(SyncKind::Composite, std::make_shared<FailingWaiter>());
	ck_assert_ok(point);
	return *point;
}

} // namespace

START_TEST(test_hybrid_signalled_point_completes_inline)
{
	auto thread = makeThread();
	auto fence = makeFence();
	fence->signal();
	Outcome outcome;
	auto ticket =
		waitAsync(fence->point(), kDefaultWaitTimeout, outcome.callback(), thread.get());
	ck_assert_ok(ticket);
	ck_assert(outcome.done()); // before waitAsync returned
	ck_assert(outcome.thread == std::this_thread::get_id());
	ck_assert_ok(*outcome.status);
	ck_assert(!ticket->cancel());

	Outcome noop;
	ck_assert_ok(waitAsync(SyncPoint::noop(), 0ms, noop.callback(), thread.get()));
	ck_assert(noop.done());
	ck_assert_ok(*noop.status);
	ck_assert_uint_eq(thread->pending(), 0);
}
END_TEST

START_TEST(test_hybrid_hands_off_to_the_thread)
{
	auto thread = makeThread();
	auto fence = makeFence();
	Outcome outcome;
	auto ticket =
		waitAsync(fence->point(), kDefaultWaitTimeout, outcome.callback(), thread.get());
	ck_assert_ok(ticket);
	ck_assert(!outcome.done());
	ck_assert_uint_eq(thread->pending(), 1);
	std::thread signaller([&] { fence->signal(); });
	ck_assert(outcome.waitDone());
	signaller.join();
	ck_assert(outcome.thread == thread->threadId());
	ck_assert_ok(*outcome.status);
}
END_TEST

START_TEST(test_hybrid_uses_the_shared_thread)
{
	auto fence = makeFence();
	Outcome outcome;
	auto ticket = waitAsync(fence->point(), kDefaultWaitTimeout, outcome.callback());
	ck_assert_ok(ticket);
	fence->signal();
	ck_assert(outcome.waitDone());
	ck_assert(outcome.thread == WaiterThread::shared()->threadId());
}
END_TEST

START_TEST(test_hybrid_timeout_cancel_and_errors)
{
	auto thread = makeThread();
	auto fence = makeFence();
	Outcome timedOut;
	auto start = Clock::now();
	ck_assert_ok(waitAsync(fence->point(), 50ms, timedOut.callback(), thread.get()));
	ck_assert(timedOut.waitDone());
	auto elapsed =
		std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
	ck_assert_int_ge(elapsed, 50);
	ck_assert_error(*timedOut.status, ErrorCode::Timeout, "timeout");
	ck_assert(timedOut.status->error().kind() == ErrorKind::Recoverable);

	Outcome cancelled;
	auto ticket = waitAsync(fence->point(), kWaitForever, cancelled.callback(), thread.get());
	ck_assert_ok(ticket);
	ck_assert(ticket->cancel());
	ck_assert(!ticket->cancel());
	ck_assert(cancelled.waitDone());
	ck_assert_error(*cancelled.status, ErrorCode::Cancelled, "ticket");

	// A failing driver query is delivered inline, like an already signalled point.
	Outcome failed;
	ck_assert_ok(
		waitAsync(failingPoint(), kDefaultWaitTimeout, failed.callback(), thread.get()));
	ck_assert(failed.done());
	ck_assert_error(*failed.status, ErrorCode::Backend, "event");

	Outcome refused;
	ck_assert_error(waitAsync(rawCarrier(), 1s, refused.callback(), thread.get()),
			ErrorCode::NotSupported, "point");
	ck_assert_error(waitAsync(fence->point(), 1s, WaitCallback(), thread.get()),
			ErrorCode::NullHandle, "done");
	thread.reset();
	ck_assert(!refused.done());
}
END_TEST

START_TEST(test_awaitable_resumes_with_the_status)
{
	auto thread = makeThread();
	auto fence = makeFence();
	Outcome outcome;
	awaitPoint(fence->point(), kDefaultWaitTimeout, thread, &outcome);
	ck_assert(!outcome.done()); // suspended
	fence->signal();
	ck_assert(outcome.waitDone());
	ck_assert_ok(*outcome.status);
	ck_assert(outcome.thread == thread->threadId());
}
END_TEST

START_TEST(test_awaitable_ready_point_does_not_suspend)
{
	auto fence = makeFence();
	fence->signal();
	Outcome signalled;
	awaitPoint(fence->point(), kDefaultWaitTimeout, nullptr, &signalled);
	ck_assert(signalled.done());
	ck_assert(signalled.thread == std::this_thread::get_id());
	ck_assert_ok(*signalled.status);

	Outcome carrier;
	awaitPoint(rawCarrier(), kDefaultWaitTimeout, nullptr, &carrier);
	ck_assert(carrier.done());
	ck_assert_error(*carrier.status, ErrorCode::NotSupported, "point");

	Outcome failed;
	awaitPoint(failingPoint(), kDefaultWaitTimeout, nullptr, &failed);
	ck_assert(failed.done());
	ck_assert_error(*failed.status, ErrorCode::Backend, "event");
}
END_TEST

START_TEST(test_awaitable_timeout)
{
	auto thread = makeThread();
	auto fence = makeFence();
	Outcome timedOut;
	auto start = Clock::now();
	awaitPoint(fence->point(), 30ms, thread, &timedOut);
	ck_assert(timedOut.waitDone());
	auto elapsed =
		std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
	ck_assert_int_ge(elapsed, 30);
	ck_assert_error(*timedOut.status, ErrorCode::Timeout, "timeout");
	ck_assert(timedOut.thread == thread->threadId());
}
END_TEST

START_TEST(test_awaitable_cancelled_by_thread_destruction)
{
	auto fence = makeFence();
	Outcome cancelled;
	auto thread = makeThread();
	// A suspended awaitable keeps the thread it was given alive; a non-owning alias lets this
	// reset() be the real destruction.
	std::shared_ptr<WaiterThread> alias(std::shared_ptr<WaiterThread>(), thread.get());
	awaitPoint(fence->point(), kWaitForever, alias, &cancelled);
	ck_assert(!cancelled.done());
	thread.reset(); // resolves the wait with Cancelled and resumes the coroutine, then joins
	ck_assert(cancelled.done());
	ck_assert_error(*cancelled.status, ErrorCode::Cancelled, "thread");
}
END_TEST

START_TEST(test_async_no_fd_leaked)
{
	int before = test::openFdCount();
	{
		auto thread = makeThread();
		auto fence = makeFence();
		UniqueFd event(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
		ck_assert(event.isValid());
		int fd = event.get();
		auto fdPoint = SyncPoint::fromFenceFd(SharedFd(std::move(event)));
		ck_assert_ok(fdPoint);
		Outcome first;
		Outcome second;
		ck_assert_ok(
			waitAsync(*fdPoint, kDefaultWaitTimeout, first.callback(), thread.get()));
		awaitPoint(fence->point(), kDefaultWaitTimeout, thread, &second);
		uint64_t one = 1;
		ck_assert_int_eq(write(fd, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
		fence->signal();
		ck_assert(first.waitDone());
		ck_assert(second.waitDone());
	}
	// The coroutine frame, destroyed on the waiter thread just after it set `second`, may hold
	// the thread's last reference: then the thread ends (and closes its fds) on its own.
	auto bound = Clock::now() + 10s;
	while (test::openFdCount() != before && Clock::now() < bound)
		std::this_thread::sleep_for(1ms);
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

static Suite *asyncSuite()
{
	Suite *suite = suite_create("sync_async");
	TCase *core = tcase_create("core");
	tcase_set_timeout(core, 60);
	tcase_add_test(core, test_hybrid_signalled_point_completes_inline);
	tcase_add_test(core, test_hybrid_hands_off_to_the_thread);
	tcase_add_test(core, test_hybrid_uses_the_shared_thread);
	tcase_add_test(core, test_hybrid_timeout_cancel_and_errors);
	tcase_add_test(core, test_awaitable_resumes_with_the_status);
	tcase_add_test(core, test_awaitable_ready_point_does_not_suspend);
	tcase_add_test(core, test_awaitable_timeout);
	tcase_add_test(core, test_awaitable_cancelled_by_thread_destruction);
	tcase_add_test(core, test_async_no_fd_leaked);
	suite_add_tcase(suite, core);
	return suite;
}

int main()
{
	return gpuhandle::test::runSuite(asyncSuite());
}
