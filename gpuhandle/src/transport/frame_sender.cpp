// FrameSender: one listening socket, a thread serving it, frames fanned out to every consumer.
#include "frame_sender_impl.h"

#include <cerrno>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gpuhandle {

using namespace detail;

FrameSender::FrameSender(std::unique_ptr<Impl> impl) : impl_(std::move(impl))
{
}

Result<std::unique_ptr<FrameSender>> FrameSender::create(FrameSenderOptions options)
{
	if (options.maxInFlightPerPeer > kMaxInFlightLimit)
		return Error::format(
			ErrorCode::OutOfRange, "maxInFlightPerPeer",
			"Frame transport: maxInFlightPerPeer is %u; 1 to %u frames are "
			"allowed.",
			options.maxInFlightPerPeer, kMaxInFlightLimit);
	if (!options.maxPeers || options.maxPeers > kMaxPeersLimit)
		return Error::format(
			ErrorCode::OutOfRange, "maxPeers",
			"Frame transport: maxPeers is %u; 1 to %u consumers are allowed.",
			options.maxPeers, kMaxPeersLimit);
	WireMessage probe;
	if (Status s = encodeHello(options.caps, options.maxInFlightPerPeer, probe); !s.ok())
		return std::move(s).error();
	auto impl = std::make_unique<Impl>();
	auto listener = detail::listenUnix(options.socketPath, options.socketMode);
	if (!listener.ok())
		return std::move(listener).error();
	impl->listener = std::move(*listener);
	impl->wake = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!impl->wake.isValid()) {
		detail::unlinkIfOurs(options.socketPath, impl->listener);
		return Error(ErrorCode::Io, "wake", "Frame transport: no eventfd could be made.");
	}
	impl->accepting = !options.waitForCaps || !options.caps.empty();
	impl->peers.resize(options.maxPeers);
	impl->outstanding.resize(size_t(options.maxPeers) * options.maxInFlightPerPeer);
	// Every outstanding frame at once (a sender going away), and a few sends that nobody took.
	impl->released.reserve(impl->outstanding.size() + 8);
	impl->options = std::move(options);
	Impl *raw = impl.get();
	impl->thread = std::thread([raw] { raw->run(); });
	return std::unique_ptr<FrameSender>(new FrameSender(std::move(impl)));
}

FrameSender::~FrameSender()
{
	Impl &d = *impl_;
	const uint64_t one = 1;
	d.stopping = true;
	(void)!write(d.wake.get(), &one, sizeof one);
	d.thread.join();
	{
		std::lock_guard lock(d.mutex);
		WireMessage bye;
		encodeBye(bye);
		// One deadline for all: consumers that stopped reading cost 1 s together, not
		// each.
		const Deadline deadline = Deadline::after(kControlTimeout);
		for (Peer &p : d.peers) {
			if (p.socket.isValid())
				(void)detail::sendMessageWithin(p.socket.get(), bye,
								deadline.remaining());
			p = Peer{};
		}
		for (Outstanding &o : d.outstanding) {
			if (o.frame)
				d.released.push_back(std::move(*o.frame));
			o = Outstanding{};
		}
		// Only the socket file this sender made: another producer may have replaced a
		// file removed by hand meanwhile.
		detail::unlinkIfOurs(d.options.socketPath, d.listener);
		d.listener.fd.reset();
	}
	d.signalReleased();
}

Result<uint32_t> FrameSender::send(const Frame &frame, std::span<const std::byte> attachment)
{
	Result<uint32_t> sent = [&] {
		std::lock_guard lock(impl_->mutex);
		return impl_->sendLocked(frame, nullptr, attachment);
	}();
	impl_->signalReleased();
	return sent;
}

Result<uint32_t> FrameSender::send(const Frame &frame, const FrameTiming &timing,
				   std::span<const std::byte> attachment)
{
	Result<uint32_t> sent = [&] {
		std::lock_guard lock(impl_->mutex);
		return impl_->sendLocked(frame, &timing, attachment);
	}();
	impl_->signalReleased();
	return sent;
}

