// WaiterThread: epoll and sliced waits, timeouts, driver errors, cancel, shutdown, 10,000 waits.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/waiter_thread.h>

#include "alloc_counter.h"
#include "fd_count.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <pthread.h>
#include <string>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// Records every callback; waits for a count with a generous bound (never a timing assertion).
struct Recorder {
	std::mutex mutex;
	std::condition_variable changed;
	int calls = 0;
	std::vector<Status> statuses;
	std::vector<std::thread::id> threads;
	Clock::time_point lastAt{};

	WaitCallback callback()
	{
		return [this](Status status) {
			std::lock_guard<std::mutex> lock(mutex);
			calls++;
			statuses.push_back(std::move(status));
			threads.push_back(std::this_thread::get_id());
			lastAt = Clock::now();
			changed.notify_all();
		};
	}
	bool waitFor(int count, std::chrono::seconds bound = 10s)
	{
		std::unique_lock<std::mutex> lock(mutex);
		return changed.wait_for(lock, bound, [&] { return calls >= count; });
	}
	int count()
	{
		std::lock_guard<std::mutex> lock(mutex);
		return calls;
	}
};

// A fence without a pollable fd: the thread must check it every slice.
class SlicedWaiter final : public SyncWaiter
{
public:
	std::atomic<bool> done{ false };
	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration) override
	{
		return Error(ErrorCode::NotSupported, "wait", "Not used.");
	}
	Result<bool> isSignaled() override { return done.load(); }
};

// A driver whose status query fails.
class FailingWaiter final : public SyncWaiter
{
public:
	BackendKind backend() const noexcept override { return BackendKind::Vulkan; }
	Status wait(WaitDuration) override { return isSignaled().error(); }
	Result<bool> isSignaled() override
	{
		return Error::format(ErrorCode::DeviceLost, "device",
				     "The fake device was lost (code %d).", -4);
	}
};

// Its fd polls readable before isSignaled() says true: the thread must not spin on it.
// Borrows `fd` (whoever made it keeps it open past the thread's last use of it).
class EarlyFdWaiter final : public SyncWaiter
{
public:
	explicit EarlyFdWaiter(int fd) : fd_(fd) {}
	std::atomic<bool> done{ false };
	std::atomic<int> checks{ 0 };
	BackendKind backend() const noexcept override { return BackendKind::Fd; }
	Status wait(WaitDuration) override
	{
		return Error(ErrorCode::NotSupported, "wait", "Not used.");
	}
	Result<bool> isSignaled() override
	{
		checks++;
		return done.load();
	}
	int pollFd() const noexcept override { return fd_; }

private:
	int fd_;
};

std::shared_ptr<WaiterThread> makeThread(const char *name = "test-wait")
{
	auto thread = WaiterThread::create(name);
	ck_assert_ok(thread);
	return *thread;
}

std::shared_ptr<CpuFence> makeFence()
{
	auto fence = CpuFence::create();
	ck_assert_ok(fence);
	return *fence;
}

