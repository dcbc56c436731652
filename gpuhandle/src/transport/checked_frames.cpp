// CheckedFrames: frames over kept files, decoded and checked once (see checked_frames.h).
#include "checked_frames.h"

#include "wire_timing.h"

#include <algorithm>
#include <cstring>

namespace gpuhandle::detail {

namespace {

// A Frame message: the header, the frame's id (u64), whether it wants a release (u8), then what
// describes the frame. The id is all that differs between two sends of a pool's frame; a
// TimedFrame has the frame's times after the id, which differ too and are not compared.
constexpr size_t kIdBytes = sizeof(uint64_t);
constexpr size_t kBodyStart = kWireHeaderBytes + kIdBytes;

size_t bodyStart(std::span<const std::byte> bytes)
{
	return kBodyStart + (detail::isTimedFrame(bytes) ? kWireTimingBytes : 0);
}

std::span<const std::byte> bodyOf(std::span<const std::byte> bytes)
{
	const size_t start = bodyStart(bytes);
	return bytes.size() > start ? bytes.subspan(start) : std::span<const std::byte>{};
}

} // namespace

CheckedFrames::CheckedFrames(uint32_t capacity)
	: entries_(std::min<uint32_t>(capacity, kWireMaxCachedFiles))
{
}

std::optional<WireFrame> CheckedFrames::find(std::span<const std::byte> bytes,
					     uint32_t numFds) const
{
	const std::span<const std::byte> body = bodyOf(bytes);
	if (numFds != 0 || body.empty())
		return std::nullopt;
	for (const Entry &e : entries_) {
		if (!e.frame || e.body.size() != body.size() ||
		    std::memcmp(e.body.data(), body.data(), body.size()) != 0)
			continue;
		detail::WireReader r(bytes);
		const uint64_t id = r.get<uint64_t>();
		std::optional<FrameTiming> timing;
		if (detail::isTimedFrame(bytes))
			timing = detail::getTiming(r);
		// The byte after the id and times (wantsRelease) is part of the body compared.
		return WireFrame{ id, body[0] != std::byte{ 0 }, *e.frame, e.cachedResources,
				  timing };
	}
	return std::nullopt;
}

void CheckedFrames::keep(std::span<const std::byte> bytes, uint32_t numFds, const WireFrame &frame)
{
	const std::span<const std::byte> body = bodyOf(bytes);
	if (entries_.empty() || numFds != 0 || body.empty() ||
	    frame.cachedResources != frame.frame.numResources())
		return;
	Entry &e = entries_[next_];
	next_ = (next_ + 1) % entries_.size();
	e.body.assign(body.begin(), body.end()); // capacity kept: no allocation once it fits
	e.frame = frame.frame;
	e.cachedResources = frame.cachedResources;
}

void CheckedFrames::clear() noexcept
{
	for (Entry &e : entries_)
		e.frame.reset();
}

} // namespace gpuhandle::detail
