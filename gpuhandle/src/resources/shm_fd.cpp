// ShmFd::create: checks a shared-memory fd's range against the file and records its seals.
#include <gpuhandle/fd_resources.h>

#include "validation.h"

#include <cinttypes>
#include <fcntl.h>
#include <sys/stat.h>

namespace gpuhandle {

Result<ShmFd> ShmFd::create(Desc desc)
{
	constexpr const char *kType = "ShmFd";
	if (auto e = detail::requireOpenFd(kType, "fd", desc.fd))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "size", desc.size))
		return std::move(*e);
	struct stat st = {};
	if (fstat(desc.fd.get(), &st) != 0)
		return Error::format(ErrorCode::BadFd, "fd", "ShmFd: fstat on fd %d failed.",
				     desc.fd.get());
	if (!S_ISREG(st.st_mode))
		return Error::format(
			ErrorCode::InvalidArgument, "fd",
			"ShmFd: fd %d is not a shared-memory file (memfd or shm_open).",
			desc.fd.get());
	uint64_t fileSize = static_cast<uint64_t>(st.st_size);
	if (desc.offset > fileSize || desc.size > fileSize - desc.offset)
		return Error::format(ErrorCode::OutOfRange, "size",
				     "ShmFd: offset %" PRIu64 " + size %" PRIu64
				     " runs past the end of fd %d (%" PRIu64 " bytes).",
				     desc.offset, desc.size, desc.fd.get(), fileSize);
	// Files that cannot be sealed (shm_open, tmpfs without memfd) report EINVAL: no seals.
	int seals = fcntl(desc.fd.get(), F_GET_SEALS);
	desc.seals = seals > 0 ? static_cast<uint32_t>(seals) : 0;
	return ShmFd(std::move(desc));
}

Result<ShmFd> ShmFd::slice(uint64_t offset, uint64_t size) const
{
	if (size == 0)
		return Error(ErrorCode::InvalidArgument, "size", "ShmFd: an empty slice.");
	if (offset < d_.offset || offset - d_.offset > d_.size ||
	    size > d_.size - (offset - d_.offset))
		return Error::format(ErrorCode::OutOfRange, "size",
				     "ShmFd: bytes %" PRIu64 " + %" PRIu64
				     " are not inside bytes %" PRIu64 " + %" PRIu64 " of fd %d.",
				     offset, size, d_.offset, d_.size, d_.fd.get());
	Desc part = d_;
	part.offset = offset;
	part.size = size;
	return ShmFd(std::move(part));
}

bool ShmFd::isSealed() const
{
	return (d_.seals & F_SEAL_SHRINK) != 0;
}

} // namespace gpuhandle
