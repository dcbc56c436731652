// Frame times and their timeline between FrameSender and FrameReceiver: each frame's own times
// reach a consumer that asked (pooled frames over kept files too), the timeline comes before the
// first frame that needs it, and a producer and a consumer of different versions still exchange
// every frame: a version-1 consumer (written from the wire format alone) is sent plain frames and
// no timeline, and a version-1 producer is never sent the longer Features.
#include <gpuhandle/frame_transport.h>

#include "raw_sender.h"
#include "transport_fixture.h"

#include <array>
#include <chrono>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>

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

std::unique_ptr<FrameReceiver> connectTo(const std::string &path, bool timing = true,
					 uint32_t cachedFiles = kWireMaxCachedFiles)
{
	FrameReceiverOptions ro;
	ro.socketPath = path;
	ro.timing = timing;
	ro.cachedFiles = cachedFiles;
	return FrameReceiver::connect(std::move(ro)).value();
}

FrameTiming timingOf(uint64_t n)
{
	FrameTiming t;
	t.pts = n * 33'366'667;
	t.dts = n == 0 ? kNoTime : t.pts - 1;
	t.duration = n % 3 == 0 ? kNoTime : 33'366'667;
	t.offset = n;
	t.offsetEnd = n + 1;
	t.clockTime = 1'000'000'000 + t.pts;
	return t;
}

StreamTiming rateTwo()
{
	StreamTiming t;
	t.rate = 2.0;
	t.start = 0;
	t.time = 0;
	t.latency = 40'000'000;
	return t;
}

// Sends slot `n % size` of `pool` with timingOf(n), once its last use was released.
void sendTimed(FrameSender &sender, std::vector<PoolSlot> &pool, uint64_t n)
{
	PoolSlot &slot = pool[n % pool.size()];
	if (n >= pool.size()) {
		ck_assert_ok(slot.gate.released().wait(5s));
		ck_assert_ok(slot.gate.reset());
	}
	stamp(slot, n);
	ck_assert_uint_eq(sender.send(*slot.frame, timingOf(n)).value(), 1);
}

// The next frame, released at once, with the times it came with.
std::optional<FrameTiming> receiveTimed(FrameReceiver &receiver, uint64_t expectStamp)
{
	std::optional<Frame> frame = receiver.receive(5s).value();
	ck_assert_msg(frame.has_value(), "the stream ended before a frame");
	ck_assert_uint_eq(readStamp(*frame), expectStamp);
	ck_assert_ok(frame->release().signal());
	return receiver.timing();
}

// A consumer written from the version 1 wire format: reads the hello (masking bit 31 only, as
// version 1 did), announces `cachedFiles` in the first form of Features, and reads messages of
// the types it knows.
struct EarlierConsumer {
	UniqueFd socket;
	WireHello hello{};

	explicit EarlierConsumer(const std::string &path, uint32_t cachedFiles)
	{
		socket = UniqueFd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
		sockaddr_un address{};
		address.sun_family = AF_UNIX;
		std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
		ck_assert_int_eq(connect(socket.get(), reinterpret_cast<sockaddr *>(&address),
					 sizeof address),
				 0);
		std::array<std::byte, kWireMaxMessage> bytes{};
		const ssize_t n = recv(socket.get(), bytes.data(), bytes.size(), 0);
		ck_assert_int_gt(n, 0);
		uint32_t inFlight = 0;
		std::memcpy(&inFlight, bytes.data() + kWireHeaderBytes, sizeof inFlight);
		// Version 1's check: bit 31 off, not 0.
		ck_assert_uint_ne(inFlight & ~kWireHelloFileCache, 0);
		hello = decodeHello({ bytes.data(), size_t(n) }).value();
		WireMessage features;
		ck_assert_ok(encodeFeatures(cachedFiles, features));
		ck_assert(sendRaw(socket.get(), features));
	}
	// The type of the next message (its fds closed), 0 when none came within 5 s.
	uint16_t nextType(WireMessage *out = nullptr)
	{
		pollfd p{ socket.get(), POLLIN, 0 };
		if (poll(&p, 1, 5000) != 1)
			return 0;
		WireMessage m;
		alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kWireMaxFds)];
		iovec iov{ m.bytes.data(), m.bytes.size() };
		msghdr msg{};
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = control;
		msg.msg_controllen = sizeof control;
		const ssize_t n = recvmsg(socket.get(), &msg, MSG_CMSG_CLOEXEC);
		if (n < int(kWireHeaderBytes))
			return 0;
		for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < count; ++i) {
				int fd;
				std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
				close(fd);
			}
		}
		m.size = uint32_t(n);
		if (out)
			*out = m;
		uint16_t type = 0;
		std::memcpy(&type, m.bytes.data() + 6, sizeof type);
		return type;
	}
};

} // namespace

