// gpuhandleavfilter's per-frame cost against the same libavfilter graph run by a bare loop
// (buffersrc, the graph, buffersink) in the same process, on the same frame: what the element
// adds around FFmpeg (wrapping the GstBuffer as an AVFrame, the filtered frame as a GstBuffer,
// GstBaseTransform). One buffer is pushed again and again from a pad of ours into the element.
#include "av_filter_graph.h"
#include "bench_common.h"
#include "pad_chain.h"

#include <cstring>
#include <string>
#include <vector>

#include <gst/video/video.h>

extern "C" {
#include <libavutil/frame.h>
}

using namespace gpuhandle::bench;
using gpuhandle::bench::media::Chain;

namespace {

constexpr int kWidth = 640;
constexpr int kHeight = 360;

// The bare loop: one AVFrame (the same bytes each time) through `graph`.
struct BareLoop {
	gpuhandle::av::FilterGraph graph{};
	AVFrame *in = av_frame_alloc();
	AVFrame *out = av_frame_alloc();
	std::string error{};
	int64_t pts = 0;

	explicit BareLoop(const std::string &description)
	{
		in->format = AV_PIX_FMT_NV12;
		in->width = kWidth;
		in->height = kHeight;
		if (av_frame_get_buffer(in, 0) < 0) {
			error = "av_frame_get_buffer failed";
			return;
		}
		for (int p = 0; p < 2; ++p)
			std::memset(in->data[p], 0x80,
				    static_cast<size_t>(in->linesize[p]) *
					    (p ? kHeight / 2 : kHeight));
		gpuhandle::Status configured = graph.configure(
			description,
			gpuhandle::av::FilterGraph::inputOf(in, AVRational{ 1, 1000000000 },
							    AVRational{ 30, 1 }),
			nullptr);
		if (!configured)
			error = configured.error().message();
	}
	~BareLoop()
	{
		av_frame_free(&in);
		av_frame_free(&out);
	}
	bool run(int frames)
	{
		for (int i = 0; i < frames; ++i) {
			in->pts = pts;
			pts += 33333333;
			if (!graph.push(in))
				return false;
			gpuhandle::Result<AVFrame *> filtered = graph.pull();
			if (!filtered || !*filtered)
				return false;
			av_frame_free(&*filtered);
		}
		return true;
	}
};

bool measure(Report &report, const Options &options, const std::string &graph)
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, kWidth, kHeight);
	GST_VIDEO_INFO_FPS_N(&info) = 30;
	GST_VIDEO_INFO_FPS_D(&info) = 1;
	GstCaps *caps = gst_video_info_to_caps(&info);
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	gst_buffer_memset(buffer, 0, 0x80, GST_VIDEO_INFO_SIZE(&info));
	Chain ours("gpuhandleavfilter name=first graph=" + graph +
			   " ! fakesink sync=false async=false enable-last-sample=false",
		   caps);
	gst_caps_unref(caps);
	BareLoop bare(graph);
	bool ok = ours.error.empty() && bare.error.empty();
	const int perRound = options.iterations(2000, 50);
	const int rounds = options.iterations(11, 2);
	ok = ok && bare.run(perRound / 10 + 1) && ours.push(buffer, perRound / 10 + 1);
	std::vector<double> bareNs, oursNs;
	uint64_t bareAllocs = 0, oursAllocs = 0;
	for (int r = 0; ok && r < rounds; r++) {
		uint64_t allocs = heapAllocations();
		auto start = Clock::now();
		ok = bare.run(perRound);
		bareNs.push_back(nsSince(start) / perRound);
		bareAllocs += heapAllocations() - allocs;
		allocs = heapAllocations();
		start = Clock::now();
		ok = ok && ours.push(buffer, perRound);
		oursNs.push_back(nsSince(start) / perRound);
		oursAllocs += heapAllocations() - allocs;
	}
	gst_buffer_unref(buffer);
	if (!ok) {
		std::fprintf(stderr, "avfilter %s: %s%s\n", graph.c_str(), ours.error.c_str(),
			     bare.error.c_str());
		return false;
	}
	const double frames = double(rounds) * perRound;
	Result result;
	result.name = "avfilter/" + graph + "/NV12/640x360";
	result.baseline = "the same graph in a bare libavfilter loop";
	result.baselineValue = statsOf(bareNs).median;
	result.value = statsOf(oursNs).median;
	result.unit = "ns";
	char note[200];
	std::snprintf(note, sizeof note,
		      "gpuhandle: GstBuffer ! gpuhandleavfilter ! fakesink; heap allocations per "
		      "frame: %.1f (bare loop %.1f)",
		      double(oursAllocs) / frames, double(bareAllocs) / frames);
	result.note = note;
	report.add(std::move(result));
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	const Options options = parseOptions(argc, argv);
	gst_init(nullptr, nullptr);
	GstElementFactory *factory = gst_element_factory_find("gpuhandleavfilter");
	if (!factory) {
		std::printf("SKIP: the plugin has no gpuhandleavfilter (GST_PLUGIN_PATH)\n");
		return 77;
	}
	gst_object_unref(factory);
	Report report("gpuhandleavfilter per frame against a bare libavfilter loop", options);
	bool ok = true;
	// `null` shows what the element adds; `scale` that beside a filter's own work.
	for (const char *graph : { "null", "scale=320:180" })
		ok = measure(report, options, graph) && ok;
	const int status = report.finish();
	return ok ? status : 1;
}
