// Encoding frames and control messages into the wire format (fixed buffers, no allocation).
#include "validation.h"
#include "wire_codec.h"
#include "wire_timing.h"

namespace gpuhandle {

namespace detail {

void WireWriter::finish(WireType type)
{
	std::byte *h = out_.bytes.data();
	const uint32_t magic = kWireMagic;
	const uint16_t version = kWireVersion;
	const auto typeValue = static_cast<uint16_t>(type);
	std::memcpy(h, &magic, 4);
	std::memcpy(h + 4, &version, 2);
	std::memcpy(h + 6, &typeValue, 2);
	std::memcpy(h + 8, &out_.size, 4);
	std::memcpy(h + 12, &out_.numFds, 4);
}

} // namespace detail

namespace {

using detail::WireWriter;

void putUuid(WireWriter &w, const std::optional<Uuid> &uuid)
{
	w.put<uint8_t>(uuid.has_value());
	const Uuid bytes = uuid.value_or(Uuid{});
	w.putBytes(bytes.data(), bytes.size());
}

bool putFd(WireWriter &w, const SharedFd &fd)
{
	uint32_t index = 0;
	if (!w.addFd(fd.get(), index))
		return false;
	w.put<uint32_t>(index);
	return true;
}

void putDmaBuf(WireWriter &w, const DmaBufDesc &d)
{
	w.put<uint32_t>(d.fourcc);
	w.put<uint64_t>(d.modifier);
	w.put<uint32_t>(d.width);
	w.put<uint32_t>(d.height);
	w.put<uint32_t>(d.numObjects);
	for (uint32_t i = 0; i < d.numObjects; ++i) {
		putFd(w, d.objects[i].fd);
		w.put<uint64_t>(d.objects[i].size);
	}
	w.put<uint32_t>(d.numPlanes);
	for (uint32_t i = 0; i < d.numPlanes; ++i) {
		w.put<uint32_t>(d.planes[i].objectIndex);
		w.put<uint64_t>(d.planes[i].offset);
		w.put<uint32_t>(d.planes[i].pitch);
	}
}

void putVulkanMemory(WireWriter &w, const VulkanMemoryFdDesc &d)
{
	putFd(w, d.fd);
	const VulkanExportDesc &e = d.exportDesc;
	w.put<uint64_t>(e.allocationSize);
	w.put<uint32_t>(e.memoryTypeIndex);
	w.put<uint8_t>(e.dedicated);
	w.put<uint32_t>(e.format);
	w.put<uint32_t>(e.width);
	w.put<uint32_t>(e.height);
	w.put<uint32_t>(e.depth);
	w.put<uint32_t>(e.tiling);
	w.put<uint32_t>(e.usage);
	w.put<uint8_t>(e.acquireTimelineValue.has_value());
	w.put<uint64_t>(e.acquireTimelineValue.value_or(0));
	putUuid(w, d.deviceUuid);
	putUuid(w, d.driverUuid);
}

Error cannotCross(const char *what, const char *name, uint32_t index)
{
	return Error::format(ErrorCode::NotSupported, detail::indexed("resources", index, "kind"),
			     "Frame transport: a %s %s cannot cross processes; only DMA-BUF, "
			     "shared-memory fds and Vulkan memory fds can.",
			     name, what);
}

// Hello and Caps carry at most kWireMaxCaps bytes of caps.
std::optional<Error> capsTooLong(std::string_view caps)
{
	if (caps.size() <= kWireMaxCaps)
		return std::nullopt;
	return Error::format(ErrorCode::InvalidArgument, "caps",
			     "Frame transport: caps of %zu bytes are longer than the %u a message "
			     "carries.",
			     caps.size(), kWireMaxCaps);
}

} // namespace

Status encodeFrame(const Frame &frame, uint64_t id, bool wantsRelease, WireMessage &out)
{
	return encodeFrame(frame, id, wantsRelease, {}, out);
}

Status encodeFrame(const Frame &frame, uint64_t id, bool wantsRelease,
		   std::span<const int32_t> cachedSlots, WireMessage &out)
{
	return encodeFrame(frame, id, wantsRelease, cachedSlots, nullptr, out);
}

Status encodeFrame(const Frame &frame, uint64_t id, bool wantsRelease,
		   std::span<const int32_t> cachedSlots, const FrameTiming *timing,
		   WireMessage &out)
{
	if (cachedSlots.size() > frame.numResources())
		return Error(ErrorCode::InvalidArgument, "cachedSlots",
			     "Frame transport: more cache slots than the frame has resources.");
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint64_t>(id);
	// A TimedFrame's times sit right after the id: everything after them is the frame as a
	// Frame message carries it (and what a receiver compares to know a pool's frame again).
	if (timing)
		detail::putTiming(w, *timing);
	w.put<uint8_t>(wantsRelease);
	w.put<uint32_t>(static_cast<uint32_t>(frame.format()));
	w.put<uint32_t>(frame.width());
	w.put<uint32_t>(frame.height());
	const Colorimetry &c = frame.colorimetry();
	w.put<uint8_t>(static_cast<uint8_t>(c.range));
	w.put<uint8_t>(static_cast<uint8_t>(c.matrix));
	w.put<uint8_t>(static_cast<uint8_t>(c.primaries));
	w.put<uint8_t>(static_cast<uint8_t>(c.transfer));
	w.put<uint32_t>(frame.numResources());
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const Resource &r = frame.resource(i);
		w.put<uint32_t>(static_cast<uint32_t>(r.kind()));
		if (const DmaBuf *dmabuf = r.get<DmaBuf>()) {
			putDmaBuf(w, dmabuf->desc());
		} else if (const ShmFd *shm = r.get<ShmFd>()) {
			if (!shm->isSealed())
				return Error(
					ErrorCode::NotSupported,
					detail::indexed("resources", i, "fd"),
					"Frame transport: shared memory must be a memfd sealed "
					"against shrinking (F_SEAL_SHRINK) to cross processes: a "
					"consumer's mapping could otherwise fault.");
			const int32_t slot = i < cachedSlots.size() ? cachedSlots[i] : -1;
			if (slot >= int32_t(kWireMaxCachedFiles))
				return Error::format(ErrorCode::InvalidArgument, "cachedSlots",
						     "Frame transport: cache slot %d (at most %u).",
						     slot, kWireMaxCachedFiles);
			if (slot >= 0)
				w.put<uint32_t>(kWireCachedFile | uint32_t(slot));
			else
				putFd(w, shm->desc().fd);
			w.put<uint64_t>(shm->desc().offset);
			w.put<uint64_t>(shm->desc().size);
		} else if (const VulkanMemoryFd *vk = r.get<VulkanMemoryFd>()) {
			putVulkanMemory(w, vk->desc());
		} else {
			return cannotCross("resource", resourceKindName(r.kind()), i);
		}
		if (i < cachedSlots.size() && cachedSlots[i] >= 0 && !r.get<ShmFd>())
			return Error(ErrorCode::InvalidArgument, "cachedSlots",
				     "Frame transport: only shared-memory files are cached.");
	}
	w.put<uint32_t>(frame.numPlanes());
	for (uint32_t i = 0; i < frame.numPlanes(); ++i) {
		const PlaneView &p = frame.plane(i);
		w.put<uint32_t>(p.resource);
		w.put<uint32_t>(p.subresource);
		w.put<uint64_t>(p.offset);
		w.put<uint32_t>(p.stride);
	}
	const SyncPoint &acquire = frame.acquire();
	w.put<uint32_t>(static_cast<uint32_t>(acquire.kind()));
	if (const FenceFdSync *fence = acquire.raw<FenceFdSync>()) {
		putFd(w, fence->fd);
	} else if (!acquire.isNoop()) {
		return Error::format(ErrorCode::NotSupported, "acquire",
				     "Frame transport: a %s acquire point cannot cross processes; "
				     "export it as a sync_file (or wait for it) first.",
				     syncKindName(acquire.kind()));
	}
	if (!w.ok())
		return Error(ErrorCode::OutOfRange, "frame",
			     "Frame transport: the frame does not fit in one wire message.");
	w.finish(timing ? WireType::TimedFrame : WireType::Frame);
	return {};
}

