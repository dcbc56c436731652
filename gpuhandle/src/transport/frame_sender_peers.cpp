// FrameSender's thread: accepting consumers, reading their Features and Releases.
#include "frame_sender_impl.h"

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpuhandle {

using namespace detail;

void FrameSender::Impl::awaitFeatures(size_t i)
{
	const auto deadline = peers[i].acceptedAt + kGreetingWait;
	while (peers[i].socket.isValid() && !peers[i].greeted) {
		const auto left = std::chrono::ceil<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			break;
		pollfd p{ peers[i].socket.get(), POLLIN, 0 };
		if (poll(&p, 1, static_cast<int>(left.count())) > 0)
			serve(i);
	}
	if (peers[i].socket.isValid())
		peers[i].greeted = true;
}

void FrameSender::Impl::accept()
{
	UniqueFd socket(accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
	if (!socket.isValid()) {
		// Out of fds: the connection stays queued and the listener readable, so
		// pause rather than spin; anything else (the peer went away again) polls
		// again.
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
		return;
	}
	std::lock_guard lock(mutex);
	if (Status allowed = detail::checkPeer(socket.get(), options.peers); !allowed.ok()) {
		stats.peersRefused++;
		log(allowed.error());
		return;
	}
	auto slot = std::find_if(peers.begin(), peers.end(),
				 [](const Peer &p) { return !p.socket.isValid(); });
	if (slot == peers.end()) {
		stats.peersRefused++;
		log(Error::format(ErrorCode::OutOfRange, "maxPeers",
				  "Frame transport: a consumer was refused: %u are connected "
				  "already.",
				  options.maxPeers));
		return;
	}
	WireMessage hello;
	if (Status s = encodeHello(options.caps, options.maxInFlightPerPeer, hello, true, true);
	    !s.ok()) {
		log(s.error());
		return;
	}
	if (Status s = detail::sendMessage(socket.get(), hello); !s.ok()) {
		log(s.error());
		return;
	}
	slot->socket = std::move(socket);
	slot->acceptedAt = std::chrono::steady_clock::now();
	slot->greeted = false;
	stats.peersAccepted++;
	peersChanged.notify_all();
	roomChanged();
}

void FrameSender::Impl::serve(size_t i)
{
	const detail::Received got = detail::receiveMessage(peers[i].socket.get(), incoming);
	if (got == detail::Received::Failed) {
		dropPeer(i, detail::receiveError(incoming));
		return;
	}
	if (got == detail::Received::Empty)
		return;
	if (got == detail::Received::HungUp) {
		dropPeer(i, Error(ErrorCode::Io, "peer", "Frame transport: a consumer went away."));
		return;
	}
	if (Status s = handle(i); !s.ok()) {
		stats.badMessages++;
		log(s.error());
		if (++peers[i].badMessages >= kMaxBadMessagesPerPeer)
			dropPeer(i, Error(ErrorCode::InvalidArgument, "peer",
					  "Frame transport: a consumer sent too many "
					  "malformed messages and was dropped."));
	}
}

Status FrameSender::Impl::handle(size_t i)
{
	if (incoming.truncated)
		return Error(ErrorCode::InvalidArgument, "size",
			     "Frame transport: a consumer's message was too large.");
	if (incoming.numFds) // a consumer sends no fds: refuse, and close them
		return Error(ErrorCode::InvalidArgument, "numFds",
			     "Frame transport: a consumer's message came with fds.");
	auto type = decodeHeader(incoming.data(), 0);
	if (type.ok() && *type == WireType::Features) {
		auto features = decodeFeatures(incoming.data());
		if (!features.ok())
			return std::move(features).error();
		peers[i].cachedFiles = features->cachedFiles;
		peers[i].timing = features->timing;
		peers[i].greeted = true;
		// The timeline first, before the first frame with times.
		if (features->timing && timeline) {
			WireMessage line;
			if (encodeTimeline(*timeline, line).ok()) {
				if (Status s = detail::sendMessageWithin(peers[i].socket.get(),
									 line, kControlTimeout);
				    !s.ok())
					dropPeer(i, s.error());
			}
		}
		return {};
	}
	auto id = decodeRelease(incoming.data());
	if (!id.ok())
		return std::move(id).error();
	const uint64_t bit = uint64_t(1) << i;
	for (Outstanding &o : outstanding) {
		if (o.frame && o.id == *id && (o.holders & bit)) {
			releaseHolder(o, bit);
			// Only the step below the bound gives room: no call per release
			// in steady state.
			if (peers[i].inFlight-- == options.maxInFlightPerPeer)
				roomChanged();
			stats.releases++;
			return {};
		}
	}
	return Error::format(ErrorCode::InvalidArgument, "id",
			     "Frame transport: a consumer released frame %llu, which it does "
			     "not hold.",
			     static_cast<unsigned long long>(*id));
}

void FrameSender::Impl::run()
{
	std::vector<pollfd> fds;
	std::vector<size_t> slots;
	fds.reserve(2 + peers.size());
	slots.reserve(peers.size());
	for (;;) {
		fds.clear();
		slots.clear();
		fds.push_back({ wake.get(), POLLIN, 0 });
		{
			std::lock_guard lock(mutex);
			// Not accepting yet: the listener stays out of the poll (fd -1 is
			// ignored), and connections wait in its backlog.
			fds.push_back({ accepting ? listener.fd.get() : -1, POLLIN, 0 });
			for (size_t i = 0; i < peers.size(); ++i) {
				if (peers[i].socket.isValid()) {
					fds.push_back({ peers[i].socket.get(), POLLIN, 0 });
					slots.push_back(i);
				}
			}
		}
		// Bounded: a wake-up a second re-reads the peer list even if nothing
		// happened.
		if (poll(fds.data(), fds.size(), 1000) < 0)
			continue;
		if (fds[0].revents) {
			uint64_t count = 0;
			(void)!read(wake.get(), &count, sizeof count);
			if (stopping.load())
				return;
			continue; // accepting now: poll again with the listener
		}
		if (fds[1].revents & POLLIN)
			accept();
		{
			std::lock_guard lock(mutex);
			for (size_t k = 0; k < slots.size(); ++k) {
				// The slot may have been refilled by accept() since the
				// poll: only serve the socket that was polled.
				const size_t i = slots[k];
				if (fds[2 + k].revents && peers[i].socket.get() == fds[2 + k].fd)
					serve(i);
			}
		}
		signalReleased();
	}
}

} // namespace gpuhandle
