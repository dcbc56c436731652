// The wire format's timing records: frame times and the Timeline message (see wire_format.h).
#include "wire_timing.h"

#include "wire_checks.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace gpuhandle {

namespace detail {

void putTiming(WireWriter &w, const FrameTiming &t)
{
	for (uint64_t value : { t.pts, t.dts, t.duration, t.offset, t.offsetEnd, t.clockTime })
		w.put<uint64_t>(value);
}

FrameTiming getTiming(WireReader &r)
{
	FrameTiming t;
	t.pts = r.get<uint64_t>();
	t.dts = r.get<uint64_t>();
	t.duration = r.get<uint64_t>();
	t.offset = r.get<uint64_t>();
	t.offsetEnd = r.get<uint64_t>();
	t.clockTime = r.get<uint64_t>();
	return t;
}

bool isTimedFrame(std::span<const std::byte> bytes) noexcept
{
	uint16_t type = 0;
	if (bytes.size() >= kWireHeaderBytes)
		std::memcpy(&type, bytes.data() + 6, sizeof type);
	return type == static_cast<uint16_t>(WireType::TimedFrame);
}

} // namespace detail

namespace {

// The checks both ends make: a segment GStreamer would refuse (a rate of 0, NaN or infinity, a
// start past the stop) is refused on the wire, not left for the consumer's GStreamer to assert.
std::optional<Error> invalidTimeline(const StreamTiming &t)
{
	if (!std::isfinite(t.rate) || t.rate == 0.0 || !std::isfinite(t.appliedRate) ||
	    t.appliedRate == 0.0)
		return Error::format(
			ErrorCode::InvalidArgument, "rate",
			"Frame transport: a timeline's rate (%g) and applied rate (%g) "
			"must be finite and not 0.",
			t.rate, t.appliedRate);
	if (t.stop != kNoTime && t.start != kNoTime && t.start > t.stop)
		return Error::format(ErrorCode::InvalidArgument, "start",
				     "Frame transport: a timeline starts at %llu, after its stop "
				     "(%llu).",
				     static_cast<unsigned long long>(t.start),
				     static_cast<unsigned long long>(t.stop));
	return std::nullopt;
}

} // namespace

Status encodeTimeline(const StreamTiming &t, WireMessage &out)
{
	if (auto e = invalidTimeline(t))
		return std::move(*e);
	out.numFds = 0;
	detail::WireWriter w(out);
	w.put<uint32_t>(t.format);
	w.put<uint32_t>(t.flags);
	w.put<uint64_t>(std::bit_cast<uint64_t>(t.rate));
	w.put<uint64_t>(std::bit_cast<uint64_t>(t.appliedRate));
	for (uint64_t value :
	     { t.base, t.offset, t.start, t.stop, t.time, t.position, t.duration, t.latency })
		w.put<uint64_t>(value);
	w.finish(WireType::Timeline);
	return {};
}

Result<StreamTiming> decodeTimeline(std::span<const std::byte> bytes)
{
	if (auto e = detail::expectType(bytes, WireType::Timeline, 0))
		return std::move(*e);
	detail::WireReader r(bytes);
	StreamTiming t;
	t.format = r.get<uint32_t>();
	t.flags = r.get<uint32_t>();
	t.rate = std::bit_cast<double>(r.get<uint64_t>());
	t.appliedRate = std::bit_cast<double>(r.get<uint64_t>());
	t.base = r.get<uint64_t>();
	t.offset = r.get<uint64_t>();
	t.start = r.get<uint64_t>();
	t.stop = r.get<uint64_t>();
	t.time = r.get<uint64_t>();
	t.position = r.get<uint64_t>();
	t.duration = r.get<uint64_t>();
	t.latency = r.get<uint64_t>();
	if (!r.atEnd())
		return detail::malformed("size", "the timeline message's length is wrong");
	if (auto e = invalidTimeline(t))
		return std::move(*e);
	return t;
}

} // namespace gpuhandle