// An eventfd fence point; `fd` receives the descriptor to signal it with signalFd().
SyncPoint makeFdPoint(int *fd)
{
	UniqueFd event(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	ck_assert(event.isValid());
	*fd = event.get();
	auto point = SyncPoint::fromFenceFd(SharedFd(std::move(event)));
	ck_assert_ok(point);
	return *point;
}

void signalFd(int fd)
{
	uint64_t one = 1;
	ck_assert_int_eq(write(fd, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
}

SyncPoint pointOver(std::shared_ptr<SyncWaiter> waiter)
{
	auto point = SyncPoint::fromWaiter(SyncKind::Composite, std::move(waiter));
	ck_assert_ok(point);
	return *point;
}

int threadCount()
{
	std::ifstream status("/proc/self/status");
	std::string line;
	while (std::getline(status, line))
		if (line.rfind("Threads:", 0) == 0)
			return std::stoi(line.substr(8));
	return -1;
}

long long msSince(Clock::time_point start)
{
	return static_cast<long long>(
		std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)
			.count());
}

} // namespace

START_TEST(test_signal_from_other_thread_resolves_once)
{
	Recorder recorder;
	auto thread = makeThread();
	auto fence = makeFence();
	int fd = -1;
	SyncPoint fdPoint = makeFdPoint(&fd);
	auto sliced = std::make_shared<SlicedWaiter>();
	ck_assert_ok(thread->enqueue(fence->point(), kDefaultWaitTimeout, recorder.callback()));
	ck_assert_ok(thread->enqueue(fdPoint, kWaitForever, recorder.callback()));
	ck_assert_ok(thread->enqueue(pointOver(sliced), kDefaultWaitTimeout, recorder.callback()));
	ck_assert_uint_eq(thread->pending(), 3);

	std::thread signaller([&] {
		std::this_thread::sleep_for(20ms);
		fence->signal();
		signalFd(fd);
		sliced->done = true;
	});
	ck_assert(recorder.waitFor(3));
	signaller.join();
	ck_assert_uint_eq(thread->pending(), 0);
	std::thread::id waiterId = thread->threadId();
	thread.reset(); // joined: no callback can follow
	ck_assert_int_eq(recorder.count(), 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_ok(recorder.statuses[i]);
		ck_assert(recorder.threads[i] == waiterId);
	}
}
END_TEST

START_TEST(test_timeout_is_bounded_and_recoverable)
{
	Recorder recorder;
	auto thread = makeThread();
	auto fence = makeFence();
	int fd = -1;
	SyncPoint fdPoint = makeFdPoint(&fd);
	auto start = Clock::now();
	ck_assert_ok(thread->enqueue(fence->point(), 50ms, recorder.callback()));
	ck_assert_ok(thread->enqueue(fdPoint, 50ms, recorder.callback()));
	ck_assert_ok(thread->enqueue(pointOver(std::make_shared<SlicedWaiter>()), 50ms,
				     recorder.callback()));
	ck_assert(recorder.waitFor(3));
	long long elapsed =
		std::chrono::duration_cast<std::chrono::milliseconds>(recorder.lastAt - start)
			.count();
	std::printf("three 50 ms waits timed out after %lld ms\n", elapsed);
	// Bounded: all three ended, with Timeout, within waitFor()'s 10 s.
	ck_assert_int_ge(elapsed, 50);
	for (const Status &status : recorder.statuses) {
		ck_assert_error(status, ErrorCode::Timeout, "timeout");
		ck_assert(status.error().kind() == ErrorKind::Recoverable);
	}
}
END_TEST

START_TEST(test_failing_waiter_passes_its_error)
{
	Recorder recorder;
	auto thread = makeThread();
	ck_assert_ok(thread->enqueue(pointOver(std::make_shared<FailingWaiter>()), kWaitForever,
				     recorder.callback()));
	ck_assert(recorder.waitFor(1));
	ck_assert_error(recorder.statuses[0], ErrorCode::DeviceLost, "device");
	ck_assert_string_eq(recorder.statuses[0].error().message(),
			    "The fake device was lost (code -4).");
	ck_assert_uint_eq(thread->pending(), 0);
}
END_TEST

START_TEST(test_cancel_resolves_once)
{
	Recorder recorder;
	auto thread = makeThread();
	auto fence = makeFence();
	auto ticket = thread->enqueue(fence->point(), kWaitForever, recorder.callback());
	ck_assert_ok(ticket);
	ck_assert(ticket->cancel());
	ck_assert(!ticket->cancel());
	ck_assert_uint_eq(thread->pending(), 0);
	ck_assert(recorder.waitFor(1));
	fence->signal(); // too late: the wait is gone
	ck_assert(!ticket->cancel());
	thread.reset();
	ck_assert_int_eq(recorder.count(), 1);
	ck_assert_error(recorder.statuses[0], ErrorCode::Cancelled, "ticket");
	ck_assert(recorder.statuses[0].error().kind() == ErrorKind::Cancelled);
	ck_assert(!WaitTicket().cancel());

	// A wait already resolved cannot be cancelled.
	Recorder resolved;
	auto other = makeThread();
	auto signalled = makeFence();
	signalled->signal();
	auto late = other->enqueue(signalled->point(), 0ms, resolved.callback());
	ck_assert_ok(late);
	ck_assert(resolved.waitFor(1));
	ck_assert(!late->cancel());
	ck_assert_ok(resolved.statuses[0]); // signalled wins over a zero timeout
}
END_TEST

START_TEST(test_destroy_cancels_every_pending_wait)
{
	Recorder recorder;
	auto thread = makeThread();
	auto fence = makeFence();
	int fd = -1;
	SyncPoint fdPoint = makeFdPoint(&fd);
	std::vector<WaitTicket> tickets;
	for (int i = 0; i < 2; i++) { // two waits share each fd
		tickets.push_back(
			*thread->enqueue(fence->point(), kWaitForever, recorder.callback()));
		tickets.push_back(
			*thread->enqueue(fdPoint, kDefaultWaitTimeout, recorder.callback()));
		tickets.push_back(*thread->enqueue(pointOver(std::make_shared<SlicedWaiter>()),
						   kWaitForever, recorder.callback()));
	}
	ck_assert_uint_eq(thread->pending(), 6);
	thread.reset();
	ck_assert_int_eq(recorder.count(), 6);
	for (const Status &status : recorder.statuses)
		ck_assert_error(status, ErrorCode::Cancelled, "thread");
	for (const WaitTicket &ticket : tickets)
		ck_assert(!ticket.cancel());
}
END_TEST

START_TEST(test_ten_thousand_waits_cost_one_thread)
{
	constexpr int kWaits = 10000;
	// Half CpuFences, half eventfds, each waited several times when fds are scarce.
	rlimit limit{};
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &limit), 0);
	limit.rlim_cur = limit.rlim_max;
	setrlimit(RLIMIT_NOFILE, &limit);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &limit), 0);
	int fences = static_cast<int>(
		std::min<rlim_t>(kWaits, limit.rlim_cur > 400 ? limit.rlim_cur - 200 : 200) / 2);

	std::vector<std::shared_ptr<CpuFence>> cpuFences;
	std::vector<SyncPoint> fdPoints;
	std::vector<int> fds;
	for (int i = 0; i < fences; i++) {
		cpuFences.push_back(makeFence());
		int fd = -1;
		fdPoints.push_back(makeFdPoint(&fd));
		fds.push_back(fd);
	}
	std::atomic<int> ok{ 0 };
	std::atomic<int> calls{ 0 };
	// ThreadSanitizer starts its helper thread at the first thread creation after fork().
	std::thread([] {}).join();
	int threadsBefore = threadCount();
	auto start = Clock::now();
	auto thread = makeThread();
	for (int i = 0; i < kWaits; i++) {
		size_t index = static_cast<size_t>((i / 2) % fences);
		SyncPoint point = i % 2 ? fdPoints[index] : cpuFences[index]->point();
		auto ticket = thread->enqueue(point, 60s, [&](Status status) {
			ok += status.ok() ? 1 : 0;
			calls++;
		});
		ck_assert_ok(ticket);
	}
	long long enqueueMs = msSince(start);
	ck_assert_int_le(threadCount(), threadsBefore + 1);
	ck_assert_uint_eq(thread->pending(), kWaits);
	for (int i = 0; i < fences; i++) {
		cpuFences[static_cast<size_t>(i)]->signal();
		signalFd(fds[static_cast<size_t>(i)]);
	}
	auto bound = Clock::now() + 60s;
	while (calls.load() < kWaits && Clock::now() < bound)
		std::this_thread::sleep_for(1ms);
	long long totalMs = msSince(start);
	std::printf(
		"%d waits over %d fds: enqueued in %lld ms, all resolved in %lld ms, threads %d -> %d\n",
		kWaits, 2 * fences, enqueueMs, totalMs, threadsBefore, threadCount());
	ck_assert_int_eq(calls.load(), kWaits);
	ck_assert_int_eq(ok.load(), kWaits);
	ck_assert_uint_eq(thread->pending(), 0);
}
END_TEST

