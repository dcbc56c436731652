// SOCK_SEQPACKET Unix sockets: one datagram per message, fds as SCM_RIGHTS, peers by SO_PEERCRED.
#include "unix_socket.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace gpuhandle::detail {

namespace {

Error ioError(const char *what, const std::string &path, int err)
{
	return Error::format(ErrorCode::Io, "socketPath", "Frame transport: %s %s failed: %s.",
			     what, path.c_str(), std::strerror(err));
}

Result<sockaddr_un> socketAddress(const std::string &path)
{
	sockaddr_un address{};
	address.sun_family = AF_UNIX;
	if (path.empty() || path.size() >= sizeof address.sun_path)
		return Error::format(
			ErrorCode::InvalidArgument, "socketPath",
			"Frame transport: a socket path must have 1 to %zu bytes (\"%s\" "
			"has %zu).",
			sizeof address.sun_path - 1, path.c_str(), path.size());
	std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
	return address;
}

} // namespace

namespace {

// Who is at a socket path that is in use: a live listener (its pid where the kernel says), or
// nobody (a file a crashed producer left), or something this process cannot tell.
struct PathOwner {
	enum class State { Nobody, Live, Unknown } state = State::Nobody;
	pid_t pid = 0; // a live listener's process, when known
	int error = 0; // Unknown: why
};

// Tries to connect to the socket at `address`: a connection, or one refused for a full backlog,
// is a producer listening there. (The other producer sees a consumer come and go at once.)
PathOwner ownerOf(const sockaddr_un &address)
{
	UniqueFd probe(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!probe.isValid())
		return { PathOwner::State::Unknown, 0, errno };
	if (connect(probe.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) ==
	    0) {
		// A connected socket's peer credentials are the listener's, from its listen().
		ucred cred{};
		socklen_t size = sizeof cred;
		const bool known = getsockopt(probe.get(), SOL_SOCKET, SO_PEERCRED, &cred, &size) ==
				   0;
		return { PathOwner::State::Live, known ? cred.pid : 0, 0 };
	}
	switch (errno) {
	case ECONNREFUSED: // a socket file without a listener
	case ENOENT:       // gone meanwhile
		return {};
	case EAGAIN:     // a listener whose backlog is full
	case EPROTOTYPE: // a listener of another socket type: another program
		return { PathOwner::State::Live, 0, 0 };
	default: return { PathOwner::State::Unknown, 0, errno };
	}
}

Error pathTaken(const std::string &path, const PathOwner &owner)
{
	if (owner.state == PathOwner::State::Unknown)
		return Error::format(ErrorCode::Io, "socketPath",
				     "Frame transport: %s is a socket whose listener cannot be "
				     "checked (%s); it is left alone.",
				     path.c_str(), std::strerror(owner.error));
	if (owner.pid > 0)
		return Error::format(ErrorCode::InvalidState, "socketPath",
				     "Frame transport: another producer (process %d) listens on "
				     "%s; stop it or choose another socket path.",
				     static_cast<int>(owner.pid), path.c_str());
	return Error::format(ErrorCode::InvalidState, "socketPath",
			     "Frame transport: another producer listens on %s; stop it or choose "
			     "another socket path.",
			     path.c_str());
}

// Clears `path` for a bind: nothing there, or a socket nobody listens on (removed). A live
// listener's socket, and any other kind of file, are refused.
Status clearPath(const std::string &path, const sockaddr_un &address)
{
	struct stat st {};
	if (lstat(path.c_str(), &st) != 0)
		return {};
	if (!S_ISSOCK(st.st_mode))
		return Error::format(ErrorCode::InvalidArgument, "socketPath",
				     "Frame transport: %s exists and is not a socket.",
				     path.c_str());
	const PathOwner owner = ownerOf(address);
	if (owner.state != PathOwner::State::Nobody)
		return pathTaken(path, owner);
	// A crashed producer's socket: replaced.
	if (unlink(path.c_str()) != 0 && errno != ENOENT)
		return ioError("removing the stale socket", path, errno);
	return {};
}

} // namespace

