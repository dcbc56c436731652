// FrameReceiver: connects to a sender, validates each message, and reports releases back.
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/waiter_thread.h>

#include "checked_frames.h"
#include "unix_socket.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

namespace gpuhandle {

namespace {

// How long one registration waits for a consumer's release before it is renewed (a consumer
// may hold a frame as long as it likes; the wait itself stays bounded).
constexpr WaitDuration kReleaseWatch = std::chrono::minutes(10);
// How long a release may wait for room in the sender's queue (it must not be lost: the sender
// would count the frame as held for good).
constexpr WaitDuration kReleaseSendTimeout = std::chrono::milliseconds(500);

} // namespace

// A release the consumer signals without a fence of its own (the common case) is sent at once, on
// the consumer's signalling thread (the gate's ReleaseListener), as shmsrc acknowledges a buffer
// as it is freed: no wake-up of the waiter thread per frame. The waiter thread sends the others:
// a consumer fence still pending, or a sender whose queue is full.
struct FrameReceiver::Impl final : ReleaseListener,
				   std::enable_shared_from_this<FrameReceiver::Impl> {
	FrameReceiverOptions options;
	UniqueFd socket;
	std::shared_ptr<WaiterThread> waiter; // watches the release gates of frames handed out
	detail::ReceivedMessage incoming;     // receive()'s
	bool ended = false;                   // Bye seen
	bool streamEnded = false;             // EndOfStream just handled: receive() answers it
	// The last Attachment's bytes; they belong to the frame after it when its id matches.
	std::array<std::byte, kWireMaxAttachment> attachmentBytes{};
	uint32_t attachmentSize = 0;
	uint64_t attachmentId = 0;
	bool attachmentPending = false;         // received, its frame not yet
	uint32_t frameAttachment = 0;           // bytes of it that belong to the frame handed out
	std::optional<FrameTiming> frameTiming; // the times of the frame handed out
	uint32_t maxInFlight = 0;               // the hello's bound
	std::atomic<uint32_t> held{ 0 };        // frames handed out, gates not yet signalled
	bool producerTiming = false;            // the producer sends times here (its hello)
	std::optional<Error> lost;              // the sender went away
	// The files the sender gave this receiver to keep (Remember), by slot: the first
	// options.cachedFiles slots; receive()'s.
	std::array<std::optional<ShmFd>, kWireMaxCachedFiles> cachedFiles{};
	// Frames over those files, checked once: a pool's frame sent again is not decoded again.
	detail::CheckedFrames checkedFrames;

	mutable std::mutex capsMutex;
	std::string caps;
	std::atomic<uint64_t> capsMessages{ 0 };
	std::optional<StreamTiming> timeline; // under capsMutex
	std::atomic<uint64_t> timelineMessages{ 0 };

	std::mutex sendMutex; // release messages come from consumers' threads and the waiter thread
	WireMessage release;
	// The gates of frames handed out, each re-armed for a later frame once nothing else holds
	// it (ReleaseGate::uniquelyHeld): no gate, fence or eventfd is made per frame in steady
	// state. A slot stays where it is (the watch's callback points at it); `id` is the frame
	// it was last given for, written before its watch is enqueued. receive()'s, and the
	// waiter thread's callbacks'.
	struct GateSlot {
		ReleaseGate gate;
		uint64_t id = 0;
	};
	std::vector<std::unique_ptr<GateSlot>> gates;
	size_t nextGate = 0; // where the search for a free slot starts
	// Set (under watchMutex) before the waiter thread is stopped: a watch that times out
	// meanwhile must not re-register with a thread that is going away.
	std::mutex watchMutex;
	bool closing = false;

	std::atomic<uint64_t> framesReceived{ 0 };
	std::atomic<uint64_t> attachmentsReceived{ 0 };
	std::atomic<uint64_t> releasesSent{ 0 };
	std::atomic<uint64_t> streamsEnded{ 0 };
	std::atomic<uint64_t> timedFrames{ 0 };
	std::atomic<uint64_t> badMessages{ 0 };
	std::atomic<uint64_t> filesRemembered{ 0 };
	std::atomic<uint64_t> framesOverKeptFiles{ 0 };
	std::atomic<uint32_t> filesHeld{ 0 };

	~Impl()
	{
		{
			std::lock_guard lock(watchMutex);
			closing = true;
		}
		// Then: resolves pending release watches (Cancelled) and joins, so that no callback
		// runs once the members below are gone.
		waiter.reset();
	}

	void log(const Error &e)
	{
		if (options.log)
			options.log(e);
	}

	void refuse(const Error &e)
	{
		badMessages++;
		log(e);
	}

	void sendRelease(uint64_t id)
	{
		std::lock_guard lock(sendMutex);
		encodeRelease(id, release);
		// A sender that is gone released everything already; nothing to report then.
		if (detail::sendMessageWithin(socket.get(), release, kReleaseSendTimeout).ok())
			releasesSent++;
	}

	// Without waiting: false when the sender's queue is full or another thread is sending
	// (then the waiter thread sends it, bounded). A sender that is gone needs no release.
	bool trySendRelease(uint64_t id)
	{
		std::unique_lock lock(sendMutex, std::try_to_lock);
		if (!lock.owns_lock())
			return false;
		encodeRelease(id, release);
		Status sent = detail::sendMessage(socket.get(), release);
		if (sent.ok()) {
			releasesSent++;
			return true;
		}
		return sent.error().code() != ErrorCode::WouldBlock;
	}

	// The consumer signalled the gate of the slot `tag` names. The slot is not re-armed before
	// this returns: the signalling thread holds a copy of its gate. The gate's signal() holds a
	// reference to this Impl meanwhile: a receiver destroyed in between is finished (its waiter
	// thread joined) on the consumer's thread once this returns.
	void gateSignalled(uint64_t tag, const SyncPoint &consumerDone) noexcept override
	{
		auto *slot = reinterpret_cast<GateSlot *>(static_cast<uintptr_t>(tag));
		held.fetch_sub(1, std::memory_order_relaxed);
		if (consumerDone.isNoop() && trySendRelease(slot->id))
			return;
		if (Status watched = watchRelease(slot);
		    !watched.ok() && watched.error().code() != ErrorCode::Cancelled)
			log(watched.error());
	}

	// Tells the sender once the consumer signalled the slot's gate and its fence is done. The
	// callback holds two pointers, stored in place by std::function (no heap block per frame).
	Status watchRelease(GateSlot *slot)
	{
		std::lock_guard lock(watchMutex);
		if (closing)
			return Error(ErrorCode::Cancelled, "receiver", "Frame transport: closing.");
		auto ticket = waiter->enqueue(
			slot->gate.released(), kReleaseWatch, [this, slot](Status done) {
				if (done.ok())
					sendRelease(slot->id);
				else if (done.error().code() == ErrorCode::Timeout)
					(void)watchRelease(slot);
				// Cancelled: the receiver is closing.
			});
		if (!ticket.ok())
			return std::move(ticket).error();
		return {};
	}

	// A gate for frame `id`: a slot's that nothing holds any more, re-armed, else a new slot.
	Result<GateSlot *> takeGate(uint64_t id)
	{
		for (size_t n = 0; n < gates.size(); ++n) {
			GateSlot *slot = gates[(nextGate + n) % gates.size()].get();
			if (slot->gate.uniquelyHeld() && slot->gate.reset().ok()) {
				nextGate = (nextGate + n + 1) % gates.size();
				slot->id = id;
				return slot;
			}
		}
		auto gate = ReleaseGate::create();
		if (!gate.ok())
			return std::move(gate).error();
		gates.push_back(std::make_unique<GateSlot>(GateSlot{ std::move(*gate), id }));
		return gates.back().get();
	}

	// Slot `slot` holds `file` now (nothing: nullopt).
	void keep(uint32_t slot, std::optional<ShmFd> file)
	{
		std::optional<ShmFd> &kept = cachedFiles[slot];
		filesHeld += uint32_t(file.has_value()) - uint32_t(kept.has_value());
		kept = std::move(file);
		// A frame kept names the files by slot: with another file there it is another
		// frame.
		checkedFrames.clear();
	}

	// The slot a Remember in `incoming` names, read without checking the rest
	// (kWireMaxCachedFiles when the message is too short to say).
	uint32_t rememberedSlot() const
	{
		uint32_t slot = kWireMaxCachedFiles;
		if (incoming.size >= kWireHeaderBytes + sizeof slot)
			std::memcpy(&slot, incoming.bytes.data() + kWireHeaderBytes, sizeof slot);
		return slot;
	}

	// The Frame message in `incoming`: a copy of the frame an equal message over the same kept
	// files gave (checked then), else decoded and checked now, and kept when it came over kept
	// files only.
	Result<WireFrame> decodeFrameMessage()
	{
		const auto numFds = static_cast<uint32_t>(incoming.numFds);
		if (std::optional<WireFrame> checked = checkedFrames.find(incoming.data(), numFds))
			return std::move(*checked);
		Result<WireFrame> wire =
			decodeFrame(incoming.data(), incoming.fdSpan(),
				    std::span(cachedFiles.data(), options.cachedFiles));
		if (wire.ok())
			checkedFrames.keep(incoming.data(), numFds, *wire);
		return wire;
	}

	// The message now in `incoming`: a frame to hand out, or nothing (handled or refused).
	Result<std::optional<Frame>> handle()
	{
		if (incoming.truncated)
			return Error(ErrorCode::InvalidArgument, "size",
				     "Frame transport: a message from the sender was too large.");
		auto type = decodeHeader(incoming.data(), static_cast<uint32_t>(incoming.numFds));
		if (!type.ok())
			return std::move(type).error();
		// An attachment belongs to the message right after it, when that is its frame.
		const bool hadAttachment = std::exchange(attachmentPending, false);
		switch (*type) {
		case WireType::Attachment: {
			auto attachment = decodeAttachment(incoming.data());
			if (!attachment.ok())
				return std::move(attachment).error();
			std::copy(attachment->bytes.begin(), attachment->bytes.end(),
				  attachmentBytes.begin());
			attachmentSize = static_cast<uint32_t>(attachment->bytes.size());
			attachmentId = attachment->id;
			attachmentPending = true;
			return std::optional<Frame>();
		}
		case WireType::Frame:
		case WireType::TimedFrame: {
			auto wire = decodeFrameMessage();
			if (!wire.ok())
				return std::move(wire).error();
			framesReceived++;
			frameTiming = wire->timing;
			if (frameTiming)
				timedFrames++;
			if (wire->cachedResources)
				framesOverKeptFiles++;
			frameAttachment = hadAttachment && attachmentId == wire->id ? attachmentSize
										    : 0;
			if (frameAttachment)
				attachmentsReceived++;
			if (wire->wantsRelease) {
				Result<GateSlot *> slot = takeGate(wire->id);
				if (!slot.ok())
					return std::move(slot).error();
				const auto tag =
					static_cast<uint64_t>(reinterpret_cast<uintptr_t>(*slot));
				if (Status s = (*slot)->gate.listen(weak_from_this(), tag); !s.ok())
					return std::move(s).error();
				wire->frame.setRelease((*slot)->gate);
				held.fetch_add(1, std::memory_order_relaxed);
			}
			return std::optional<Frame>(std::move(wire->frame));
		}
		case WireType::Caps: {
			auto newCaps = decodeCaps(incoming.data());
			if (!newCaps.ok())
				return std::move(newCaps).error();
			std::lock_guard lock(capsMutex);
			caps.assign(*newCaps);
			capsMessages.fetch_add(1, std::memory_order_release);
			return std::optional<Frame>();
		}
		case WireType::Timeline: {
			auto line = decodeTimeline(incoming.data());
			if (!line.ok())
				return std::move(line).error();
			std::lock_guard lock(capsMutex);
			timeline = *line;
			timelineMessages.fetch_add(1, std::memory_order_release);
			return std::optional<Frame>();
		}
		case WireType::Remember: {
			auto remember = decodeRemember(incoming.data(), incoming.fdSpan());
			if (!remember.ok()) {
				// A slot whose new file was refused holds nothing: frames naming it
				// are refused, never shown with the file that was there before.
				if (auto slot = rememberedSlot(); slot < cachedFiles.size())
					keep(slot, std::nullopt);
				return std::move(remember).error();
			}
			if (remember->slot >= options.cachedFiles)
				return Error::format(ErrorCode::InvalidArgument, "slot",
						     "Frame transport: cache slot %u, but this "
						     "receiver keeps %u files.",
						     remember->slot, options.cachedFiles);
			keep(remember->slot, std::move(remember->file));
			filesRemembered++;
			return std::optional<Frame>();
		}
		case WireType::Forget: {
			auto slot = decodeForget(incoming.data());
			if (!slot.ok())
				return std::move(slot).error();
			if (incoming.numFds)
				return Error(ErrorCode::InvalidArgument, "numFds",
					     "Frame transport: a forget message with fds.");
			keep(*slot, std::nullopt);
			return std::optional<Frame>();
		}
		case WireType::Bye:
			if (incoming.size != kWireHeaderBytes || incoming.numFds)
				return Error(ErrorCode::InvalidArgument, "size",
					     "Frame transport: a bye message with contents.");
			ended = true;
			return std::optional<Frame>();
		case WireType::EndOfStream:
			if (incoming.size != kWireHeaderBytes || incoming.numFds)
				return Error(ErrorCode::InvalidArgument, "size",
					     "Frame transport: an end-of-stream message with "
					     "contents.");
			streamEnded = true;
			streamsEnded++;
			return std::optional<Frame>();
		default:
			return Error::format(ErrorCode::InvalidArgument, "type",
					     "Frame transport: a %s message from the sender.",
					     wireTypeName(*type));
		}
	}
};

FrameReceiver::FrameReceiver(std::shared_ptr<Impl> impl) : impl_(std::move(impl))
{
}
FrameReceiver::~FrameReceiver() = default;

Result<std::unique_ptr<FrameReceiver>> FrameReceiver::connect(FrameReceiverOptions options)
{
	if (options.cachedFiles > kWireMaxCachedFiles)
		return Error::format(ErrorCode::OutOfRange, "cachedFiles",
				     "Frame transport: cachedFiles is %u; 0 to %u are allowed.",
				     options.cachedFiles, kWireMaxCachedFiles);
	auto impl = std::make_shared<Impl>();
	auto socket =
		detail::connectUnix(options.socketPath, options.connectTimeout, options.cancel);
	if (!socket.ok())
		return std::move(socket).error();
	impl->socket = std::move(*socket);
	if (Status s = detail::checkPeer(impl->socket.get(), options.peers); !s.ok())
		return std::move(s).error();
	// The sender greets first; anything else, or silence, is not a gpuhandle sender.
	const Deadline deadline = Deadline::after(options.connectTimeout);
	bool fileCache = false;
	bool timing = false;
	for (;;) {
		auto ready = detail::pollReadable(impl->socket.get(), deadline.remaining(),
						  options.cancel);
		if (!ready.ok())
			return std::move(ready).error();
		if (!*ready)
			return Error::format(
				ErrorCode::Timeout, "socketPath",
				"Frame transport: the sender at %s did not say hello in time.",
				options.socketPath.c_str());
		const detail::Received got =
			detail::receiveMessage(impl->socket.get(), impl->incoming);
		if (got == detail::Received::Failed)
			return detail::receiveError(impl->incoming);
		if (got == detail::Received::Empty)
			continue;
		if (got == detail::Received::HungUp)
			return Error::format(
				ErrorCode::Io, "socketPath",
				"Frame transport: the sender at %s hung up (it may have "
				"refused this consumer).",
				options.socketPath.c_str());
		if (impl->incoming.truncated || impl->incoming.numFds)
			return Error(ErrorCode::InvalidArgument, "hello",
				     "Frame transport: the sender's hello is malformed.");
		auto hello = decodeHello(impl->incoming.data());
		if (!hello.ok())
			return std::move(hello).error();
		impl->caps.assign(hello->caps);
		impl->maxInFlight = hello->maxInFlight;
		fileCache = hello->fileCache;
		timing = hello->timing;
		break;
	}
	// Announced at once, to a sender that keeps files or sends times, so that its first
	// frames can name them already. The longer form goes only to a sender that said it reads
	// it (its hello offers times); an earlier sender gets the first form, or nothing. Not
	// sent, the cache is unused: a sender that already said all it had and hung up is still
	// read to its end.
	WireFeatures features;
	features.cachedFiles = fileCache ? options.cachedFiles : 0;
	features.timing = timing && options.timing;
	// A sender that offers times waits (briefly) for an answer before the first frame: it
	// always gets one, the longer form, even one that asks for nothing.
	features.extended = timing;
	if (features.cachedFiles || features.extended) {
		WireMessage message;
		if (encodeFeatures(features, message).ok() &&
		    detail::sendMessage(impl->socket.get(), message).ok())
			impl->producerTiming = features.timing;
	}
	auto waiter = WaiterThread::create("gpuhandle-recv");
	if (!waiter.ok())
		return std::move(waiter).error();
	impl->waiter = std::move(*waiter);
	impl->checkedFrames = detail::CheckedFrames(options.cachedFiles);
	impl->options = std::move(options);
	return std::unique_ptr<FrameReceiver>(new FrameReceiver(std::move(impl)));
}

std::string FrameReceiver::caps() const
{
	std::lock_guard lock(impl_->capsMutex);
	return impl_->caps;
}

uint64_t FrameReceiver::capsMessages() const noexcept
{
	return impl_->capsMessages.load(std::memory_order_acquire);
}

Result<std::optional<Frame>> FrameReceiver::receive(WaitDuration timeout)
{
	Impl &d = *impl_;
	d.frameAttachment = 0;
	d.frameTiming.reset();
	if (d.ended)
		return std::optional<Frame>();
	if (d.lost)
		return *d.lost;
	const Deadline deadline = Deadline::after(timeout);
	// A caller that will wait waits first, as shmsrc does: a live receiver usually finds
	// nothing queued, and reading first then cost a failed recvmsg per frame.
	bool waitFirst = timeout > WaitDuration::zero();
	for (;;) {
		if (waitFirst) {
			auto ready = detail::pollReadable(d.socket.get(), deadline.remaining());
			if (!ready.ok())
				return std::move(ready).error();
			if (!*ready)
				return Error(ErrorCode::Timeout, "timeout",
					     "Frame transport: no frame came in time.");
		}
		const detail::Received got = detail::receiveMessage(d.socket.get(), d.incoming);
		if (got == detail::Received::Empty) {
			if (deadline.remaining() <= WaitDuration::zero())
				return Error(ErrorCode::Timeout, "timeout",
					     "Frame transport: no frame came in time.");
			waitFirst = true;
			continue;
		}
		if (got != detail::Received::Message) {
			d.lost = got == detail::Received::HungUp
					 ? Error(ErrorCode::Io, "peer",
						 "Frame transport: the sender went away without "
						 "ending the stream.")
					 : detail::receiveError(d.incoming);
			d.log(*d.lost);
			return *d.lost;
		}
		auto handled = d.handle();
		if (!handled.ok())
			d.refuse(handled.error());
		else if (*handled || d.ended || std::exchange(d.streamEnded, false))
			return std::move(*handled);
		// A sender that keeps sending what is refused (or only caps) must not hold this
		// call past its deadline.
		if (deadline.remaining() <= WaitDuration::zero())
			return Error(ErrorCode::Timeout, "timeout",
				     "Frame transport: no frame came in time.");
	}
}

std::span<const std::byte> FrameReceiver::attachment() const noexcept
{
	return { impl_->attachmentBytes.data(), impl_->frameAttachment };
}

std::optional<FrameTiming> FrameReceiver::timing() const noexcept
{
	return impl_->frameTiming;
}

uint32_t FrameReceiver::framesHeld() const noexcept
{
	return impl_->held.load(std::memory_order_relaxed);
}

uint32_t FrameReceiver::maxInFlight() const noexcept
{
	return impl_->maxInFlight;
}

bool FrameReceiver::saidBye() const noexcept
{
	return impl_->ended;
}

bool FrameReceiver::producerSendsTiming() const noexcept
{
	return impl_->producerTiming;
}

std::optional<StreamTiming> FrameReceiver::streamTiming() const
{
	std::lock_guard lock(impl_->capsMutex);
	return impl_->timeline;
}

uint64_t FrameReceiver::streamTimingMessages() const noexcept
{
	return impl_->timelineMessages.load(std::memory_order_acquire);
}

FrameReceiverStats FrameReceiver::stats() const
{
	FrameReceiverStats s;
	s.framesReceived = impl_->framesReceived.load();
	s.attachmentsReceived = impl_->attachmentsReceived.load();
	s.releasesSent = impl_->releasesSent.load();
	s.streamsEnded = impl_->streamsEnded.load();
	s.timedFrames = impl_->timedFrames.load();
	s.badMessages = impl_->badMessages.load();
	s.filesRemembered = impl_->filesRemembered.load();
	s.framesOverKeptFiles = impl_->framesOverKeptFiles.load();
	s.filesHeld = impl_->filesHeld.load();
	return s;
}

} // namespace gpuhandle
