// FrameReceiver: connects to a sender, validates each message, and reports releases back.
#include "frame_receiver_impl.h"

namespace gpuhandle {

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
