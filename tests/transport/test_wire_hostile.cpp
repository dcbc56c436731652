// The wire format against hostile peers: every malformed message is refused, no crash, no fd leak.
#include "wire_test_frames.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <sys/mman.h>
#include <sys/socket.h>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;

namespace {

// Shared with the forked test processes, so that main can print totals.
struct Tally {
	unsigned refused;
	unsigned accepted; // byte flips that still make a valid frame
	unsigned leaked;
};
Tally *g_tally = nullptr;

void add(unsigned Tally::*field, unsigned n)
{
	if (g_tally)
		__atomic_fetch_add(&(g_tally->*field), n, __ATOMIC_RELAXED);
}

// A decoded frame that came through a hostile path is still a frame the contract allows.
bool plausible(const Frame &f)
{
	if (f.numResources() < 1 || f.numResources() > 4 || f.numPlanes() < 1 || f.numPlanes() > 4)
		return false;
	for (uint32_t i = 0; i < f.numResources(); ++i) {
		const ResourceKind k = f.resource(i).kind();
		if (k != ResourceKind::ShmFd && k != ResourceKind::DmaBuf)
			return false;
	}
	return f.acquire().isNoop() || f.acquire().kind() == SyncKind::FenceFd;
}

// Decodes `msg` as a receiver would (header, then frame). Returns true when it was refused;
// when `mayPass` a valid result is allowed but must be plausible. Either way every fd that
// came with it is closed once the receiver's handles are gone.
bool decodeHostile(Received msg, bool mayPass = false)
{
	const int before = openFdCount() - int(msg.numFds);
	bool refused;
	{
		auto header = decodeHeader(msg.data(), msg.numFds);
		auto frame = decodeFrame(msg.data(), msg.fdList());
		refused = !frame.ok();
		if (!refused) {
			ck_assert_msg(mayPass, "a hostile message was accepted");
			ck_assert(header.ok() && *header == WireType::Frame);
			ck_assert(plausible(frame->frame));
		} else {
			ck_assert(!frame.error().message().empty());
		}
		msg = Received();
	}
	const int leaked = openFdCount() - before;
	add(&Tally::leaked, leaked > 0 ? unsigned(leaked) : 0);
	add(refused ? &Tally::refused : &Tally::accepted, 1);
	ck_assert_int_eq(leaked, 0);
	return refused;
}

// A valid message to start from, with the frame whose fds it borrows.
struct Base {
	Frame frame;
	WireMessage message;
};
Base encoded(Frame frame)
{
	Base b{ std::move(frame), {} };
	ck_assert_ok(encodeFrame(b.frame, 9, true, b.message));
	return b;
}

template<typename T>
Received patched(const Base &b, uint32_t offset, T value)
{
	Received r = receive(b.message);
	r.patch(offset, value);
	return r;
}

// The message of `b` with the fd at `index` replaced by `fd`.
Received withFd(const Base &b, uint32_t index, int fd)
{
	Received r = receive(b.message);
	r.fds[index] = UniqueFd(fd);
	return r;
}

UniqueFd g_eventFd;

Base fenced()
{
	if (!g_eventFd.isValid())
		g_eventFd = UniqueFd(eventfd(0, EFD_CLOEXEC));
	return encoded(nv12Shm(eventfdPoint(g_eventFd.get())));
}

} // namespace

START_TEST(truncated_at_every_length)
{
	unsigned refused = 0, tried = 0;
	for (const Base &b : { fenced(), encoded(nv12DmaBuf()), encoded(yuv420pShm()) }) {
		for (uint32_t len = 0; len < b.message.size; ++len) {
			// As cut by the socket (header size then disagrees) and with the header
			// patched to claim the shorter length, so the body's own reads are tested.
			Received cut = receive(b.message);
			cut.size = len;
			refused += decodeHostile(std::move(cut));
			++tried;
			if (len >= kWireHeaderBytes) {
				Received claimed = receive(b.message);
				claimed.size = len;
				claimed.patch<uint32_t>(8, len);
				refused += decodeHostile(std::move(claimed));
				++tried;
			}
		}
	}
	ck_assert_uint_eq(refused, tried);
}
END_TEST

