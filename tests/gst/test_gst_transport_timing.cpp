// Time across gpuhandlesink ! gpuhandlesrc (two pipelines of one process): each buffer's PTS, DTS,
// duration and offsets arrive exact at several frame rates, without durations and at a variable
// rate; two consumers (one on another clock) agree with the producer on when each frame is; a
// rate-2.0 segment crosses; the LATENCY query adds the producer's latency to the transport's; a
// consumer muxing to MP4 writes the producer's timestamps (read back by ffprobe); do-timestamp
// keeps arrival times; sync defaults as GstBaseSink's.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "timing_fixture.h"

#include "check_helpers.h"

using namespace gpuhandle::test::timing;
using namespace std::chrono_literals;

namespace {

constexpr const char *kNv12 = "video/x-raw,format=NV12,width=64,height=48";
constexpr gsize kNv12Bytes = 64 * 48 * 3 / 2;

std::string consumerOf(const std::string &socket, const std::string &options = "")
{
	return "gpuhandlesrc name=src socket-path=" + socket + " " + options +
	       " ! appsink name=sink sync=false";
}

// videotestsrc at `framerate` into gpuhandlesink: the consumer's buffers have the times the
// producer's sink got. Returns how many frames the consumer got (each compared).
size_t checkFrameRate(const char *framerate)
{
	const std::string socket = socketPath("rate");
	Pipeline producer("videotestsrc num-buffers=12 ! " + std::string(kNv12) +
			  ",framerate=" + framerate +
			  " ! gpuhandlesink name=gsink sync=false wait-for-consumers=1 "
			  "socket-path=" +
			  socket);
	SinkStamps sent(producer.byName("gsink"));
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	Pipeline consumer(consumerOf(socket));
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	const std::vector<Stamp> got = pullStamps(consumer);
	ck_assert(producer.waitEos());
	expectSameTimes(got, sent.take(), framerate);
	return got.size();
}

// An appsrc producer: buffers with `stamps`' times pushed into gpuhandlesink. Returns how many
// frames the consumer got (each compared with the producer's and with `stamps`).
size_t checkPushedTimes(const std::vector<Stamp> &stamps, const char *what)
{
	const std::string socket = socketPath("pushed");
	Pipeline producer("appsrc name=src format=time caps=" + std::string(kNv12) +
			  ",framerate=0/1 ! gpuhandlesink name=gsink sync=false "
			  "wait-for-consumers=1 socket-path=" +
			  socket);
	SinkStamps sent(producer.byName("gsink"));
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	Pipeline consumer(consumerOf(socket));
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	pushStamps(GST_APP_SRC(producer.byName("src")), stamps, kNv12Bytes);
	const std::vector<Stamp> got = pullStamps(consumer);
	ck_assert(producer.waitEos());
	expectSameTimes(got, sent.take(), what);
	expectSameTimes(got, stamps, what);
	return got.size();
}

Stamp at(GstClockTime pts, GstClockTime duration, guint64 offset = GST_BUFFER_OFFSET_NONE)
{
	Stamp s;
	s.pts = pts;
	s.duration = duration;
	s.offset = offset;
	s.offsetEnd = offset == GST_BUFFER_OFFSET_NONE ? offset : offset + 1;
	return s;
}

} // namespace

START_TEST(the_producers_times_arrive_exact_at_every_frame_rate)
{
	for (const char *framerate : { "30/1", "30000/1001", "10/1" })
		ck_assert_uint_eq(checkFrameRate(framerate), 12);
}
END_TEST

START_TEST(streams_without_durations_and_of_variable_rate_arrive_exact)
{
	const GstClockTime ms = GST_MSECOND;
	const std::vector<Stamp> undurated = { at(0, GST_CLOCK_TIME_NONE),
					       at(7 * ms, GST_CLOCK_TIME_NONE),
					       at(40 * ms, GST_CLOCK_TIME_NONE),
					       at(41 * ms, GST_CLOCK_TIME_NONE),
					       at(333 * ms + 1, GST_CLOCK_TIME_NONE) };
	ck_assert_uint_eq(checkPushedTimes(undurated, "no durations"), undurated.size());
	std::vector<Stamp> variable;
	GstClockTime pts = 5 * ms;
	for (guint64 i = 0; i < 10; ++i) {
		const GstClockTime duration = (i % 4 + 1) * 10 * ms + i;
		Stamp s = at(pts, duration, 100 + i);
		s.dts = pts; // a decoder's DTS, also carried
		variable.push_back(s);
		pts += duration;
	}
	ck_assert_uint_eq(checkPushedTimes(variable, "variable rate"), variable.size());
}
END_TEST