Status encodeHello(std::string_view caps, uint32_t maxInFlight, WireMessage &out, bool fileCache,
		   bool timing)
{
	if (auto e = capsTooLong(caps))
		return std::move(*e);
	if (!maxInFlight || (maxInFlight & (kWireHelloFileCache | kWireHelloTiming)))
		return Error(ErrorCode::InvalidArgument, "maxInFlight",
			     "Frame transport: 1 to 2^30 - 1 frames may be allowed in flight.");
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint32_t>(maxInFlight | (fileCache ? kWireHelloFileCache : 0) |
			(timing ? kWireHelloTiming : 0));
	w.put<uint32_t>(static_cast<uint32_t>(caps.size()));
	w.putBytes(caps.data(), caps.size());
	w.finish(WireType::Hello);
	return {};
}

Status encodeCaps(std::string_view caps, WireMessage &out)
{
	if (auto e = capsTooLong(caps))
		return std::move(*e);
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint32_t>(static_cast<uint32_t>(caps.size()));
	w.putBytes(caps.data(), caps.size());
	w.finish(WireType::Caps);
	return {};
}

void encodeRelease(uint64_t id, WireMessage &out) noexcept
{
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint64_t>(id);
	w.finish(WireType::Release);
}

Status encodeAttachment(uint64_t id, std::span<const std::byte> bytes, WireMessage &out)
{
	if (bytes.size() > kWireMaxAttachment)
		return Error::format(ErrorCode::InvalidArgument, "attachment",
				     "Frame transport: an attachment of %zu bytes (at most %u fit "
				     "in a message).",
				     bytes.size(), kWireMaxAttachment);
	out.numFds = 0;
	WireWriter w(out);
	w.put<uint64_t>(id);
	w.put<uint32_t>(static_cast<uint32_t>(bytes.size()));
	w.putBytes(bytes.data(), bytes.size());
	w.finish(WireType::Attachment);
	return {};
}

void encodeBye(WireMessage &out) noexcept
{
	out.numFds = 0;
	WireWriter w(out);
	w.finish(WireType::Bye);
}

void encodeEndOfStream(WireMessage &out) noexcept
{
	out.numFds = 0;
	WireWriter w(out);
	w.finish(WireType::EndOfStream);
}

const char *wireTypeName(WireType type) noexcept
{
	switch (type) {
	case WireType::Hello: return "hello";
	case WireType::Frame: return "frame";
	case WireType::Release: return "release";
	case WireType::Bye: return "bye";
	case WireType::Caps: return "caps";
	case WireType::Attachment: return "attachment";
	case WireType::Features: return "features";
	case WireType::Remember: return "remember";
	case WireType::Forget: return "forget";
	case WireType::EndOfStream: return "end-of-stream";
	case WireType::TimedFrame: return "timed frame";
	case WireType::Timeline: return "timeline";
	}
	return "unknown";
}

} // namespace gpuhandle
