// What gpuhandlesink and gpuhandlesrc share: the allowed-uids property, and the clock both
// processes share (CLOCK_MONOTONIC) in terms of a pipeline's clock.
#pragma once

#include <gpuhandle/frame_transport.h>
#include <gpuhandle/result.h>

#include <string>

#include <gst/gst.h>

namespace gpuhandle::gst {

// "1000, 1001" as a peer rule: those uids besides this process's own; empty: its own only.
// InvalidArgument names the entry that is not a uid.
Result<PeerRule> parseAllowedUids(const std::string &text);

// The `allowed-uids` string property, described by `blurb`.
GParamSpec *allowedUidsParamSpec(const char *blurb);

// Whether `clock` (nullable) is GStreamer's system clock on CLOCK_MONOTONIC, the clock the
// transport's times are on (as unixfdsink's): then a pipeline time is a monotonic time as it is.
bool isMonotonicClock(GstClock *clock);
// CLOCK_MONOTONIC now, in nanoseconds.
GstClockTime monotonicNow();
// What to add to a time of `clock` to make it a CLOCK_MONOTONIC time: 0 for the monotonic system
// clock; else read now, from both clocks (the two drift apart, so it is read for each frame).
GstClockTimeDiff monotonicOffset(GstClock *clock, bool monotonic);

} // namespace gpuhandle::gst