START_TEST(each_frame_brings_its_own_times_and_the_timeline_comes_first)
{
	auto pool = makePool(2); // pooled: the kept files' frames are decoded once, times not
	const std::string path = socketPath("timing");
	auto sender = listen(path);
	ck_assert_ok(sender->setStreamTiming(rateTwo()));
	auto receiver = connectTo(path);
	ck_assert(receiver->producerSendsTiming());
	ck_assert_ok(sender->waitForPeers(1, 5s));
	// Frames sent before the sender's thread read the consumer's Features go plain; from the
	// first timed one on, every frame has its times, and the timeline came before it.
	uint64_t n = 0;
	sendTimed(*sender, pool, n);
	while (!receiveTimed(*receiver, n).has_value()) {
		ck_assert_uint_lt(n, 500);
		sendTimed(*sender, pool, ++n);
	}
	ck_assert(receiver->timing().value() == timingOf(n));
	const uint64_t timelines = receiver->streamTimingMessages();
	ck_assert_uint_eq(timelines, 1);
	ck_assert(receiver->streamTiming().value() == rateTwo());
	const uint64_t first = n;
	for (++n; n <= first + 12; ++n) {
		sendTimed(*sender, pool, n);
		std::optional<FrameTiming> got = receiveTimed(*receiver, n);
		ck_assert_msg(got.has_value(), "frame %llu came without its times",
			      static_cast<unsigned long long>(n));
		ck_assert_msg(*got == timingOf(n), "frame %llu's times differ",
			      static_cast<unsigned long long>(n));
	}
	ck_assert_uint_gt(receiver->stats().framesOverKeptFiles, 6);
	ck_assert_uint_ge(receiver->stats().timedFrames, 12);
	// A frame sent without times comes without them.
	PoolSlot &slot = pool[n % pool.size()];
	ck_assert_ok(slot.gate.released().wait(5s));
	ck_assert_ok(slot.gate.reset());
	stamp(slot, n);
	ck_assert_uint_eq(sender->send(*slot.frame).value(), 1);
	ck_assert(!receiveTimed(*receiver, n).has_value());
	// A new timeline is sent once; the same one again is not.
	StreamTiming later = rateTwo();
	later.latency = 80'000'000;
	ck_assert_ok(sender->setStreamTiming(later));
	ck_assert_ok(sender->setStreamTiming(later));
	++n;
	sendTimed(*sender, pool, n);
	(void)receiveTimed(*receiver, n);
	ck_assert_uint_eq(receiver->streamTimingMessages(), timelines + 1);
	ck_assert(receiver->streamTiming().value() == later);
	// An invalid timeline is refused and not sent.
	StreamTiming bad = later;
	bad.rate = 0;
	ck_assert_error(sender->setStreamTiming(bad), ErrorCode::InvalidArgument, "rate");
	receiver.reset();
	sender.reset();
	freePool(pool);
}
END_TEST

START_TEST(a_consumer_that_does_not_ask_gets_frames_without_times)
{
	auto pool = makePool(2);
	const std::string path = socketPath("timing-off");
	auto sender = listen(path);
	ck_assert_ok(sender->setStreamTiming(rateTwo()));
	auto receiver = connectTo(path, false);
	ck_assert(!receiver->producerSendsTiming());
	ck_assert_ok(sender->waitForPeers(1, 5s));
	for (uint64_t n = 0; n < 20; ++n) {
		sendTimed(*sender, pool, n);
		ck_assert(!receiveTimed(*receiver, n).has_value());
	}
	ck_assert(!receiver->streamTiming().has_value());
	ck_assert_uint_eq(receiver->stats().timedFrames, 0);
	receiver.reset();
	sender.reset();
	freePool(pool);
}
END_TEST