Result<BoundSocket> listenUnix(const std::string &path, uint32_t mode)
{
	auto address = socketAddress(path);
	if (!address.ok())
		return std::move(address).error();
	if (Status cleared = clearPath(path, *address); !cleared.ok())
		return std::move(cleared).error();
	BoundSocket bound;
	bound.fd = UniqueFd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (!bound.fd.isValid())
		return ioError("socket for", path, errno);
	if (bind(bound.fd.get(), reinterpret_cast<const sockaddr *>(&*address), sizeof *address) !=
	    0) {
		const int err = errno;
		// Another producer bound it between the check and here.
		if (err == EADDRINUSE) {
			if (const PathOwner owner = ownerOf(*address);
			    owner.state != PathOwner::State::Nobody)
				return pathTaken(path, owner);
		}
		return ioError("bind to", path, err);
	}
	struct stat st {};
	if (lstat(path.c_str(), &st) == 0) {
		bound.device = st.st_dev;
		bound.inode = st.st_ino;
	}
	// No one can connect before listen(): set the mode in between, so that a wider umask never
	// exposes the socket.
	if (chmod(path.c_str(), static_cast<mode_t>(mode & 0777)) != 0) {
		const int err = errno;
		unlinkIfOurs(path, bound);
		return ioError("chmod of", path, err);
	}
	if (listen(bound.fd.get(), 16) != 0) {
		const int err = errno;
		unlinkIfOurs(path, bound);
		return ioError("listen on", path, err);
	}
	return bound;
}

void unlinkIfOurs(const std::string &path, const BoundSocket &bound)
{
	struct stat st {};
	if (bound.inode != 0 && lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_dev == bound.device && st.st_ino == bound.inode)
		unlink(path.c_str());
}

Result<UniqueFd> connectUnix(const std::string &path, WaitDuration timeout,
			     const std::atomic<bool> *cancel)
{
	auto address = socketAddress(path);
	if (!address.ok())
		return std::move(address).error();
	const Deadline deadline = Deadline::after(timeout);
	for (;;) {
		// Non-blocking: a blocking connect to a listener whose backlog is full sleeps
		// without a bound; this one answers EAGAIN and is retried until the deadline.
		// (Every later call on the socket polls or passes MSG_DONTWAIT anyway.)
		UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
		if (!fd.isValid())
			return ioError("socket for", path, errno);
		if (connect(fd.get(), reinterpret_cast<const sockaddr *>(&*address),
			    sizeof *address) == 0)
			return fd;
		const int err = errno;
		// Not there yet, or its backlog is full: the sender may be starting. Retry.
		if (err != ENOENT && err != ECONNREFUSED && err != EAGAIN && err != EINTR)
			return ioError("connect to", path, err);
		if (cancel && cancel->load())
			return Error(ErrorCode::Cancelled, "socketPath",
				     "Frame transport: connecting was cancelled.");
		if (deadline.remaining() <= WaitDuration::zero())
			return Error::format(
				ErrorCode::Timeout, "socketPath",
				"Frame transport: no sender listened on %s in time (%s).",
				path.c_str(), std::strerror(err));
		std::this_thread::sleep_for(std::min<WaitDuration>(deadline.remaining(),
								   std::chrono::milliseconds(10)));
	}
}

Status checkPeer(int socket, const PeerRule &rule)
{
	ucred cred{};
	socklen_t size = sizeof cred;
	if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &cred, &size) != 0)
		return Error::format(ErrorCode::Io, "peer",
				     "Frame transport: the peer's credentials cannot be read: %s.",
				     std::strerror(errno));
	if (rule.anyUser || cred.uid == getuid())
		return {};
	for (uint32_t uid : rule.allowUids) {
		if (uid == cred.uid)
			return {};
	}
	return Error::format(
		ErrorCode::InvalidState, "peer",
		"Frame transport: process %d of uid %u is not allowed (only uid %u and "
		"%zu listed uids are).",
		static_cast<int>(cred.pid), static_cast<unsigned>(cred.uid),
		static_cast<unsigned>(getuid()), rule.allowUids.size());
}

