// The wire format's file cache: Features, Remember, Forget, frames naming a kept file by slot, and
// a sender and receiver that send each pooled memfd once and let it go when the producer does.
#include <gpuhandle/frame_transport.h>

#include "raw_sender.h"
#include "transport_fixture.h"
#include "wire_test_frames.h"

#include <chrono>
#include <cstdio>
#include <future>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;
using namespace std::chrono_literals;

namespace {

// The whole of a new sealed memfd of `size` bytes, as a receiver keeps a remembered file.
ShmFd keptFile(uint64_t size)
{
	return ShmFd::create({ .fd = SharedFd(makeMemfd(size, true)), .size = size }).value();
}

// A Remember message for `fd` (a copy), as a receiver reads it.
Received rememberMessage(uint32_t slot, int fd)
{
	WireMessage m;
	ck_assert_ok(encodeRemember(slot, fd, m));
	return receive(m);
}

} // namespace

START_TEST(control_messages_of_the_cache_round_trip)
{
	WireMessage m;
	ck_assert_ok(encodeFeatures(16, m));
	auto features = decodeFeatures(m.data());
	ck_assert_ok(features);
	ck_assert_uint_eq(features->cachedFiles, 16);
	ck_assert(!features->timing && !features->extended);
	ck_assert_error(encodeFeatures(0, m), ErrorCode::InvalidArgument, "cachedFiles");
	ck_assert_error(encodeFeatures(kWireMaxCachedFiles + 1, m), ErrorCode::InvalidArgument,
			"cachedFiles");

	ck_assert_ok(encodeForget(kWireMaxCachedFiles - 1, m));
	auto forget = decodeForget(m.data());
	ck_assert_ok(forget);
	ck_assert_uint_eq(*forget, kWireMaxCachedFiles - 1);
	ck_assert_error(encodeForget(kWireMaxCachedFiles, m), ErrorCode::InvalidArgument, "slot");
	// A forget naming a slot past the cache, written by hand.
	ck_assert_ok(encodeForget(0, m));
	const uint32_t past = kWireMaxCachedFiles;
	std::memcpy(m.bytes.data() + kWireHeaderBytes, &past, sizeof past);
	ck_assert_error(decodeForget(m.data()), ErrorCode::InvalidArgument, "slot");

	UniqueFd file = makeMemfd(kNv12Bytes, true);
	Received r = rememberMessage(3, file.get());
	ck_assert_uint_eq(r.numFds, 1);
	auto remember = decodeRemember(r.data(), r.fdList());
	ck_assert_ok(remember);
	ck_assert_uint_eq(remember->slot, 3);
	ck_assert(remember->file.isSealed());
	ck_assert_uint_eq(remember->file.desc().offset, 0);
	ck_assert_uint_eq(remember->file.desc().size, kNv12Bytes);
	ck_assert(sameFile(remember->file.desc().fd.get(), file.get()));
	ck_assert_error(encodeRemember(kWireMaxCachedFiles, file.get(), m),
			ErrorCode::InvalidArgument, "slot");
	ck_assert_error(encodeRemember(0, -1, m), ErrorCode::BadFd, "fd");

	// The producer's Hello says whether it keeps files, in the in-flight field's bit 31.
	for (const bool keeps : { false, true }) {
		ck_assert_ok(encodeHello("video/x-raw", 4, m, keeps));
		auto hello = decodeHello(m.data());
		ck_assert_ok(hello);
		ck_assert_uint_eq(hello->maxInFlight, 4);
		ck_assert(hello->fileCache == keeps);
	}
	ck_assert_error(encodeHello("video/x-raw", kWireHelloFileCache | 4, m),
			ErrorCode::InvalidArgument, "maxInFlight");
}
END_TEST