Result<uint32_t> FrameSender::Impl::sendLocked(const Frame &frame, const FrameTiming *timing,
					       std::span<const std::byte> extra)
{
	Impl &d = *this;
	const bool wantsRelease = !frame.release().isNone();
	const uint64_t id = d.nextId++;
	// A consumer that just came gets its first frame in the form it asks for.
	for (size_t i = 0; i < d.peers.size(); ++i)
		if (d.peers[i].socket.isValid() && !d.peers[i].greeted)
			d.awaitFeatures(i);
	// The forms the consumers need, each encoded once, not per consumer: a consumer of an
	// earlier version (or one that did not ask) gets the plain Frame. At least one is encoded
	// even with no consumer, which checks that the frame can cross (NotSupported).
	bool anyTimed = false, anyPlain = false;
	for (const Peer &p : d.peers) {
		if (p.socket.isValid())
			(timing && p.timing ? anyTimed : anyPlain) = true;
	}
	if (!anyTimed)
		timing = nullptr;
	if (timing) {
		if (Status s = encodeFrame(frame, id, wantsRelease, {}, timing, d.timedMessage);
		    !s.ok())
			return std::move(s).error();
	}
	if (!timing || anyPlain) {
		if (Status s = encodeFrame(frame, id, wantsRelease, d.message); !s.ok())
			return std::move(s).error();
	}
	if (!extra.empty()) {
		if (Status s = encodeAttachment(id, extra, d.attachment); !s.ok())
			return std::move(s).error();
	}
	uint64_t holders = 0;
	uint32_t count = 0;
	d.files.forgetUnused(d.peers);
	for (size_t i = 0; i < d.peers.size(); ++i) {
		Peer &p = d.peers[i];
		if (!p.socket.isValid())
			continue;
		if (wantsRelease && p.inFlight >= d.options.maxInFlightPerPeer) {
			d.stats.framesSkipped++;
			continue;
		}
		// Files the consumer keeps are named by slot (their Remember goes first, before
		// the attachment, which must come right before its frame).
		const FrameTiming *times = p.timing ? timing : nullptr;
		const WireMessage *frameMessage = times ? &d.timedMessage : &d.message;
		std::array<int32_t, 4> slots{};
		if (p.cachedFiles &&
		    d.files.slotsFor(frame, i, p.cachedFiles, p.socket.get(), slots) &&
		    encodeFrame(frame, id, wantsRelease,
				std::span(slots.data(), frame.numResources()), times,
				d.cachedMessage)
			    .ok())
			frameMessage = &d.cachedMessage;
		// The attachment goes first; a consumer whose queue takes it but not the frame
		// drops it when the next message is not that frame.
		Status s = extra.empty() ? Status{}
					 : detail::sendMessage(p.socket.get(), d.attachment);
		if (s.ok())
			s = detail::sendMessage(p.socket.get(), *frameMessage);
		if (s.ok()) {
			count++;
			d.stats.framesSent++;
			d.stats.framesOverKeptFiles += frameMessage == &d.cachedMessage;
			if (wantsRelease) {
				p.inFlight++;
				holders |= uint64_t(1) << i;
			}
		} else if (s.error().code() == ErrorCode::WouldBlock) {
			d.stats.framesSkipped++;
		} else {
			d.dropPeer(i, s.error());
		}
	}
	if (wantsRelease) {
		if (!holders) {
			d.released.push_back(frame); // nobody took it: reusable now
		} else {
			// A free slot exists: each holder holds fewer than maxInFlightPerPeer
			// frames.
			auto slot = std::find_if(d.outstanding.begin(), d.outstanding.end(),
						 [](const Outstanding &o) { return !o.frame; });
			slot->id = id;
			slot->holders = holders;
			slot->frame = frame;
		}
	}
	return count;
}

Status FrameSender::setCaps(std::string caps)
{
	Impl &d = *impl_;
	std::unique_lock lock(d.mutex);
	if (Status s = encodeCaps(caps, d.message); !s.ok())
		return s;
	d.options.caps = std::move(caps);
	d.sendToAll();
	// The first caps open the door to consumers waiting in the listener's backlog.
	if (!d.accepting && !d.options.caps.empty()) {
		d.accepting = true;
		const uint64_t one = 1;
		(void)!write(d.wake.get(), &one, sizeof one);
	}
	lock.unlock();
	d.signalReleased();
	return {};
}

Status FrameSender::setStreamTiming(const StreamTiming &timing)
{
	Impl &d = *impl_;
	std::unique_lock lock(d.mutex);
	if (Status s = encodeTimeline(timing, d.message); !s.ok())
		return s;
	if (d.timeline == timing)
		return {};
	d.timeline = timing;
	d.sendToAll(true);
	lock.unlock();
	d.signalReleased();
	return {};
}

Result<uint32_t> FrameSender::endStream()
{
	Impl &d = *impl_;
	std::unique_lock lock(d.mutex);
	encodeEndOfStream(d.message);
	const uint32_t told = d.sendToAll();
	lock.unlock();
	d.signalReleased();
	return told;
}

FrameSenderStats FrameSender::stats() const
{
	std::lock_guard lock(impl_->mutex);
	FrameSenderStats s = impl_->stats;
	s.filesRemembered = impl_->files.remembered();
	s.peersConnected = impl_->connected();
	for (const Peer &p : impl_->peers)
		s.peersWithRoom += p.socket.isValid() &&
				   p.inFlight < impl_->options.maxInFlightPerPeer;
	return s;
}

Status FrameSender::waitForPeers(uint32_t count, WaitDuration timeout)
{
	Impl &d = *impl_;
	std::unique_lock lock(d.mutex);
	const Deadline deadline = Deadline::after(timeout);
	while (d.connected() < count) {
		if (deadline.remaining() <= WaitDuration::zero())
			return Error::format(
				ErrorCode::Timeout, "peers",
				"Frame transport: %u of %u consumers connected in time.",
				d.connected(), count);
		d.peersChanged.wait_for(lock, std::min<WaitDuration>(deadline.remaining(),
								     std::chrono::seconds(1)));
	}
	return {};
}

} // namespace gpuhandle