// A consumer of version 1 reads a new producer's frames: plain Frame messages (no timeline, no
// timed frame) that decode as version 1 decoded them, and its Features of the first form still
// keep files.
START_TEST(a_consumer_of_version_1_gets_plain_frames)
{
	auto pool = makePool(2);
	const std::string path = socketPath("timing-v1-consumer");
	auto sender = listen(path);
	ck_assert_ok(sender->setStreamTiming(rateTwo()));
	EarlierConsumer consumer(path, 4);
	ck_assert(consumer.hello.timing); // offered, and not taken
	ck_assert_ok(sender->waitForPeers(1, 5s));
	// Until its Features reached the sender's thread and frames name a kept file.
	unsigned frames = 0, remembered = 0;
	for (uint64_t n = 0; frames < 4 || remembered == 0; ++n) {
		ck_assert_uint_lt(n, 500);
		PoolSlot &slot = pool[n % pool.size()];
		if (n >= pool.size()) {
			ck_assert_ok(slot.gate.released().wait(5s));
			ck_assert_ok(slot.gate.reset());
		}
		ck_assert_uint_eq(sender->send(*slot.frame, timingOf(n)).value(), 1);
		for (;;) {
			WireMessage m;
			const uint16_t type = consumer.nextType(&m);
			ck_assert_msg(type == uint16_t(WireType::Frame) ||
					      type == uint16_t(WireType::Remember),
				      "a version-1 consumer got a message of type %u", type);
			if (type == uint16_t(WireType::Remember)) {
				remembered++;
				continue;
			}
			frames++;
			// Version 1 read exactly this: the id right after the header.
			uint64_t id = 0;
			std::memcpy(&id, m.bytes.data() + kWireHeaderBytes, sizeof id);
			ck_assert_uint_gt(id, 0);
			WireMessage release;
			encodeRelease(id, release);
			ck_assert(sendRaw(consumer.socket.get(), release));
			break;
		}
	}
	ck_assert_uint_ge(remembered, 1);
	ck_assert_uint_eq(sender->stats().badMessages, 0);
	sender.reset();
	freePool(pool);
}
END_TEST

// A producer of version 1 (its hello offers the cache but not times) hears the first form of
// Features, which it knows, and its frames come without times.
START_TEST(a_producer_of_version_1_is_sent_the_first_form)
{
	const std::string path = socketPath("timing-v1-producer");
	UniqueFd listener(listenAt(path));
	ck_assert(listener.isValid());
	std::array<std::byte, kWireMaxMessage> heard{};
	ssize_t heardSize = -1;
	std::thread producer([&] {
		UniqueFd peer(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
		WireMessage m;
		(void)encodeHello(kCaps, 4, m, true);
		(void)sendRaw(peer.get(), m);
		pollfd p{ peer.get(), POLLIN, 0 };
		if (poll(&p, 1, 5000) == 1)
			heardSize = recv(peer.get(), heard.data(), heard.size(), 0);
		// A plain frame, then bye.
		Frame frame = makePool(1)[0].frame.value();
		(void)encodeFrame(frame, 7, false, m);
		(void)sendRaw(peer.get(), m);
		encodeBye(m);
		(void)sendRaw(peer.get(), m);
		p.revents = 0;
		(void)poll(&p, 1, 5000); // until the consumer hangs up
	});
	auto receiver = connectTo(path);
	ck_assert(!receiver->producerSendsTiming());
	std::optional<Frame> frame = receiver->receive(5s).value();
	ck_assert(frame.has_value());
	ck_assert(!receiver->timing().has_value());
	ck_assert(!receiver->receive(5s).value().has_value()); // bye
	ck_assert(receiver->saidBye());
	frame.reset();
	receiver.reset();
	producer.join();
	ck_assert_int_eq(heardSize, int(kWireHeaderBytes + 4));
	WireFeatures features = decodeFeatures({ heard.data(), size_t(heardSize) }).value();
	ck_assert(!features.extended);
	ck_assert_uint_eq(features.cachedFiles, kWireMaxCachedFiles);
	unlink(path.c_str());
}
END_TEST

int main()
{
	Suite *s = suite_create("frame_timing");
	TCase *tc = tcase_create("frame_timing");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, each_frame_brings_its_own_times_and_the_timeline_comes_first);
	tcase_add_test(tc, a_consumer_that_does_not_ask_gets_frames_without_times);
	tcase_add_test(tc, a_consumer_of_version_1_gets_plain_frames);
	tcase_add_test(tc, a_producer_of_version_1_is_sent_the_first_form);
	suite_add_tcase(s, tc);
	return runSuite(s);
}
