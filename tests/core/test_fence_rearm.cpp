// Re-arming a CpuFence and a ReleaseGate (pools reuse one per slot): state, eventfds, no
// allocations.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/release_gate.h>

#include "alloc_counter.h"

#include <atomic>
#include <poll.h>
#include <thread>

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::AllocationScope;

namespace {

// Whether `fd` polls readable right now.
bool readable(int fd)
{
	pollfd p{ fd, POLLIN, 0 };
	return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

} // namespace

START_TEST(cpu_fence_reset_unsignals_and_signals_again)
{
	auto fence = CpuFence::create().value();
	SyncPoint point = fence->point();
	for (int round = 0; round < 3; ++round) {
		ck_assert(!point.isSignaled().value());
		ck_assert_error(point.wait(std::chrono::milliseconds(1)), ErrorCode::Timeout,
				"timeout");
		fence->signal();
		ck_assert(point.isSignaled().value());
		ck_assert_ok(point.wait(std::chrono::milliseconds(1)));
		fence->reset();
	}
	fence->reset(); // on an unsignalled fence: nothing
	ck_assert(!point.isSignaled().value());
}
END_TEST

START_TEST(cpu_fence_eventfd_follows_reset)
{
	auto fence = CpuFence::create().value();
	// Signalled before anybody asked for the fd: the first pollFd() still sees it readable.
	fence->signal();
	int fd = fence->pollFd();
	ck_assert_int_ge(fd, 0);
	ck_assert(readable(fd));
	fence->reset();
	ck_assert(!readable(fd));
	fence->signal();
	ck_assert(readable(fd));
	fence->signal(); // a second signal writes nothing more: one read drains it
	fence->reset();
	ck_assert(!readable(fd));
	ck_assert_int_eq(fence->pollFd(), fd);
}
END_TEST

// Two threads hand a turn back and forth 2000 times through two re-armed fences: each blocking
// wait sees its signal, and no signal is lost when it comes before the wait or during a reset.
START_TEST(blocking_waits_across_resets)
{
	auto ping = CpuFence::create().value();
	auto pong = CpuFence::create().value();
	constexpr int kTurns = 2000;
	std::atomic<int> failures{ 0 };
	std::thread other([&] {
		for (int i = 0; i < kTurns; ++i) {
			if (!ping->point().wait(std::chrono::seconds(5)).ok())
				failures++;
			ping->reset(); // its signaller waits for pong before signalling ping again
			pong->signal();
		}
	});
	for (int i = 0; i < kTurns; ++i) {
		ping->signal();
		if (!pong->point().wait(std::chrono::seconds(5)).ok())
			failures++;
		pong->reset();
	}
	other.join();
	ck_assert_int_eq(failures.load(), 0);
	ck_assert(!readable(ping->pollFd()));
	ck_assert(!readable(pong->pollFd()));
}
END_TEST

START_TEST(release_gate_reset_rearms)
{
	auto gate = ReleaseGate::create().value();
	SyncPoint released = gate.released();
	auto consumerFence = CpuFence::create().value();
	for (int round = 0; round < 3; ++round) {
		ck_assert(!gate.isSignaled());
		ck_assert(!released.isSignaled().value());
		// The consumer's own fence holds the gate until it signals too.
		ck_assert_ok(gate.signal(consumerFence->point()));
		ck_assert(gate.isSignaled());
		ck_assert(!released.isSignaled().value());
		consumerFence->signal();
		ck_assert(released.isSignaled().value());
		ck_assert_ok(released.wait(std::chrono::milliseconds(1)));
		ck_assert_ok(gate.reset());
		consumerFence->reset();
	}
	ck_assert_error(ReleaseGate::none().reset(), ErrorCode::InvalidState, "gate");
}
END_TEST

// A gate's released() point polls readable exactly while it is released, so waiter threads and
// main loops sleep in epoll on it instead of re-checking it every slice.
START_TEST(release_gate_point_has_a_poll_fd_that_follows_it)
{
	auto gate = ReleaseGate::create().value();
	SyncPoint released = gate.released();
	ck_assert(released.waiter() != nullptr);
	const int fd = released.waiter()->pollFd();
	ck_assert_int_ge(fd, 0);
	for (int round = 0; round < 3; ++round) {
		ck_assert(!readable(fd));
		ck_assert_ok(gate.signal());
		ck_assert(readable(fd));
		ck_assert(released.isSignaled().value());
		ck_assert_ok(gate.reset());
	}
	ck_assert(!readable(fd));
	// Signalled before the fd was first asked for: readable at once.
	auto early = ReleaseGate::create().value();
	ck_assert_ok(early.signal());
	ck_assert(readable(early.released().waiter()->pollFd()));
}
END_TEST

// A pool may re-arm a gate only when no frame, consumer or wait still holds a copy: one that saw
// the earlier use could otherwise signal the new one (FrameReceiver reuses its gates so).
START_TEST(release_gate_is_uniquely_held_once_every_copy_is_gone)
{
	ck_assert(!ReleaseGate::none().uniquelyHeld());
	ReleaseGate gate = ReleaseGate::create().value();
	ck_assert(gate.uniquelyHeld());
	{
		ReleaseGate consumer = gate; // a frame's copy
		ck_assert(!gate.uniquelyHeld());
		ck_assert(!consumer.uniquelyHeld());
		ck_assert_ok(consumer.signal());
	}
	ck_assert(gate.uniquelyHeld());
	{
		SyncPoint watched = gate.released(); // a waiter's wait on it
		ck_assert(!gate.uniquelyHeld());
		ck_assert_ok(watched.wait(std::chrono::seconds(1)));
	}
	ck_assert(gate.uniquelyHeld());
	ck_assert_ok(gate.reset());
	ck_assert(!gate.isSignaled());
}
END_TEST

namespace {

// Records what a gate tells it, and on which thread.
struct Recorder final : ReleaseListener {
	std::atomic<int> calls{ 0 };
	uint64_t tag = 0;
	bool consumerNoop = false;
	std::thread::id thread{};
	void gateSignalled(uint64_t t, const SyncPoint &consumerDone) noexcept override
	{
		tag = t;
		consumerNoop = consumerDone.isNoop();
		thread = std::this_thread::get_id();
		calls++;
	}
};

} // namespace

START_TEST(rearm_cycle_allocates_nothing)
{
	auto fence = CpuFence::create().value();
	auto gate = ReleaseGate::create().value();
	SyncPoint acquire = fence->point();
	SyncPoint released = gate.released();
	auto listener = std::make_shared<Recorder>();
	// Check's assertions allocate (they report their location): count first, assert after.
	int failures = 0;
	AllocationScope scope;
	for (int i = 0; i < 100; ++i) {
		SyncPoint copy = acquire;
		fence->signal();
		failures += !copy.wait(std::chrono::seconds(1)).ok();
		failures += !gate.listen(listener, static_cast<uint64_t>(i)).ok();
		failures += !gate.signal().ok();
		failures += !released.isSignaled().value();
		failures += !gate.reset().ok();
		fence->reset();
	}
	uint64_t allocations = scope.count();
	ck_assert_int_eq(failures, 0);
	ck_assert_int_eq(allocations, 0);
	ck_assert_int_eq(listener->calls.load(), 100);
}
END_TEST

// A listener is told once, inside signal() on the signalling thread, with its tag; a second
// signal and a reset tell it nothing more; after a reset it must listen again.
START_TEST(release_gate_tells_its_listener_on_the_signalling_thread)
{
	auto gate = ReleaseGate::create().value();
	auto recorder = std::make_shared<Recorder>();
	ck_assert_ok(gate.listen(recorder, 42));
	ck_assert_int_eq(recorder->calls.load(), 0);
	std::thread consumer([&] { (void)gate.signal(); });
	const std::thread::id consumerId = consumer.get_id();
	consumer.join();
	ck_assert_int_eq(recorder->calls.load(), 1);
	ck_assert(recorder->tag == 42);
	ck_assert(recorder->consumerNoop);
	ck_assert(recorder->thread == consumerId);
	ck_assert(gate.released().isSignaled().value());
	ck_assert_ok(gate.signal());
	ck_assert_int_eq(recorder->calls.load(), 1);
	// reset() forgets the listener: the next use tells nobody until it listens again.
	ck_assert_ok(gate.reset());
	ck_assert_ok(gate.signal());
	ck_assert_int_eq(recorder->calls.load(), 1);
	ck_assert_ok(gate.reset());
	ck_assert_ok(gate.listen(recorder, 7));
	// One listener per use: a second would lose the first one's release.
	ck_assert_error(gate.listen(recorder, 8), ErrorCode::InvalidState, "gate");
	ck_assert_ok(gate.reset());
	ck_assert_ok(gate.signal());
	ck_assert_int_eq(recorder->calls.load(), 1);
}
END_TEST

// Listening to a gate already signalled tells at once; a consumer fence is passed on (released()
// waits for it); a listener that is gone is skipped; a none() gate refuses.
START_TEST(release_gate_listen_after_signal_fence_and_expired_listener)
{
	auto gate = ReleaseGate::create().value();
	auto consumerFence = CpuFence::create().value();
	ck_assert_ok(gate.signal(consumerFence->point()));
	auto recorder = std::make_shared<Recorder>();
	ck_assert_ok(gate.listen(recorder, 3));
	ck_assert_int_eq(recorder->calls.load(), 1);
	ck_assert(recorder->tag == 3);
	ck_assert(!recorder->consumerNoop);
	ck_assert(recorder->thread == std::this_thread::get_id());
	ck_assert(!gate.released().isSignaled().value());
	consumerFence->signal();
	ck_assert(gate.released().isSignaled().value());

	ck_assert_ok(gate.reset());
	{
		auto gone = std::make_shared<Recorder>();
		ck_assert_ok(gate.listen(gone, 1));
	}
	ck_assert_ok(gate.signal()); // the listener is gone: nothing to tell, no crash
	ck_assert(gate.released().isSignaled().value());

	ck_assert_error(ReleaseGate::none().listen(recorder, 1), ErrorCode::InvalidState, "gate");
}
END_TEST

int main()
{
	Suite *s = suite_create("fence_rearm");
	TCase *tc = tcase_create("fence_rearm");
	tcase_add_test(tc, cpu_fence_reset_unsignals_and_signals_again);
	tcase_add_test(tc, cpu_fence_eventfd_follows_reset);
	tcase_add_test(tc, blocking_waits_across_resets);
	tcase_add_test(tc, release_gate_reset_rearms);
	tcase_add_test(tc, release_gate_point_has_a_poll_fd_that_follows_it);
	tcase_add_test(tc, release_gate_is_uniquely_held_once_every_copy_is_gone);
	tcase_add_test(tc, rearm_cycle_allocates_nothing);
	tcase_add_test(tc, release_gate_tells_its_listener_on_the_signalling_thread);
	tcase_add_test(tc, release_gate_listen_after_signal_fence_and_expired_listener);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
