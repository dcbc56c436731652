// The shared filter graph around libavfilter's buffersrc and buffersink (see av_filter_graph.h).
#include "av_filter_graph.h"

#include "av_util.h"
#include "gpuhandle_i18n.h"

#include <string>

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/version.h>
#include <libavutil/buffer.h>
#include <libavutil/frame.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::av {

namespace {

// Frees an AVFilterInOut list when it goes out of scope.
struct InOut {
	AVFilterInOut *list = nullptr;
	~InOut() { avfilter_inout_free(&list); }
};

std::string formatName(int format)
{
	const char *name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(format));
	return name ? name : "unknown-format";
}

} // namespace

FilterGraph::~FilterGraph()
{
	avfilter_graph_free(&graph_);
}

FilterInput FilterGraph::inputOf(const AVFrame *frame, AVRational timeBase, AVRational frameRate)
{
	FilterInput input{};
	input.width = frame->width;
	input.height = frame->height;
	input.format = frame->format;
	input.timeBase = timeBase;
	input.sampleAspectRatio = frame->sample_aspect_ratio;
	input.frameRate = frameRate;
	input.hwFrames = frame->hw_frames_ctx;
	input.colorSpace = frame->colorspace;
	input.colorRange = frame->color_range;
	return input;
}

Status FilterGraph::configure(const std::string &description, const FilterInput &input,
			      AVBufferRef *hwDevice, const std::vector<int> &sinkFormats,
			      const std::string &noDeviceHint)
{
	avfilter_graph_free(&graph_);
	source_ = sink_ = nullptr;
	input_ = input;
	input_.hwFrames = nullptr; // borrowed: only its identity is kept
	hwFramesData_ = input.hwFrames ? input.hwFrames->data : nullptr;
	graph_ = avfilter_graph_alloc();
	if (!graph_)
		return Error(ErrorCode::OutOfMemory, "filter", _("avfilter_graph_alloc failed"));
	source_ = avfilter_graph_alloc_filter(graph_, avfilter_get_by_name("buffer"), "in");
	AVBufferSrcParameters *params = av_buffersrc_parameters_alloc();
	if (!source_ || !params) {
		av_free(params);
		return Error(ErrorCode::OutOfMemory, "filter", _("the buffer source was not made"));
	}
	params->format = input.format;
	params->width = input.width;
	params->height = input.height;
	params->time_base = input.timeBase;
	params->sample_aspect_ratio = input.sampleAspectRatio;
	params->frame_rate = input.frameRate;
	params->hw_frames_ctx = input.hwFrames; // av_buffersrc_parameters_set takes a reference
#if LIBAVFILTER_VERSION_INT >= AV_VERSION_INT(10, 4, 100)
	params->color_space = static_cast<AVColorSpace>(input.colorSpace);
	params->color_range = static_cast<AVColorRange>(input.colorRange);
#endif
	int err = av_buffersrc_parameters_set(source_, params);
	av_free(params);
	if (err >= 0)
		err = avfilter_init_str(source_, nullptr);
	if (err < 0)
		return avError(_("the filter graph's source was refused"), err);
	err = avfilter_graph_create_filter(&sink_, avfilter_get_by_name("buffersink"), "out",
					   nullptr, nullptr, graph_);
	if (err < 0)
		return avError(_("the filter graph's sink was not made"), err);
	if (!sinkFormats.empty()) {
#if LIBAVFILTER_VERSION_INT >= AV_VERSION_INT(10, 6, 100)
		// FFmpeg 8 replaced the binary pix_fmts option with the array option pixel_formats,
		// which takes the names joined by '|'.
		std::string names;
		for (int format : sinkFormats) {
			const char *name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(format));
			if (!name)
				continue;
			names += (names.empty() ? "" : "|") + std::string(name);
		}
		err = av_opt_set(sink_, "pixel_formats", names.c_str(), AV_OPT_SEARCH_CHILDREN);
#else
		// av_opt_set_int_list without its macro (old-style casts): the list, no terminator.
		err = av_opt_set_bin(sink_, "pix_fmts",
				     reinterpret_cast<const uint8_t *>(sinkFormats.data()),
				     static_cast<int>(sinkFormats.size() * sizeof(int)),
				     AV_OPT_SEARCH_CHILDREN);
#endif
		if (err < 0)
			return avError(_("the filter graph's sink refused the encoder's formats"),
				       err);
	}
	InOut outputs{ avfilter_inout_alloc() };
	InOut inputs{ avfilter_inout_alloc() };
	if (!outputs.list || !inputs.list)
		return Error(ErrorCode::OutOfMemory, "filter", _("avfilter_inout_alloc failed"));
	outputs.list->name = av_strdup("in");
	outputs.list->filter_ctx = source_;
	inputs.list->name = av_strdup("out");
	inputs.list->filter_ctx = sink_;
	const std::string graphText = description.empty() ? "null" : description;
	err = avfilter_graph_parse_ptr(graph_, graphText.c_str(), &inputs.list, &outputs.list,
				       nullptr);
	if (err < 0)
		return Error(ErrorCode::InvalidArgument, "graph",
			     i18n::format(_("the filter graph '%s' does not parse: %s"),
					  graphText.c_str(), avErrorText(err).c_str()));
	if (hwDevice)
		for (unsigned i = 0; i < graph_->nb_filters; ++i) {
			av_buffer_unref(&graph_->filters[i]->hw_device_ctx);
			graph_->filters[i]->hw_device_ctx = av_buffer_ref(hwDevice);
		}
	err = avfilter_graph_config(graph_, nullptr);
	if (err < 0)
		return Error(
			ErrorCode::InvalidArgument, "filter",
			hwDevice || noDeviceHint.empty()
				? i18n::format(
					  _("the filter graph '%s' does not take %s frames: %s"),
					  graphText.c_str(), formatName(input.format).c_str(),
					  avErrorText(err).c_str())
				: i18n::format(_("the filter graph '%s' does not take %s frames "
						 "(%s): %s"),
					       graphText.c_str(), formatName(input.format).c_str(),
					       noDeviceHint.c_str(), avErrorText(err).c_str()));
	return {};
}

