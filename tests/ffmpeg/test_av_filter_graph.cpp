// The filter graph gpuhandle-avbridge and the FFmpeg elements share (ffmpeg-bridge/av/) on real
// libavfilter: what a graph gives is known before any frame (size, format, rate), frames go
// through it with their count changed by rate filters, and a graph that does not parse or link
// is an error naming it.
#include "av_filter_graph.h"

#include <string>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
}

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::av;

namespace {

// 640x480 yuv420p at 30 frames per second, 1/30 s ticks.
FilterInput vgaInput()
{
	FilterInput input;
	input.width = 640;
	input.height = 480;
	input.format = AV_PIX_FMT_YUV420P;
	input.timeBase = AVRational{ 1, 30 };
	input.frameRate = AVRational{ 30, 1 };
	input.sampleAspectRatio = AVRational{ 1, 1 };
	return input;
}

FilterOutput outputOf(const std::string &graph)
{
	FilterGraph filter;
	Status configured = filter.configure(graph, vgaInput(), nullptr);
	ck_assert_msg(configured.ok(), "%s: %s", graph.c_str(),
		      configured.ok() ? "" : configured.error().message().c_str());
	Result<FilterOutput> out = filter.output();
	ck_assert(out.ok());
	return *out;
}

} // namespace

START_TEST(the_output_is_known_before_any_frame)
{
	struct Case {
		const char *graph;
		int width, height;
		AVPixelFormat format;
		int rateNum, rateDen;
	};
	for (const Case &c :
	     { Case{ "", 640, 480, AV_PIX_FMT_YUV420P, 30, 1 },
	       Case{ "scale=320:240", 320, 240, AV_PIX_FMT_YUV420P, 30, 1 },
	       Case{ "scale=320:-2,format=rgba", 320, 240, AV_PIX_FMT_RGBA, 30, 1 },
	       Case{ "transpose=1", 480, 640, AV_PIX_FMT_YUV420P, 30, 1 },
	       Case{ "fps=10", 640, 480, AV_PIX_FMT_YUV420P, 10, 1 },
	       Case{ "crop=100:50,format=nv12", 100, 50, AV_PIX_FMT_NV12, 30, 1 } }) {
		const FilterOutput out = outputOf(c.graph);
		ck_assert_msg(out.width == c.width && out.height == c.height,
			      "%s: %dx%d, not %dx%d", c.graph, out.width, out.height, c.width,
			      c.height);
		ck_assert_msg(out.format == c.format, "%s: %s", c.graph,
			      av_get_pix_fmt_name(static_cast<AVPixelFormat>(out.format)));
		ck_assert_msg(out.frameRate.num * c.rateDen == c.rateNum * out.frameRate.den,
			      "%s: %d/%d frames per second", c.graph, out.frameRate.num,
			      out.frameRate.den);
		ck_assert(!out.hardware);
	}
	FilterGraph unconfigured;
	ck_assert(!unconfigured.output().ok());
}
END_TEST

// 30 frames at 30 fps through fps=10 come out as 10 (after the end of the stream is pushed),
// each of the size and format the graph announced.
START_TEST(frames_go_through_with_their_count_changed)
{
	FilterGraph filter;
	ck_assert(filter.configure("fps=10,scale=160:120", vgaInput(), nullptr).ok());
	const FilterOutput announced = *filter.output();
	int out = 0;
	auto drain = [&] {
		for (;;) {
			Result<AVFrame *> frame = filter.pull();
			ck_assert(frame.ok());
			if (!*frame)
				return;
			ck_assert_int_eq((*frame)->width, announced.width);
			ck_assert_int_eq((*frame)->height, announced.height);
			ck_assert_int_eq((*frame)->format, announced.format);
			++out;
			av_frame_free(&*frame);
		}
	};
	for (int i = 0; i < 30; ++i) {
		AVFrame *frame = av_frame_alloc();
		frame->width = 640;
		frame->height = 480;
		frame->format = AV_PIX_FMT_YUV420P;
		frame->pts = i;
		ck_assert_int_eq(av_frame_get_buffer(frame, 0), 0);
		ck_assert(filter.accepts(frame));
		ck_assert(filter.push(frame).ok());
		av_frame_free(&frame);
		drain();
	}
	ck_assert(filter.push(nullptr).ok());
	drain();
	ck_assert_int_eq(out, 10);
}
END_TEST

START_TEST(a_graph_that_does_not_parse_or_link_names_itself)
{
	FilterGraph filter;
	Status bad = filter.configure("nosuchfilter=1", vgaInput(), nullptr);
	ck_assert(!bad.ok());
	ck_assert_int_eq(static_cast<int>(bad.error().code()),
			 static_cast<int>(ErrorCode::InvalidArgument));
	ck_assert_msg(bad.error().message().find("nosuchfilter") != std::string::npos, "%s",
		      bad.error().message().c_str());
	// hwupload without a device does not link.
	Status noDevice = filter.configure("hwupload", vgaInput(), nullptr);
	ck_assert(!noDevice.ok());
	ck_assert_msg(noDevice.error().message().find("hwupload") != std::string::npos, "%s",
		      noDevice.error().message().c_str());
	ck_assert(!filter.output().ok() || filter.configured());
}
END_TEST

int main()
{
	Suite *s = suite_create("av_filter_graph");
	TCase *tc = tcase_create("graph");
	tcase_add_test(tc, the_output_is_known_before_any_frame);
	tcase_add_test(tc, frames_go_through_with_their_count_changed);
	tcase_add_test(tc, a_graph_that_does_not_parse_or_link_names_itself);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
