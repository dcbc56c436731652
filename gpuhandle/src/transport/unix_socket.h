// SOCK_SEQPACKET Unix sockets for the frame transport: listen, connect, peer checks, messages.
#pragma once

#include <gpuhandle/fd.h>
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/wire_format.h>

#include <array>
#include <atomic>
#include <string>
#include <sys/types.h>

namespace gpuhandle::detail {

// A socket file this process made and listens on, with the file's identity: only that file is
// removed at the end, never one another producer put at the path since.
struct BoundSocket {
	UniqueFd fd{};
	dev_t device = 0;
	ino_t inode = 0;
};
// Binds and listens on `path`, with the file's mode set before the first connect can happen. A
// socket file there that nobody listens on (a crashed producer's) is replaced; one a live
// producer listens on is refused (InvalidState, naming its process where the kernel says), and
// so is any other kind of file (InvalidArgument).
Result<BoundSocket> listenUnix(const std::string &path, uint32_t mode);
// Removes the socket file at `path` when it is still the one `bound` made.
void unlinkIfOurs(const std::string &path, const BoundSocket &bound);
// Connects within `timeout` (the sender may not be listening yet: retried until then); gives up
// (Cancelled) once `cancel`, when given, reads true.
Result<UniqueFd> connectUnix(const std::string &path, WaitDuration timeout,
			     const std::atomic<bool> *cancel = nullptr);

// The peer's uid is allowed by `rule` (InvalidState naming the uid and pid when not).
Status checkPeer(int socket, const PeerRule &rule);

// Sends one message with its fds; never blocks (WouldBlock when the peer's queue is full) and
// never raises SIGPIPE (Io when the peer has gone).
Status sendMessage(int socket, const WireMessage &message);

// The same, for messages that must not be lost (caps, bye): waits up to `timeout` for room in
// the peer's queue (Timeout when it stays full: the peer stopped reading).
Status sendMessageWithin(int socket, const WireMessage &message, WaitDuration timeout);

// One received message: the bytes and the fds that came with them (owned here: closed unless
// taken). Extra fds beyond kWireMaxFds are closed by the kernel's truncation (MSG_CTRUNC), which
// is reported as an error.
struct ReceivedMessage {
	std::array<std::byte, kWireMaxMessage + 1> bytes{};
	size_t size = 0;
	std::array<UniqueFd, kWireMaxFds> fds{};
	size_t numFds = 0;
	bool truncated = false; // bytes or fds did not fit: the message is refused
	int failure = 0;        // errno of a read that Failed
	std::span<const std::byte> data() const noexcept { return { bytes.data(), size }; }
	std::span<UniqueFd> fdSpan() noexcept { return { fds.data(), numFds }; }
};
// What a read without blocking found. Nothing queued is an outcome, not an error: the readers
// meet it after every burst of messages, and an Error would cost a heap string each time (and a
// Result<> of a type of this namespace would be exported, as std::variant is).
enum class Received : uint8_t { Message, Empty, HungUp, Failed };
// Reads one message without blocking: Message when one was read (into `out`), Empty when none
// is queued, HungUp when the peer hung up, Failed on other failures (receiveError says which).
Received receiveMessage(int socket, ReceivedMessage &out);
// The Io error of the last read that Failed.
Error receiveError(const ReceivedMessage &out);

// Waits for `fd` to be readable (or hung up) up to `timeout`: true when it is. With `cancel`,
// Cancelled once it reads true (looked at every 50 ms).
Result<bool> pollReadable(int fd, WaitDuration timeout, const std::atomic<bool> *cancel = nullptr);

} // namespace gpuhandle::detail