namespace {

// What a consumer sends a raw producer, whose Hello does or does not offer the file cache,
// before anything else: the type of its first message, or 0 when it sent none.
uint16_t firstFromConsumer(bool offer)
{
	const std::string path = socketPath(offer ? "offer" : "nooffer");
	unlink(path.c_str());
	UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	sockaddr_un address{};
	address.sun_family = AF_UNIX;
	std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
	ck_assert_int_eq(
		bind(listener.get(), reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
	ck_assert_int_eq(listen(listener.get(), 1), 0);
	uint16_t type = 0;
	std::promise<void> consumed;
	std::thread producer([&, done = consumed.get_future()] {
		UniqueFd peer(accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
		WireMessage m;
		(void)encodeHello("video/x-raw", 4, m, offer);
		(void)send(peer.get(), m.bytes.data(), m.size, MSG_NOSIGNAL);
		encodeBye(m);
		(void)send(peer.get(), m.bytes.data(), m.size, MSG_NOSIGNAL);
		// Once the consumer read to the bye, anything it sent is queued here.
		done.wait();
		std::array<std::byte, kWireMaxMessage> bytes{};
		if (recv(peer.get(), bytes.data(), bytes.size(), MSG_DONTWAIT) >= 8)
			std::memcpy(&type, bytes.data() + 6, sizeof type);
	});
	FrameReceiverOptions o;
	o.socketPath = path;
	auto receiver = FrameReceiver::connect(o);
	ck_assert_ok(receiver);
	auto end = (*receiver)->receive(5s);
	ck_assert_ok(end);
	ck_assert(!end->has_value());
	consumed.set_value();
	producer.join();
	receiver->reset();
	unlink(path.c_str());
	return type;
}

} // namespace

// A producer that does not offer the cache (an older one, or one written from the version 1
// format) never hears of it; one that offers it hears Features first.
START_TEST(a_consumer_announces_its_cache_only_when_offered)
{
	ck_assert_uint_eq(firstFromConsumer(false), 0);
	ck_assert_uint_eq(firstFromConsumer(true), static_cast<uint16_t>(WireType::Features));
}
END_TEST

// What is not a sealed shared-memory file is refused, as it would be in a frame, and every fd
// that came with a refused message is closed.
START_TEST(remember_refuses_what_a_frame_would)
{
	UniqueFd unsealed = makeMemfd(kNv12Bytes, false);
	UniqueFd event(eventfd(0, EFD_CLOEXEC));
	UniqueFd sealed = makeMemfd(kNv12Bytes, true);
	for (int fd : { unsealed.get(), event.get() }) {
		Received r = rememberMessage(0, fd);
		ck_assert_error(decodeRemember(r.data(), r.fdList()), ErrorCode::BadFd, "fd");
		ck_assert(!r.fds[0].isValid());
	}
	// An empty memfd.
	UniqueFd empty = makeMemfd(0, true);
	Received r = rememberMessage(0, empty.get());
	ck_assert(!decodeRemember(r.data(), r.fdList()).ok());
	ck_assert(!r.fds[0].isValid());
	// A slot past the cache, a use other than shared memory, no fd or two.
	r = rememberMessage(0, sealed.get());
	r.patch<uint32_t>(kWireHeaderBytes, kWireMaxCachedFiles);
	ck_assert_error(decodeRemember(r.data(), r.fdList()), ErrorCode::InvalidArgument, "slot");
	ck_assert(!r.fds[0].isValid());
	r = rememberMessage(0, sealed.get());
	r.patch<uint32_t>(kWireHeaderBytes + 4, 2);
	ck_assert_error(decodeRemember(r.data(), r.fdList()), ErrorCode::InvalidArgument, "use");
	ck_assert(!r.fds[0].isValid());
	r = rememberMessage(0, sealed.get());
	r.fds[1] = makeMemfd(16, true);
	r.numFds = 2;
	r.patch<uint32_t>(12, 2);
	ck_assert_error(decodeRemember(r.data(), r.fdList()), ErrorCode::InvalidArgument, "numFds");
	ck_assert(!r.fds[0].isValid() && !r.fds[1].isValid());
	// Every truncation is refused.
	Received whole = rememberMessage(5, sealed.get());
	for (uint32_t size = 0; size < whole.size; ++size) {
		Received cut = rememberMessage(5, sealed.get());
		cut.size = size;
		cut.patch<uint32_t>(8, size);
		ck_assert(!decodeRemember(cut.data(), cut.fdList()).ok());
	}
}
END_TEST

START_TEST(a_cached_frame_names_its_file_without_an_fd)
{
	const Frame frame = nv12Shm();
	const std::array<int32_t, 1> slot{ 2 };
	WireMessage m;
	ck_assert_ok(encodeFrame(frame, 7, true, slot, m));
	ck_assert_uint_eq(m.numFds, 0);
	Received r = receive(m);
	std::array<std::optional<ShmFd>, 4> cache;
	cache[2] = keptFile(kNv12Bytes + 4096);
	auto decoded = decodeFrame(r.data(), r.fdList(), cache);
	ck_assert_ok(decoded);
	ck_assert_uint_eq(decoded->id, 7);
	ck_assert_uint_eq(decoded->cachedResources, 1);
	const ShmFd *shm = decoded->frame.resource(0).get<ShmFd>();
	ck_assert_ptr_nonnull(shm);
	// The kept file, cut to the frame's range.
	ck_assert_int_eq(shm->desc().fd.get(), cache[2]->desc().fd.get());
	ck_assert_uint_eq(shm->desc().offset, 0);
	ck_assert_uint_eq(shm->desc().size, kNv12Bytes);
	ck_assert(shm->isSealed());
	ck_assert_uint_eq(decoded->frame.numPlanes(), 2);

	// Without a cache, with the slot empty, or past the cache: refused.
	ck_assert_error(decodeFrame(r.data(), r.fdList()), ErrorCode::InvalidArgument,
			"resources[0].fd");
	std::array<std::optional<ShmFd>, 4> empty;
	ck_assert_error(decodeFrame(r.data(), r.fdList(), empty), ErrorCode::InvalidArgument,
			"resources[0].fd");
	ck_assert_error(decodeFrame(r.data(), r.fdList(), std::span(cache.data(), 2)),
			ErrorCode::InvalidArgument, "resources[0].fd");
	// A kept file smaller than the frame's range.
	cache[2] = keptFile(kNv12Bytes - 1);
	ck_assert_error(decodeFrame(r.data(), r.fdList(), cache), ErrorCode::OutOfRange, "size");

	// The encoder checks its slots.
	const std::array<int32_t, 1> past{ int32_t(kWireMaxCachedFiles) };
	ck_assert_error(encodeFrame(frame, 7, true, past, m), ErrorCode::InvalidArgument,
			"cachedSlots");
	const std::array<int32_t, 2> tooMany{ 0, 1 };
	ck_assert_error(encodeFrame(frame, 7, true, tooMany, m), ErrorCode::InvalidArgument,
			"cachedSlots");
	const std::array<int32_t, 1> onDmaBuf{ 0 };
	ck_assert_error(encodeFrame(nv12DmaBuf(), 7, true, onDmaBuf, m), ErrorCode::InvalidArgument,
			"cachedSlots");
	// A frame of three files, the middle one kept: two fds cross.
	const std::array<int32_t, 3> middle{ -1, 0, -1 };
	const Frame planes = yuv420pShm(); // lends the message its fds
	ck_assert_ok(encodeFrame(planes, 8, false, middle, m));
	ck_assert_uint_eq(m.numFds, 2);
	Received three = receive(m);
	cache[0] = keptFile(uint64_t(kW) * kH / 4);
	auto mixed = decodeFrame(three.data(), three.fdList(), cache);
	ck_assert_ok(mixed);
	ck_assert_uint_eq(mixed->cachedResources, 1);
}
END_TEST

// Every truncation of a cached frame is refused, and no flipped byte crashes the decoder or
// yields a range outside the kept file.
START_TEST(hostile_cached_frames_are_refused)
{
	const Frame frame = nv12Shm();
	const std::array<int32_t, 1> slot{ 0 };
	WireMessage m;
	ck_assert_ok(encodeFrame(frame, 1, true, slot, m));
	std::array<std::optional<ShmFd>, 2> cache;
	cache[0] = keptFile(kNv12Bytes);
	for (uint32_t size = 0; size < m.size; ++size) {
		Received cut = receive(m);
		cut.size = size;
		cut.patch<uint32_t>(8, size);
		ck_assert(!decodeFrame(cut.data(), cut.fdList(), cache).ok());
	}
	for (uint32_t at = 0; at < m.size; ++at) {
		for (const unsigned flip : { 0x01u, 0x80u, 0xffu }) {
			Received bad = receive(m);
			bad.bytes[at] ^= std::byte(flip);
			auto decoded = decodeFrame(bad.data(), bad.fdList(), cache);
			if (!decoded.ok())
				continue;
			const ShmFd *shm = decoded->frame.resource(0).get<ShmFd>();
			ck_assert_ptr_nonnull(shm);
			ck_assert_uint_le(shm->desc().offset + shm->desc().size, kNv12Bytes);
		}
	}
}
END_TEST

namespace {

FrameSenderOptions senderOptions(const std::string &path)
{
	FrameSenderOptions o;
	o.socketPath = path;
	o.caps = "video/x-raw,format=NV12,width=320,height=180";
	return o;
}

// Sends `count` frames through `pool`, each slot reused once its consumer released it.
void produce(FrameSender &sender, std::vector<PoolSlot> &pool, uint64_t first, uint64_t count)
{
	for (uint64_t n = first; n < first + count; ++n) {
		PoolSlot &slot = pool[n % pool.size()];
		ck_assert_ok(slot.gate.released().wait(5s));
		ck_assert_ok(slot.gate.reset());
		stamp(slot, n);
		auto sent = sender.send(*slot.frame);
		ck_assert_ok(sent);
		ck_assert_uint_eq(*sent, 1);
	}
	for (PoolSlot &slot : pool)
		ck_assert_ok(slot.gate.released().wait(5s));
}

// Receives frames until `count` came, each with the stamp it was sent with; false otherwise.
bool consume(FrameReceiver &receiver, uint64_t first, uint64_t count)
{
	for (uint64_t n = first; n < first + count; ++n) {
		auto frame = receiver.receive(5s);
		if (!frame.ok() || !*frame || readStamp(**frame) != n)
			return false;
		(void)(*frame)->release().signal();
	}
	return true;
}

// `frames` through a pool of `files` between a sender and a receiver keeping `cachedFiles`.
struct Run {
	FrameSenderStats sender;
	FrameReceiverStats receiver, receiverAfterFirst;
	bool received = false;
};
Run runPool(const char *name, uint32_t cachedFiles, size_t files, uint64_t frames)
{
	const std::string path = socketPath(name);
	auto pool = makePool(files);
	for (PoolSlot &slot : pool)
		ck_assert_ok(slot.gate.signal()); // free at first
	Run run;
	{
		auto sender = FrameSender::create(senderOptions(path));
		ck_assert_ok(sender);
		FrameReceiverOptions o;
		o.socketPath = path;
		o.cachedFiles = cachedFiles;
		auto receiver = FrameReceiver::connect(o);
		ck_assert_ok(receiver);
		ck_assert_ok((*sender)->waitForPeers(1, 5s));
		// Half, then the other half: by then the sender has read the receiver's Features
		// (it came before any release the first half waited for).
		bool firstHalf = false, secondHalf = false;
		std::thread consumer([&] { firstHalf = consume(**receiver, 0, frames / 2); });
		produce(**sender, pool, 0, frames / 2);
		consumer.join();
		run.receiverAfterFirst = (*receiver)->stats();
		consumer = std::thread(
			[&] { secondHalf = consume(**receiver, frames / 2, frames - frames / 2); });
		produce(**sender, pool, frames / 2, frames - frames / 2);
		consumer.join();
		run.received = firstHalf && secondHalf;
		run.sender = (*sender)->stats();
		run.receiver = (*receiver)->stats();
	}
	freePool(pool);
	return run;
}

} // namespace

namespace {

// A sealed memfd of `size` bytes whose first byte is `stamp`.
UniqueFd stampedFile(uint64_t size, uint8_t stamp)
{
	UniqueFd fd = makeMemfd(size, true);
	ck_assert_int_eq(pwrite(fd.get(), &stamp, 1, 0), 1);
	return fd;
}

// The first byte of the file frame's resource 0 shows.
uint8_t firstByte(const Frame &frame)
{
	const ShmFd *shm = frame.resource(0).get<ShmFd>();
	ck_assert_ptr_nonnull(shm);
	uint8_t byte = 0;
	ck_assert_int_eq(pread(shm->desc().fd.get(), &byte, 1, off_t(shm->desc().offset)), 1);
	return byte;
}

} // namespace

// A pool's frame comes as the same bytes every time but for its id; the receiver checks it once
// and gives the same frame again. The same bytes after another file took the slot name that
// file: a frame over the new file, or, when the new file is too small for it, a refusal; never
// the frame that was checked over the old one.
START_TEST(a_frame_sent_again_names_the_file_its_slot_holds_now)
{
	const std::string path = socketPath("checked");
	const int listener = listenAt(path);
	ck_assert_int_ge(listener, 0);
	const UniqueFd fileA = stampedFile(kNv12Bytes, 0xa1);
	const UniqueFd fileB = stampedFile(kNv12Bytes + 4096, 0xb2);
	const UniqueFd small = stampedFile(kNv12Bytes - 1, 0xc3);
	bool sent = true; // every message encoded and taken whole (no assertion off this thread)
	std::thread producer([&] {
		const int peer = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
		WireMessage m;
		sent = encodeHello("video/x-raw", 4, m, true).ok() && sendRaw(peer, m);
		const Frame frame = nv12Shm();
		const std::array<int32_t, 1> slot{ 0 };
		auto sendFrame = [&](uint64_t id) {
			sent = encodeFrame(frame, id, false, slot, m).ok() && sendRaw(peer, m) &&
			       sent;
		};
		for (const int fd : { fileA.get(), fileB.get(), small.get() }) {
			sent = encodeRemember(0, fd, m).ok() && sendRaw(peer, m) && sent;
			const uint64_t first = fd == fileA.get() ? 1 : fd == fileB.get() ? 4 : 6;
			sendFrame(first);
			sendFrame(first + 1);
			if (fd == fileA.get())
				sendFrame(3);
		}
		encodeBye(m);
		sent = sendRaw(peer, m) && sent;
		close(peer);
	});
	FrameReceiverOptions o;
	o.socketPath = path;
	o.cachedFiles = 4;
	auto receiver = FrameReceiver::connect(o);
	ck_assert_ok(receiver);
	std::optional<Frame> firstOverA;
	for (uint64_t n = 1; n <= 5; ++n) {
		auto frame = (*receiver)->receive(5s);
		ck_assert_ok(frame);
		ck_assert_msg(frame->has_value(), "frame %lu did not come", n);
		ck_assert_uint_eq(firstByte(**frame), n <= 3 ? 0xa1 : 0xb2);
		ck_assert_uint_eq((*frame)->numPlanes(), 2);
		ck_assert_uint_eq((*frame)->plane(1).offset, uint64_t(kW) * kH);
		if (n == 1)
			firstOverA = **frame;
		for (uint32_t p = 0; p < 2; ++p)
			ck_assert((*frame)->plane(p) == firstOverA->plane(p));
	}
	// Frames 6 and 7 name the small file: refused (its size is checked as for a new frame).
	auto end = (*receiver)->receive(5s);
	ck_assert_ok(end);
	ck_assert(!end->has_value());
	const FrameReceiverStats stats = (*receiver)->stats();
	ck_assert_uint_eq(stats.badMessages, 2);
	ck_assert_uint_eq(stats.framesReceived, 5);
	ck_assert_uint_eq(stats.framesOverKeptFiles, 5);
	ck_assert_uint_eq(stats.filesRemembered, 3);
	producer.join();
	ck_assert(sent);
	close(listener);
	unlink(path.c_str());
}
END_TEST

START_TEST(pooled_files_cross_once)
{
	const int fdsBefore = openFdCount();
	constexpr uint64_t kFrames = 60;
	const Run run = runPool("cache", kWireMaxCachedFiles, 3, kFrames);
	ck_assert(run.received);
	// Each of the three files was sent once, and every frame of the second half named its
	// file by slot.
	ck_assert_uint_eq(run.sender.filesRemembered, 3);
	ck_assert_uint_eq(run.receiver.filesRemembered, 3);
	ck_assert_uint_eq(run.receiver.framesOverKeptFiles -
				  run.receiverAfterFirst.framesOverKeptFiles,
			  kFrames / 2);
	ck_assert_uint_eq(run.sender.framesOverKeptFiles, run.receiver.framesOverKeptFiles);
	ck_assert_uint_eq(run.receiver.badMessages, 0);
	ck_assert_uint_eq(run.sender.badMessages, 0);
	ck_assert_int_eq(openFdCount(), fdsBefore);
}
END_TEST

START_TEST(a_receiver_without_a_cache_gets_fds)
{
	const Run run = runPool("nocache", 0, 3, 20);
	ck_assert(run.received);
	ck_assert_uint_eq(run.sender.filesRemembered, 0);
	ck_assert_uint_eq(run.sender.framesOverKeptFiles, 0);
	ck_assert_uint_eq(run.receiver.framesOverKeptFiles, 0);
	ck_assert_uint_eq(run.sender.badMessages, 0);
}
END_TEST

// More files than the receiver keeps: two of the four are named by slot, the other two still
// cross as fds, and every frame carries the right pixels.
START_TEST(more_files_than_slots)
{
	const Run run = runPool("fewslots", 2, 4, 40);
	ck_assert(run.received);
	ck_assert_uint_eq(run.receiver.badMessages, 0);
	ck_assert_uint_eq(run.sender.filesRemembered, 2);
	ck_assert_uint_eq(run.receiver.filesRemembered, 2);
	ck_assert_uint_eq(run.receiver.filesHeld, 2);
	// Of the second half's 20 frames, the 10 over the two kept files.
	ck_assert_uint_eq(
		run.receiver.framesOverKeptFiles - run.receiverAfterFirst.framesOverKeptFiles, 10);
}
END_TEST

// Files the producer frees are let go on both sides: the receiver's fds come back once the
// sender's next frame told it (Forget), long before either side goes away.
START_TEST(freed_files_are_forgotten)
{
	const std::string path = socketPath("forget");
	auto sender = FrameSender::create(senderOptions(path));
	ck_assert_ok(sender);
	FrameReceiverOptions o;
	o.socketPath = path;
	auto receiver = FrameReceiver::connect(o);
	ck_assert_ok(receiver);
	ck_assert_ok((*sender)->waitForPeers(1, 5s));
	auto pool = makePool(4);
	for (PoolSlot &slot : pool)
		ck_assert_ok(slot.gate.signal());
	bool received = false;
	std::thread consumer([&] { received = consume(**receiver, 0, 40); });
	produce(**sender, pool, 0, 40);
	consumer.join();
	ck_assert(received);
	ck_assert_uint_eq((*receiver)->stats().filesHeld, 4);
	freePool(pool); // the producer lets its four files go
	auto next = makePool(1);
	ck_assert_ok(next[0].gate.signal());
	ck_assert_ok(next[0].gate.released().wait(5s));
	const int fdsBefore = openFdCount();
	// The next frames (over a new file) tell the receiver to let the four go: the first one
	// that finds the sender's copies the only ones left (the sender's thread may still hold
	// the last released frame for a moment).
	for (uint64_t n = 40; n < 140 && (*receiver)->stats().filesHeld != 1; ++n) {
		consumer = std::thread([&] { received = consume(**receiver, n, 1); });
		produce(**sender, next, n, 1);
		consumer.join();
		ck_assert(received);
	}
	ck_assert_uint_eq((*receiver)->stats().filesHeld, 1);
	// Four files closed on each side (the sender's last copies and the receiver's), the new
	// one opened by the receiver (the sender's thread may close one more: the gate of the
	// last frame it held a moment longer).
	ck_assert_int_le(openFdCount(), fdsBefore - 8 + 1);
	freePool(next);
}
END_TEST

int main()
{
	Suite *s = suite_create("file_cache");
	TCase *wire = tcase_create("wire");
	tcase_add_test(wire, control_messages_of_the_cache_round_trip);
	tcase_add_test(wire, a_consumer_announces_its_cache_only_when_offered);
	tcase_add_test(wire, remember_refuses_what_a_frame_would);
	tcase_add_test(wire, a_cached_frame_names_its_file_without_an_fd);
	tcase_add_test(wire, hostile_cached_frames_are_refused);
	tcase_add_test(wire, a_frame_sent_again_names_the_file_its_slot_holds_now);
	suite_add_tcase(s, wire);
	TCase *transport = tcase_create("transport");
	tcase_set_timeout(transport, 60);
	tcase_add_test(transport, pooled_files_cross_once);
	tcase_add_test(transport, a_receiver_without_a_cache_gets_fds);
	tcase_add_test(transport, more_files_than_slots);
	tcase_add_test(transport, freed_files_are_forgotten);
	suite_add_tcase(s, transport);
	return runSuite(s);
}
