// How a consumer's release reaches the sender: at once on the thread that signals the gate, through
// the receiver's waiter thread when the consumer passes a fence, and not at all (nor a crash) once
// the receiver is gone.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/frame_transport.h>

#include "transport_fixture.h"

#include <chrono>
#include <thread>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;
using namespace std::chrono_literals;

namespace {

constexpr const char *kCaps = "video/x-raw(memory:GpuHandle),format=NV12,width=320,height=180";

struct Pair {
	std::unique_ptr<FrameSender> sender;
	std::unique_ptr<FrameReceiver> receiver;
};

Pair connectPair(const char *name)
{
	const std::string path = socketPath(name);
	FrameSenderOptions so;
	so.socketPath = path;
	so.caps = kCaps;
	Pair pair;
	pair.sender = FrameSender::create(std::move(so)).value();
	FrameReceiverOptions ro;
	ro.socketPath = path;
	pair.receiver = FrameReceiver::connect(std::move(ro)).value();
	ck_assert_ok(pair.sender->waitForPeers(1, 5s));
	return pair;
}

// Polls `done` for up to five seconds.
template<typename F>
bool eventually(F done)
{
	for (int i = 0; i < 500 && !done(); ++i)
		std::this_thread::sleep_for(10ms);
	return done();
}

} // namespace

// A release without a consumer fence is sent by signal() itself, on the consumer's thread: the
// receiver counts it before signal() returns (no hand-off to its waiter thread).
START_TEST(a_release_is_sent_by_the_signalling_thread)
{
	auto pool = makePool(2);
	{
		Pair p = connectPair("inline");
		for (uint64_t n = 0; n < 20; ++n) {
			PoolSlot &slot = pool[n % pool.size()];
			if (n >= pool.size()) {
				ck_assert_ok(slot.gate.released().wait(5s));
				ck_assert_ok(slot.gate.reset());
			}
			ck_assert_uint_eq(p.sender->send(*slot.frame).value(), 1);
			auto frame = p.receiver->receive(5s).value();
			ck_assert(frame.has_value());
			const uint64_t before = p.receiver->stats().releasesSent;
			bool signalled = false;
			std::thread consumer([&] { signalled = frame->release().signal().ok(); });
			consumer.join();
			ck_assert(signalled);
			ck_assert_uint_eq(p.receiver->stats().releasesSent, before + 1);
		}
		ck_assert(eventually([&] { return p.sender->stats().releases == 20; }));
	}
	freePool(pool);
}
END_TEST

// A consumer fence still pending holds the release back until it signals; then the waiter thread
// sends it.
START_TEST(a_release_with_a_consumer_fence_waits_for_it)
{
	auto pool = makePool(1);
	{
		Pair p = connectPair("fenced");
		ck_assert_uint_eq(p.sender->send(*pool[0].frame).value(), 1);
		auto frame = p.receiver->receive(5s).value();
		ck_assert(frame.has_value());
		auto consumerFence = CpuFence::create().value();
		ck_assert_ok(frame->release().signal(consumerFence->point()));
		std::this_thread::sleep_for(50ms);
		ck_assert_uint_eq(p.receiver->stats().releasesSent, 0);
		ck_assert(!pool[0].gate.isSignaled());
		consumerFence->signal();
		ck_assert_ok(pool[0].gate.released().wait(5s));
		// Counted by the waiter thread once its send returned, which may be after the
		// sender read it.
		ck_assert(eventually([&] { return p.receiver->stats().releasesSent == 1; }));
	}
	freePool(pool);
}
END_TEST

// A frame that outlives its receiver may still be released: nothing is sent, nothing breaks.
START_TEST(a_release_after_the_receiver_is_gone_is_harmless)
{
	auto pool = makePool(1);
	{
		Pair p = connectPair("gone");
		ck_assert_uint_eq(p.sender->send(*pool[0].frame).value(), 1);
		auto frame = p.receiver->receive(5s).value();
		ck_assert(frame.has_value());
		p.receiver.reset();
		ck_assert_ok(frame->release().signal());
		// The sender counts the gone consumer's frames as released.
		ck_assert_ok(pool[0].gate.released().wait(5s));
	}
	freePool(pool);
}
END_TEST

int main()
{
	Suite *s = suite_create("release_paths");
	TCase *tc = tcase_create("release_paths");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_release_is_sent_by_the_signalling_thread);
	tcase_add_test(tc, a_release_with_a_consumer_fence_waits_for_it);
	tcase_add_test(tc, a_release_after_the_receiver_is_gone_is_harmless);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
