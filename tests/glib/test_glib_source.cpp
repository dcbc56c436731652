// The GLib sync source in a GMainLoop: signals, timeouts, fd fences, errors, and early destroy.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/glib_sync_source.h>
#include <gpuhandle/sync_point.h>

#include "fd_count.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// What the source's callback saw.
struct Fired {
	int calls = 0;
	int status = -1;
	std::string message;
	std::thread::id thread;
	GMainLoop *loop = nullptr;
};

gboolean onFired(int status, const char *message, gpointer data)
{
	auto *fired = static_cast<Fired *>(data);
	fired->calls++;
	fired->status = status;
	fired->message = message ? message : "(null)";
	fired->thread = std::this_thread::get_id();
	if (fired->loop)
		g_main_loop_quit(fired->loop);
	return G_SOURCE_CONTINUE; // ignored: the source fires once whatever this returns
}

void setCallback(GSource *source, Fired &fired)
{
	g_source_set_callback(source,
			      reinterpret_cast<GSourceFunc>(reinterpret_cast<void (*)()>(onFired)),
			      &fired, nullptr);
}

gboolean quitGuard(gpointer data)
{
	auto *timedOut = static_cast<bool *>(data);
	*timedOut = true;
	return G_SOURCE_REMOVE;
}

// Runs `source` on a private context until it fires (or a 5 s guard gives up), then checks that
// it fired exactly once and was removed. Returns the elapsed time.
Clock::duration runOnce(GSource *source, Fired &fired)
{
	GMainContext *context = g_main_context_new();
	GMainLoop *loop = g_main_loop_new(context, FALSE);
	fired.loop = loop;
	setCallback(source, fired);
	g_source_attach(source, context);

	bool timedOut = false;
	GSource *guard = g_timeout_source_new(5000);
	g_source_set_callback(guard, quitGuard, &timedOut, nullptr);
	g_source_attach(guard, context);

	auto start = Clock::now();
	while (fired.calls == 0 && !timedOut)
		g_main_context_iteration(context, TRUE);
	auto elapsed = Clock::now() - start;
	ck_assert_msg(!timedOut, "the sync source did not fire within 5 s");

	// More iterations must not dispatch it again: it removed itself.
	for (int i = 0; i < 5; i++)
		g_main_context_iteration(context, FALSE);
	ck_assert_int_eq(fired.calls, 1);
	ck_assert(g_source_is_destroyed(source));

	g_source_destroy(guard);
	g_source_unref(guard);
	g_source_unref(source);
	g_main_loop_unref(loop);
	g_main_context_unref(context);
	fired.loop = nullptr;
	return elapsed;
}

