// gpuhandlesink ! gpuhandlesrc against GStreamer's own unixfdsink ! unixfdsrc (1.26, the Debian 13
// root) on the same timing cases: frame rates, a stream without durations, a variable rate, a
// rate-2.0 segment. With the consumer's pipeline on the producer's clock and base time, both
// consumers' buffers have the same running times, and, on rate-1 segments, the same PTS, DTS,
// durations and offsets. (unixfdsrc turns the segment's rate into its timestamps; gpuhandlesrc
// keeps the producer's PTS and carries the segment, so on rate 2.0 only the running times agree.)
#include <chrono>
#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

#include <gst/allocators/allocators.h>
#include <gst/gst.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "timing_fixture.h"

#include "check_helpers.h"

using namespace gpuhandle::test::timing;
using namespace std::chrono_literals;

#if GST_CHECK_VERSION(1, 26, 0)

namespace {

constexpr const char *kNv12 = "video/x-raw,format=NV12,width=64,height=48";
constexpr gsize kNv12Bytes = 64 * 48 * 3 / 2;

struct Pair {
	const char *name;
	const char *sink; // with its options, before socket-path
	const char *src;
};
constexpr Pair kUnixFd{ "unixfd", "unixfdsink sync=false wait-for-connection=true", "unixfdsrc" };
constexpr Pair kGpuHandle{ "gpuhandle", "gpuhandlesink sync=false wait-for-consumers=1",
			   "gpuhandlesrc" };

// What a case's producer does once both pipelines play: nothing (videotestsrc), or push buffers
// with these times into its appsrc (in shared memory, which unixfdsink sends as it is).
struct Case {
	const char *what;
	std::string head;          // the producer's elements before the sink
	std::vector<Stamp> pushed; // for an appsrc head
	double seekRate = 0;       // a flushing seek at this rate before playing (0: none)
};

std::vector<Stamp> runThrough(const Pair &pair, const Case &c)
{
	const std::string socket = socketPath((std::string("unixfd-") + pair.name).c_str());
	unlink(socket.c_str());
	GstClock *clock = gst_system_clock_obtain();
	const GstClockTime base = gst_clock_get_time(clock);
	Pipeline producer(c.head + " ! " + pair.sink + " socket-path=" + socket);
	producer.useClockAndBase(clock, base);
	if (c.seekRate != 0)
		prerollAndSeek(producer, c.seekRate);
	ck_assert(producer.play() != GST_STATE_CHANGE_FAILURE);
	// unixfdsrc connects once, when it starts: the producer's socket first.
	struct stat st {};
	for (int i = 0; i < 500 && stat(socket.c_str(), &st) != 0; ++i)
		std::this_thread::sleep_for(10ms);
	Pipeline consumer(std::string(pair.src) + " socket-path=" + socket +
			  " ! appsink name=sink sync=false");
	consumer.useClockAndBase(clock, base);
	ck_assert(consumer.play() != GST_STATE_CHANGE_FAILURE);
	if (!c.pushed.empty()) {
		GstAllocator *shm = gst_shm_allocator_get();
		pushStamps(GST_APP_SRC(producer.byName("src")), c.pushed, kNv12Bytes, shm);
		gst_object_unref(shm);
	}
	std::vector<Stamp> got = pullStamps(consumer);
	ck_assert(producer.waitEos());
	gst_object_unref(clock);
	return got;
}

Stamp at(GstClockTime pts, GstClockTime duration, guint64 offset)
{
	Stamp s;
	s.pts = pts;
	s.duration = duration;
	s.offset = offset;
	s.offsetEnd = offset + 1;
	return s;
}

std::vector<Case> cases()
{
	const std::string appsrc =
		"appsrc name=src format=time caps=" + std::string(kNv12) + ",framerate=0/1";
	std::vector<Case> all;
	for (const char *rate : { "30/1", "30000/1001", "10/1" })
		all.push_back({ rate,
				"videotestsrc num-buffers=10 ! " + std::string(kNv12) +
					",framerate=" + rate,
				{} });
	const GstClockTime ms = GST_MSECOND;
	all.push_back({ "no durations",
			appsrc,
			{ at(0, GST_CLOCK_TIME_NONE, 0), at(7 * ms, GST_CLOCK_TIME_NONE, 1),
			  at(40 * ms, GST_CLOCK_TIME_NONE, 2),
			  at(333 * ms + 1, GST_CLOCK_TIME_NONE, 3) } });
	std::vector<Stamp> variable;
	GstClockTime pts = 5 * ms;
	for (guint64 i = 0; i < 8; ++i) {
		const GstClockTime duration = (i % 4 + 1) * 10 * ms + i;
		variable.push_back(at(pts, duration, i));
		pts += duration;
	}
	all.push_back({ "variable rate", appsrc, variable });
	all.push_back({ "rate 2.0",
			"videotestsrc num-buffers=10 ! " + std::string(kNv12) + ",framerate=30/1",
			{},
			2.0 });
	return all;
}

} // namespace

START_TEST(gpuhandle_times_equal_unixfds_on_every_case)
{
	for (const Case &c : cases()) {
		const std::vector<Stamp> theirs = runThrough(kUnixFd, c);
		const std::vector<Stamp> ours = runThrough(kGpuHandle, c);
		ck_assert_msg(ours.size() == theirs.size(), "%s: %zu frames, unixfd %zu", c.what,
			      ours.size(), theirs.size());
		for (size_t i = 0; i < ours.size(); ++i) {
			ck_assert_msg(ours[i].running == theirs[i].running,
				      "%s, frame %zu: running time %" GST_TIME_FORMAT
				      ", unixfd's %" GST_TIME_FORMAT,
				      c.what, i, GST_TIME_ARGS(ours[i].running),
				      GST_TIME_ARGS(theirs[i].running));
			ck_assert(ours[i].duration == theirs[i].duration);
			ck_assert(ours[i].offset == theirs[i].offset &&
				  ours[i].offsetEnd == theirs[i].offsetEnd);
			if (c.seekRate == 0) {
				ck_assert_msg(ours[i].pts == theirs[i].pts &&
						      ours[i].dts == theirs[i].dts,
					      "%s, frame %zu: PTS %" GST_TIME_FORMAT
					      ", unixfd's %" GST_TIME_FORMAT,
					      c.what, i, GST_TIME_ARGS(ours[i].pts),
					      GST_TIME_ARGS(theirs[i].pts));
			} else {
				ck_assert(ours[i].rate == c.seekRate && theirs[i].rate == 1.0);
			}
		}
		std::printf("%s: %zu frames, the same times through both\n", c.what, ours.size());
	}
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	GstElementFactory *unixfd = gst_element_factory_find("unixfdsrc");
	if (!unixfd) {
		std::printf(
			"SKIP: GStreamer %s has no unixfdsrc (gst-plugins-bad's unixfd plugin)\n",
			gst_version_string());
		return 77;
	}
	gst_object_unref(unixfd);
	Suite *s = suite_create("gst-transport-unixfd");
	TCase *tc = tcase_create("gst-transport-unixfd");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, gpuhandle_times_equal_unixfds_on_every_case);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}

#else

int main()
{
	std::printf(
		"SKIP: unixfdsink's wait-for-connection needs GStreamer 1.26 (built with %d.%d): "
		"this test runs in the Debian 13 root (scripts/debian13.sh)\n",
		GST_VERSION_MAJOR, GST_VERSION_MINOR);
	return 77;
}

#endif