START_TEST(test_callbacks_enqueue_and_cancel)
{
	Recorder recorder;
	auto thread = makeThread();
	auto first = makeFence();
	auto second = makeFence();
	auto never = makeFence();
	auto blocked = thread->enqueue(never->point(), kWaitForever, recorder.callback());
	ck_assert_ok(blocked);
	// Check's assertions belong on the test's thread: the callback only records.
	std::atomic<bool> firstOk{ false };
	std::atomic<bool> enqueued{ false };
	std::atomic<bool> cancelled{ false };
	ck_assert_ok(thread->enqueue(first->point(), kDefaultWaitTimeout, [&](Status status) {
		firstOk = status.ok();
		enqueued =
			thread->enqueue(second->point(), kDefaultWaitTimeout, recorder.callback())
				.ok();
		cancelled = blocked->cancel();
	}));
	first->signal();
	ck_assert(recorder.waitFor(1)); // the cancelled one
	second->signal();
	ck_assert(recorder.waitFor(2));
	ck_assert(firstOk.load());
	ck_assert(enqueued.load());
	ck_assert(cancelled.load());
	ck_assert_error(recorder.statuses[0], ErrorCode::Cancelled, "ticket");
	ck_assert_ok(recorder.statuses[1]);
}
END_TEST

// A callback that re-arms its fence and waits on it again (a pool's gate): the same fd is
// registered again in the round that resolved it, and the second signal still wakes the thread.
START_TEST(test_callback_waits_again_on_the_same_fd)
{
	Recorder recorder;
	auto thread = makeThread();
	auto gate = makeFence();
	std::atomic<bool> again{ false };
	ck_assert_ok(thread->enqueue(gate->point(), kDefaultWaitTimeout, [&](Status status) {
		gate->reset();
		again = status.ok() &&
			thread->enqueue(gate->point(), kDefaultWaitTimeout, recorder.callback())
				.ok();
	}));
	gate->signal();
	for (int i = 0; i < 1000 && !again.load(); i++)
		std::this_thread::sleep_for(1ms);
	ck_assert(again.load());
	gate->signal();
	ck_assert(recorder.waitFor(1));
	ck_assert_ok(recorder.statuses[0]);
}
END_TEST

