// Decoding the wire format: every field and fd checked before any resource is built.
#include "validation.h"
#include "wire_codec.h"

#include <cerrno>
#include <climits>
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

namespace gpuhandle {

namespace {

using detail::WireReader;

Error malformed(const std::string &field, const char *why)
{
	return Error::format(ErrorCode::InvalidArgument, field,
			     "Frame transport: malformed message: %s.", why);
}

// A field's name for errors, formatted only when one is made: a valid frame formats nothing
// (an snprintf per resource per frame was 7% of a consumer's CPU).
struct Field {
	const char *name;   // the whole name, or the member of resources[index]
	int64_t index = -1; // resources[index].name when >= 0
	std::string str() const
	{
		return index < 0 ? std::string(name)
				 : detail::indexed("resources", static_cast<uint32_t>(index), name);
	}
};

Field resourceField(uint32_t index, const char *member)
{
	return { member, static_cast<int64_t>(index) };
}

// What a received fd is used as: memory (DMA-BUF, shared memory, Vulkan memory) or a fence.
enum class FdUse : uint8_t { DmaBuf, SharedMemory, VulkanMemory, Fence };

// Shared memory a consumer maps must not shrink under it (SIGBUS): sealed memfds only.
Error notSealed(const std::string &field)
{
	return Error::format(ErrorCode::BadFd, field,
			     "Frame transport: the shared memory sent for %s is not sealed against "
			     "shrinking (F_SEAL_SHRINK), so it could vanish under a mapping.",
			     field.c_str());
}

// The fd is what its field says it is: hostile peers may send a socket, a pipe, a directory or
// a device where memory is expected, which must fail here rather than in mmap or an import.
std::optional<Error> checkFdType(int fd, FdUse use, const Field &field)
{
	if (use == FdUse::SharedMemory) {
		// ShmFd::create, which getShm calls next, reads the file's type, size and seals
		// itself, and getShm then requires the shrink seal, which only memfds can carry:
		// checking them here as well cost three system calls per frame.
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

private:
	std::span<UniqueFd> fds_;
	size_t used_ = 0;
};

std::optional<Uuid> getUuid(WireReader &r)
{
	const bool present = r.get<uint8_t>() != 0;
	Uuid uuid{};
	auto bytes = r.getBytes(uuid.size());
	if (!present || bytes.size() != uuid.size())
		return std::nullopt;
	std::memcpy(uuid.data(), bytes.data(), uuid.size());
	return uuid;
}

Result<Resource> getDmaBuf(WireReader &r, FdTable &fds, uint32_t index)
{
	DmaBufDesc d;
	d.fourcc = r.get<uint32_t>();
	d.modifier = r.get<uint64_t>();
	d.width = r.get<uint32_t>();
	d.height = r.get<uint32_t>();
	d.numObjects = r.get<uint32_t>();
	const Field field = resourceField(index, "objects");
	if (!r.ok() || d.numObjects == 0 || d.numObjects > d.objects.size())
		return malformed(field.str(), "a DMA-BUF needs 1 to 4 objects");
	for (uint32_t i = 0; i < d.numObjects; ++i) {
		auto fd = fds.take(r, FdUse::DmaBuf, field);
		if (!fd.ok())
			return std::move(fd).error();
		d.objects[i].fd = std::move(*fd);
		d.objects[i].size = r.get<uint64_t>();
	}
	d.numPlanes = r.get<uint32_t>();
	if (!r.ok() || d.numPlanes == 0 || d.numPlanes > d.planes.size())
		return malformed(detail::indexed("resources", index, "planes"),
				 "a DMA-BUF needs 1 to 4 planes");
	for (uint32_t i = 0; i < d.numPlanes; ++i) {
		d.planes[i].objectIndex = r.get<uint32_t>();
		d.planes[i].offset = r.get<uint64_t>();
		d.planes[i].pitch = r.get<uint32_t>();
	}
	if (!r.ok())
		return malformed(field.str(), "the message ends inside a DMA-BUF");
	auto dmabuf = DmaBuf::create(std::move(d));
	if (!dmabuf.ok())
		return std::move(dmabuf).error();
	return Resource(std::move(*dmabuf));
}

Result<Resource> getShm(WireReader &r, FdTable &fds, uint32_t index)
{
	auto fd = fds.take(r, FdUse::SharedMemory, resourceField(index, "fd"));
	if (!fd.ok())
		return std::move(fd).error();
	ShmFdDesc d;
	d.fd = std::move(*fd);
	d.offset = r.get<uint64_t>();
	d.size = r.get<uint64_t>();
	if (!r.ok())
		return malformed(detail::indexed("resources", index, "size"),
				 "the message ends inside a shared-memory record");
	auto shm = ShmFd::create(std::move(d));
	if (!shm.ok()) {
		const Error &e = shm.error();
		if (e.code() != ErrorCode::InvalidArgument || std::strcmp(e.field(), "fd") != 0)
			return std::move(shm).error();
		const std::string field = detail::indexed("resources", index, "fd");
		return Error::format(ErrorCode::BadFd, field,
				     "Frame transport: the fd sent for %s is not a memfd or "
				     "shared-memory fd: %s",
				     field.c_str(), e.message().c_str());
	}
	if (!shm->isSealed())
		return notSealed(detail::indexed("resources", index, "fd"));
	return Resource(std::move(*shm));
}

Result<Resource> getVulkanMemory(WireReader &r, FdTable &fds, uint32_t index)
{
	auto fd = fds.take(r, FdUse::VulkanMemory, resourceField(index, "fd"));
	if (!fd.ok())
		return std::move(fd).error();
	VulkanMemoryFdDesc d;
	d.fd = std::move(*fd);
	VulkanExportDesc &e = d.exportDesc;
	e.allocationSize = r.get<uint64_t>();
	e.memoryTypeIndex = r.get<uint32_t>();
	e.dedicated = r.get<uint8_t>() != 0;
	e.format = r.get<uint32_t>();
	e.width = r.get<uint32_t>();
	e.height = r.get<uint32_t>();
	e.depth = r.get<uint32_t>();
	e.tiling = r.get<uint32_t>();
	e.usage = r.get<uint32_t>();
	const bool hasTimeline = r.get<uint8_t>() != 0;
	const uint64_t timeline = r.get<uint64_t>();
	if (hasTimeline)
		e.acquireTimelineValue = timeline;
	d.deviceUuid = getUuid(r);
	d.driverUuid = getUuid(r);
	if (!r.ok())
		return malformed(detail::indexed("resources", index, "exportDesc"),
				 "the message ends inside a Vulkan memory record");
	auto vk = VulkanMemoryFd::create(std::move(d));
	if (!vk.ok())
		return std::move(vk).error();
	return Resource(std::move(*vk));
}

Result<Resource> getResource(WireReader &r, FdTable &fds, uint32_t index)
{
	const auto kind = static_cast<ResourceKind>(r.get<uint32_t>());
	switch (kind) {
	case ResourceKind::DmaBuf: return getDmaBuf(r, fds, index);
	case ResourceKind::ShmFd: return getShm(r, fds, index);
	case ResourceKind::VulkanMemoryFd: return getVulkanMemory(r, fds, index);
	default:
		return Error::format(ErrorCode::InvalidArgument,
				     detail::indexed("resources", index, "kind"),
				     "Frame transport: resource kind %u cannot come over the wire.",
				     static_cast<uint32_t>(kind));
	}
}

// The header's type, already checked by decodeHeader; the decoders check it again so that each
// may be called on its own (fuzzers do).
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

} // namespace

Result<WireType> decodeHeader(std::span<const std::byte> bytes, uint32_t numFds)
{
	if (bytes.size() < kWireHeaderBytes || bytes.size() > kWireMaxMessage)
		return Error::format(ErrorCode::InvalidArgument, "size",
				     "Frame transport: a message of %zu bytes (%u to %u expected).",
				     bytes.size(), kWireHeaderBytes, kWireMaxMessage);
	uint32_t magic, size, fds;
	uint16_t version, type;
	std::memcpy(&magic, bytes.data(), 4);
	std::memcpy(&version, bytes.data() + 4, 2);
	std::memcpy(&type, bytes.data() + 6, 2);
	std::memcpy(&size, bytes.data() + 8, 4);
	std::memcpy(&fds, bytes.data() + 12, 4);
	if (magic != kWireMagic)
		return Error::format(ErrorCode::InvalidArgument, "magic",
				     "Frame transport: not a gpuhandle message (magic 0x%08x).",
				     magic);
	if (version != kWireVersion)
		return Error::format(ErrorCode::NotSupported, "version",
				     "Frame transport: wire version %u; this library speaks %u.",
				     version, kWireVersion);
	if (type < static_cast<uint16_t>(WireType::Hello) ||
	    type > static_cast<uint16_t>(WireType::Attachment))
		return Error::format(ErrorCode::InvalidArgument, "type",
				     "Frame transport: unknown message type %u.", type);
	if (size != bytes.size())
		return Error::format(ErrorCode::InvalidArgument, "size",
				     "Frame transport: the header says %u bytes but %zu arrived.",
				     size, bytes.size());
	if (fds != numFds)
		return Error::format(ErrorCode::InvalidArgument, "numFds",
				     "Frame transport: the header says %u fds but %u arrived.", fds,
				     numFds);
	return static_cast<WireType>(type);
}

namespace {

Result<WireFrame> decodeFrameFds(std::span<const std::byte> bytes, std::span<UniqueFd> fds)
{
	if (fds.size() > kWireMaxFds)
		return Error::format(ErrorCode::InvalidArgument, "numFds",
				     "Frame transport: %zu fds came with a frame (at most %u).",
				     fds.size(), kWireMaxFds);
	if (auto e = expectType(bytes, WireType::Frame, static_cast<uint32_t>(fds.size())))
		return std::move(*e);
	WireReader r(bytes);
	FdTable table(fds);
	const uint64_t id = r.get<uint64_t>();
	const bool wantsRelease = r.get<uint8_t>() != 0;
	FrameDesc d;
	d.format = static_cast<PixelFormat>(r.get<uint32_t>());
	d.width = r.get<uint32_t>();
	d.height = r.get<uint32_t>();
	d.colorimetry.range = static_cast<ColorRange>(r.get<uint8_t>());
	d.colorimetry.matrix = static_cast<ColorMatrix>(r.get<uint8_t>());
	d.colorimetry.primaries = static_cast<ColorPrimaries>(r.get<uint8_t>());
	d.colorimetry.transfer = static_cast<ColorTransfer>(r.get<uint8_t>());
	d.numResources = r.get<uint32_t>();
	if (!r.ok() || d.numResources == 0 || d.numResources > d.resources.size())
		return malformed("numResources", "a frame needs 1 to 4 resources");
	for (uint32_t i = 0; i < d.numResources; ++i) {
		auto resource = getResource(r, table, i);
		if (!resource.ok())
			return std::move(resource).error();
		d.resources[i] = std::move(*resource);
	}
	d.numPlanes = r.get<uint32_t>();
	if (!r.ok() || d.numPlanes == 0 || d.numPlanes > d.planes.size())
		return malformed("numPlanes", "a frame needs 1 to 4 planes");
	for (uint32_t i = 0; i < d.numPlanes; ++i) {
		d.planes[i].resource = r.get<uint32_t>();
		d.planes[i].subresource = r.get<uint32_t>();
		d.planes[i].offset = r.get<uint64_t>();
		d.planes[i].stride = r.get<uint32_t>();
	}
	const auto acquireKind = static_cast<SyncKind>(r.get<uint32_t>());
	if (acquireKind == SyncKind::FenceFd) {
		auto fd = table.take(r, FdUse::Fence, Field{ "acquire" });
		if (!fd.ok())
			return std::move(fd).error();
		auto point = SyncPoint::fromFenceFd(std::move(*fd));
		if (!point.ok())
			return std::move(point).error();
		d.acquire = std::move(*point);
	} else if (acquireKind != SyncKind::Noop) {
		return Error::format(ErrorCode::InvalidArgument, "acquire",
				     "Frame transport: acquire kind %u cannot come over the wire.",
				     static_cast<uint32_t>(acquireKind));
	}
	if (!r.atEnd())
		return malformed("size", "the message length does not match its contents");
	if (!table.allUsed())
		return Error(ErrorCode::InvalidArgument, "numFds",
			     "Frame transport: the message came with fds it does not use.");
	auto frame = Frame::create(std::move(d));
	if (!frame.ok())
		return std::move(frame).error();
	return WireFrame{ id, wantsRelease, std::move(*frame) };
}

} // namespace

Result<WireFrame> decodeFrame(std::span<const std::byte> bytes, std::span<UniqueFd> fds)
{
	auto frame = decodeFrameFds(bytes, fds);
	// Fds taken by resources are closed with them; on error the rest are closed now, so that
	// a refused message holds nothing.
	if (!frame.ok()) {
		for (UniqueFd &fd : fds)
			fd.reset();
	}
	return frame;
}

Result<WireHello> decodeHello(std::span<const std::byte> bytes)
{
	if (auto e = expectType(bytes, WireType::Hello, 0))
		return std::move(*e);
	WireReader r(bytes);
	WireHello hello;
	hello.maxInFlight = r.get<uint32_t>();
	const uint32_t capsSize = r.get<uint32_t>();
	if (!r.ok() || capsSize > kWireMaxCaps)
		return malformed("caps", "caps longer than a message carries");
	auto caps = r.getBytes(capsSize);
	if (!r.atEnd() || hello.maxInFlight == 0)
		return malformed("size", "the hello's length or in-flight bound is wrong");
	hello.caps = { reinterpret_cast<const char *>(caps.data()), caps.size() };
	return hello;
}

Result<std::string_view> decodeCaps(std::span<const std::byte> bytes)
{
	if (auto e = expectType(bytes, WireType::Caps, 0))
		return std::move(*e);
	WireReader r(bytes);
	const uint32_t capsSize = r.get<uint32_t>();
	if (!r.ok() || capsSize > kWireMaxCaps)
		return malformed("caps", "caps longer than a message carries");
	auto caps = r.getBytes(capsSize);
	if (!r.atEnd())
		return malformed("size", "the caps message's length is wrong");
	return std::string_view(reinterpret_cast<const char *>(caps.data()), caps.size());
}

Result<uint64_t> decodeRelease(std::span<const std::byte> bytes)
{
	if (auto e = expectType(bytes, WireType::Release, 0))
		return std::move(*e);
	WireReader r(bytes);
	const uint64_t id = r.get<uint64_t>();
	if (!r.atEnd())
		return malformed("size", "the release message's length is wrong");
	return id;
}

Result<WireAttachment> decodeAttachment(std::span<const std::byte> bytes)
{
	if (auto e = expectType(bytes, WireType::Attachment, 0))
		return std::move(*e);
	WireReader r(bytes);
	WireAttachment attachment;
	attachment.id = r.get<uint64_t>();
	const uint32_t size = r.get<uint32_t>();
	if (!r.ok() || size > kWireMaxAttachment)
		return malformed("attachment", "an attachment longer than a message carries");
	attachment.bytes = r.getBytes(size);
	if (!r.atEnd())
		return malformed("size", "the attachment message's length is wrong");
	return attachment;
}

} // namespace gpuhandle
