// How a stream ends at a consumer: endStream after the frames already sent, with the connection
// kept for a next stream, against Bye, after which every receive answers the end.
#include <gpuhandle/frame_transport.h>

#include "transport_fixture.h"

#include <chrono>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;
using namespace std::chrono_literals;

namespace {

constexpr const char *kCaps = "video/x-raw(memory:GpuHandle),format=NV12,width=320,height=180";

std::unique_ptr<FrameSender> listen(const std::string &path)
{
	FrameSenderOptions so;
	so.socketPath = path;
	so.caps = kCaps;
	return FrameSender::create(std::move(so)).value();
}

std::unique_ptr<FrameReceiver> connectTo(const std::string &path)
{
	FrameReceiverOptions ro;
	ro.socketPath = path;
	return FrameReceiver::connect(std::move(ro)).value();
}

// Sends pool slot `n % size` stamped `n`, once the consumer released its last use.
void sendStamped(FrameSender &sender, std::vector<PoolSlot> &pool, uint64_t n)
{
	PoolSlot &slot = pool[n % pool.size()];
	if (n >= pool.size()) {
		ck_assert_ok(slot.gate.released().wait(5s));
		ck_assert_ok(slot.gate.reset());
	}
	stamp(slot, n);
	ck_assert_uint_eq(sender.send(*slot.frame).value(), 1);
}

// The stamp of the next frame received, which is released at once.
uint64_t receiveStamp(FrameReceiver &receiver)
{
	std::optional<Frame> frame = receiver.receive(5s).value();
	ck_assert_msg(frame.has_value(), "the stream ended before a frame");
	const uint64_t n = readStamp(*frame);
	ck_assert_ok(frame->release().signal());
	return n;
}

} // namespace

// Two frames, the end, one frame of a next stream: the consumer reads them in that order, the
// end once, and then Bye ends it for good.
START_TEST(the_end_of_a_stream_follows_its_frames_and_a_next_stream_follows_it)
{
	auto pool = makePool(2);
	const std::string path = socketPath("stream-end");
	auto sender = listen(path);
	auto receiver = connectTo(path);
	ck_assert_ok(sender->waitForPeers(1, 5s));
	sendStamped(*sender, pool, 0);
	sendStamped(*sender, pool, 1);
	ck_assert_uint_eq(sender->endStream().value(), 1);
	ck_assert_uint_eq(receiveStamp(*receiver), 0);
	ck_assert_uint_eq(receiveStamp(*receiver), 1);
	auto end = receiver->receive(5s);
	ck_assert_ok(end);
	ck_assert(!end->has_value());
	ck_assert_uint_eq(receiver->stats().streamsEnded, 1);
	// The connection stayed: nothing more is queued, and the next stream's frame comes.
	ck_assert_error(receiver->receive(20ms), ErrorCode::Timeout, "timeout");
	sendStamped(*sender, pool, 2);
	ck_assert_uint_eq(receiveStamp(*receiver), 2);
	ck_assert_uint_eq(sender->stats().peersConnected, 1);
	// Bye: the end, and the same at every later call.
	sender.reset();
	for (int i = 0; i < 2; ++i) {
		auto bye = receiver->receive(5s);
		ck_assert_ok(bye);
		ck_assert(!bye->has_value());
	}
	ck_assert_uint_eq(receiver->stats().streamsEnded, 1);
	ck_assert_uint_eq(receiver->stats().framesReceived, 3);
	receiver.reset();
	freePool(pool);
}
END_TEST

// With no consumer there is no one to tell; a consumer that connects later gets the next frames.
START_TEST(ending_a_stream_without_consumers_tells_none)
{
	auto pool = makePool(1);
	const std::string path = socketPath("stream-end-alone");
	auto sender = listen(path);
	ck_assert_uint_eq(sender->endStream().value(), 0);
	auto receiver = connectTo(path);
	ck_assert_ok(sender->waitForPeers(1, 5s));
	sendStamped(*sender, pool, 0);
	ck_assert_uint_eq(receiveStamp(*receiver), 0);
	ck_assert_uint_eq(receiver->stats().streamsEnded, 0);
	receiver.reset();
	sender.reset();
	freePool(pool);
}
END_TEST

int main()
{
	Suite *s = suite_create("stream-ends");
	TCase *tc = tcase_create("stream-ends");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, the_end_of_a_stream_follows_its_frames_and_a_next_stream_follows_it);
	tcase_add_test(tc, ending_a_stream_without_consumers_tells_none);
	suite_add_tcase(s, tc);
	return runSuite(s);
}