START_TEST(every_byte_flipped)
{
	unsigned tried = 0;
	for (const Base &b : { fenced(), encoded(nv12DmaBuf()), encoded(yuv420pShm()) }) {
		for (uint32_t i = 0; i < b.message.size; ++i) {
			Received r = receive(b.message);
			r.bytes[i] ^= std::byte{ 0xff };
			decodeHostile(std::move(r), true);
			++tried;
		}
	}
	ck_assert_uint_gt(tried, 400);
}
END_TEST

START_TEST(bad_headers)
{
	const Base b = encoded(nv12Shm());
	ck_assert(decodeHostile(patched<uint32_t>(b, 0, 0x31574848))); // magic
	ck_assert(decodeHostile(patched<uint16_t>(b, 4, 2)));          // version
	ck_assert(decodeHostile(patched<uint16_t>(b, 4, 0)));
	// Unknown types, then known types that are not a frame.
	const uint16_t types[] = { 0, 6, 0xffff, 1, 3, 4, 5 };
	for (uint16_t type : types)
		ck_assert(decodeHostile(patched<uint16_t>(b, 6, type)));
	ck_assert(decodeHostile(patched<uint32_t>(b, 8, shm::kBytesNoop + 1))); // size != bytes
	ck_assert(decodeHostile(patched<uint32_t>(b, 8, shm::kBytesNoop - 1)));
	ck_assert(decodeHostile(patched<uint32_t>(b, 8, UINT32_MAX)));
	ck_assert(decodeHostile(patched<uint32_t>(b, 12, 0))); // header fds != fds
	ck_assert(decodeHostile(patched<uint32_t>(b, 12, 2)));
	Received none = receive(b.message);
	none.numFds = 0; // the fd never arrived (MSG_CTRUNC)
	none.fds[0] = UniqueFd();
	ck_assert(decodeHostile(std::move(none)));
	// More fds than any frame carries, header agreeing.
	Received flood = receive(b.message);
	while (flood.numFds < kWireMaxFds + 1)
		flood.fds[flood.numFds++] = makeMemfd(16);
	flood.patch<uint32_t>(12, flood.numFds);
	ck_assert(decodeHostile(std::move(flood)));
	// Oversized and undersized buffers.
	Received big = receive(b.message);
	big.size = kWireMaxMessage;
	big.patch<uint32_t>(8, kWireMaxMessage);
	ck_assert(decodeHostile(std::move(big)));
}
END_TEST

START_TEST(counts_out_of_bounds)
{
	const Base b = encoded(nv12Shm());
	for (uint32_t n : { 0u, 5u, UINT32_MAX }) {
		ck_assert(decodeHostile(patched(b, shm::kNumResources, n)));
		ck_assert(decodeHostile(patched(b, shm::kNumPlanes, n)));
	}
	const Base d = encoded(nv12DmaBuf());
	for (uint32_t n : { 0u, 5u, UINT32_MAX })
		ck_assert(decodeHostile(patched(d, dma::kNumObjects, n)));
	// One object fewer than the fds sent: the second fd is unused, the planes name object 1.
	ck_assert(decodeHostile(patched(d, dma::kNumObjects, 1u)));
}
END_TEST

START_TEST(fd_indices_checked)
{
	const Base b = encoded(nv12Shm());
	for (uint32_t index : { 1u, 17u, UINT32_MAX })
		ck_assert(decodeHostile(patched(b, shm::kFdIndex, index)));
	// The same fd named twice (the other one then unused).
	ck_assert(decodeHostile(patched(encoded(yuv420pShm()), yuv::kResource1Fd, 0u)));
	ck_assert(decodeHostile(patched(encoded(nv12DmaBuf()), dma::kObject1Fd, 0u)));
	const Base f = fenced();
	ck_assert(decodeHostile(patched(f, shm::kAcquireFd, 0u)));
	ck_assert(decodeHostile(patched(f, shm::kFdIndex, 1u)));
	// An extra fd nobody uses, announced in the header.
	Received extra = receive(b.message);
	extra.fds[extra.numFds++] = makeMemfd(4096);
	extra.patch<uint32_t>(12, extra.numFds);
	ck_assert(decodeHostile(std::move(extra)));
}
END_TEST

