// Who owns a socket path: a second producer on a live path is refused (naming the first's
// process) and the first stays reachable; a crashed producer's socket is replaced; other files
// are never touched; a producer removes only the socket file it made; a producer waiting for
// caps greets nobody until then; a connect is cancelled when asked.
#include <gpuhandle/frame_transport.h>

#include "transport_fixture.h"

#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;
using namespace std::chrono_literals;

namespace {

constexpr const char *kCaps = "video/x-raw,format=NV12,width=320,height=180";

Result<std::unique_ptr<FrameSender>> listenOn(const std::string &path, bool waitForCaps = false)
{
	FrameSenderOptions so;
	so.socketPath = path;
	so.caps = waitForCaps ? "" : kCaps;
	so.waitForCaps = waitForCaps;
	return FrameSender::create(std::move(so));
}

Result<std::unique_ptr<FrameReceiver>> connectTo(const std::string &path, WaitDuration timeout,
						 const std::atomic<bool> *cancel = nullptr)
{
	FrameReceiverOptions ro;
	ro.socketPath = path;
	ro.connectTimeout = timeout;
	ro.cancel = cancel;
	return FrameReceiver::connect(std::move(ro));
}

// A socket file with nobody listening on it: what a crashed producer leaves.
void leaveStaleSocket(const std::string &path)
{
	UniqueFd s(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
	sockaddr_un address{};
	address.sun_family = AF_UNIX;
	std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
	ck_assert_int_eq(bind(s.get(), reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
	ck_assert_int_eq(listen(s.get(), 1), 0);
	// Closed: the file stays, nobody listens.
}

bool isSocket(const std::string &path)
{
	struct stat st {};
	return lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

} // namespace

START_TEST(a_second_producer_on_a_live_path_is_refused_and_the_first_stays)
{
	const std::string path = socketPath("owner-live");
	auto first = listenOn(path);
	ck_assert_ok(first);
	const int fdsBefore = openFdCount();
	const std::string fdsBeforeList = openFdList();
	auto second = listenOn(path);
	ck_assert_error(second, ErrorCode::InvalidState, "socketPath");
	const std::string why = second.error().message();
	const std::string pid = "process " + std::to_string(getpid());
	ck_assert_msg(why.find(pid) != std::string::npos, "the refusal does not name %s: %s",
		      pid.c_str(), why.c_str());
	ck_assert_msg(why.find(path) != std::string::npos, "the refusal does not name the path: %s",
		      why.c_str());
	// The first is still there: a consumer reaches it. The first producer accepts in the
	// order connections came, so once this consumer is in, it has taken the second's probe
	// too (which it may not have yet when the refusal returns: counting fds before that saw
	// the count right, then one more while the probe was being accepted).
	auto receiver = connectTo(path, 5s);
	ck_assert_ok(receiver);
	ck_assert(std::string((*receiver)->caps()) == kCaps);
	receiver->reset();
	// The probe and the refused socket are closed; the first producer closes what it accepted
	// of the probe and of the consumer once it sees them gone (a poll each; 5 s allowed for a
	// loaded machine). No connection is pending after them, so the count stays.
	for (int i = 0; i < 500 && openFdCount() != fdsBefore; ++i)
		std::this_thread::sleep_for(10ms);
	const FrameSenderStats st = (*first)->stats();
	ck_assert_msg(openFdCount() == fdsBefore,
		      "open fds: %s; before the second producer: %s; the first producer accepted "
		      "%llu, refused %llu, lost %llu, connected %u",
		      openFdList().c_str(), fdsBeforeList.c_str(),
		      static_cast<unsigned long long>(st.peersAccepted),
		      static_cast<unsigned long long>(st.peersRefused),
		      static_cast<unsigned long long>(st.peersLost), st.peersConnected);
	first->reset();
	ck_assert(!isSocket(path)); // the first removed its own file at the end
}
END_TEST

START_TEST(a_crashed_producers_socket_is_replaced_and_other_files_are_not)
{
	const std::string path = socketPath("owner-stale");
	leaveStaleSocket(path);
	ck_assert(isSocket(path));
	auto sender = listenOn(path);
	ck_assert_ok(sender);
	ck_assert_ok(connectTo(path, 5s));
	sender->reset();
	ck_assert(!isSocket(path));

	// A regular file and a directory are refused and left as they are.
	UniqueFd file(open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	ck_assert(file.isValid());
	ck_assert_error(listenOn(path), ErrorCode::InvalidArgument, "socketPath");
	struct stat st {};
	ck_assert_int_eq(lstat(path.c_str(), &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	unlink(path.c_str());
	ck_assert_int_eq(mkdir(path.c_str(), 0700), 0);
	ck_assert_error(listenOn(path), ErrorCode::InvalidArgument, "socketPath");
	ck_assert_int_eq(rmdir(path.c_str()), 0);
	// A path a socket address cannot hold.
	ck_assert_error(listenOn("/tmp/" + std::string(120, 'x')), ErrorCode::InvalidArgument,
			"socketPath");
}
END_TEST

// Someone removed the first producer's file by hand and a second producer took the path: the
// first, ending, leaves the second's socket alone.
START_TEST(a_producer_removes_only_the_socket_file_it_made)
{
	const std::string path = socketPath("owner-unlink");
	auto first = listenOn(path);
	ck_assert_ok(first);
	ck_assert_int_eq(unlink(path.c_str()), 0);
	auto second = listenOn(path);
	ck_assert_ok(second);
	first->reset();
	ck_assert(isSocket(path));
	auto receiver = connectTo(path, 5s);
	ck_assert_ok(receiver);
	receiver->reset();
	second->reset();
	ck_assert(!isSocket(path));
}
END_TEST

START_TEST(a_producer_waiting_for_caps_greets_nobody_until_then)
{
	const std::string path = socketPath("owner-caps");
	auto sender = listenOn(path, true);
	ck_assert_ok(sender);
	// Bound at once (a second producer is refused), but no hello before caps.
	ck_assert_error(listenOn(path), ErrorCode::InvalidState, "socketPath");
	ck_assert_error(connectTo(path, 200ms), ErrorCode::Timeout, "socketPath");
	std::thread later([&] {
		std::this_thread::sleep_for(100ms);
		(void)(*sender)->setCaps(kCaps);
	});
	auto receiver = connectTo(path, 5s);
	later.join();
	ck_assert_ok(receiver);
	ck_assert(std::string((*receiver)->caps()) == kCaps);
	ck_assert_uint_eq((*sender)->stats().peersConnected, 1);
	receiver->reset();
	sender->reset();
}
END_TEST

START_TEST(a_connect_gives_up_when_cancelled)
{
	const std::string path = socketPath("owner-cancel");
	std::atomic<bool> cancel{ false };
	std::thread flush([&] {
		std::this_thread::sleep_for(100ms);
		cancel = true;
	});
	// Nobody there: connect retries until cancelled, long before its timeout.
	const auto started = std::chrono::steady_clock::now();
	ck_assert_error(connectTo(path, 30s, &cancel), ErrorCode::Cancelled, "socketPath");
	flush.join();
	ck_assert(std::chrono::steady_clock::now() - started < 10s);
	// A producer that has no caps yet: the wait for its hello is cancelled too.
	auto sender = listenOn(path, true);
	ck_assert_ok(sender);
	cancel = false;
	std::thread flushAgain([&] {
		std::this_thread::sleep_for(100ms);
		cancel = true;
	});
	ck_assert_error(connectTo(path, 30s, &cancel), ErrorCode::Cancelled, "peer");
	flushAgain.join();
	sender->reset();
}
END_TEST

int main()
{
	Suite *s = suite_create("socket_owner");
	TCase *tc = tcase_create("socket_owner");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_second_producer_on_a_live_path_is_refused_and_the_first_stays);
	tcase_add_test(tc, a_crashed_producers_socket_is_replaced_and_other_files_are_not);
	tcase_add_test(tc, a_producer_removes_only_the_socket_file_it_made);
	tcase_add_test(tc, a_producer_waiting_for_caps_greets_nobody_until_then);
	tcase_add_test(tc, a_connect_gives_up_when_cancelled);
	suite_add_tcase(s, tc);
	return runSuite(s);
}