Status sendMessage(int socket, const WireMessage &message)
{
	iovec iov{ const_cast<std::byte *>(message.bytes.data()), message.size };
	msghdr msg{};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kWireMaxFds)];
	if (message.numFds) {
		const size_t bytes = sizeof(int) * message.numFds;
		// The header's padding goes to the kernel too.
		std::memset(control, 0, CMSG_SPACE(bytes));
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(bytes);
		cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(bytes);
		std::memcpy(CMSG_DATA(c), message.fds.data(), bytes);
	}
	for (;;) {
		if (sendmsg(socket, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return {};
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return Error(ErrorCode::WouldBlock, "peer",
				     "Frame transport: the peer's queue is full.");
		return Error::format(ErrorCode::Io, "peer", "Frame transport: sending failed: %s.",
				     std::strerror(errno));
	}
}

Status sendMessageWithin(int socket, const WireMessage &message, WaitDuration timeout)
{
	const Deadline deadline = Deadline::after(timeout);
	for (;;) {
		Status s = sendMessage(socket, message);
		if (s.ok() || s.error().code() != ErrorCode::WouldBlock)
			return s;
		const auto left =
			std::chrono::ceil<std::chrono::milliseconds>(deadline.remaining());
		if (left.count() <= 0)
			return Error(ErrorCode::Timeout, "peer",
				     "Frame transport: the peer's queue stayed full.");
		pollfd p{ socket, POLLOUT, 0 };
		(void)poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
	}
}

Received receiveMessage(int socket, ReceivedMessage &out)
{
	for (size_t i = 0; i < out.numFds; ++i)
		out.fds[i].reset();
	out.size = 0;
	out.numFds = 0;
	out.truncated = false;
	iovec iov{ out.bytes.data(), out.bytes.size() };
	msghdr msg{};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kWireMaxFds)];
	msg.msg_control = control;
	msg.msg_controllen = sizeof control;
	ssize_t n;
	int resets = 0;
	do {
		n = recvmsg(socket, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		// A peer that closes with our messages unread in its queue leaves ECONNRESET
		// pending here, reported before the messages it sent last (a sender's bye): the
		// error is cleared by reporting it, so read once more for what is still queued.
		if (n < 0 && errno == ECONNRESET && resets++ == 0) {
			msg.msg_controllen = sizeof control;
			errno = EINTR;
		}
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN)
			return Received::Empty;
		if (errno == ECONNRESET)
			return Received::HungUp;
		out.failure = errno;
		return Received::Failed;
	}
	// Take every fd first, so that none leaks whatever the message turns out to be.
	for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; ++i) {
			int fd;
			std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (out.numFds < out.fds.size())
				out.fds[out.numFds++] = UniqueFd(fd);
			else {
				close(fd);
				out.truncated = true;
			}
		}
	}
	if (n == 0 && out.numFds == 0)
		return Received::HungUp; // orderly (SEQPACKET has no empty messages of ours)
	out.size = static_cast<size_t>(n);
	out.truncated |= (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
			 out.size > kWireMaxMessage;
	return Received::Message;
}

Error receiveError(const ReceivedMessage &out)
{
	return Error::format(ErrorCode::Io, "peer", "Frame transport: receiving failed: %s.",
			     std::strerror(out.failure));
}

Result<bool> pollReadable(int fd, WaitDuration timeout, const std::atomic<bool> *cancel)
{
	const Deadline deadline = Deadline::after(timeout);
	for (;;) {
		if (cancel && cancel->load())
			return Error(ErrorCode::Cancelled, "peer",
				     "Frame transport: waiting was cancelled.");
		const auto left =
			std::chrono::ceil<std::chrono::milliseconds>(deadline.remaining());
		pollfd p{ fd, POLLIN, 0 };
		const int ms =
			static_cast<int>(std::clamp<int64_t>(left.count(), 0, cancel ? 50 : 60000));
		const int n = poll(&p, 1, ms);
		if (n > 0)
			return true;
		if (n < 0 && errno != EINTR)
			return Error::format(ErrorCode::Io, "peer",
					     "Frame transport: poll failed: %s.",
					     std::strerror(errno));
		if (n == 0 && deadline.remaining() <= WaitDuration::zero())
			return false;
	}
}

} // namespace gpuhandle::detail