START_TEST(geometry_past_the_object)
{
	const Base b = encoded(nv12Shm());
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kSize, kNv12Bytes + 1)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kSize, UINT64_MAX)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kOffset, 1)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kOffset, UINT64_MAX)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kSize, 0)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kPlane1Offset, kNv12Bytes)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kPlane1Offset, uint64_t(kW) * kH + 1)));
	ck_assert(decodeHostile(patched<uint64_t>(b, shm::kPlane1Offset, UINT64_MAX)));
	ck_assert(decodeHostile(patched<uint32_t>(b, shm::kPlane1Stride, kW * 2)));
	ck_assert(decodeHostile(patched<uint32_t>(b, shm::kPlane1Stride, UINT32_MAX)));
	const Base d = encoded(nv12DmaBuf());
	ck_assert(decodeHostile(patched<uint64_t>(d, dma::kObject0Size, uint64_t(kW) * kH + 1)));
	ck_assert(decodeHostile(patched<uint64_t>(d, dma::kObject0Size, UINT64_MAX)));
}
END_TEST

START_TEST(wrong_fd_types)
{
	const Base b = encoded(nv12Shm());
	const Base d = encoded(nv12DmaBuf());
	const Base f = fenced();
	int sv[2], pv[2];
	// Where memory is expected: sockets, pipes, a directory, an eventfd.
	for (const Base *m : { &b, &d }) {
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
		ck_assert(decodeHostile(withFd(*m, 0, sv[0])));
		close(sv[1]);
		ck_assert_int_eq(pipe2(pv, O_CLOEXEC), 0);
		ck_assert(decodeHostile(withFd(*m, 0, pv[0])));
		ck_assert(decodeHostile(withFd(*m, 0, pv[1])));
		ck_assert(decodeHostile(
			withFd(*m, 0, open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC))));
		ck_assert(decodeHostile(
			withFd(*m, 0, open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC))));
		ck_assert(decodeHostile(withFd(*m, 0, eventfd(0, EFD_CLOEXEC))));
		ck_assert(decodeHostile(withFd(*m, 0, open("/dev/null", O_RDWR | O_CLOEXEC))));
		// A memfd that is not sealed against shrinking (it could vanish under a mapping).
		ck_assert(decodeHostile(withFd(*m, 0, makeMemfd(kNv12Bytes).release())));
	}
	// Where a fence is expected: memory, a pipe, a socket.
	ck_assert(decodeHostile(withFd(f, 1, makeMemfd(64).release())));
	ck_assert_int_eq(pipe2(pv, O_CLOEXEC), 0);
	ck_assert(decodeHostile(withFd(f, 1, pv[0])));
	close(pv[1]);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert(decodeHostile(withFd(f, 1, sv[0])));
	close(sv[1]);
}
END_TEST

// Memory the receiver cannot map: the file is a memfd, but the fd was opened O_PATH (no I/O at
// all) or write-only (no PROT_READ mapping). It must be refused at decode, not at mmap.
START_TEST(unmappable_memory_fds)
{
	const Base b = encoded(nv12Shm());
	const Base d = encoded(nv12DmaBuf());
	for (const Base *m : { &b, &d }) {
		char path[64];
		std::snprintf(path, sizeof path, "/proc/self/fd/%d", m->message.fds[0]);
		ck_assert_msg(decodeHostile(withFd(*m, 0, open(path, O_PATH | O_CLOEXEC))),
			      "an O_PATH fd of a memfd was accepted as memory");
		ck_assert_msg(decodeHostile(withFd(*m, 0, open(path, O_WRONLY | O_CLOEXEC))),
			      "a write-only fd of a memfd was accepted as memory");
	}
}
END_TEST