// Both consumers' pipelines started before the producer's (their base times are earlier), one on
// the monotonic system clock, the other on the realtime clock: each frame's running time plus base
// time is the producer's, to within a millisecond (the realtime one once turned back to monotonic).
START_TEST(two_consumers_agree_with_the_producer_when_each_frame_is)
{
	const std::string socket = socketPath("agree");
	GstClock *monotonic = gst_system_clock_obtain();
	GstClock *realtime = GST_CLOCK(g_object_new(GST_TYPE_SYSTEM_CLOCK, "clock-type",
						    GST_CLOCK_TYPE_REALTIME, nullptr));
	const GstClockTime now = gst_clock_get_time(monotonic);
	Pipeline producer("videotestsrc is-live=true num-buffers=15 ! " + std::string(kNv12) +
			  ",framerate=30/1 ! gpuhandlesink name=gsink wait-for-consumers=2 "
			  "socket-path=" +
			  socket);
	producer.useClockAndBase(monotonic, now);
	SinkStamps sent(producer.byName("gsink"));
	Pipeline a(consumerOf(socket));
	a.useClockAndBase(monotonic, now - GST_SECOND);
	Pipeline b(consumerOf(socket));
	b.useClockAndBase(realtime, gst_clock_get_time(realtime) - 5 * GST_SECOND / 2);
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	ck_assert(a.play() != GST_STATE_CHANGE_FAILURE);
	ck_assert(b.play() != GST_STATE_CHANGE_FAILURE);
	std::vector<Stamp> gotA, gotB;
	std::thread pullB([&] { gotB = pullStamps(b); });
	gotA = pullStamps(a);
	pullB.join();
	ck_assert(producer.waitEos());
	// The realtime clock's time minus the monotonic one: how a realtime moment reads on the
	// monotonic clock.
	const GstClockTimeDiff realtimeAhead =
		GST_CLOCK_DIFF(gst_clock_get_time(monotonic), gst_clock_get_time(realtime));
	const std::vector<Stamp> reference = sent.take();
	ck_assert_uint_eq(reference.size(), 15);
	GstClockTimeDiff worst = 0;
	for (const std::vector<Stamp> *got : { &gotA, &gotB }) {
		const bool onRealtime = got == &gotB;
		ck_assert_uint_eq(got->size(), reference.size());
		for (size_t i = 0; i < reference.size(); ++i) {
			const Stamp &p = reference[i];
			const Stamp &c = (*got)[i];
			ck_assert_uint_eq(c.offset, p.offset);
			ck_assert(GST_CLOCK_TIME_IS_VALID(c.due) && GST_CLOCK_TIME_IS_VALID(p.due));
			const GstClockTimeDiff off =
				GST_CLOCK_DIFF(p.due, c.due) - (onRealtime ? realtimeAhead : 0);
			worst = std::max<GstClockTimeDiff>(worst, std::llabs(off));
			ck_assert_msg(std::llabs(off) <= GST_MSECOND,
				      "consumer %c, frame %zu: due %" G_GINT64_FORMAT
				      " ns from the producer's",
				      onRealtime ? 'b' : 'a', i, off);
		}
	}
	std::printf("two consumers: at most %" G_GINT64_FORMAT " ns from the producer's moments\n",
		    worst);
	gst_object_unref(realtime);
	gst_object_unref(monotonic);
}
END_TEST

START_TEST(a_segment_of_rate_two_crosses)
{
	const std::string socket = socketPath("rate2");
	Pipeline producer("videotestsrc num-buffers=10 ! " + std::string(kNv12) +
			  ",framerate=30/1 ! gpuhandlesink name=gsink sync=false "
			  "max-in-flight=4 wait-for-consumers=1 socket-path=" +
			  socket);
	SinkStamps sent(producer.byName("gsink"));
	prerollAndSeek(producer, 2.0);
	Pipeline consumer(consumerOf(socket));
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	const std::vector<Stamp> got = pullStamps(consumer);
	ck_assert(producer.waitEos());
	std::vector<Stamp> reference = sent.take();
	// The first frame the sink saw was prerolled before the seek, and flushed by it.
	ck_assert(!reference.empty() && reference[0].rate == 1.0);
	reference.erase(reference.begin());
	expectSameTimes(got, reference, "rate 2.0");
	for (size_t i = 0; i < got.size(); ++i) {
		ck_assert(reference[i].rate == 2.0);
		ck_assert_msg(got[i].rate == 2.0, "frame %zu came on a segment of rate %g", i,
			      got[i].rate);
		// Running time advances at half the PTS's pace on both sides: the same moments,
		// moved by one constant.
		ck_assert(GST_CLOCK_TIME_IS_VALID(got[i].running));
		ck_assert_int_eq(GST_CLOCK_DIFF(reference[i].running, got[i].running),
				 GST_CLOCK_DIFF(reference[0].running, got[0].running));
	}
	ck_assert_uint_eq(got.back().running - got.front().running,
			  (got.back().pts - got.front().pts) / 2);
}
END_TEST

