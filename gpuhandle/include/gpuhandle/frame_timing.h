// FrameTiming and StreamTiming: when a frame is, as it crosses processes with its timeline.
#pragma once

#include <gpuhandle/export.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// "No value" in every time, offset and clock field below (GStreamer's GST_CLOCK_TIME_NONE and
// GST_BUFFER_OFFSET_NONE).
inline constexpr uint64_t kNoTime = UINT64_MAX;

// A frame's times on the producer's timeline (GStreamer's buffer PTS, DTS, duration, offset
// and offset end: nanoseconds, or kNoTime), and the moment it is due: the CLOCK_MONOTONIC time
// (ns) at which the producer's running time reaches the frame's PTS (its DTS when it has no PTS),
// without the producer's latency. A consumer turns that into its own running time (the same
// moment on its own clock), so that the producer and every consumer agree when a frame is;
// kNoTime when the producer had no clock or the frame no time.
struct FrameTiming {
	uint64_t pts = kNoTime;
	uint64_t dts = kNoTime;
	uint64_t duration = kNoTime;
	uint64_t offset = kNoTime;
	uint64_t offsetEnd = kNoTime;
	uint64_t clockTime = kNoTime;

	friend bool operator==(const FrameTiming &, const FrameTiming &) = default;
};

// The timeline the frames' times are on: GStreamer's GstSegment field by field (format is a
// GstFormat number; 3 is time), and the producer's latency: frames reach consumers that long
// after their clock time (plus the transport's own delay). Validated on the wire: the rates are
// finite and not 0, start is at most stop.
struct StreamTiming {
	uint32_t format = 3;
	uint32_t flags = 0;
	double rate = 1.0;
	double appliedRate = 1.0;
	uint64_t base = 0;
	uint64_t offset = 0;
	uint64_t start = 0;
	uint64_t stop = kNoTime;
	uint64_t time = 0;
	uint64_t position = 0;
	uint64_t duration = kNoTime;
	uint64_t latency = 0;

	friend bool operator==(const StreamTiming &, const StreamTiming &) = default;
};

} // namespace gpuhandle
