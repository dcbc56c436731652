// The timing tests' pipelines: what each buffer's times were where the producer's sink got it and
// where a consumer's appsink got it, and when each frame is (running time plus base time).
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

// Last: Check's fail() macro breaks standard headers included after it.
#include "pipeline_release.h"

#include "check_helpers.h"

namespace gpuhandle::test::timing {

// One buffer's times, and when it is on its pipeline's clock: its PTS's running time in the
// segment it came with plus the pipeline's base time (GST_CLOCK_TIME_NONE when it has none).
struct Stamp {
	GstClockTime pts = GST_CLOCK_TIME_NONE;
	GstClockTime dts = GST_CLOCK_TIME_NONE;
	GstClockTime duration = GST_CLOCK_TIME_NONE;
	guint64 offset = GST_BUFFER_OFFSET_NONE;
	guint64 offsetEnd = GST_BUFFER_OFFSET_NONE;
	GstClockTime running = GST_CLOCK_TIME_NONE;
	GstClockTime due = GST_CLOCK_TIME_NONE;
	double rate = 1.0;
	guint flags = 0;
};

inline Stamp stampOf(GstBuffer *buffer, const GstSegment *segment, GstClockTime base)
{
	Stamp s;
	s.pts = GST_BUFFER_PTS(buffer);
	s.dts = GST_BUFFER_DTS(buffer);
	s.duration = GST_BUFFER_DURATION(buffer);
	s.offset = GST_BUFFER_OFFSET(buffer);
	s.offsetEnd = GST_BUFFER_OFFSET_END(buffer);
	s.flags = GST_BUFFER_FLAGS(buffer);
	if (segment) {
		s.rate = segment->rate;
		s.running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, s.pts);
		if (GST_CLOCK_TIME_IS_VALID(s.running))
			s.due = s.running + base;
	}
	return s;
}

// A pipeline of a test: made from a description, released (bounded) when it goes.
class Pipeline
{
public:
	explicit Pipeline(const std::string &description)
	{
		GError *error = nullptr;
		pipeline_ = gst_parse_launch(description.c_str(), &error);
		ck_assert_msg(pipeline_ && !error, "%s: %s", description.c_str(),
			      error ? error->message : "?");
	}
	Pipeline(const Pipeline &) = delete;
	Pipeline &operator=(const Pipeline &) = delete;
	~Pipeline()
	{
		if (pipeline_)
			ck_assert(releasePipeline(pipeline_));
	}
	GstElement *get() const { return pipeline_; }
	GstElement *byName(const char *name) const
	{
		GstElement *e = gst_bin_get_by_name(GST_BIN(pipeline_), name);
		ck_assert_msg(e != nullptr, "no element %s", name);
		gst_object_unref(e); // the pipeline holds it
		return e;
	}
	GstStateChangeReturn play() { return gst_element_set_state(pipeline_, GST_STATE_PLAYING); }
	// The system clock and `base` as base time, chosen here rather than at PLAYING: pipelines
	// of one test then share the clock, each with the base time it is given.
	void useClockAndBase(GstClock *clock, GstClockTime base)
	{
		gst_pipeline_use_clock(GST_PIPELINE(pipeline_), clock);
		gst_element_set_start_time(pipeline_, GST_CLOCK_TIME_NONE);
		gst_element_set_base_time(pipeline_, base);
	}
	// The first error on the bus ("" when none).
	std::string error() const
	{
		GstBus *bus = gst_element_get_bus(pipeline_);
		GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
		gst_object_unref(bus);
		if (!msg)
			return {};
		GError *err = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(msg, &err, &debug);
		std::string text = std::string(err->message) + " | " + (debug ? debug : "");
		g_clear_error(&err);
		g_free(debug);
		gst_message_unref(msg);
		return text;
	}
	// Waits (bounded) for EOS or an error: true for EOS.
	bool waitEos(std::chrono::seconds limit = std::chrono::seconds(30)) const
	{
		GstBus *bus = gst_element_get_bus(pipeline_);
		GstMessage *msg = gst_bus_timed_pop_filtered(
			bus, static_cast<GstClockTime>(limit.count()) * GST_SECOND,
			static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
		gst_object_unref(bus);
		const bool eos = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
		if (msg)
			gst_message_unref(msg);
		return eos;
	}

private:
	GstElement *pipeline_ = nullptr;
};

// The stamps of the buffers reaching the sink pad of `element` (a producer's gpuhandlesink),
// recorded by a probe, with when each is on the element's pipeline clock.
class SinkStamps
{
public:
	explicit SinkStamps(GstElement *element) : element_(element)
	{
		GstPad *pad = gst_element_get_static_pad(element, "sink");
		gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, &SinkStamps::probe, this,
				  nullptr);
		gst_object_unref(pad);
	}
	std::vector<Stamp> take()
	{
		std::lock_guard<std::mutex> lock(mutex_);
		return stamps_;
	}

private:
	static GstPadProbeReturn probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
	{
		auto *self = static_cast<SinkStamps *>(data);
		GstEvent *event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
		const GstSegment *segment = nullptr;
		if (event)
			gst_event_parse_segment(event, &segment);
		const Stamp s = stampOf(GST_PAD_PROBE_INFO_BUFFER(info), segment,
					gst_element_get_base_time(self->element_));
		if (event)
			gst_event_unref(event);
		std::lock_guard<std::mutex> lock(self->mutex_);
		self->stamps_.push_back(s);
		return GST_PAD_PROBE_OK;
	}
	GstElement *element_;
	std::mutex mutex_;
	std::vector<Stamp> stamps_;
};

