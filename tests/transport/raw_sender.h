// A stand-in for FrameSender in the transport tests: a listening socket, and encoded messages sent
// on it as the sender sends them, so that a test can send what a real sender never would.
#pragma once

#include <gpuhandle/wire_format.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace gpuhandle::test {

// A SOCK_SEQPACKET socket listening at `path` (a file left there is removed first); -1 when it
// could not be made.
inline int listenAt(const std::string &path)
{
	unlink(path.c_str());
	const int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	sockaddr_un address{};
	address.sun_family = AF_UNIX;
	std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
	if (listener < 0 ||
	    bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
	    listen(listener, 1) != 0) {
		if (listener >= 0)
			close(listener);
		return -1;
	}
	return listener;
}

// Sends one encoded message with its fds, as the sender does: false when the socket did not take
// it whole. Callable from a test's producer thread (it asserts nothing).
inline bool sendRaw(int socket, const WireMessage &m)
{
	msghdr msg{};
	iovec iov{ const_cast<std::byte *>(m.bytes.data()), m.size };
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kWireMaxFds)] = {};
	if (m.numFds) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * m.numFds);
		cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * m.numFds);
		std::memcpy(CMSG_DATA(c), m.fds.data(), sizeof(int) * m.numFds);
	}
	return sendmsg(socket, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(m.size);
}

} // namespace gpuhandle::test