// A steady stream of waits reuses the thread's list, deadline and fd nodes: each enqueue then
// allocates its entry only (it allocated three nodes more before they were kept).
START_TEST(test_steady_waits_allocate_nothing)
{
	if (std::getenv("GPUHANDLE_UNDER_VALGRIND")) {
		std::printf("under valgrind, allocations are not counted\n");
		return;
	}
	auto thread = makeThread();
	auto fence = makeFence();
	const SyncPoint point = fence->point();
	std::atomic<int> done{ 0 };
	uint64_t allocations = 0;
	constexpr int kWarm = 20, kRounds = 200;
	for (int i = 0; i < kWarm + kRounds; i++) {
		fence->reset();
		test::AllocationScope scope;
		Result<WaitTicket> ticket = thread->enqueue(point, kDefaultWaitTimeout,
							    [&done](Status) { done.fetch_add(1); });
		if (i >= kWarm)
			allocations += scope.count();
		ck_assert_ok(ticket);
		fence->signal();
		for (int spin = 0; spin < 10000 && done.load() <= i; spin++)
			std::this_thread::sleep_for(100us);
		ck_assert_int_eq(done.load(), i + 1);
	}
	// The list, deadline and fd nodes are the thread's own (reused); the entries come back
	// through the block cache's depot when another thread drops them. Before either: four
	// allocations per wait.
	ck_assert_uint_le(allocations, kRounds / 50);
}
END_TEST

START_TEST(test_thread_ids_and_shared_instance)
{
	auto a = makeThread();
	auto b = makeThread();
	ck_assert(a->threadId() != b->threadId());
	ck_assert(a->threadId() != std::this_thread::get_id());
	std::thread::id id = a->threadId();
	Recorder recorder;
	ck_assert_ok(a->enqueue(SyncPoint::noop(), 0ms, recorder.callback()));
	ck_assert(recorder.waitFor(1));
	ck_assert(a->threadId() == id);
	ck_assert(recorder.threads[0] == id); // a Noop point still completes on the thread
	ck_assert_ok(recorder.statuses[0]);

	auto shared = WaiterThread::shared();
	ck_assert_ptr_nonnull(shared.get());
	ck_assert(shared == WaiterThread::shared());
	std::mutex mutex;
	std::string name;
	Recorder named;
	ck_assert_ok(shared->enqueue(SyncPoint::noop(), 0ms, [&](Status) {
		char buffer[16] = {};
		pthread_getname_np(pthread_self(), buffer, sizeof(buffer));
		std::lock_guard<std::mutex> lock(mutex);
		name = buffer;
	}));
	ck_assert_ok(shared->enqueue(SyncPoint::noop(), 0ms, named.callback()));
	ck_assert(named.waitFor(1));
	std::lock_guard<std::mutex> lock(mutex);
	ck_assert_string_eq(name, "gpuhandle-wait");
}
END_TEST

START_TEST(test_refused_waits)
{
	auto thread = makeThread();
	auto carrier = SyncPoint::create(OpenClEventSync{ test::fakeHandle(0x10) }, nullptr);
	ck_assert_ok(carrier);
	bool called = false;
	ck_assert_error(thread->enqueue(*carrier, 1s, [&](Status) { called = true; }),
			ErrorCode::NotSupported, "point");
	ck_assert_error(thread->enqueue(SyncPoint::noop(), 1s, WaitCallback()),
			ErrorCode::NullHandle, "done");
	thread.reset();
	ck_assert(!called);
}
END_TEST