START_TEST(unknown_kinds)
{
	const Base b = encoded(nv12Shm());
	for (uint32_t kind : { 0u, 1u, 2u, 3u, 10u, 19u, 99u, UINT32_MAX })
		ck_assert(decodeHostile(patched(b, shm::kKind, kind)));
	for (uint32_t kind : { 1u, 2u, 3u, 13u, UINT32_MAX })
		ck_assert(decodeHostile(patched(b, shm::kAcquireKind, kind)));
	ck_assert(decodeHostile(patched<uint32_t>(b, shm::kFormat, 5000)));
	ck_assert(decodeHostile(patched<uint8_t>(b, shm::kColorimetry + 2, 3)));
}
END_TEST

START_TEST(hostile_control_messages)
{
	unsigned refused = 0, tried = 0;
	WireMessage hello;
	ck_assert_ok(encodeHello("video/x-raw", 2, hello));
	const auto patch = [](WireMessage &m, uint32_t offset, uint32_t value) {
		std::memcpy(m.bytes.data() + offset, &value, sizeof value);
	};
	for (uint32_t len = 0; len < hello.size; ++len, ++tried) {
		WireMessage m = hello;
		m.size = len;
		if (len >= kWireHeaderBytes)
			patch(m, 8, len);
		refused += !decodeHello(m.data()).ok();
	}
	for (uint32_t capsSize : { 12u, kWireMaxCaps + 1, UINT32_MAX }) {
		WireMessage m = hello;
		patch(m, 20, capsSize);
		refused += !decodeHello(m.data()).ok();
		++tried;
	}
	WireMessage zero = hello;
	patch(zero, 16, 0); // maxInFlight 0
	refused += !decodeHello(zero.data()).ok();
	WireMessage release;
	encodeRelease(5, release);
	release.size -= 1;
	patch(release, 8, release.size);
	refused += !decodeRelease(release.data()).ok();
	WireMessage caps;
	ck_assert_ok(encodeCaps("x", caps));
	patch(caps, 16, 2);
	refused += !decodeCaps(caps.data()).ok();
	tried += 3;
	add(&Tally::refused, refused);
	ck_assert_uint_eq(refused, tried);
}
END_TEST

// The header promises that on error every fd passed in is closed, not only once the caller's
// handles go.
START_TEST(refusal_closes_fds_at_once)
{
	const Base b = encoded(yuv420pShm());
	const int before = openFdCount();
	Received r = patched(b, yuv::kResource1Fd, 7u);
	ck_assert(!decodeFrame(r.data(), r.fdList()).ok());
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

int main()
{
	void *shared = mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared != MAP_FAILED)
		g_tally = new (shared) Tally{};
	Suite *s = suite_create("wire_hostile");
	TCase *tc = tcase_create("hostile");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, truncated_at_every_length);
	tcase_add_test(tc, every_byte_flipped);
	tcase_add_test(tc, bad_headers);
	tcase_add_test(tc, counts_out_of_bounds);
	tcase_add_test(tc, fd_indices_checked);
	tcase_add_test(tc, geometry_past_the_object);
	tcase_add_test(tc, wrong_fd_types);
	tcase_add_test(tc, unmappable_memory_fds);
	tcase_add_test(tc, unknown_kinds);
	tcase_add_test(tc, hostile_control_messages);
	tcase_add_test(tc, refusal_closes_fds_at_once);
	suite_add_tcase(s, tc);
	SRunner *runner = srunner_create(s);
	srunner_run_all(runner, CK_NORMAL);
	const int failed = srunner_ntests_failed(runner);
	// A crash (signal) in a forked test shows as an error result.
	int crashes = 0;
	TestResult **results = srunner_results(runner);
	for (int i = 0; i < srunner_ntests_run(runner); ++i)
		crashes += tr_rtype(results[i]) == CK_ERROR;
	free(results);
	srunner_free(runner);
	if (g_tally)
		std::printf("wire format: %u byte-flipped messages still valid frames\n"
			    "wire format: %u hostile messages refused, %d crashes, %u fds leaked\n",
			    g_tally->accepted, g_tally->refused, crashes, g_tally->leaked);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
