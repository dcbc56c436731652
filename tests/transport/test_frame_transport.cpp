// The frame transport between threads and processes: fan-out, releases, crashes, peer rules.
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/wire_format.h>

#include "alloc_counter.h"
#include "transport_fixture.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;
using namespace std::chrono_literals;

namespace {

constexpr const char *kCaps = "video/x-raw(memory:GpuHandle),format=NV12,width=320,height=180";

FrameSenderOptions senderOptions(const std::string &path)
{
	FrameSenderOptions o;
	o.socketPath = path;
	o.caps = kCaps;
	return o;
}

// Producer loop: `count` frames through a 4-slot pool, each slot reused only once its
// consumers released it. Returns how many sends reached `peers` consumers.
uint64_t produce(FrameSender &sender, std::vector<PoolSlot> &pool, uint64_t count)
{
	std::vector<bool> used(pool.size(), false);
	uint64_t delivered = 0;
	for (uint64_t n = 0; n < count; ++n) {
		PoolSlot &slot = pool[n % pool.size()];
		if (used[n % pool.size()]) {
			if (!slot.gate.released().wait(5s).ok() || !slot.gate.reset().ok())
				return delivered;
		}
		used[n % pool.size()] = true;
		stamp(slot, n);
		auto sent = sender.send(*slot.frame);
		if (!sent.ok())
			return delivered;
		delivered += *sent;
	}
	return delivered;
}

// Consumer loop: `count` frames in order with their stamps, each released at once. Returns
// the frames that arrived in order.
uint64_t consume(FrameReceiver &receiver, uint64_t count, bool release = true)
{
	uint64_t good = 0;
	for (uint64_t n = 0; n < count; ++n) {
		auto frame = receiver.receive(5s);
		if (!frame.ok() || !*frame)
			return good;
		good += readStamp(**frame) == n;
		if (release)
			(void)(*frame)->release().signal();
	}
	return good;
}

Result<std::unique_ptr<FrameReceiver>> connectTo(const std::string &path)
{
	FrameReceiverOptions o;
	o.socketPath = path;
	return FrameReceiver::connect(std::move(o));
}

} // namespace

START_TEST(frames_reach_two_consumers_and_are_released)
{
	const int fdsBefore = openFdCount();
	const std::string path = socketPath("fanout");
	auto pool = makePool(4);
	constexpr uint64_t kFrames = 300;
	{
		auto sender = FrameSender::create(senderOptions(path));
		ck_assert_ok(sender);
		uint64_t got[2] = {};
		std::string caps[2];
		std::thread consumers[2];
		for (int i = 0; i < 2; ++i)
			consumers[i] = std::thread([&, i] {
				auto receiver = connectTo(path);
				if (!receiver.ok())
					return;
				caps[i] = (*receiver)->caps();
				got[i] = consume(**receiver, kFrames);
				// The stream ends with Bye once the sender goes.
				auto end = (*receiver)->receive(10s);
				got[i] += end.ok() && !*end;
			});
		ck_assert_ok((*sender)->waitForPeers(2, 5s));
		ck_assert_uint_eq(produce(**sender, pool, kFrames), 2 * kFrames);
		// Every frame was released by both consumers.
		for (PoolSlot &slot : pool)
			ck_assert_ok(slot.gate.released().wait(5s));
		FrameSenderStats stats = (*sender)->stats();
		ck_assert_uint_eq(stats.framesSent, 2 * kFrames);
		ck_assert_uint_eq(stats.releases, 2 * kFrames);
		ck_assert_uint_eq(stats.framesSkipped, 0);
		sender->reset();
		for (auto &t : consumers)
			t.join();
		ck_assert_uint_eq(got[0], kFrames + 1);
		ck_assert_uint_eq(got[1], kFrames + 1);
		ck_assert_string_eq(caps[0], kCaps);
		ck_assert_string_eq(caps[1], kCaps);
	}
	freePool(pool);
	struct stat st {};
	ck_assert_int_ne(lstat(path.c_str(), &st), 0); // the socket file is gone
	ck_assert_int_eq(openFdCount(), fdsBefore);
}
END_TEST