long long toMs(Clock::duration d)
{
	return static_cast<long long>(
		std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

// A waiter with no pollable fd: the source must fall back to re-checking it.
struct FlagWaiter final : SyncWaiter {
	std::atomic<bool> done{ false };
	std::atomic<bool> fail{ false };
	std::atomic<bool> *destroyed = nullptr;
	~FlagWaiter() override
	{
		if (destroyed)
			*destroyed = true;
	}
	BackendKind backend() const noexcept override { return BackendKind::OpenCl; }
	Status wait(WaitDuration) override
	{
		return Error(ErrorCode::NotSupported, "", "Not used by the source.");
	}
	Result<bool> isSignaled() override
	{
		if (fail)
			return Error(ErrorCode::Backend, "event",
				     "clGetEventInfo failed: CL_OUT_OF_RESOURCES.");
		return done.load();
	}
};

int g_handle;

SyncPoint pointOver(SyncWaiterRef waiter, KeepAliveRef owner = {})
{
	return SyncPoint::create(OpenClEventSync{ &g_handle }, std::move(waiter), std::move(owner))
		.value();
}

void setFlag(void *data)
{
	*static_cast<std::atomic<bool> *>(data) = true;
}

} // namespace

START_TEST(cpu_fence_signalled_from_thread)
{
	auto fence = CpuFence::create().value();
	Fired fired;
	GSource *source = makeSyncSource(fence->point(), kDefaultWaitTimeout);
	std::thread signaller([fence] {
		std::this_thread::sleep_for(20ms);
		fence->signal();
	});
	runOnce(source, fired); // woken by the signal, within the 5 s guard
	signaller.join();
	ck_assert_int_eq(fired.status, 0); // not the source's 10 s Timeout
	ck_assert_str_eq(fired.message.c_str(), "");
	// The loop's thread, not the signaller's.
	ck_assert(fired.thread == std::this_thread::get_id());
}
END_TEST

START_TEST(never_signalled_times_out)
{
	auto fence = CpuFence::create().value();
	Fired fired;
	auto elapsed = runOnce(makeSyncSource(fence->point(), 50ms), fired);
	ck_assert_int_eq(fired.status, static_cast<int>(ErrorCode::Timeout));
	ck_assert(fired.message.find("50 ms") != std::string::npos);
	ck_assert_msg(elapsed >= 50ms, "took %lld ms", toMs(elapsed));
}
END_TEST

// The budget counts from the first main-loop iteration after attach, not from creation: a
// source made long before its loop runs still waits its whole timeout there.
START_TEST(timeout_counts_from_the_first_iteration)
{
	for (bool pollable : { true, false }) {
		auto fence = CpuFence::create().value();
		SyncPoint point = pollable ? fence->point()
					   : pointOver(std::make_shared<FlagWaiter>());
		GSource *source = makeSyncSource(point, 50ms);
		std::this_thread::sleep_for(100ms); // past the budget, before any loop saw it
		Fired fired;
		auto elapsed = runOnce(source, fired);
		ck_assert_int_eq(fired.status, static_cast<int>(ErrorCode::Timeout));
		ck_assert_msg(elapsed >= 50ms, "%s: timed out %lld ms after the first iteration",
			      pollable ? "pollable" : "sliced", toMs(elapsed));
	}
}
END_TEST

START_TEST(slice_waiter_times_out)
{
	Fired fired;
	auto elapsed =
		runOnce(makeSyncSource(pointOver(std::make_shared<FlagWaiter>()), 50ms), fired);
	ck_assert_int_eq(fired.status, static_cast<int>(ErrorCode::Timeout));
	ck_assert_msg(elapsed >= 50ms, "took %lld ms", toMs(elapsed));
}
END_TEST

gboolean signalEventfd(gpointer data)
{
	uint64_t one = 1;
	ck_assert_int_eq(write(*static_cast<int *>(data), &one, sizeof(one)), 8);
	return G_SOURCE_REMOVE;
}

START_TEST(eventfd_point_signalled_in_loop)
{
	int before = gpuhandle::test::openFdCount();
	{
		UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
		int raw = fd.get();
		SyncPoint point = SyncPoint::fromFenceFd(SharedFd(std::move(fd))).value();
		Fired fired;
		GSource *source = makeSyncSource(point, kWaitForever);
		// The signal comes from a timeout source on the same context: no thread involved.
		GMainContext *context = g_main_context_new();
		GSource *later = g_timeout_source_new(10);
		g_source_set_callback(later, signalEventfd, &raw, nullptr);
		g_source_attach(later, context);
		GMainLoop *loop = g_main_loop_new(context, FALSE);
		fired.loop = loop;
		setCallback(source, fired);
		g_source_attach(source, context);
		g_main_loop_run(loop);
		ck_assert_int_eq(fired.calls, 1);
		ck_assert_int_eq(fired.status, 0);
		g_source_unref(later);
		g_source_unref(source);
		g_main_loop_unref(loop);
		g_main_context_unref(context);
	}
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

START_TEST(slice_waiter_signalled_from_thread)
{
	auto waiter = std::make_shared<FlagWaiter>();
	Fired fired;
	GSource *source = makeSyncSource(pointOver(waiter), kDefaultWaitTimeout);
	auto start = Clock::now(); // before the signaller's 20 ms begin
	std::thread signaller([waiter] {
		std::this_thread::sleep_for(20ms);
		waiter->done = true;
	});
	runOnce(source, fired);
	auto elapsed = Clock::now() - start;
	signaller.join();
	ck_assert_int_eq(fired.status, 0); // not the 10 s Timeout: re-checked until done
	ck_assert(fired.thread == std::this_thread::get_id());
	ck_assert_msg(elapsed >= 20ms, "took %lld ms", toMs(elapsed));
}
END_TEST

START_TEST(driver_error_passes_through)
{
	auto waiter = std::make_shared<FlagWaiter>();
	waiter->fail = true;
	Fired fired;
	runOnce(makeSyncSource(pointOver(waiter), kDefaultWaitTimeout), fired);
	ck_assert_int_eq(fired.status, static_cast<int>(ErrorCode::Backend));
	ck_assert(fired.message.find("CL_OUT_OF_RESOURCES") != std::string::npos);
}
END_TEST

START_TEST(raw_carrier_is_not_supported)
{
	SyncPoint carrier = SyncPoint::create(OpenClEventSync{ &g_handle }, nullptr).value();
	Fired fired;
	runOnce(makeSyncSource(carrier, kDefaultWaitTimeout), fired);
	ck_assert_int_eq(fired.status, static_cast<int>(ErrorCode::NotSupported));
	ck_assert(!fired.message.empty());
}
END_TEST

START_TEST(noop_fires_at_once)
{
	GMainContext *context = g_main_context_new();
	Fired fired;
	GSource *source = makeSyncSource(SyncPoint::noop(), kWaitForever);
	setCallback(source, fired);
	g_source_attach(source, context);
	// One non-blocking iteration is enough: prepare reports it ready.
	g_main_context_iteration(context, FALSE);
	ck_assert_int_eq(fired.calls, 1);
	ck_assert_int_eq(fired.status, 0);
	ck_assert(g_source_is_destroyed(source));
	g_source_unref(source);
	g_main_context_unref(context);
}
END_TEST

// Destroying a pending source releases its point: the waiter, its fd and the owner's anchor.
START_TEST(destroy_before_fire_releases_point)
{
	int before = gpuhandle::test::openFdCount();
	for (bool pollable : { true, false }) {
		std::atomic<bool> anchorReleased{ false };
		std::atomic<bool> waiterDestroyed{ false };
		std::weak_ptr<SyncWaiter> weakWaiter;
		Fired fired;
		GMainContext *context = g_main_context_new();
		{
			SyncWaiterRef waiter;
			if (pollable) {
				waiter = CpuFence::create().value();
			} else {
				auto flag = std::make_shared<FlagWaiter>();
				flag->destroyed = &waiterDestroyed;
				waiter = flag;
			}
			weakWaiter = waiter;
			GSource *source = makeSyncSource(
				pointOver(waiter, makeKeepAlive(setFlag, &anchorReleased)),
				kWaitForever);
			setCallback(source, fired);
			g_source_attach(source, context);
			g_main_context_iteration(context, FALSE); // polled once, still pending
			g_source_destroy(source);
			g_source_unref(source);
		}
		ck_assert_int_eq(fired.calls, 0);
		ck_assert(anchorReleased);
		ck_assert(weakWaiter.expired());
		ck_assert(pollable || waiterDestroyed);
		g_main_context_unref(context);
	}
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

START_TEST(c_fd_source)
{
	int before = gpuhandle::test::openFdCount();
	int fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK); // already signalled
	ck_assert_int_ge(fd, 0);
	Fired fired;
	runOnce(gpuhandle_sync_source_new_fd(fd, -1), fired);
	ck_assert_int_eq(fired.status, 0);
	close(fd); // borrowed: the source closed only its own duplicate
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);

	Fired slow;
	int pending = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	auto elapsed = runOnce(gpuhandle_sync_source_new_fd(pending, 30000), slow);
	close(pending);
	// 30 ms, not 30 s: read as milliseconds, the 5 s guard would have ended the run first.
	ck_assert_int_eq(slow.status, static_cast<int>(ErrorCode::Timeout));
	ck_assert_msg(elapsed >= 30ms, "took %lld ms", toMs(elapsed));

	Fired bad;
	runOnce(gpuhandle_sync_source_new_fd(-1, -1), bad);
	ck_assert_int_eq(bad.status, static_cast<int>(ErrorCode::BadFd));
	ck_assert(bad.message.find("-1") != std::string::npos);
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

START_TEST(c_sync_point_source)
{
	// A C API sync point (a CpuFence) waited in a main loop through the C function.
	gpuhandle_cpu_fence *fence = nullptr;
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&fence, nullptr), GPUHANDLE_OK);
	gpuhandle_sync_point *point = nullptr;
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(fence, &point, nullptr), GPUHANDLE_OK);
	GSource *source = gpuhandle_sync_source_new(point, -1);
	gpuhandle_sync_point_unref(point); // the source keeps its own reference
	std::thread signaller([fence] {
		std::this_thread::sleep_for(20ms);
		gpuhandle_cpu_fence_signal(fence);
	});
	Fired fired;
	runOnce(source, fired); // no timeout: the 5 s guard bounds it
	signaller.join();
	gpuhandle_cpu_fence_unref(fence);
	ck_assert_int_eq(fired.status, 0);

	Fired none;
	runOnce(gpuhandle_sync_source_new(nullptr, -1), none);
	ck_assert_int_eq(none.status, static_cast<int>(ErrorCode::NullHandle));
}
END_TEST

static Suite *glibSourceSuite()
{
	Suite *suite = suite_create("glib_sync_source");
	TCase *tc = tcase_create("main_loop");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, cpu_fence_signalled_from_thread);
	tcase_add_test(tc, never_signalled_times_out);
	tcase_add_test(tc, slice_waiter_times_out);
	tcase_add_test(tc, timeout_counts_from_the_first_iteration);
	tcase_add_test(tc, eventfd_point_signalled_in_loop);
	tcase_add_test(tc, slice_waiter_signalled_from_thread);
	tcase_add_test(tc, driver_error_passes_through);
	tcase_add_test(tc, raw_carrier_is_not_supported);
	tcase_add_test(tc, noop_fires_at_once);
	tcase_add_test(tc, destroy_before_fire_releases_point);
	tcase_add_test(tc, c_fd_source);
	tcase_add_test(tc, c_sync_point_source);
	suite_add_tcase(suite, tc);
	return suite;
}

int main()
{
	return gpuhandle::test::runSuite(glibSourceSuite());
}
