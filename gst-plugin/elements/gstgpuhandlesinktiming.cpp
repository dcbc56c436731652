// gpuhandlesink's times: each buffer's PTS, DTS, duration and offsets, the moment it is due on the
// monotonic clock, and the segment and latency they are on, for consumers (frame_timing.h).
#include "gstgpuhandlesink.h"
#include "gstgpuhandletransport.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::sink;

namespace gpuhandle::gst::sink {

namespace {

// The timeline consumers get: the segment field by field, and the pipeline's latency.
StreamTiming timelineOf(const GstSegment &segment, GstClockTime latency)
{
	StreamTiming t;
	t.format = static_cast<uint32_t>(segment.format);
	t.flags = static_cast<uint32_t>(segment.flags);
	t.rate = segment.rate;
	t.appliedRate = segment.applied_rate;
	t.base = segment.base;
	t.offset = segment.offset;
	t.start = segment.start;
	t.stop = segment.stop;
	t.time = segment.time;
	t.position = segment.position;
	t.duration = segment.duration;
	t.latency = GST_CLOCK_TIME_IS_VALID(latency) ? latency : 0;
	return t;
}

void sendTimeline(GstBaseSink *bsink)
{
	SinkState &s = stateOf(bsink);
	if (s.segment.format != GST_FORMAT_TIME)
		return;
	std::lock_guard<std::mutex> lock(s.mutex);
	if (!s.sender)
		return;
	if (Status sent = s.sender->setStreamTiming(timelineOf(s.segment, s.latency)); !sent)
		GST_WARNING_OBJECT(bsink, "the segment cannot cross: %s",
				   sent.error().message().c_str());
}

// The CLOCK_MONOTONIC time at which the running time reaches `time` (a PTS or DTS of the
// segment), without the latency: the moment the frame is, which each consumer turns into its own
// running time. GST_CLOCK_TIME_NONE when there is no clock, no time or no time segment.
GstClockTime dueTime(GstBaseSink *bsink, GstClockTime time)
{
	SinkState &s = stateOf(bsink);
	if (!GST_CLOCK_TIME_IS_VALID(time) || s.segment.format != GST_FORMAT_TIME)
		return GST_CLOCK_TIME_NONE;
	guint64 running = 0;
	const gint sign =
		gst_segment_to_running_time_full(&s.segment, GST_FORMAT_TIME, time, &running);
	if (sign == 0)
		return GST_CLOCK_TIME_NONE;
	GstElement *element = GST_ELEMENT_CAST(bsink);
	const bool monotonic = s.monotonicClock.load(std::memory_order_relaxed);
	GST_OBJECT_LOCK(element);
	GstClock *clock = GST_ELEMENT_CLOCK(element);
	const GstClockTime base = element->base_time;
	if (clock && !monotonic)
		gst_object_ref(clock);
	GST_OBJECT_UNLOCK(element);
	if (!clock)
		return GST_CLOCK_TIME_NONE;
	const GstClockTimeDiff offset = monotonicOffset(clock, monotonic);
	if (!monotonic)
		gst_object_unref(clock);
	const int64_t due =
		static_cast<int64_t>(base) +
		(sign > 0 ? static_cast<int64_t>(running) : -static_cast<int64_t>(running)) +
		offset;
	return due < 0 ? GST_CLOCK_TIME_NONE : static_cast<GstClockTime>(due);
}

} // namespace

void segmentChanged(GstBaseSink *bsink, GstEvent *event)
{
	SinkState &s = stateOf(bsink);
	const GstSegment *segment = nullptr;
	gst_event_parse_segment(event, &segment);
	gst_segment_copy_into(segment, &s.segment);
	sendTimeline(bsink);
}

void timeFrame(GstBaseSink *bsink, GstBuffer *buffer)
{
	SinkState &s = stateOf(bsink);
	// The latency the pipeline configured (a LATENCY event) changes rarely: the timeline is
	// sent again only when it did.
	if (const GstClockTime latency = gst_base_sink_get_latency(bsink); latency != s.latency) {
		s.latency = latency;
		sendTimeline(bsink);
	}
	FrameTiming &t = s.frameTiming;
	t.pts = GST_BUFFER_PTS(buffer);
	t.dts = GST_BUFFER_DTS(buffer);
	t.duration = GST_BUFFER_DURATION(buffer);
	t.offset = GST_BUFFER_OFFSET(buffer);
	t.offsetEnd = GST_BUFFER_OFFSET_END(buffer);
	t.clockTime = dueTime(bsink, GST_CLOCK_TIME_IS_VALID(t.pts) ? t.pts : t.dts);
}

} // namespace gpuhandle::gst::sink
