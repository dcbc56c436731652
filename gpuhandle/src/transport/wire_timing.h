// The wire format's timing records: a TimedFrame's times, and the Timeline message (see
// wire_format.h's Timing).
#pragma once

#include <gpuhandle/frame_timing.h>

#include "wire_codec.h"

#include <span>

namespace gpuhandle::detail {

// The six times of FrameTiming, kWireTimingBytes in all.
void putTiming(WireWriter &w, const FrameTiming &timing);
FrameTiming getTiming(WireReader &r);

// The message's header says TimedFrame (its type field, unchecked otherwise).
bool isTimedFrame(std::span<const std::byte> bytes) noexcept;

} // namespace gpuhandle::detail
