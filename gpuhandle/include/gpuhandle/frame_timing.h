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
	uint64_t pts = kNoTime;       // presentation time (GST_BUFFER_PTS), ns
	uint64_t dts = kNoTime;       // decoding time (GST_BUFFER_DTS), ns
	uint64_t duration = kNoTime;  // GST_BUFFER_DURATION, ns
	uint64_t offset = kNoTime;    // GST_BUFFER_OFFSET (for video, the frame number)
	uint64_t offsetEnd = kNoTime; // GST_BUFFER_OFFSET_END
	uint64_t clockTime = kNoTime; // CLOCK_MONOTONIC ns at which the frame is due (see above)

	friend bool operator==(const FrameTiming &, const FrameTiming &) = default; // member-wise
};

// The timeline the frames' times are on: GStreamer's GstSegment field by field (format is a
// GstFormat number; 3 is time), and the producer's latency: frames reach consumers that long
// after their clock time (plus the transport's own delay). Validated on the wire: the rates are
// finite and not 0, start is at most stop.
struct StreamTiming {
	uint32_t format = 3;         // GstFormat; 3 is GST_FORMAT_TIME (times in ns)
	uint32_t flags = 0;          // GstSegmentFlags
	double rate = 1.0;           // playback rate; negative plays backwards
	double appliedRate = 1.0;    // rate already applied upstream
	uint64_t base = 0;           // running time of start (plus offset's elapsed time)
	uint64_t offset = 0;         // time already played before start (GstSegment.offset)
	uint64_t start = 0;          // start of the segment, in buffer times
	uint64_t stop = kNoTime;     // its end, in buffer times; kNoTime: open-ended
	uint64_t time = 0;           // stream time of start
	uint64_t position = 0;       // last buffer time reached in the segment
	uint64_t duration = kNoTime; // the stream's duration; kNoTime when unknown
	uint64_t latency = 0;        // the producer's pipeline latency, ns

	friend bool operator==(const StreamTiming &, const StreamTiming &) = default; // member-wise
};

} // namespace gpuhandle
