// Fuzz harness: wire-format messages with up to 7 fds (memfds and eventfds) decoded as a receiver
// would, frames against a file cache whose slot 0 holds a memfd of the same size (slot 1 empty).
// Input: fd spec (u8: count in bits 0-2, eventfd where bit 3+i is set), memfd size (u32), then
// the message bytes.
#include <gpuhandle/wire_format.h>

#include "fuzz_input.h"

#include <array>
#include <optional>

using namespace gpuhandle;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz::FuzzInput in(data, size);
	const auto spec = in.take<uint8_t>();
	const auto memSize = in.take<uint32_t>();
	std::array<UniqueFd, 7> fds;
	const size_t count = spec & 7u;
	for (size_t i = 0; i < count; ++i)
		fds[i] = fuzz::fuzzFd((spec >> (3 + i)) & 1u, memSize);
	const auto rest = in.rest();
	const std::span<const std::byte> bytes(reinterpret_cast<const std::byte *>(rest.data()),
					       rest.size());
	auto type = decodeHeader(bytes, static_cast<uint32_t>(count));
	fuzz::report("header", type);
	if (!type.ok())
		return 0;
	switch (*type) {
	case WireType::Frame:
	case WireType::TimedFrame: {
		std::array<std::optional<ShmFd>, 2> cached;
		if (UniqueFd file = fuzz::fuzzFd(false, memSize);
		    file.isValid() && memSize % (1u << 22)) {
			auto whole = ShmFd::create(
				{ .fd = SharedFd(std::move(file)), .size = memSize % (1u << 22) });
			if (whole.ok())
				cached[0] = std::move(*whole);
		}
		auto frame = decodeFrame(bytes, std::span<UniqueFd>(fds.data(), count), cached);
		fuzz::report("frame", frame);
		if (frame.ok() && frame->frame.numPlanes() == 0)
			__builtin_trap(); // a decoded frame is a validated one
		break;
	}
	case WireType::Hello: (void)decodeHello(bytes); break;
	case WireType::Caps: (void)decodeCaps(bytes); break;
	case WireType::Release: (void)decodeRelease(bytes); break;
	case WireType::Bye: break;
	case WireType::EndOfStream: break;
	case WireType::Features: {
		auto features = decodeFeatures(bytes);
		if (features.ok() && features->cachedFiles > kWireMaxCachedFiles)
			__builtin_trap(); // bounded
		break;
	}
	case WireType::Timeline: {
		auto line = decodeTimeline(bytes);
		if (line.ok() && (line->rate == 0.0 || line->rate != line->rate))
			__builtin_trap(); // a decoded timeline is a valid segment
		break;
	}
	case WireType::Forget: (void)decodeForget(bytes); break;
	case WireType::Remember: {
		auto remember = decodeRemember(bytes, std::span<UniqueFd>(fds.data(), count));
		fuzz::report("remember", remember);
		if (remember.ok() &&
		    (remember->slot >= kWireMaxCachedFiles || !remember->file.isSealed()))
			__builtin_trap(); // a remembered file is a checked one
		break;
	}
	case WireType::Attachment: {
		auto attachment = decodeAttachment(bytes);
		fuzz::report("attachment", attachment);
		if (attachment.ok() && attachment->bytes.size() > kWireMaxAttachment)
			__builtin_trap(); // bounded by the message
		break;
	}
	}
	return 0;
}