START_TEST(ten_thousand_frames_cross_processes)
{
	const int fdsBefore = openFdCount();
	const std::string path = socketPath("xproc");
	constexpr uint64_t kFrames = 10000;
	const pid_t child = fork();
	if (child == 0) {
		auto receiver = connectTo(path);
		if (!receiver.ok() || consume(**receiver, kFrames) != kFrames)
			_exit(1);
		// Releases are sent from the receiver's waiter thread: let the last ones go out
		// before the process ends (a sender would release them anyway when it hangs up).
		for (int i = 0; i < 500 && (*receiver)->stats().releasesSent < kFrames; ++i)
			std::this_thread::sleep_for(10ms);
		_exit((*receiver)->stats().releasesSent == kFrames ? 0 : 1);
	}
	auto pool = makePool(4);
	{
		auto sender = FrameSender::create(senderOptions(path));
		ck_assert_ok(sender);
		ck_assert_ok((*sender)->waitForPeers(1, 10s));
		const auto start = std::chrono::steady_clock::now();
		ck_assert_uint_eq(produce(**sender, pool, kFrames), kFrames);
		for (PoolSlot &slot : pool)
			ck_assert_ok(slot.gate.released().wait(5s));
		const double us = std::chrono::duration<double, std::micro>(
					  std::chrono::steady_clock::now() - start)
					  .count();
		std::printf("transport: %llu frames with release fences crossed processes, "
			    "%.1f us per frame\n",
			    static_cast<unsigned long long>(kFrames), us / double(kFrames));
		ck_assert_uint_eq((*sender)->stats().releases, kFrames);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	freePool(pool);
	ck_assert_int_eq(openFdCount(), fdsBefore);
}
END_TEST

START_TEST(consumer_killed_midstream_releases_its_frames)
{
	const int fdsBefore = openFdCount();
	const std::string path = socketPath("killconsumer");
	const pid_t child = fork();
	if (child == 0) {
		// Takes frames and never releases them, until it is killed.
		auto receiver = connectTo(path);
		if (receiver.ok())
			(void)consume(**receiver, 1000000, false);
		pause();
		_exit(0);
	}
	auto pool = makePool(4);
	{
		auto sender = FrameSender::create(senderOptions(path));
		ck_assert_ok(sender);
		ck_assert_ok((*sender)->waitForPeers(1, 10s));
		for (uint64_t n = 0; n < 4; ++n) {
			stamp(pool[n], n);
			ck_assert_uint_eq((*sender)->send(*pool[n].frame).value(), 1);
		}
		// The consumer is at its bound: a fifth frame is skipped, not queued.
		auto extra = makePool(1);
		ck_assert_uint_eq((*sender)->send(*extra[0].frame).value(), 0);
		ck_assert_ok(extra[0].gate.released().wait(1s)); // nobody took it: reusable
		freePool(extra);
		ck_assert(!pool[0].gate.isSignaled());
		kill(child, SIGKILL);
		int status = 0;
		waitpid(child, &status, 0);
		// Its four frames come back, and the sender carries on without it.
		for (PoolSlot &slot : pool)
			ck_assert_ok(slot.gate.released().wait(5s));
		FrameSenderStats stats = (*sender)->stats();
		ck_assert_uint_eq(stats.peersLost, 1);
		ck_assert_uint_eq(stats.peersConnected, 0);
		ck_assert_ok(pool[0].gate.reset());
		ck_assert_uint_eq((*sender)->send(*pool[0].frame).value(), 0);
	}
	freePool(pool);
	ck_assert_int_eq(openFdCount(), fdsBefore);
}
END_TEST

START_TEST(producer_killed_midstream_is_an_error_not_a_hang)
{
	const std::string path = socketPath("killproducer");
	const pid_t child = fork();
	if (child == 0) {
		auto pool = makePool(4);
		auto sender = FrameSender::create(senderOptions(path));
		if (sender.ok() && (*sender)->waitForPeers(1, 10s).ok())
			(void)produce(**sender, pool, 1000000);
		_exit(0);
	}
	const int fdsBefore = openFdCount();
	{
		FrameReceiverOptions o;
		o.socketPath = path;
		o.connectTimeout = 10s;
		auto receiver = FrameReceiver::connect(std::move(o));
		ck_assert_ok(receiver);
		ck_assert_uint_eq(consume(**receiver, 50), 50);
		kill(child, SIGKILL);
		int status = 0;
		waitpid(child, &status, 0);
		// Frames already queued may still arrive; then the loss is reported, before the
		// timeout: Io, not Timeout.
		Result<std::optional<Frame>> next = std::optional<Frame>();
		do {
			next = (*receiver)->receive(5s);
			if (next.ok() && *next)
				(void)(**next).release().signal();
		} while (next.ok() && *next);
		ck_assert(!next.ok());
		ck_assert_int_eq(static_cast<int>(next.error().code()),
				 static_cast<int>(ErrorCode::Io));
		// It stays lost.
		ck_assert_error((*receiver)->receive(1s), ErrorCode::Io, "peer");
	}
	ck_assert_int_eq(openFdCount(), fdsBefore);
	unlink(path.c_str()); // the killed sender could not remove its socket file
}
END_TEST

START_TEST(socket_is_owner_only_and_peers_are_bounded)
{
	const std::string path = socketPath("rules");
	FrameSenderOptions o = senderOptions(path);
	o.maxPeers = 1;
	auto sender = FrameSender::create(std::move(o));
	ck_assert_ok(sender);
	struct stat st {};
	ck_assert_int_eq(lstat(path.c_str(), &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	auto first = connectTo(path);
	ck_assert_ok(first);
	// The second consumer is over maxPeers: hung up on before any hello.
	auto second = connectTo(path);
	ck_assert_error(second, ErrorCode::Io, "socketPath");
	ck_assert_uint_eq((*sender)->stats().peersRefused, 1);
	ck_assert_uint_eq((*sender)->stats().peersConnected, 1);
	// Another file at the path is never replaced; bad options are refused.
	FrameSenderOptions bad = senderOptions("/tmp");
	ck_assert_error(FrameSender::create(bad), ErrorCode::InvalidArgument, "socketPath");
	bad = senderOptions(path + ".2");
	bad.maxPeers = 65;
	ck_assert_error(FrameSender::create(bad), ErrorCode::OutOfRange, "maxPeers");
	bad.maxPeers = 1;
	bad.maxInFlightPerPeer = 0;
	ck_assert_error(FrameSender::create(bad), ErrorCode::InvalidArgument, "maxInFlight");
	ck_assert_error(connectTo(std::string(200, 'x')), ErrorCode::InvalidArgument, "socketPath");
	FrameReceiverOptions none;
	none.socketPath = path + ".absent";
	none.connectTimeout = 50ms;
	ck_assert_error(FrameReceiver::connect(none), ErrorCode::Timeout, "socketPath");
}
END_TEST

START_TEST(strangers_are_refused_by_uid)
{
	if (getuid() != 0) {
		// Changing uid needs root; the check itself is covered by the socket rules above.
		std::printf("strangers_are_refused_by_uid: not root, uid check not exercised\n");
		ck_assert_uint_ne(getuid(), 0);
		return;
	}
	const std::string path = socketPath("uid");
	// Forked before the sender's thread exists (a fork of a threaded process may inherit a
	// held lock); the child waits on the pipe until the socket is there.
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	const pid_t child = fork();
	if (child == 0) {
		char go;
		close(ready[1]);
		if (read(ready[0], &go, 1) != 1 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		// This consumer accepts a root sender, so that the refusal is the sender's.
		FrameReceiverOptions ro;
		ro.socketPath = path;
		ro.peers.anyUser = true;
		auto receiver = FrameReceiver::connect(std::move(ro));
		_exit(!receiver.ok() && receiver.error().code() == ErrorCode::Io ? 0 : 1);
	}
	close(ready[0]);
	FrameSenderOptions o = senderOptions(path);
	o.socketMode = 0666; // the file lets anyone connect: the credential check must refuse
	auto sender = FrameSender::create(std::move(o));
	ck_assert_ok(sender);
	ck_assert_int_eq(write(ready[1], "g", 1), 1);
	close(ready[1]);
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_uint_eq((*sender)->stats().peersRefused, 1);
}
END_TEST

START_TEST(hostile_consumer_is_dropped_and_others_carry_on)
{
	const std::string path = socketPath("hostile");
	std::vector<std::string> logged;
	std::mutex logMutex;
	FrameSenderOptions o = senderOptions(path);
	o.log = [&](const Error &e) {
		std::lock_guard lock(logMutex);
		logged.push_back(e.message());
	};
	auto sender = FrameSender::create(std::move(o));
	ck_assert_ok(sender);
	auto good = connectTo(path);
	ck_assert_ok(good);
	// A raw client that reads the hello, then sends garbage.
	int raw = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	sockaddr_un address{};
	address.sun_family = AF_UNIX;
	std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
	ck_assert_int_eq(connect(raw, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
	char hello[kWireMaxMessage];
	ck_assert_int_gt(recv(raw, hello, sizeof hello, 0), 0);
	WireMessage release;
	encodeRelease(12345, release); // a frame it never got
	ck_assert_int_gt(send(raw, release.bytes.data(), release.size, MSG_NOSIGNAL), 0);
	const char junk[] = "not a gpuhandle message";
	for (int i = 0; i < 20; ++i)
		(void)send(raw, junk, sizeof junk, MSG_NOSIGNAL);
	// Dropped (polled for up to 10 s); the good consumer still gets frames.
	for (int i = 0; i < 1000 && (*sender)->stats().peersLost == 0; ++i)
		std::this_thread::sleep_for(10ms);
	FrameSenderStats stats = (*sender)->stats();
	ck_assert_uint_eq(stats.peersLost, 1);
	ck_assert_uint_eq(stats.badMessages, 16); // dropped at the 16th
	auto pool = makePool(1);
	stamp(pool[0], 0);
	ck_assert_uint_eq((*sender)->send(*pool[0].frame).value(), 1);
	ck_assert_uint_eq(consume(**good, 1), 1);
	{
		std::lock_guard lock(logMutex);
		ck_assert_uint_ge(logged.size(), 17); // 16 refusals and the drop
	}
	close(raw);
	freePool(pool);
}
END_TEST

START_TEST(caps_changes_reach_consumers)
{
	const std::string path = socketPath("caps");
	auto sender = FrameSender::create(senderOptions(path));
	ck_assert_ok(sender);
	auto receiver = connectTo(path);
	ck_assert_ok(receiver);
	ck_assert_string_eq((*receiver)->caps(), kCaps);
	ck_assert_uint_eq((*receiver)->capsMessages(), 0); // the hello's caps are not a message
	const std::string newCaps = "video/x-raw,format=NV12,width=640,height=360";
	ck_assert_ok((*sender)->setCaps(newCaps));
	auto pool = makePool(1);
	stamp(pool[0], 0);
	ck_assert_uint_eq((*sender)->send(*pool[0].frame).value(), 1);
	ck_assert_uint_eq(consume(**receiver, 1), 1);
	ck_assert_string_eq((*receiver)->caps(), newCaps.c_str());
	ck_assert_uint_eq((*receiver)->capsMessages(), 1);
	ck_assert_error((*sender)->setCaps(std::string(kWireMaxCaps + 1, 'c')),
			ErrorCode::InvalidArgument, "caps");
	freePool(pool);
}
END_TEST

// roomChanged fires when a consumer steps below its in-flight bound, comes or goes, and not for
// a release that leaves room as it was: a producer waiting for room sleeps on it (gpuhandlesink).
START_TEST(room_changes_are_notified)
{
	const std::string path = socketPath("room");
	std::mutex mutex;
	std::condition_variable changed;
	uint64_t calls = 0;
	FrameSenderOptions o = senderOptions(path);
	o.maxInFlightPerPeer = 2;
	o.roomChanged = [&] {
		std::lock_guard lock(mutex);
		calls++;
		changed.notify_all();
	};
	auto callsReach = [&](uint64_t n) {
		std::unique_lock lock(mutex);
		return changed.wait_for(lock, 5s, [&] { return calls >= n; });
	};
	auto callsNow = [&] {
		std::lock_guard lock(mutex);
		return calls;
	};
	auto sender = FrameSender::create(std::move(o));
	ck_assert_ok(sender);
	auto pool = makePool(2);
	{
		auto receiver = connectTo(path);
		ck_assert_ok(receiver);
		ck_assert_ok((*sender)->waitForPeers(1, 5s));
		ck_assert(callsReach(1)); // it came
		for (uint64_t n = 0; n < 2; ++n) {
			stamp(pool[n], n);
			ck_assert_uint_eq((*sender)->send(*pool[n].frame).value(), 1);
		}
		ck_assert_uint_eq((*sender)->stats().peersWithRoom, 0);
		std::optional<Frame> frames[2];
		for (auto &frame : frames) {
			auto got = (*receiver)->receive(5s);
			ck_assert_ok(got);
			ck_assert(got->has_value());
			frame = std::move(**got);
		}
		ck_assert_uint_eq(callsNow(), 1); // sending to the bound is no room change
		ck_assert_ok(frames[0]->release().signal());
		ck_assert(callsReach(2)); // back below the bound
		ck_assert_uint_eq((*sender)->stats().peersWithRoom, 1);
		ck_assert_ok(frames[1]->release().signal());
		ck_assert_ok(pool[1].gate.released().wait(5s));
		const FrameSenderStats stats = (*sender)->stats(); // after the release was handled
		ck_assert_uint_eq(stats.releases, 2);
		ck_assert_uint_eq(callsNow(), 2); // room as it was: no call
	}
	ck_assert(callsReach(3)); // the consumer went away
	ck_assert_uint_eq((*sender)->stats().peersConnected, 0);
	sender->reset();
	freePool(pool);
}
END_TEST

// A consumer's steady receive-and-release allocates (next to) nothing on its thread: the receiver
// re-arms the gates of frames nothing holds any more (no gate, fence or eventfd per frame) and its
// watches' callbacks fit in place; frames take their bodies from the thread's block lists.
START_TEST(steady_receives_allocate_nothing)
{
	if (std::getenv("GPUHANDLE_UNDER_VALGRIND")) {
		std::printf("under valgrind, allocations are not counted\n");
		return;
	}
	const std::string path = socketPath("steady");
	auto sender = FrameSender::create(senderOptions(path));
	ck_assert_ok(sender);
	auto receiver = connectTo(path);
	ck_assert_ok(receiver);
	ck_assert_ok((*sender)->waitForPeers(1, 5s));
	auto pool = makePool(2);
	const int fdsBefore = openFdCount();
	constexpr int kWarm = 200, kCounted = 400;
	uint64_t allocations = 0;
	int good = 0;
	for (int n = 0; n < kWarm + kCounted; ++n) {
		PoolSlot &slot = pool[size_t(n) % pool.size()];
		if (n >= int(pool.size()) &&
		    (!slot.gate.released().wait(5s).ok() || !slot.gate.reset().ok()))
			break;
		auto sent = (*sender)->send(*slot.frame);
		if (!sent.ok() || *sent != 1)
			break;
		test::AllocationScope scope;
		{
			auto frame = (*receiver)->receive(5s);
			if (!frame.ok() || !*frame || !(*frame)->release().signal().ok())
				break;
		} // the consumer's copy goes
		if (n >= kWarm)
			allocations += scope.count();
		good++;
	}
	ck_assert_int_eq(good, kWarm + kCounted);
	// Not one per frame (five before: a gate, its fence and their blocks, the watch's
	// callback, the received fd's holder): a frame that comes while the waiter thread still
	// holds the last gate's wait gets a new gate (the pool grows to what the timing needs), and
	// blocks dropped on the waiter thread come back in batches.
	ck_assert_uint_le(allocations, kCounted / 20);
	ck_assert_int_le(openFdCount(), fdsBefore + 8); // no eventfd per frame either
	receiver->reset();
	sender->reset();
	freePool(pool);
}
END_TEST

int main()
{
	Suite *s = suite_create("frame_transport");
	TCase *tc = tcase_create("transport");
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, frames_reach_two_consumers_and_are_released);
	tcase_add_test(tc, ten_thousand_frames_cross_processes);
	tcase_add_test(tc, consumer_killed_midstream_releases_its_frames);
	tcase_add_test(tc, producer_killed_midstream_is_an_error_not_a_hang);
	tcase_add_test(tc, socket_is_owner_only_and_peers_are_bounded);
	tcase_add_test(tc, strangers_are_refused_by_uid);
	tcase_add_test(tc, hostile_consumer_is_dropped_and_others_carry_on);
	tcase_add_test(tc, caps_changes_reach_consumers);
	tcase_add_test(tc, room_changes_are_notified);
	tcase_add_test(tc, steady_receives_allocate_nothing);
	suite_add_tcase(s, tc);
	const int status = gpuhandle::test::runSuite(s);
	return status;
}
