// Attachments: an application's bytes (gpuhandlesink: a buffer's metas) that travel with a frame.
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/wire_format.h>

#include "raw_sender.h"
#include "transport_fixture.h"
#include "wire_test_frames.h"

#include <algorithm>
#include <chrono>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;
using namespace std::chrono_literals;

namespace {

// `size` bytes that differ for every `seed`.
std::vector<std::byte> pattern(size_t size, uint32_t seed)
{
	std::vector<std::byte> bytes(size);
	for (size_t i = 0; i < size; ++i)
		bytes[i] = std::byte((i * 31 + seed * 7 + (i >> 8)) & 0xff);
	return bytes;
}

bool sameBytes(std::span<const std::byte> a, std::span<const std::byte> b)
{
	return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

Result<std::unique_ptr<FrameReceiver>> connectTo(const std::string &path)
{
	FrameReceiverOptions o;
	o.socketPath = path;
	return FrameReceiver::connect(std::move(o));
}

} // namespace

// Every size from none to the largest, each with its own frame, in order; frames sent without
// one have none, also right after one that had.
START_TEST(attachments_travel_with_their_frames)
{
	const std::string path = socketPath("attach");
	FrameSenderOptions o;
	o.socketPath = path;
	o.caps = "video/x-raw,format=NV12,width=320,height=180";
	auto sender = FrameSender::create(o);
	ck_assert_ok(sender);
	auto receiver = connectTo(path);
	ck_assert_ok(receiver);
	ck_assert_ok((*sender)->waitForPeers(1, 5s));
	const size_t sizes[] = {
		1, 0, 17, 0, 0, 1000, kWireMaxAttachment - 1, kWireMaxAttachment, 3
	};
	auto pool = makePool(1);
	uint64_t withBytes = 0;
	for (uint32_t n = 0; n < std::size(sizes); ++n) {
		const std::vector<std::byte> bytes = pattern(sizes[n], n);
		stamp(pool[0], n);
		ck_assert_uint_eq((*sender)->send(*pool[0].frame, bytes).value(), 1);
		auto frame = (*receiver)->receive(5s);
		ck_assert_ok(frame);
		ck_assert(frame->has_value());
		ck_assert_uint_eq(readStamp(**frame), n);
		ck_assert_msg(sameBytes((*receiver)->attachment(), bytes),
			      "frame %u: an attachment of %zu bytes arrived as %zu", n, sizes[n],
			      (*receiver)->attachment().size());
		withBytes += !bytes.empty();
		ck_assert_ok((*frame)->release().signal());
		ck_assert_ok(pool[0].gate.released().wait(5s));
		ck_assert_ok(pool[0].gate.reset());
	}
	ck_assert_uint_eq((*receiver)->stats().attachmentsReceived, withBytes);
	// Too large: refused before anything is sent.
	const std::vector<std::byte> tooLarge = pattern(kWireMaxAttachment + 1, 0);
	ck_assert_error((*sender)->send(*pool[0].frame, tooLarge), ErrorCode::InvalidArgument,
			"attachment");
	ck_assert_error((*receiver)->receive(100ms), ErrorCode::Timeout, "timeout");
	freePool(pool);
}
END_TEST

// The wire form: a round trip, and each malformed form refused.
START_TEST(attachment_messages_are_checked)
{
	const std::vector<std::byte> bytes = pattern(40, 1);
	WireMessage m;
	ck_assert_ok(encodeAttachment(99, bytes, m));
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::Attachment);
	auto decoded = decodeAttachment(m.data());
	ck_assert_ok(decoded);
	ck_assert_uint_eq(decoded->id, 99);
	ck_assert(sameBytes(decoded->bytes, bytes));
	ck_assert_error(encodeAttachment(1, pattern(kWireMaxAttachment + 1, 0), m),
			ErrorCode::InvalidArgument, "attachment");
	// Every truncation: the header's size no longer matches.
	ck_assert_ok(encodeAttachment(99, bytes, m));
	for (uint32_t size = 0; size < m.size; ++size)
		ck_assert(!decodeAttachment(m.data().first(size)).ok());
	// The length field longer, then shorter, than the bytes that follow (header size kept).
	Received r = receive(m);
	r.patch<uint32_t>(kWireHeaderBytes + 8, 41);
	ck_assert_error(decodeAttachment(r.data()), ErrorCode::InvalidArgument, "size");
	r.patch<uint32_t>(kWireHeaderBytes + 8, 39);
	ck_assert_error(decodeAttachment(r.data()), ErrorCode::InvalidArgument, "size");
	r.patch<uint32_t>(kWireHeaderBytes + 8, kWireMaxAttachment + 1);
	ck_assert_error(decodeAttachment(r.data()), ErrorCode::InvalidArgument, "attachment");
	// A frame message is not an attachment.
	WireMessage frame;
	ck_assert_ok(encodeFrame(nv12Shm(), 1, false, frame));
	ck_assert(!decodeAttachment(frame.data()).ok());
}
END_TEST