// Pulls every sample of the appsink "sink" of `pipeline` (playing) until EOS or `limit`.
inline std::vector<Stamp> pullStamps(const Pipeline &pipeline,
				     std::chrono::seconds limit = std::chrono::seconds(30))
{
	std::vector<Stamp> stamps;
	GstAppSink *sink = GST_APP_SINK(pipeline.byName("sink"));
	const auto deadline = std::chrono::steady_clock::now() + limit;
	while (std::chrono::steady_clock::now() < deadline && !gst_app_sink_is_eos(sink)) {
		GstSample *sample = gst_app_sink_try_pull_sample(sink, 20 * GST_MSECOND);
		if (!sample) {
			const std::string error = pipeline.error();
			ck_assert_msg(error.empty(), "%s", error.c_str());
			continue;
		}
		stamps.push_back(stampOf(gst_sample_get_buffer(sample),
					 gst_sample_get_segment(sample),
					 gst_element_get_base_time(pipeline.get())));
		gst_sample_unref(sample);
	}
	ck_assert_msg(gst_app_sink_is_eos(sink), "no EOS within %lld s",
		      static_cast<long long>(limit.count()));
	return stamps;
}

// Pushes a buffer of `size` bytes (from `allocator`, or system memory) with each stamp's times
// into `src`, then EOS.
inline void pushStamps(GstAppSrc *src, const std::vector<Stamp> &stamps, gsize size,
		       GstAllocator *allocator = nullptr)
{
	for (const Stamp &s : stamps) {
		GstBuffer *buffer = gst_buffer_new_allocate(allocator, size, nullptr);
		gst_buffer_memset(buffer, 0, 0x80, size);
		GST_BUFFER_PTS(buffer) = s.pts;
		GST_BUFFER_DTS(buffer) = s.dts;
		GST_BUFFER_DURATION(buffer) = s.duration;
		GST_BUFFER_OFFSET(buffer) = s.offset;
		GST_BUFFER_OFFSET_END(buffer) = s.offsetEnd;
		ck_assert_int_eq(gst_app_src_push_buffer(src, buffer), GST_FLOW_OK);
	}
	gst_app_src_end_of_stream(src);
}

// Prerolls `pipeline` and seeks it (flushing, accurate) from 0 at `rate`.
inline void prerollAndSeek(Pipeline &pipeline, double rate)
{
	gst_element_set_state(pipeline.get(), GST_STATE_PAUSED);
	ck_assert(gst_element_get_state(pipeline.get(), nullptr, nullptr, 10 * GST_SECOND) ==
		  GST_STATE_CHANGE_SUCCESS);
	ck_assert(gst_element_seek(pipeline.get(), rate, GST_FORMAT_TIME,
				   static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH |
							     GST_SEEK_FLAG_ACCURATE),
				   GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_NONE, -1));
	ck_assert(gst_element_get_state(pipeline.get(), nullptr, nullptr, 10 * GST_SECOND) ==
		  GST_STATE_CHANGE_SUCCESS);
}

inline std::string socketPath(const char *name)
{
	return "/tmp/gpuhandle-timing-" + std::string(name) + "-" + std::to_string(getpid()) +
	       ".sock";
}

// The buffer times of `got` are those of `sent`, frame by frame (running times aside).
inline void expectSameTimes(const std::vector<Stamp> &got, const std::vector<Stamp> &sent,
			    const char *what)
{
	ck_assert_msg(got.size() == sent.size(), "%s: %zu frames arrived of %zu", what, got.size(),
		      sent.size());
	for (size_t i = 0; i < got.size(); ++i) {
		ck_assert_msg(got[i].pts == sent[i].pts && got[i].dts == sent[i].dts &&
				      got[i].duration == sent[i].duration &&
				      got[i].offset == sent[i].offset &&
				      got[i].offsetEnd == sent[i].offsetEnd,
			      "%s: frame %zu: PTS %" GST_TIME_FORMAT " DTS %" GST_TIME_FORMAT
			      " duration %" GST_TIME_FORMAT " offsets %" G_GUINT64_FORMAT
			      "-%" G_GUINT64_FORMAT ", sent PTS %" GST_TIME_FORMAT
			      " DTS %" GST_TIME_FORMAT " duration %" GST_TIME_FORMAT
			      " offsets %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT,
			      what, i, GST_TIME_ARGS(got[i].pts), GST_TIME_ARGS(got[i].dts),
			      GST_TIME_ARGS(got[i].duration), got[i].offset, got[i].offsetEnd,
			      GST_TIME_ARGS(sent[i].pts), GST_TIME_ARGS(sent[i].dts),
			      GST_TIME_ARGS(sent[i].duration), sent[i].offset, sent[i].offsetEnd);
	}
}

} // namespace gpuhandle::test::timing
