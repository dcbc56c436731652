// Checks shared by the wire decoders: fd types, seals, malformed messages, expected types.
#include "wire_checks.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef DMA_BUF_MAGIC
#define DMA_BUF_MAGIC 0x444d4142
#endif
// The character-device major of NVIDIA's /dev/nvidia* nodes, whose fds its driver exports as
// opaque Vulkan memory (not yet seen on hardware by the test suite: see docs/transport.md).
constexpr unsigned kNvidiaDeviceMajor = 195;

#ifndef ANON_INODE_FS_MAGIC
#define ANON_INODE_FS_MAGIC 0x09041934
#endif

namespace gpuhandle::detail {

Error malformed(const std::string &field, const char *why)
{
	return Error::format(ErrorCode::InvalidArgument, field,
			     "Frame transport: malformed message: %s.", why);
}

Error notSealed(const std::string &field)
{
	return Error::format(ErrorCode::BadFd, field,
			     "Frame transport: the shared memory sent for %s is not sealed against "
			     "shrinking (F_SEAL_SHRINK), so it could vanish under a mapping.",
			     field.c_str());
}

std::optional<Error> checkFdType(int fd, FdUse use, const Field &field)
{
	if (use == FdUse::SharedMemory) {
		// ShmFd::create, which receivedShm calls next, reads the file's type, size and
		// seals itself, and receivedShm then requires the shrink seal, which only memfds
		// can carry: checking them here as well cost three system calls per frame.
		const int flags = fcntl(fd, F_GETFL);
		if (flags >= 0 && !(flags & O_PATH) && (flags & O_ACCMODE) != O_WRONLY)
			return std::nullopt;
		return Error::format(ErrorCode::BadFd, field.str(),
				     "Frame transport: the fd sent for %s is not open for reading.",
				     field.str().c_str());
	}
	struct stat st {};
	struct statfs fs {};
	if (fstat(fd, &st) != 0 || fstatfs(fd, &fs) != 0)
		return Error::format(ErrorCode::BadFd, field.str(),
				     "Frame transport: fd %d cannot be inspected (%s).", fd,
				     std::strerror(errno));
	const auto fsType = static_cast<unsigned long>(fs.f_type);
	// An O_PATH or write-only fd passes fstat but cannot be mapped or read.
	const int flags = fcntl(fd, F_GETFL);
	const bool readable = flags >= 0 && !(flags & O_PATH) && (flags & O_ACCMODE) != O_WRONLY;
	const bool shmem = S_ISREG(st.st_mode) &&
			   (fsType == TMPFS_MAGIC || fsType == HUGETLBFS_MAGIC);
	const int seals = shmem ? fcntl(fd, F_GET_SEALS) : 0;
	const bool sealed = seals >= 0 && (seals & F_SEAL_SHRINK);
	const bool dmabuf = fsType == DMA_BUF_MAGIC;
	bool ok = false;
	const char *wanted = "";
	switch (use) {
	case FdUse::DmaBuf:
		// memfd-backed descriptors (udmabuf's source, software decoders) are DMA-BUF-like.
		ok = dmabuf || shmem;
		wanted = "a DMA-BUF or shared-memory fd";
		break;
	case FdUse::SharedMemory: // returned above
		break;
	case FdUse::VulkanMemory:
		// Opaque fds are memfds on Mesa's software drivers, DMA-BUFs or driver-owned
		// character-device fds elsewhere.
		ok = dmabuf || shmem ||
		     (S_ISCHR(st.st_mode) && major(st.st_rdev) == kNvidiaDeviceMajor);
		wanted = "a Vulkan memory fd";
		break;
	case FdUse::Fence: {
		// sync_file and eventfd are anonymous inodes; so are epoll or timer fds, which
		// the link name tells apart.
		if (fsType == ANON_INODE_FS_MAGIC) {
			char path[64];
			char target[64] = {};
			std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
			const ssize_t n = readlink(path, target, sizeof target - 1);
			const std::string_view link(target, n > 0 ? size_t(n) : 0);
			ok = link == "anon_inode:sync_file" || link == "anon_inode:[eventfd]";
		}
		wanted = "a sync_file or eventfd";
		break;
	}
	}
	if (ok && !readable)
		return Error::format(ErrorCode::BadFd, field.str(),
				     "Frame transport: the fd sent for %s is not open for reading.",
				     field.str().c_str());
	if (ok && shmem && !sealed && use != FdUse::VulkanMemory)
		return notSealed(field.str());
	if (ok)
		return std::nullopt;
	return Error::format(ErrorCode::BadFd, field.str(),
			     "Frame transport: the fd sent for %s is not %s (file type 0%o, file "
			     "system 0x%lx).",
			     field.str().c_str(), wanted, unsigned(st.st_mode & S_IFMT), fsType);
}

std::optional<Error> expectType(std::span<const std::byte> bytes, WireType type, uint32_t numFds)
{
	auto header = decodeHeader(bytes, numFds);
	if (!header.ok())
		return std::move(header).error();
	if (*header != type)
		return Error::format(ErrorCode::InvalidArgument, "type",
				     "Frame transport: a %s message where a %s was expected.",
				     wireTypeName(*header), wireTypeName(type));
	return std::nullopt;
}

Result<ShmFd> receivedShm(SharedFd fd, uint64_t offset, uint64_t size, const Field &field)
{
	ShmFdDesc d;
	d.fd = std::move(fd);
	d.offset = offset;
	d.size = size;
	auto shm = ShmFd::create(std::move(d));
	if (!shm.ok()) {
		const Error &e = shm.error();
		if (e.code() != ErrorCode::InvalidArgument || std::strcmp(e.field(), "fd") != 0)
			return std::move(shm).error();
		return Error::format(ErrorCode::BadFd, field.str(),
				     "Frame transport: the fd sent for %s is not a memfd or "
				     "shared-memory fd: %s",
				     field.str().c_str(), e.message().c_str());
	}
	if (!shm->isSealed())
		return notSealed(field.str());
	return shm;
}

} // namespace gpuhandle::detail
