// Checks shared by the wire decoders: malformed-message errors, field names, fd types, the fds of
// one message taken by index.
#pragma once

#include <gpuhandle/wire_format.h>

#include "validation.h"
#include "wire_codec.h"

#include <optional>
#include <span>
#include <string>

namespace gpuhandle::detail {

Error malformed(const std::string &field, const char *why);

// A field's name for errors, formatted only when one is made: a valid frame formats nothing
// (an snprintf per resource per frame was 7% of a consumer's CPU).
struct Field {
	const char *name;   // the whole name, or the member of resources[index]
	int64_t index = -1; // resources[index].name when >= 0
	std::string str() const
	{
		return index < 0 ? std::string(name)
				 : indexed("resources", static_cast<uint32_t>(index), name);
	}
};

inline Field resourceField(uint32_t index, const char *member)
{
	return { member, static_cast<int64_t>(index) };
}

// What a received fd is used as: memory (DMA-BUF, shared memory, Vulkan memory) or a fence.
enum class FdUse : uint8_t { DmaBuf, SharedMemory, VulkanMemory, Fence };

// Shared memory a consumer maps must not shrink under it (SIGBUS): sealed memfds only.
Error notSealed(const std::string &field);

// The fd is what its field says it is: hostile peers may send a socket, a pipe, a directory or
// a device where memory is expected, which must fail here rather than in mmap or an import.
// Shared memory is only checked for reading here: ShmFd::create reads its type, size and seals.
std::optional<Error> checkFdType(int fd, FdUse use, const Field &field);

// The header's type, already checked by decodeHeader; the decoders check it again so that each
// may be called on its own (fuzzers do).
std::optional<Error> expectType(std::span<const std::byte> bytes, WireType type, uint32_t numFds);

// The fds of one message: each may be taken once, by index; what is left is closed.
class FdTable
{
public:
	explicit FdTable(std::span<UniqueFd> fds) : fds_(fds) {}

	Result<SharedFd> take(WireReader &r, FdUse use, const Field &field)
	{
		const uint32_t index = r.get<uint32_t>();
		if (!r.ok())
			return malformed(field.str(), "the message ends inside a record");
		return takeIndex(index, use, field);
	}
	Result<SharedFd> takeIndex(uint32_t index, FdUse use, const Field &field)
	{
		if (index >= fds_.size())
			return Error::format(
				ErrorCode::InvalidArgument, field.str(),
				"Frame transport: fd index %u, but %zu fds came with the "
				"message.",
				index, fds_.size());
		if (!fds_[index].isValid())
			return Error::format(ErrorCode::InvalidArgument, field.str(),
					     "Frame transport: fd index %u is used twice.", index);
		if (auto e = checkFdType(fds_[index].get(), use, field))
			return std::move(*e);
		++used_;
		return SharedFd(std::move(fds_[index]));
	}
	bool allUsed() const noexcept { return used_ == fds_.size(); }
	size_t used() const noexcept { return used_; }

private:
	std::span<UniqueFd> fds_;
	size_t used_ = 0;
};

// A received shared-memory fd as a ShmFd of [offset, offset + size), sealed against shrinking;
// a file that is not shared memory is BadFd.
Result<ShmFd> receivedShm(SharedFd fd, uint64_t offset, uint64_t size, const Field &field);

} // namespace gpuhandle::detail
