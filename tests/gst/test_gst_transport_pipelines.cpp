// gpuhandlesink ! gpuhandlesrc between two pipelines of one process: every format gpuhandleupload
// advertises arrives pixel-identical, the producer's EOS ends the consumer's stream while the
// producer runs on (as unixfdsink's does), and a telecined stream's per-buffer interlacing flags
// arrive as GStreamer's interlace element set them.
#include <string>
#include <unistd.h>
#include <vector>

#include <gst/gst.h>
#include <gst/video/video.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "elements_fixture.h"
#include "pipeline_release.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using namespace gpuhandle::test::elements;

namespace {

std::string socketPath()
{
	return "/tmp/gpuhandle-test-transport-pipelines-" + std::to_string(getpid()) + ".sock";
}

// A producer pipeline ending in gpuhandlesink on `socket`, playing while the consumer runs.
class Producer
{
public:
	Producer(const std::string &head, const std::string &socket)
	{
		GError *error = nullptr;
		pipeline_ = gst_parse_launch(
			(head +
			 " ! gpuhandlesink sync=false wait-for-consumers=1 socket-path=" + socket)
				.c_str(),
			&error);
		ck_assert_msg(pipeline_ && !error, "%s", error ? error->message : "?");
		ck_assert(gst_element_set_state(pipeline_, GST_STATE_PLAYING) !=
			  GST_STATE_CHANGE_FAILURE);
	}
	Producer(const Producer &) = delete;
	Producer &operator=(const Producer &) = delete;
	// Whether it reached EOS (its consumer took the last frame) within 30 s; then stops it.
	bool finish()
	{
		GstBus *bus = gst_element_get_bus(pipeline_);
		GstMessage *end = gst_bus_timed_pop_filtered(
			bus, 30 * GST_SECOND,
			static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
		const bool eos = end && GST_MESSAGE_TYPE(end) == GST_MESSAGE_EOS;
		if (end)
			gst_message_unref(end);
		gst_object_unref(bus);
		ck_assert(gpuhandle::test::releasePipeline(pipeline_));
		pipeline_ = nullptr;
		return eos;
	}
	~Producer()
	{
		if (pipeline_)
			gpuhandle::test::releasePipeline(pipeline_);
	}

private:
	GstElement *pipeline_ = nullptr;
};

// The interlacing flags of each buffer the appsink "sink" of `description` gets, to EOS.
std::vector<guint> interlacingFlagsPerFrame(const std::string &description)
{
	return gpuhandle::test::eachBuffer(description, [](GstBuffer *buffer) {
		return GST_BUFFER_FLAGS(buffer) &
		       guint(GST_VIDEO_BUFFER_FLAG_INTERLACED | GST_VIDEO_BUFFER_FLAG_TFF |
			     GST_VIDEO_BUFFER_FLAG_RFF | GST_VIDEO_BUFFER_FLAG_ONEFIELD);
	});
}

} // namespace

// Every advertised format: the format, size and plane layout travel in the frame messages.
START_TEST(every_format_crosses_sink_and_src)
{
	const std::string socket = socketPath();
	for (const std::string &format : advertisedFormats()) {
		Run reference = runPipeline(source(format.c_str(), kOddSize) + " ! " + kSink);
		ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
		Producer producer(source(format.c_str(), kOddSize), socket);
		// The consumer's stream ends at the producer's EOS, while the producer still runs.
		Run run = runPipeline("gpuhandlesrc socket-path=" + socket +
				      " connect-timeout=10000000000 ! gpuhandledownload ! " +
				      rawCaps(format.c_str(), kOddSize) + " ! " + kSink);
		ck_assert_msg(producer.finish(), "%s: the producer did not reach EOS",
			      format.c_str());
		ck_assert_msg(run.error.empty(), "%s: %s", format.c_str(), run.error.c_str());
		ck_assert_uint_eq(run.frames, 2);
		ck_assert_msg(run.bytes == reference.bytes, "%s: pixels differ%s", format.c_str(),
			      firstDifference(run.bytes, reference.bytes).c_str());
	}
}
END_TEST

// 24p telecined to 60i by GStreamer's interlace element (2:3): a mixed-mode stream whose buffers
// say which frames are interlaced. The consumer sees each frame's flags as the producer's
// pipeline saw them (a deinterlacer downstream relies on them).
START_TEST(interlacing_flags_cross_sink_and_src)
{
	const std::string telecined = "videotestsrc num-buffers=12 ! video/x-raw,format=I420,"
				      "width=64,height=48,framerate=24000/1001 ! interlace "
				      "field-pattern=2:3";
	const std::vector<guint> reference =
		interlacingFlagsPerFrame(telecined + " ! appsink name=sink sync=false");
	ck_assert_uint_ge(reference.size(), 12);
	guint interlaced = 0;
	for (guint f : reference)
		interlaced += (f & GST_VIDEO_BUFFER_FLAG_INTERLACED) ? 1 : 0;
	ck_assert_msg(interlaced > 0 && interlaced < reference.size(),
		      "the telecined stream is not mixed: %u of %zu frames interlaced", interlaced,
		      reference.size());
	const std::string socket = socketPath();
	Producer producer(telecined, socket);
	const std::vector<guint> got = interlacingFlagsPerFrame(
		"gpuhandlesrc socket-path=" + socket +
		" connect-timeout=10000000000 ! appsink name=sink sync=false");
	ck_assert(producer.finish());
	ck_assert_uint_eq(got.size(), reference.size());
	for (size_t i = 0; i < got.size(); ++i)
		ck_assert_msg(got[i] == reference[i], "frame %zu: flags 0x%x, expected 0x%x", i,
			      got[i], reference[i]);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-transport-pipelines");
	TCase *tc = tcase_create("gst-transport-pipelines");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, every_format_crosses_sink_and_src);
	tcase_add_test(tc, interlacing_flags_cross_sink_and_src);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
