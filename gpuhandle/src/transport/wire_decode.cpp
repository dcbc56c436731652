// Decoding the wire format: every field and fd checked before any resource is built.
#include "wire_checks.h"
#include "wire_timing.h"

#include <cstring>

namespace gpuhandle {

namespace {

using detail::FdTable;
using detail::FdUse;
using detail::Field;
using detail::malformed;
using detail::resourceField;
using detail::WireReader;
using CachedFiles = std::span<const std::optional<ShmFd>>;

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

// A shared-memory resource: an fd of the message, or a file of the receiver's cache (the fd index
// with kWireCachedFile set), cut to the frame's range without a system call.
Result<Resource> getShm(WireReader &r, FdTable &fds, CachedFiles cached, uint32_t index)
{
	const Field field = resourceField(index, "fd");
	const uint32_t fdIndex = r.get<uint32_t>();
	if (!r.ok())
		return malformed(field.str(), "the message ends inside a record");
	// An fd of the message is checked before the rest of the record is read, as every fd is.
	Result<SharedFd> fd = SharedFd();
	if (!(fdIndex & kWireCachedFile)) {
		fd = fds.takeIndex(fdIndex, FdUse::SharedMemory, field);
		if (!fd.ok())
			return std::move(fd).error();
	}
	const uint64_t offset = r.get<uint64_t>();
	const uint64_t size = r.get<uint64_t>();
	if (!r.ok())
		return malformed(detail::indexed("resources", index, "size"),
				 "the message ends inside a shared-memory record");
	if (fdIndex & kWireCachedFile) {
		const uint32_t slot = fdIndex & ~kWireCachedFile;
		if (slot >= cached.size() || !cached[slot])
			return Error::format(ErrorCode::InvalidArgument, field.str(),
					     "Frame transport: cached file %u, but the receiver "
					     "holds no file there.",
					     slot);
		auto part = cached[slot]->slice(offset, size);
		if (!part.ok())
			return std::move(part).error();
		return Resource(std::move(*part));
	}
	auto shm = detail::receivedShm(std::move(*fd), offset, size, field);
	if (!shm.ok())
		return std::move(shm).error();
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

Result<Resource> getResource(WireReader &r, FdTable &fds, CachedFiles cached, uint32_t index)
{
	const auto kind = static_cast<ResourceKind>(r.get<uint32_t>());
	switch (kind) {
	case ResourceKind::DmaBuf: return getDmaBuf(r, fds, index);
	case ResourceKind::ShmFd: return getShm(r, fds, cached, index);
	case ResourceKind::VulkanMemoryFd: return getVulkanMemory(r, fds, index);
	default:
		return Error::format(ErrorCode::InvalidArgument,
				     detail::indexed("resources", index, "kind"),
				     "Frame transport: resource kind %u cannot come over the wire.",
				     static_cast<uint32_t>(kind));
	}
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
	    type > static_cast<uint16_t>(WireType::Timeline))
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

Result<WireFrame> decodeFrameFds(std::span<const std::byte> bytes, std::span<UniqueFd> fds,
				 CachedFiles cached)
{
	if (fds.size() > kWireMaxFds)
		return Error::format(ErrorCode::InvalidArgument, "numFds",
				     "Frame transport: %zu fds came with a frame (at most %u).",
				     fds.size(), kWireMaxFds);
	// A Frame, or a TimedFrame: the same with the frame's times after the id.
	const bool timed = detail::isTimedFrame(bytes);
	if (auto e = detail::expectType(bytes, timed ? WireType::TimedFrame : WireType::Frame,
					static_cast<uint32_t>(fds.size())))
		return std::move(*e);
	WireReader r(bytes);
	FdTable table(fds);
	const uint64_t id = r.get<uint64_t>();
	std::optional<FrameTiming> timing;
	if (timed)
		timing = detail::getTiming(r);
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
	uint32_t fromCache = 0;
	for (uint32_t i = 0; i < d.numResources; ++i) {
		const size_t fdsBefore = table.used();
		auto resource = getResource(r, table, cached, i);
		if (!resource.ok())
			return std::move(resource).error();
		fromCache += resource->kind() == ResourceKind::ShmFd && table.used() == fdsBefore;
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
	return WireFrame{ id, wantsRelease, std::move(*frame), fromCache, timing };
}

} // namespace

Result<WireFrame> decodeFrame(std::span<const std::byte> bytes, std::span<UniqueFd> fds)
{
	return decodeFrame(bytes, fds, {});
}

Result<WireFrame> decodeFrame(std::span<const std::byte> bytes, std::span<UniqueFd> fds,
			      std::span<const std::optional<ShmFd>> cachedFiles)
{
	auto frame = decodeFrameFds(bytes, fds, cachedFiles);
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
	if (auto e = detail::expectType(bytes, WireType::Hello, 0))
		return std::move(*e);
	WireReader r(bytes);
	WireHello hello;
	const uint32_t inFlight = r.get<uint32_t>();
	hello.maxInFlight = inFlight & ~(kWireHelloFileCache | kWireHelloTiming);
	hello.fileCache = (inFlight & kWireHelloFileCache) != 0;
	hello.timing = (inFlight & kWireHelloTiming) != 0;
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
	if (auto e = detail::expectType(bytes, WireType::Caps, 0))
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
	if (auto e = detail::expectType(bytes, WireType::Release, 0))
		return std::move(*e);
	WireReader r(bytes);
	const uint64_t id = r.get<uint64_t>();
	if (!r.atEnd())
		return malformed("size", "the release message's length is wrong");
	return id;
}

Result<WireAttachment> decodeAttachment(std::span<const std::byte> bytes)
{
	if (auto e = detail::expectType(bytes, WireType::Attachment, 0))
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