// A sender whose attachment is not followed by its frame: the attachment is dropped, never
// given to another frame; a malformed one is refused and the frame still comes.
START_TEST(an_attachment_belongs_only_to_the_frame_right_after_it)
{
	const std::string path = socketPath("attach-raw");
	const int listener = listenAt(path);
	ck_assert_int_ge(listener, 0);
	const std::vector<std::byte> bytes = pattern(64, 2);
	bool sent = true; // every message the socket took whole (no assertion off the test's
			  // thread)
	std::thread producer([&] {
		const int peer = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
		WireMessage m;
		(void)encodeHello("video/x-raw", 4, m);
		sent = sendRaw(peer, m) && sent;
		const Frame frame = nv12Shm();
		(void)encodeAttachment(5, bytes, m); // for frame 5, which never comes
		sent = sendRaw(peer, m) && sent;
		(void)encodeFrame(frame, 6, false, m);
		sent = sendRaw(peer, m) && sent;
		(void)encodeAttachment(7, bytes, m); // a caps message comes between
		sent = sendRaw(peer, m) && sent;
		(void)encodeCaps("video/x-raw,width=2", m);
		sent = sendRaw(peer, m) && sent;
		(void)encodeFrame(frame, 7, false, m);
		sent = sendRaw(peer, m) && sent;
		(void)encodeAttachment(8, bytes, m); // malformed: its length field overruns
		Received r = receive(m);
		r.patch<uint32_t>(kWireHeaderBytes + 8, 65);
		(void)send(peer, r.bytes.data(), r.size, MSG_NOSIGNAL);
		(void)encodeFrame(frame, 8, false, m);
		sent = sendRaw(peer, m) && sent;
		(void)encodeAttachment(9, bytes, m); // right
		sent = sendRaw(peer, m) && sent;
		(void)encodeFrame(frame, 9, false, m);
		sent = sendRaw(peer, m) && sent;
		encodeBye(m);
		sent = sendRaw(peer, m) && sent;
		close(peer);
	});
	auto receiver = connectTo(path);
	ck_assert_ok(receiver);
	for (int n = 6; n <= 9; ++n) {
		auto frame = (*receiver)->receive(5s);
		ck_assert_ok(frame);
		ck_assert(frame->has_value());
		const size_t expected = n == 9 ? bytes.size() : 0;
		ck_assert_msg((*receiver)->attachment().size() == expected,
			      "frame %d came with %zu attachment bytes, expected %zu", n,
			      (*receiver)->attachment().size(), expected);
	}
	ck_assert(sameBytes((*receiver)->attachment(), bytes));
	auto end = (*receiver)->receive(5s);
	ck_assert_ok(end);
	ck_assert(!end->has_value());
	const FrameReceiverStats stats = (*receiver)->stats();
	ck_assert_uint_eq(stats.badMessages, 1);
	ck_assert_uint_eq(stats.attachmentsReceived, 1);
	producer.join();
	ck_assert(sent);
	close(listener);
	unlink(path.c_str());
}
END_TEST

int main()
{
	Suite *s = suite_create("frame_attachments");
	TCase *tc = tcase_create("attachments");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, attachments_travel_with_their_frames);
	tcase_add_test(tc, attachment_messages_are_checked);
	tcase_add_test(tc, an_attachment_belongs_only_to_the_frame_right_after_it);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
