// gpuhandlesrc's times: the producer's PTS, DTS, duration and offsets on each buffer, its segment
// moved onto this pipeline's running time, and its latency in the LATENCY query.
#include "gstgpuhandlesrc.h"
#include "gstgpuhandletransport.h"

#include <cstdlib>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_src_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_src_debug

using namespace gpuhandle;

namespace gpuhandle::gst::src {

namespace {

// How far a frame's running time here may be from the moment its producer said it is due before
// the segment is moved again: the two clocks drift (when they are not both the monotonic one),
// and each frame's reading of them differs by a few microseconds.
constexpr GstClockTimeDiff kRemapTolerance = 250 * GST_USECOND;

// The pipeline's clock (a reference, or null) and base time, read together.
struct PipelineClock {
	GstClock *clock = nullptr;
	GstClockTime base = 0;
	explicit PipelineClock(GstElement *element)
	{
		GST_OBJECT_LOCK(element);
		if (GstClock *c = GST_ELEMENT_CLOCK(element))
			clock = GST_CLOCK_CAST(gst_object_ref(c));
		base = element->base_time;
		GST_OBJECT_UNLOCK(element);
	}
	PipelineClock(const PipelineClock &) = delete;
	PipelineClock &operator=(const PipelineClock &) = delete;
	~PipelineClock()
	{
		if (clock)
			gst_object_unref(clock);
	}
};

// The signed running time of `time` in `segment` (false when it has none).
bool runningTime(const GstSegment &segment, GstClockTime time, int64_t &out)
{
	guint64 running = 0;
	const gint sign =
		gst_segment_to_running_time_full(&segment, GST_FORMAT_TIME, time, &running);
	if (sign == 0)
		return false;
	out = sign > 0 ? static_cast<int64_t>(running) : -static_cast<int64_t>(running);
	return true;
}

// A timeline that came since the last frame becomes the producer's segment (time segments only:
// the transport's times are times); a new latency is posted, so that the pipeline asks again.
void readTimeline(GstBaseSrc *bsrc, FrameReceiver &receiver)
{
	SrcTiming &t = stateOf(bsrc).timing;
	const uint64_t messages = receiver.streamTimingMessages();
	if (messages == t.timelineMessages)
		return;
	t.timelineMessages = messages;
	const std::optional<StreamTiming> line = receiver.streamTiming();
	if (!line)
		return;
	if (line->format != GST_FORMAT_TIME) {
		GST_DEBUG_OBJECT(bsrc, "the producer's segment is in format %u, not time: ignored",
				 line->format);
	} else {
		GstSegment &p = t.producer;
		gst_segment_init(&p, GST_FORMAT_TIME);
		p.flags = static_cast<GstSegmentFlags>(line->flags);
		p.rate = line->rate;
		p.applied_rate = line->appliedRate;
		p.base = line->base;
		p.offset = line->offset;
		p.start = line->start;
		p.stop = line->stop;
		p.time = line->time;
		p.position = line->position;
		p.duration = line->duration;
		// Mapped again at the next frame (the same moments, on the new segment).
		t.remap = true;
	}
	if (line->latency != t.latency.load()) {
		t.latency = line->latency;
		GST_INFO_OBJECT(bsrc, "the producer's latency is %" GST_TIME_FORMAT,
				GST_TIME_ARGS(line->latency));
		gst_element_post_message(GST_ELEMENT_CAST(bsrc),
					 gst_message_new_latency(GST_OBJECT_CAST(bsrc)));
	}
}

// Pushes the producer's segment moved so that `time` (a PTS or DTS of it) runs at `target` here.
void pushMapping(GstBaseSrc *bsrc, GstClockTime time, int64_t target)
{
	SrcTiming &t = stateOf(bsrc).timing;
	GstSegment segment;
	gst_segment_copy_into(&t.producer, &segment);
	int64_t producerRunning = 0;
	if (!runningTime(segment, time, producerRunning) ||
	    !gst_segment_offset_running_time(&segment, GST_FORMAT_TIME, target - producerRunning)) {
		GST_DEBUG_OBJECT(bsrc,
				 "%" GST_TIME_FORMAT " cannot run at %" G_GINT64_FORMAT
				 " here: the segment stays",
				 GST_TIME_ARGS(time), target);
		return;
	}
	GST_DEBUG_OBJECT(bsrc,
			 "%" GST_TIME_FORMAT " runs at %" G_GINT64_FORMAT ": %" GST_SEGMENT_FORMAT,
			 GST_TIME_ARGS(time), target, static_cast<void *>(&segment));
	gst_base_src_new_segment(bsrc, &segment);
	gst_segment_copy_into(&segment, &t.pushed);
	t.mapped = true;
	t.remap = false;
}

} // namespace

void stampBuffer(GstBaseSrc *bsrc, FrameReceiver &receiver, GstBuffer *buffer)
{
	SrcTiming &t = stateOf(bsrc).timing;
	readTimeline(bsrc, receiver);
	if (t.discont) {
		GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
		t.discont = false;
	}
	const std::optional<FrameTiming> times = receiver.timing();
	if (times) {
		GST_BUFFER_DURATION(buffer) = times->duration;
		GST_BUFFER_OFFSET(buffer) = times->offset;
		GST_BUFFER_OFFSET_END(buffer) = times->offsetEnd;
	}
	// do-timestamp: GstBaseSrc stamps the arrival time on buffers without PTS and DTS.
	if (gst_base_src_get_do_timestamp(bsrc))
		return;
	const PipelineClock pipeline(GST_ELEMENT_CAST(bsrc));
	if (!times) {
		// A producer without times (an earlier version): the arrival time, as before.
		if (pipeline.clock)
			GST_BUFFER_PTS(buffer) = GST_BUFFER_DTS(buffer) =
				gst_clock_get_time(pipeline.clock) - pipeline.base;
		return;
	}
	GST_BUFFER_PTS(buffer) = times->pts;
	GST_BUFFER_DTS(buffer) = times->dts;
	const GstClockTime time = GST_CLOCK_TIME_IS_VALID(times->pts) ? times->pts : times->dts;
	if (!GST_CLOCK_TIME_IS_VALID(time))
		return;
	// When the frame is here: the producer's moment (monotonic) on this pipeline's clock, as
	// running time; without it, the first frame's arrival.
	std::optional<int64_t> expected;
	if (pipeline.clock && times->clockTime != kNoTime) {
		const GstClockTimeDiff toMonotonic =
			monotonicOffset(pipeline.clock, t.monotonicClock.load());
		expected = static_cast<int64_t>(times->clockTime) - toMonotonic -
			   static_cast<int64_t>(pipeline.base);
	} else if (pipeline.clock && !t.mapped) {
		expected = static_cast<int64_t>(gst_clock_get_time(pipeline.clock)) -
			   static_cast<int64_t>(pipeline.base);
	}
	if (!t.mapped) {
		// A frame due before this pipeline ran is moved to its start, and the rest of the
		// connection with it: spacing kept, nothing before the segment.
		int64_t target = 0;
		if (expected)
			target = *expected;
		else if (!runningTime(t.producer, time, target))
			return;
		t.shift = target < 0 ? -target : 0;
		pushMapping(bsrc, time, target + t.shift);
		return;
	}
	if (!expected) {
		// No clock on one side: the producer's spacing, on the segment pushed first.
		if (t.remap) {
			int64_t here = 0;
			if (runningTime(t.pushed, time, here))
				pushMapping(bsrc, time, here);
		}
		return;
	}
	const int64_t target = *expected + t.shift;
	int64_t here = 0;
	if (t.remap || !runningTime(t.pushed, time, here) ||
	    std::llabs(here - target) > kRemapTolerance)
		pushMapping(bsrc, time, target);
}

void answerLatency(GstBaseSrc *bsrc, GstQuery *query)
{
	SrcState &s = stateOf(bsrc);
	GstClockTime transport = 0;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		transport = s.transportLatencyNs;
	}
	// Frames come that long after their running time: the producer's pipeline holds them
	// for its latency, then the socket carries them. Nothing is buffered here beyond what the
	// producer lets this consumer hold: no maximum.
	const GstClockTime min = s.timing.latency.load() + transport;
	GST_DEBUG_OBJECT(bsrc, "latency: min %" GST_TIME_FORMAT, GST_TIME_ARGS(min));
	gst_query_set_latency(query, TRUE, min, GST_CLOCK_TIME_NONE);
}

} // namespace gpuhandle::gst::src
