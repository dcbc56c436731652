// FrameReceiver's state: the connection, the kept files, the gates of frames handed out.
#pragma once

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

namespace detail {

// How long one registration waits for a consumer's release before it is renewed (a consumer
// may hold a frame as long as it likes; the wait itself stays bounded).
inline constexpr WaitDuration kReleaseWatch = std::chrono::minutes(10);
// How long a release may wait for room in the sender's queue (it must not be lost: the sender
// would count the frame as held for good).
inline constexpr WaitDuration kReleaseSendTimeout = std::chrono::milliseconds(500);

} // namespace detail

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
		if (detail::sendMessageWithin(socket.get(), release, detail::kReleaseSendTimeout)
			    .ok())
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
			slot->gate.released(), detail::kReleaseWatch, [this, slot](Status done) {
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

	// frame_receiver_messages.cpp, receive()'s:
	// The slot a Remember in `incoming` names, read without checking the rest
	// (kWireMaxCachedFiles when the message is too short to say).
	uint32_t rememberedSlot() const;
	// The Frame (or TimedFrame) message in `incoming`: a copy of the frame an equal message
	// over the same kept files gave (checked then), else decoded and checked now, and kept when
	// it came over kept files only.
	Result<WireFrame> decodeFrameMessage();
	// The message now in `incoming`: a frame to hand out, or nothing (handled or refused).
	Result<std::optional<Frame>> handle();
};

} // namespace gpuhandle
