// FrameReceiver's messages: each one read from the sender, checked and handled.
#include "frame_receiver_impl.h"

#include <cstring>

namespace gpuhandle {

uint32_t FrameReceiver::Impl::rememberedSlot() const
{
	uint32_t slot = kWireMaxCachedFiles;
	if (incoming.size >= kWireHeaderBytes + sizeof slot)
		std::memcpy(&slot, incoming.bytes.data() + kWireHeaderBytes, sizeof slot);
	return slot;
}

Result<WireFrame> FrameReceiver::Impl::decodeFrameMessage()
{
	const auto numFds = static_cast<uint32_t>(incoming.numFds);
	if (std::optional<WireFrame> checked = checkedFrames.find(incoming.data(), numFds))
		return std::move(*checked);
	Result<WireFrame> wire = decodeFrame(incoming.data(), incoming.fdSpan(),
					     std::span(cachedFiles.data(), options.cachedFiles));
	if (wire.ok())
		checkedFrames.keep(incoming.data(), numFds, *wire);
	return wire;
}

Result<std::optional<Frame>> FrameReceiver::Impl::handle()
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
		frameAttachment = hadAttachment && attachmentId == wire->id ? attachmentSize : 0;
		if (frameAttachment)
			attachmentsReceived++;
		if (wire->wantsRelease) {
			Result<GateSlot *> slot = takeGate(wire->id);
			if (!slot.ok())
				return std::move(slot).error();
			const auto tag = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(*slot));
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

} // namespace gpuhandle
