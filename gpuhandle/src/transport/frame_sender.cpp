// FrameSender: one listening socket, a thread serving it, frames fanned out to every consumer.
#include <gpuhandle/frame_transport.h>

#include "sender_file_cache.h"
#include "unix_socket.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace gpuhandle {

namespace {

// A consumer that keeps sending what fails validation is dropped after this many.
constexpr uint32_t kMaxBadMessagesPerPeer = 16;
constexpr uint32_t kMaxInFlightLimit = 1024;
constexpr uint32_t kMaxPeersLimit = 64; // holders are a 64-bit mask
// How long a caps or bye message may wait for room in a consumer's queue.
constexpr WaitDuration kControlTimeout = std::chrono::seconds(1);
// How long after its hello a consumer's first frame waits for its Features: a consumer of this
// version answers a hello that offers times at once; one of version 1 that keeps no files sends
// nothing, and gets its first frame this much later.
constexpr auto kGreetingWait = std::chrono::seconds(1);

struct Peer {
	UniqueFd socket{};
	uint32_t inFlight = 0;
	uint32_t badMessages = 0;
	uint32_t cachedFiles = 0; // the file cache slots it announced (0: fds every time)
	bool timing = false;      // it reads frame times: TimedFrame and Timeline
	// Its Features came (or it is taken for a consumer that sends none): until then its
	// first frame waits for them, bounded, so that it comes in the form it asked for
	bool greeted = false;
	std::chrono::steady_clock::time_point acceptedAt{};
};

// A frame some consumers still hold: its release gate is signalled when `holders` empties.
struct Outstanding {
	uint64_t id = 0;
	uint64_t holders = 0; // bit i: peers[i] holds it
	std::optional<Frame> frame{};
};

} // namespace

struct FrameSender::Impl {
	FrameSenderOptions options;
	detail::BoundSocket listener;
	UniqueFd wake; // eventfd: tells the thread to look at `stopping` and the caps again
	std::atomic<bool> stopping{ false };
	std::thread thread;

	mutable std::mutex mutex;
	std::condition_variable peersChanged;
	std::vector<Peer> peers;              // maxPeers slots; a free slot has no socket
	std::vector<Outstanding> outstanding; // maxPeers * maxInFlightPerPeer slots
	uint64_t nextId = 1;
	FrameSenderStats stats;
	WireMessage message;       // scratch for send(), under mutex
	WireMessage timedMessage;  // send()'s frame with its times, under mutex
	WireMessage cachedMessage; // send()'s frame naming cached files, under mutex
	// The frames' timeline (setStreamTiming), sent to each consumer that reads times once its
	// Features came, and to all of them when it changes; under mutex
	std::optional<StreamTiming> timeline;
	// Consumers are accepted once caps are known (options.waitForCaps); under mutex
	bool accepting = true;
	WireMessage attachment;           // send()'s attachment, under mutex
	detail::SenderFileCache files;    // under mutex
	detail::ReceivedMessage incoming; // the thread's
	// Frames every consumer released, whose gates are signalled once the mutex is let go
	// (signalReleased): a gate's ReleaseListener (gpuhandlesink drops a buffer there) must not
	// run under this lock. Reserved for every outstanding frame and a few more: no allocation.
	std::vector<Frame> released;

	void log(const Error &e) const
	{
		if (options.log)
			options.log(e);
	}

	void roomChanged() const
	{
		if (options.roomChanged)
			options.roomChanged();
	}

	uint32_t connected() const
	{
		return static_cast<uint32_t>(
			std::count_if(peers.begin(), peers.end(),
				      [](const Peer &p) { return p.socket.isValid(); }));
	}

	// Releases slot `i`'s frames and closes its socket (under mutex).
	void dropPeer(size_t i, const Error &why)
	{
		log(why);
		peers[i] = Peer{};
		files.dropPeer(i);
		const uint64_t bit = uint64_t(1) << i;
		for (Outstanding &o : outstanding) {
			if (o.holders & bit)
				releaseHolder(o, bit);
		}
		stats.peersLost++;
		peersChanged.notify_all();
		roomChanged();
	}