START_TEST(latency_is_the_producers_plus_the_transports)
{
	const std::string socket = socketPath("latency");
	Pipeline producer("videotestsrc is-live=true ! " + std::string(kNv12) +
			  ",framerate=30/1 ! gpuhandlesink socket-path=" + socket);
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	Pipeline consumer("gpuhandlesrc name=src transport-latency=7000000 socket-path=" + socket +
			  " ! appsink name=sink sync=false max-buffers=2 drop=true");
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	// The producer's pipeline latency: videotestsrc's one frame when live, and the sink's
	// processing deadline (GstBaseSink's 20 ms).
	GstClockTime producerLatency = GST_CLOCK_TIME_NONE;
	GstQuery *query = gst_query_new_latency();
	for (int i = 0; i < 500 && !GST_CLOCK_TIME_IS_VALID(producerLatency); ++i) {
		gboolean live = FALSE;
		GstClockTime min = 0, max = 0;
		if (gst_element_query(producer.get(), query)) {
			gst_query_parse_latency(query, &live, &min, &max);
			if (live && min > 0)
				producerLatency = min;
		}
		std::this_thread::sleep_for(10ms);
	}
	ck_assert_uint_ge(producerLatency, GST_SECOND / 30);
	// The consumer learns it with the timeline, posts LATENCY, and answers it plus 7 ms.
	GstClockTime answered = 0;
	gboolean live = FALSE;
	for (int i = 0; i < 500 && answered != producerLatency + 7 * GST_MSECOND; ++i) {
		GstSample *sample = gst_app_sink_try_pull_sample(
			GST_APP_SINK(consumer.byName("sink")), 10 * GST_MSECOND);
		if (sample)
			gst_sample_unref(sample);
		GstClockTime max = 0;
		ck_assert(gst_element_query(consumer.byName("src"), query));
		gst_query_parse_latency(query, &live, &answered, &max);
	}
	gst_query_unref(query);
	ck_assert(live);
	ck_assert_uint_eq(answered, producerLatency + 7 * GST_MSECOND);
	GstBus *bus = gst_element_get_bus(consumer.get());
	GstMessage *message = gst_bus_pop_filtered(bus, GST_MESSAGE_LATENCY);
	ck_assert_msg(message != nullptr, "the consumer posted no LATENCY message");
	gst_message_unref(message);
	gst_object_unref(bus);
}
END_TEST

// A consumer muxing to MP4 writes the producer's timestamps: ffprobe reads each packet's time as
// the producer's PTS (from the first), to within a millisecond.
START_TEST(an_mp4_written_by_a_consumer_has_the_producers_times)
{
	const std::string socket = socketPath("mp4");
	char file[] = "/tmp/gpuhandle-timing-XXXXXX.mp4";
	const int fd = mkstemps(file, 4);
	ck_assert_int_ge(fd, 0);
	close(fd);
	Pipeline producer("videotestsrc num-buffers=12 ! " + std::string(kNv12) +
			  ",framerate=30000/1001 ! gpuhandlesink name=gsink sync=false "
			  "wait-for-consumers=1 socket-path=" +
			  socket);
	SinkStamps sent(producer.byName("gsink"));
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	// x264enc as it comes (it keeps dozens of frames in its lookahead).
	Pipeline consumer("gpuhandlesrc name=src socket-path=" + socket +
			  " ! x264enc speed-preset=ultrafast ! mp4mux ! filesink location=" + file);
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	ck_assert_msg(consumer.waitEos(), "the consumer did not finish: %s",
		      consumer.error().c_str());
	ck_assert(producer.waitEos());
	const std::string command =
		"ffprobe -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 " +
		std::string(file);
	FILE *probe = popen(command.c_str(), "r");
	ck_assert(probe != nullptr);
	std::vector<double> times;
	char line[64];
	while (std::fgets(line, sizeof line, probe))
		times.push_back(std::strtod(line, nullptr));
	ck_assert_int_eq(pclose(probe), 0);
	unlink(file);
	const std::vector<Stamp> reference = sent.take();
	ck_assert_uint_eq(times.size(), reference.size());
	for (size_t i = 0; i < times.size(); ++i) {
		const double expected =
			static_cast<double>(reference[i].pts - reference[0].pts) / GST_SECOND;
		ck_assert_msg(std::fabs(times[i] - times[0] - expected) <= 0.001,
			      "packet %zu at %.6f s, the producer's frame at %.6f s", i,
			      times[i] - times[0], expected);
	}
}
END_TEST