bool FilterGraph::accepts(const AVFrame *frame) const
{
	return graph_ && frame->width == input_.width && frame->height == input_.height &&
	       frame->format == input_.format &&
	       (frame->hw_frames_ctx ? frame->hw_frames_ctx->data : nullptr) == hwFramesData_;
}

Status FilterGraph::push(AVFrame *frame)
{
	const int err = av_buffersrc_add_frame_flags(source_, frame, AV_BUFFERSRC_FLAG_KEEP_REF);
	if (err < 0)
		return avError(_("the filter graph refused a frame"), err);
	return {};
}

Result<AVFrame *> FilterGraph::pull()
{
	AVFrame *frame = av_frame_alloc();
	if (!frame)
		return Error(ErrorCode::OutOfMemory, "filter", _("av_frame_alloc failed"));
	const int err = av_buffersink_get_frame(sink_, frame);
	if (err >= 0)
		return frame;
	av_frame_free(&frame);
	if (err == AVERROR(EAGAIN) || err == AVERROR_EOF)
		return static_cast<AVFrame *>(nullptr);
	return avError(_("filtering failed"), err);
}

AVRational FilterGraph::timeBase() const
{
	return av_buffersink_get_time_base(sink_);
}

AVRational FilterGraph::frameRate() const
{
	return av_buffersink_get_frame_rate(sink_);
}

Result<FilterOutput> FilterGraph::output() const
{
	if (!graph_ || !sink_)
		return Error(ErrorCode::InvalidState, "filter",
			     "The filter graph is not configured yet.");
	FilterOutput out;
	out.width = av_buffersink_get_w(sink_);
	out.height = av_buffersink_get_h(sink_);
	out.format = av_buffersink_get_format(sink_);
	out.timeBase = av_buffersink_get_time_base(sink_);
	out.frameRate = av_buffersink_get_frame_rate(sink_);
	out.sampleAspectRatio = av_buffersink_get_sample_aspect_ratio(sink_);
	out.hardware = av_buffersink_get_hw_frames_ctx(sink_) != nullptr;
	return out;
}

} // namespace gpuhandle::av