	// Sends `message`, encoded last (caps, end of stream, timeline), to every connected
	// consumer (only those that read times: `timingOnly`) (under mutex). Such a message must
	// not be lost: a queue that stays full for kControlTimeout (all of them together) is a
	// consumer that stopped reading, and it is dropped. Returns how many got it.
	uint32_t sendToAll(bool timingOnly = false)
	{
		uint32_t told = 0;
		const Deadline deadline = Deadline::after(kControlTimeout);
		for (size_t i = 0; i < peers.size(); ++i) {
			if (!peers[i].socket.isValid() || (timingOnly && !peers[i].timing))
				continue;
			if (Status s = detail::sendMessageWithin(peers[i].socket.get(), message,
								 deadline.remaining());
			    s.ok())
				told++;
			else
				dropPeer(i, s.error());
		}
		return told;
	}

	// Under mutex; the gate is signalled by signalReleased() once the lock is let go.
	void releaseHolder(Outstanding &o, uint64_t bit)
	{
		o.holders &= ~bit;
		if (!o.holders && o.frame) {
			released.push_back(std::move(*o.frame));
			o.frame.reset();
		}
	}

	// Not under mutex: signals the gates of the frames releaseHolder() set aside, one at a
	// time (whoever calls it takes what any thread set aside).
	void signalReleased()
	{
		for (;;) {
			std::optional<Frame> frame;
			{
				std::lock_guard lock(mutex);
				if (released.empty())
					return;
				frame = std::move(released.back());
				released.pop_back();
			}
			(void)frame->release().signal();
		}
	}

	Result<uint32_t> sendLocked(const Frame &frame, const FrameTiming *timing,
				    std::span<const std::byte> extra);

	// Reads what consumer `i` sent until its Features came, up to kGreetingWait after its
	// hello (under mutex: the thread's reads are too).
	void awaitFeatures(size_t i)
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

	void accept()
	{
		UniqueFd socket(
			accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
		if (!socket.isValid()) {
			// Out of fds: the connection stays queued and the listener readable, so
			// pause rather than spin; anything else (the peer went away again) polls
			// again.
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				std::this_thread::sleep_for(std::chrono::milliseconds(100));
			return;
		}
		std::lock_guard lock(mutex);
		if (Status allowed = detail::checkPeer(socket.get(), options.peers);
		    !allowed.ok()) {
			stats.peersRefused++;
			log(allowed.error());
			return;
		}
		auto slot = std::find_if(peers.begin(), peers.end(),
					 [](const Peer &p) { return !p.socket.isValid(); });
		if (slot == peers.end()) {
			stats.peersRefused++;
			log(Error::format(
				ErrorCode::OutOfRange, "maxPeers",
				"Frame transport: a consumer was refused: %u are connected "
				"already.",
				options.maxPeers));
			return;
		}
		WireMessage hello;
		if (Status s = encodeHello(options.caps, options.maxInFlightPerPeer, hello, true,
					   true);
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

	// Reads one message of peer `i`, which poll found readable (under mutex). One only: a
	// consumer usually has one Release queued, and reading on until the queue is empty cost a
	// failed recvmsg per frame; the next poll round finds any message left (poll is level
	// triggered).
	void serve(size_t i)
	{
		const detail::Received got =
			detail::receiveMessage(peers[i].socket.get(), incoming);
		if (got == detail::Received::Failed) {
			dropPeer(i, detail::receiveError(incoming));
			return;
		}
		if (got == detail::Received::Empty)
			return;
		if (got == detail::Received::HungUp) {
			dropPeer(i, Error(ErrorCode::Io, "peer",
					  "Frame transport: a consumer went away."));
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

	Status handle(size_t i)
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
					if (Status s = detail::sendMessageWithin(
						    peers[i].socket.get(), line, kControlTimeout);
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
		return Error::format(
			ErrorCode::InvalidArgument, "id",
			"Frame transport: a consumer released frame %llu, which it does "
			"not hold.",
			static_cast<unsigned long long>(*id));
	}

	void run()
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
					if (fds[2 + k].revents &&
					    peers[i].socket.get() == fds[2 + k].fd)
						serve(i);
				}
			}
			signalReleased();
		}
	}
};

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
	// Both forms when times came: a consumer of an earlier version (or one that did not ask)
	// gets the plain Frame. Encoded once each, not per consumer.
	if (Status s = encodeFrame(frame, id, wantsRelease, d.message); !s.ok())
		return std::move(s).error();
	if (timing) {
		const bool anyTimed =
			std::any_of(d.peers.begin(), d.peers.end(),
				    [](const Peer &p) { return p.socket.isValid() && p.timing; });
		if (!anyTimed)
			timing = nullptr;
		else if (Status s =
				 encodeFrame(frame, id, wantsRelease, {}, timing, d.timedMessage);
			 !s.ok())
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
