// SenderFileCache: the slots of the consumers' file caches, Remember and Forget (see its header).
#include "sender_file_cache.h"

#include "unix_socket.h"

namespace gpuhandle::detail {

// The slot holding `fd`, else a free one, else the least recently used one not `taken` by this
// frame; a slot given to a new file is held by no consumer yet. -1 when every slot is taken.
int32_t SenderFileCache::slotOf(int fd, uint32_t taken)
{
	int32_t free = -1, oldest = -1;
	for (uint32_t s = 0; s < kWireMaxCachedFiles; ++s) {
		const uint32_t bit = 1u << s;
		if (!(used_ & bit)) {
			if (free < 0)
				free = int32_t(s);
			continue;
		}
		if (files_[s].get() == fd)
			return int32_t(s);
		if (!(taken & bit) && (oldest < 0 || lastUse_[s] < lastUse_[size_t(oldest)]))
			oldest = int32_t(s);
	}
	return free >= 0 ? free : oldest;
}

bool SenderFileCache::slotsFor(const Frame &frame, size_t peer, uint32_t peerSlots, int socket,
			       std::array<int32_t, 4> &slots)
{
	slots.fill(-1);
	bool any = false;
	uint32_t taken = 0;
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const ShmFd *shm = frame.resource(i).get<ShmFd>();
		if (!shm || !shm->isSealed() || !shm->desc().fd.isOwned())
			continue;
		const SharedFd &fd = shm->desc().fd;
		const int32_t slot = slotOf(fd.get(), taken);
		if (slot < 0)
			continue;
		const uint32_t bit = 1u << uint32_t(slot);
		const auto s = size_t(slot);
		taken |= bit;
		if (!(used_ & bit) || files_[s].get() != fd.get()) {
			// A new file for this slot: every consumer is told of it before it is
			// named.
			files_[s] = fd;
			used_ |= bit;
			heldBy_[s] = 0;
		}
		lastUse_[s] = ++clock_;
		if (uint32_t(slot) >= peerSlots)
			continue;
		const uint64_t peerBit = uint64_t(1) << peer;
		if (!(heldBy_[s] & peerBit)) {
			if (!encodeRemember(uint32_t(slot), fd.get(), message_).ok() ||
			    !sendMessage(socket, message_).ok())
				continue;
			heldBy_[s] |= peerBit;
			remembered_++;
		}
		slots[i] = slot;
		any = true;
	}
	return any;
}

void SenderFileCache::forget(int socket, uint32_t slot)
{
	if (socket >= 0 && encodeForget(slot, message_).ok())
		(void)sendMessage(socket, message_);
}

} // namespace gpuhandle::detail