START_TEST(test_readable_but_unsignalled_fd_does_not_spin)
{
	Recorder recorder;
	auto thread = makeThread();
	int fd = -1;
	SyncPoint fdPoint = makeFdPoint(&fd); // keeps the eventfd open
	signalFd(fd);
	auto waiter = std::make_shared<EarlyFdWaiter>(fd);
	auto start = Clock::now(); // before the first check: every check falls within `elapsed`
	ck_assert_ok(thread->enqueue(pointOver(waiter), kDefaultWaitTimeout, recorder.callback()));
	std::this_thread::sleep_for(200ms);
	int checks = waiter->checks.load();
	long long elapsed = msSince(start);
	std::printf("a readable, unsignalled fd was checked %d times in %lld ms\n", checks,
		    elapsed);
	// One check per 2 ms slice; a busy loop would make hundreds per millisecond.
	ck_assert_int_le(checks, 2 * elapsed + 100);
	ck_assert_int_eq(recorder.count(), 0);
	waiter->done = true;
	ck_assert(recorder.waitFor(1));
	ck_assert_ok(recorder.statuses[0]);
	// The waiter borrows fdPoint's fd, and the thread takes it out of epoll after the round's
	// callbacks: joined first, so that the fd is not closed under it (a real waiter holds its
	// own fd open for as long as the wait does; this one cannot).
	thread.reset();
}
END_TEST

START_TEST(test_last_reference_dropped_in_callback)
{
	int before = test::openFdCount();
	{
		auto fence = makeFence();
		auto thread = makeThread();
		std::atomic<bool> ran{ false };
		auto holder = std::make_shared<std::shared_ptr<WaiterThread>>(thread);
		ck_assert_ok(thread->enqueue(fence->point(), kDefaultWaitTimeout,
					     [holder, &ran](Status) {
						     // The last reference: ~WaiterThread runs here.
						     holder->reset();
						     ran = true;
					     }));
		thread.reset(); // only the pending wait's callback holds it now
		fence->signal();
		auto bound = Clock::now() + 10s;
		while (!ran.load() && Clock::now() < bound)
			std::this_thread::sleep_for(1ms);
		ck_assert(ran.load());
	}
	// The detached thread closes its epoll fd and eventfd when it ends.
	auto bound = Clock::now() + 10s;
	while (test::openFdCount() != before && Clock::now() < bound)
		std::this_thread::sleep_for(1ms);
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

START_TEST(test_no_fd_leaked)
{
	int before = test::openFdCount();
	{
		Recorder recorder;
		auto thread = makeThread();
		auto fence = makeFence();
		int fd = -1;
		SyncPoint fdPoint = makeFdPoint(&fd);
		ck_assert_ok(
			thread->enqueue(fence->point(), kDefaultWaitTimeout, recorder.callback()));
		ck_assert_ok(thread->enqueue(fdPoint, 10ms, recorder.callback()));
		ck_assert_ok(thread->enqueue(fdPoint, kWaitForever, recorder.callback()));
		fence->signal();
		ck_assert(recorder.waitFor(2));
	} // the last wait is cancelled by the destructor
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

static Suite *waiterThreadSuite()
{
	Suite *suite = suite_create("waiter_thread");
	TCase *core = tcase_create("core");
	tcase_set_timeout(core, 90);
	tcase_add_test(core, test_signal_from_other_thread_resolves_once);
	tcase_add_test(core, test_timeout_is_bounded_and_recoverable);
	tcase_add_test(core, test_failing_waiter_passes_its_error);
	tcase_add_test(core, test_cancel_resolves_once);
	tcase_add_test(core, test_destroy_cancels_every_pending_wait);
	tcase_add_test(core, test_ten_thousand_waits_cost_one_thread);
	tcase_add_test(core, test_callbacks_enqueue_and_cancel);
	tcase_add_test(core, test_callback_waits_again_on_the_same_fd);
	tcase_add_test(core, test_steady_waits_allocate_nothing);
	tcase_add_test(core, test_thread_ids_and_shared_instance);
	tcase_add_test(core, test_refused_waits);
	tcase_add_test(core, test_readable_but_unsignalled_fd_does_not_spin);
	tcase_add_test(core, test_last_reference_dropped_in_callback);
	tcase_add_test(core, test_no_fd_leaked);
	suite_add_tcase(suite, core);
	return suite;
}

int main()
{
	return gpuhandle::test::runSuite(waiterThreadSuite());
}