// An appsink nobody pulls from until the end keeps every frame: past the producer's in-flight
// bound (max-in-flight=4) gpuhandlesrc copies frames out of the producer's memory, so the producer
// never waits for room or skips this consumer, and every frame arrives in order.
START_TEST(a_consumer_that_keeps_frames_gets_copies_and_misses_none)
{
	const std::string socket = socketPath("keep");
	Pipeline producer("videotestsrc num-buffers=12 ! " + std::string(kNv12) +
			  ",framerate=30/1 ! gpuhandlesink name=gsink sync=false "
			  "max-in-flight=4 wait-for-consumers=1 socket-path=" +
			  socket);
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	Pipeline consumer("gpuhandlesrc name=src socket-path=" + socket +
			  " ! appsink name=sink sync=false max-buffers=0");
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	ck_assert(producer.waitEos(std::chrono::seconds(5)));
	GstStructure *stats = nullptr;
	g_object_get(producer.byName("gsink"), "stats", &stats, nullptr);
	guint64 skipped = 1;
	ck_assert(gst_structure_get_uint64(stats, "frames-skipped", &skipped));
	gst_structure_free(stats);
	ck_assert_uint_eq(skipped, 0);
	const std::vector<Stamp> got = pullStamps(consumer);
	ck_assert_uint_eq(got.size(), 12);
	for (size_t i = 0; i < got.size(); ++i)
		ck_assert_uint_eq(got[i].offset, i);
	g_object_get(consumer.byName("src"), "stats", &stats, nullptr);
	guint64 copied = 0;
	ck_assert(gst_structure_get_uint64(stats, "frames-copied", &copied));
	gst_structure_free(stats);
	// At least every frame past the first four was copied (more when one of the first four had
	// not gone back yet: that depends on scheduling, so only the bound is asserted).
	ck_assert_uint_ge(copied, 12 - 4);
}
END_TEST

START_TEST(do_timestamp_keeps_arrival_times_and_sync_defaults_as_basesinks)
{
	GstElement *sink = gst_element_factory_make("gpuhandlesink", nullptr);
	GstElement *src = gst_element_factory_make("gpuhandlesrc", nullptr);
	gboolean sync = FALSE, doTimestamp = TRUE;
	g_object_get(sink, "sync", &sync, nullptr);
	g_object_get(src, "do-timestamp", &doTimestamp, nullptr);
	ck_assert(sync);
	ck_assert(!doTimestamp);
	gst_object_unref(sink);
	gst_object_unref(src);

	const std::string socket = socketPath("arrival");
	Pipeline producer("videotestsrc num-buffers=8 ! " + std::string(kNv12) +
			  ",framerate=1/1 ! gpuhandlesink name=gsink sync=false "
			  "wait-for-consumers=1 socket-path=" +
			  socket);
	SinkStamps sent(producer.byName("gsink"));
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	Pipeline consumer(consumerOf(socket, "do-timestamp=true"));
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	const std::vector<Stamp> got = pullStamps(consumer);
	ck_assert(producer.waitEos());
	const std::vector<Stamp> reference = sent.take();
	ck_assert_uint_eq(got.size(), reference.size());
	// Arrival times: a burst arrives within milliseconds (seconds under valgrind), where the
	// producer's PTS span 7 s; the durations and offsets are the producer's.
	ck_assert(GST_CLOCK_TIME_IS_VALID(got.back().pts));
	ck_assert_uint_lt(got.back().pts - got.front().pts,
			  reference.back().pts - reference.front().pts);
	for (size_t i = 0; i < got.size(); ++i) {
		ck_assert(got[i].duration == reference[i].duration);
		ck_assert(got[i].offset == reference[i].offset);
		if (i)
			ck_assert(got[i].pts >= got[i - 1].pts);
	}
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-transport-timing");
	TCase *tc = tcase_create("gst-transport-timing");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_producers_times_arrive_exact_at_every_frame_rate);
	tcase_add_test(tc, streams_without_durations_and_of_variable_rate_arrive_exact);
	tcase_add_test(tc, two_consumers_agree_with_the_producer_when_each_frame_is);
	tcase_add_test(tc, a_segment_of_rate_two_crosses);
	tcase_add_test(tc, latency_is_the_producers_plus_the_transports);
	tcase_add_test(tc, an_mp4_written_by_a_consumer_has_the_producers_times);
	tcase_add_test(tc, a_consumer_that_keeps_frames_gets_copies_and_misses_none);
	tcase_add_test(tc, do_timestamp_keeps_arrival_times_and_sync_defaults_as_basesinks);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
