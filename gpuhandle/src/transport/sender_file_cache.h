// The files a FrameSender's consumers keep between frames (wire_format.h's file cache): which file
// each slot holds, which consumer was told, Remember before a frame names a slot, Forget after.
#pragma once

#include <gpuhandle/fd.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/wire_format.h>

#include <array>
#include <cstdint>

namespace gpuhandle::detail {

// One table for every consumer, so that a file is held once here however many consumers keep
// it. A file is cached only when its fd is owned (holding a copy keeps only the fd open, never
// a buffer someone else's pool waits for); while this table holds the copy the fd number names
// that file, so a frame's file is found by its number. Under the sender's lock.
class SenderFileCache
{
public:
	// Resource i's slot for consumer `peer` (index < 64), which announced `peerSlots` slots,
	// on `socket` (-1: sent as an fd), with a Remember sent first for files it does not hold
	// yet. True when any resource got a slot. Never blocks: a Remember that finds the
	// consumer's queue full leaves its file uncached for this frame.
	bool slotsFor(const Frame &frame, size_t peer, uint32_t peerSlots, int socket,
		      std::array<int32_t, 4> &slots);
	// The consumer in `peer` went away: whoever comes there next holds nothing.
	void dropPeer(size_t peer) noexcept
	{
		for (uint64_t &held : heldBy_)
			held &= ~(uint64_t(1) << peer);
	}
	// Lets go of the files nobody else holds any more (their producer freed them), telling the
	// consumers that hold them (Forget; best effort: a slot is only ever named after a
	// Remember, so a lost Forget costs the consumer memory until the slot is reused).
	template<typename Peers>
	void forgetUnused(Peers &peers)
	{
		if (!used_)
			return;
		for (uint32_t s = 0; s < kWireMaxCachedFiles; ++s) {
			if (!(used_ & (1u << s)) || !files_[s].isSoleCopy())
				continue;
			for (size_t i = 0; i < peers.size(); ++i)
				if (heldBy_[s] & (uint64_t(1) << i))
					forget(peers[i].socket.get(), s);
			heldBy_[s] = 0;
			files_[s] = SharedFd();
			used_ &= ~(1u << s);
		}
	}
	uint64_t remembered() const noexcept { return remembered_; }

private:
	int32_t slotOf(int fd, uint32_t taken);
	void forget(int socket, uint32_t slot);

	std::array<SharedFd, kWireMaxCachedFiles> files_{};
	std::array<uint64_t, kWireMaxCachedFiles> lastUse_{};
	std::array<uint64_t, kWireMaxCachedFiles> heldBy_{}; // bit i: consumer i holds files_[s]
	uint32_t used_ = 0;                                  // bit s: files_[s] holds a file
	uint64_t clock_ = 0;
	uint64_t remembered_ = 0;
	WireMessage message_{};
};

} // namespace gpuhandle::detail
