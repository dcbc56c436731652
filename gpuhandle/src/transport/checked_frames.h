// CheckedFrames: a FrameReceiver's frames over kept files, decoded and checked once per pool slot.
#pragma once

#include <gpuhandle/frame.h>
#include <gpuhandle/wire_format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace gpuhandle::detail {

// A producer's pool sends the same frame again and again: the same files (kept by the receiver,
// named by slot, no fd sent), the same format, size and planes; only the frame's id differs. Such
// a message decodes to the same Frame every time, as long as the kept files are the same: this
// keeps the last frames checked, by their bytes past the id, and gives a copy of one for a
// message whose bytes are equal, instead of decoding and validating it again (issue 21:
// validation once per pooled frame). A message with fds (a file not kept, an acquire fence) is
// never kept; any change to the kept files (Remember, Forget) forgets every frame kept. No
// allocation once each slot's bytes have been stored once. Not thread-safe: receive()'s.
class CheckedFrames
{
public:
	// Frames kept at most: `capacity` (the receiver's kept files: one frame per file in a
	// pool that uses each file for one frame), at most kWireMaxCachedFiles.
	explicit CheckedFrames(uint32_t capacity = 0);

	// The frame for the Frame message `bytes` (its header checked) with `numFds` fds, when
	// an equal one was kept: its id and wantsRelease from `bytes`, the frame a copy.
	std::optional<WireFrame> find(std::span<const std::byte> bytes, uint32_t numFds) const;
	// Keeps `frame`, just decoded and checked from `bytes` (with `numFds` fds), when it came
	// over kept files only; replaces the oldest when full.
	void keep(std::span<const std::byte> bytes, uint32_t numFds, const WireFrame &frame);
	// The kept files changed: no frame kept may be given again.
	void clear() noexcept;

private:
	struct Entry {
		std::vector<std::byte> body; // the message past its header and id
		std::optional<Frame> frame;
		uint32_t cachedResources = 0;
	};
	std::vector<Entry> entries_;
	size_t next_ = 0; // the entry keep() replaces next
};

} // namespace gpuhandle::detail
