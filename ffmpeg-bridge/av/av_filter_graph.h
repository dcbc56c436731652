// A libavfilter graph, buffersrc ! GRAPH ! buffersink, hardware frames too: shared by
// gpuhandle-avbridge and the elements that run FFmpeg inside GStreamer.
#pragma once

#include <gpuhandle/result.h>

#include <string>
#include <vector>

extern "C" {
#include <libavutil/rational.h>
}

struct AVBufferRef;
struct AVFilterContext;
struct AVFilterGraph;
struct AVFrame;

namespace gpuhandle::av {

// What the graph's source gets: the first frame's geometry and format, and the stream's times.
struct FilterInput {
	int width = 0;
	int height = 0;
	int format = -1; // AVPixelFormat
	AVRational timeBase{ 1, 1000000000 };
	AVRational sampleAspectRatio{ 0, 1 };
	AVRational frameRate{ 0, 1 };
	AVBufferRef *hwFrames = nullptr; // borrowed; the source takes its own reference
	// The frames' AVColorSpace and AVColorRange (FFmpeg 7.1's buffer source compares each
	// frame's with them and reconfigures on a difference); unspecified by default.
	int colorSpace = 2; // AVCOL_SPC_UNSPECIFIED
	int colorRange = 0; // AVCOL_RANGE_UNSPECIFIED
};

// What the graph's sink gives, known once the graph is configured (before any frame): what an
// element announces as its output caps.
struct FilterOutput {
	int width = 0;
	int height = 0;
	int format = -1; // AVPixelFormat
	AVRational timeBase{ 1, 1 };
	AVRational frameRate{ 0, 1 }; // 0/1 when the graph does not say
	AVRational sampleAspectRatio{ 0, 1 };
	bool hardware = false; // frames of a hardware frames context (hw_frames_ctx)
};

class FilterGraph
{
public:
	FilterGraph() = default;
	~FilterGraph();
	FilterGraph(const FilterGraph &) = delete;
	FilterGraph &operator=(const FilterGraph &) = delete;

	static FilterInput inputOf(const AVFrame *frame, AVRational timeBase, AVRational frameRate);

	// Builds `description` ("null" when empty) between a buffer source of `input` and a sink
	// taking `sinkFormats` (any format when empty). `hwDevice` (borrowed, may be null) becomes
	// every filter's device (hwupload, hwmap). Errors: InvalidArgument (field "graph": the
	// graph does not parse; field "filter": it does not configure for the input, FFmpeg's
	// reason, with `noDeviceHint` when there is no device), Backend.
	Status configure(const std::string &description, const FilterInput &input,
			 AVBufferRef *hwDevice, const std::vector<int> &sinkFormats = {},
			 const std::string &noDeviceHint = {});
	bool configured() const noexcept { return graph_ != nullptr; }
	// Whether `frame` has the geometry and format the graph was built for.
	bool accepts(const AVFrame *frame) const;
	// Feeds a frame (the graph takes its data; the caller still frees the AVFrame), or null at
	// the end of the stream.
	Status push(AVFrame *frame);
	// The next filtered frame (the caller frees it), or null when none is ready yet or at the
	// end.
	Result<AVFrame *> pull();
	AVRational timeBase() const;
	AVRational frameRate() const;
	// The configured graph's output. InvalidState before configure().
	Result<FilterOutput> output() const;

private:
	AVFilterGraph *graph_ = nullptr;
	AVFilterContext *source_ = nullptr; // owned by the graph
	AVFilterContext *sink_ = nullptr;   // owned by the graph
	FilterInput input_{};
	const void *hwFramesData_ = nullptr; // the frames context the source was built for
};

} // namespace gpuhandle::av
