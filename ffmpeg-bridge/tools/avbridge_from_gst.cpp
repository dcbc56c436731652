// gpuhandle-avbridge from-gst: appsink buffers become AVFrames, filtered, encoded and muxed.
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/gst_buffer.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_filter_graph.h"
#include "avbridge_ffmpeg.h"
#include "avbridge_modes.h"
#include "avbridge_pipeline.h"
#include "gpuhandle_i18n.h"

#include <chrono>
#include <cstring>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/version.h>
}

namespace gpuhandle::avbridge {

using av::FilterGraph;

namespace {

constexpr GstClockTime kNoTime = static_cast<GstClockTime>(-1);
constexpr GstClockTime kPullSlice = 100000000; // 100 ms: how often the bus is looked at

// Output files whose names FFmpeg does not map to a muxer but that are raw frames.
bool isRawName(const std::string &name)
{
	for (const char *ext : { ".yuv", ".raw", ".nv12", ".rgb", ".rgba", ".bgra" })
		if (name.size() > std::strlen(ext) &&
		    name.compare(name.size() - std::strlen(ext), std::string::npos, ext) == 0)
			return true;
	return false;
}

bool isVulkanFrame(const Frame &frame)
{
	if (frame.numResources() == 0)
		return false;
	const ResourceKind kind = frame.resource(0).kind();
	return kind == ResourceKind::VulkanImage || kind == ResourceKind::VulkanBuffer ||
	       kind == ResourceKind::VulkanMemoryFd;
}

class FromGst
{
public:
	FromGst(const Options &options, Report &report) : options_(options), report_(report) {}
	~FromGst();
	FromGst(const FromGst &) = delete;
	FromGst &operator=(const FromGst &) = delete;
	Status run();

private:
	Status openOutput();
	Status handleSample(GstSample *sample);
	Result<AVFrame *> bridge(GstBuffer *buffer, const GstVideoInfo &info, ExecutionPath &path);
	Status ensureHwFrames(const Frame &frame);
	Status filter(AVFrame *frame);
	Status drainGraph();
	Status openEncoder(const AVFrame *frame);
	Status encode(AVFrame *frame);
	bool done() const
	{
		return interrupted() ||
		       (options_.frames > 0 && report_.frames() >= options_.frames);
	}

	const Options &options_;
	Report &report_;
	AvBufferOwner device_{};
	AvBufferOwner hwFrames_{};
	FilterGraph graph_{};
	const AVCodec *codec_ = nullptr;
	AVCodecContext *encoder_ = nullptr;
	AVFormatContext *muxer_ = nullptr;
	AVStream *stream_ = nullptr;
	AVPacket *packet_ = nullptr;
	bool headerWritten_ = false;
	AVRational capsRate_{ 0, 1 };
	std::unique_ptr<Pipeline> pipeline_{};
};

FromGst::~FromGst()
{
	pipeline_.reset(); // its buffers first
	avcodec_free_context(&encoder_);
	if (muxer_ && !(muxer_->oformat->flags & AVFMT_NOFILE))
		avio_closep(&muxer_->pb);
	avformat_free_context(muxer_);
	av_packet_free(&packet_);
}

Status FromGst::openOutput()
{
	codec_ = avcodec_find_encoder_by_name(options_.codec.c_str());
	if (!codec_ || codec_->type != AVMEDIA_TYPE_VIDEO)
		return Error(ErrorCode::InvalidArgument, "codec",
			     i18n::format(_("unknown video encoder '%s'"), options_.codec.c_str()));
	std::string format = options_.format;
	if (format.empty() && isRawName(options_.output))
		format = "rawvideo";
	int err = avformat_alloc_output_context2(&muxer_, nullptr,
						 format.empty() ? nullptr : format.c_str(),
						 options_.output.c_str());
	if (err < 0 || !muxer_)
		return Error(ErrorCode::InvalidArgument, "output",
			     format.empty()
				     ? i18n::format(_("cannot tell the output format from the name "
						      "'%s'; name one with --format"),
						    options_.output.c_str())
				     : i18n::format(_("unknown output format '%s'"),
						    format.c_str()));
	packet_ = av_packet_alloc();
	if (!packet_)
		return Error(ErrorCode::OutOfMemory, "packet", _("av_packet_alloc failed"));
	if (!(muxer_->oformat->flags & AVFMT_NOFILE)) {
		err = avio_open(&muxer_->pb, options_.output.c_str(), AVIO_FLAG_WRITE);
		if (err < 0)
			return avError(i18n::format(_("could not open '%s' for writing"),
						    options_.output.c_str()),
				       err);
	}
	return {};
}

Status FromGst::ensureHwFrames(const Frame &frame)
{
	Result<AVPixelFormat> swFormat = ffmpeg::toAvPixelFormat(frame.format());
	if (!swFormat)
		return swFormat.error();
	if (hwFrames_.ref) {
		const auto *ctx = reinterpret_cast<const AVHWFramesContext *>(hwFrames_.ref->data);
		if (ctx->width == static_cast<int>(frame.width()) &&
		    ctx->height == static_cast<int>(frame.height()) && ctx->sw_format == *swFormat)
			return {};
		av_buffer_unref(&hwFrames_.ref);
	}
	Result<AVBufferRef *> frames = av::createHwFrames(device_.ref, *swFormat,
							  static_cast<int>(frame.width()),
							  static_cast<int>(frame.height()));
	if (!frames)
		return frames.error();
	hwFrames_.ref = *frames;
	return {};
}

Result<AVFrame *> FromGst::bridge(GstBuffer *buffer, const GstVideoInfo &info, ExecutionPath &path)
{
	const auto *device =
		device_.ref ? reinterpret_cast<const AVHWDeviceContext *>(device_.ref->data)
			    : nullptr;
	if (device && device->type == AV_HWDEVICE_TYPE_VULKAN &&
	    gst::bufferMemoryOf(buffer) == gst::BufferMemory::GpuHandle) {
		Result<Frame> frame = gst::frameFromBuffer(buffer);
		if (frame && isVulkanFrame(*frame)) {
			if (Status frames = ensureHwFrames(*frame); !frames)
				return frames.error();
			ffmpeg::FrameProperties properties{};
			constexpr GstClockTime kLargest = static_cast<GstClockTime>(INT64_MAX);
			if (GST_BUFFER_PTS(buffer) != kNoTime && GST_BUFFER_PTS(buffer) <= kLargest)
				properties.pts = static_cast<int64_t>(GST_BUFFER_PTS(buffer));
			if (GST_BUFFER_DURATION(buffer) != kNoTime &&
			    GST_BUFFER_DURATION(buffer) <= kLargest)
				properties.duration =
					static_cast<int64_t>(GST_BUFFER_DURATION(buffer));
			properties.timeBase = AVRational{ 1, 1000000000 };
			ffmpeg::AvFrameOptions options{};
			options.source = gst::memoryBackend(gst_buffer_peek_memory(buffer, 0));
			options.hwFrames = hwFrames_.ref;
			options.properties = &properties;
			ffmpeg::HwDeviceLock lock(device_.ref);
			return ffmpeg::avFrameFromFrame(*frame, options, &path);
		}
	}
	return ffmpeg::avFrameFromGstBuffer(buffer, info, {}, &path);
}

Status FromGst::handleSample(GstSample *sample)
{
	GstCaps *caps = gst_sample_get_caps(sample);
	GstBuffer *buffer = gst_sample_get_buffer(sample);
	GstVideoInfo info;
	if (!caps || !buffer || !gst_video_info_from_caps(&info, caps)) {
		gchar *text = caps ? gst_caps_to_string(caps) : nullptr;
		Error error(ErrorCode::NotSupported, "caps",
			    text ? i18n::format(_("the pipeline gives %s, not raw video"), text)
				 : std::string(_("the pipeline gives no caps, not raw video")));
		g_free(text);
		return error;
	}
	capsRate_ = AVRational{ info.fps_n, info.fps_d };
	ExecutionPath path{};
	Result<AVFrame *> frame = bridge(buffer, info, path);
	if (!frame)
		return Error(frame.error().code(), "frame",
			     i18n::format(_("a %s buffer could not become an AVFrame: %s"),
					  gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
					  frame.error().message().c_str()));
	AVFrame *owned = *frame;
	Status filtered = filter(owned);
	av_frame_free(&owned);
	if (filtered)
		report_.frame(path);
	return filtered;
}

Status FromGst::filter(AVFrame *frame)
{
	if (!graph_.accepts(frame)) {
		if (graph_.configured())
			return Error(ErrorCode::NotSupported, "frame",
				     _("the pipeline changed the frame size or format mid-stream"));
		std::vector<int> formats;
		const AVPixelFormat *supported = nullptr;
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(61, 13, 100)
		// FFmpeg 7.1 deprecates AVCodec.pix_fmts for this (and 9.0 removes it).
		const void *list = nullptr;
		if (avcodec_get_supported_config(nullptr, codec_, AV_CODEC_CONFIG_PIX_FORMAT, 0,
						 &list, nullptr) >= 0)
			supported = static_cast<const AVPixelFormat *>(list);
#else
		supported = codec_->pix_fmts;
#endif
		if (supported)
			for (const AVPixelFormat *p = supported; *p != AV_PIX_FMT_NONE; ++p)
				formats.push_back(*p);
		const AVRational rate = capsRate_.num > 0 ? capsRate_ : AVRational{ 0, 1 };
		// Configuring may initialise frames contexts, which may submit (layout
		// transitions).
		ffmpeg::HwDeviceLock lock(device_.ref);
		if (Status configured = graph_.configure(
			    options_.filter,
			    FilterGraph::inputOf(frame, AVRational{ 1, 1000000000 }, rate),
			    device_.ref, formats, _("does it need --hw-device?"));
		    !configured)
			return configured;
	}
	{
		ffmpeg::HwDeviceLock lock(device_.ref);
		if (Status pushed = graph_.push(frame); !pushed)
			return pushed;
	}
	return drainGraph();
}

Status FromGst::drainGraph()
{
	for (;;) {
		Result<AVFrame *> out = static_cast<AVFrame *>(nullptr);
		{
			ffmpeg::HwDeviceLock lock(device_.ref);
			out = graph_.pull();
		}
		if (!out)
			return out.error();
		if (!*out)
			return {};
		AVFrame *frame = *out;
		Status encoded = encode(frame);
		av_frame_free(&frame);
		if (!encoded)
			return encoded;
	}
}

Status FromGst::openEncoder(const AVFrame *frame)
{
	encoder_ = avcodec_alloc_context3(codec_);
	if (!encoder_)
		return Error(ErrorCode::OutOfMemory, "encoder", _("avcodec_alloc_context3 failed"));
	AVRational rate = graph_.frameRate();
	if (rate.num <= 0 || rate.den <= 0)
		rate = capsRate_;
	encoder_->width = frame->width;
	encoder_->height = frame->height;
	encoder_->pix_fmt = static_cast<AVPixelFormat>(frame->format);
	encoder_->sample_aspect_ratio = frame->sample_aspect_ratio;
	encoder_->color_range = frame->color_range;
	encoder_->colorspace = frame->colorspace;
	encoder_->color_primaries = frame->color_primaries;
	encoder_->color_trc = frame->color_trc;
	// Encoders limit their time base (MPEG-4: 16 bits): the frame rate's when the caps give it.
	const bool knownRate = rate.num > 0 && rate.den > 0;
	encoder_->time_base = knownRate ? av_inv_q(rate) : AVRational{ 1, 1000 };
	if (knownRate)
		encoder_->framerate = rate;
	if (frame->hw_frames_ctx)
		encoder_->hw_frames_ctx = av_buffer_ref(frame->hw_frames_ctx);
	if (muxer_->oformat->flags & AVFMT_GLOBALHEADER)
		encoder_->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	int err = avcodec_open2(encoder_, codec_, nullptr);
	if (err < 0)
		return avError(i18n::format(_("could not open the %s encoder for %s frames"),
					    codec_->name,
					    ffmpeg::avPixelFormatName(frame->format).c_str()),
			       err);
	stream_ = avformat_new_stream(muxer_, nullptr);
	if (!stream_)
		return Error(ErrorCode::OutOfMemory, "muxer", _("avformat_new_stream failed"));
	err = avcodec_parameters_from_context(stream_->codecpar, encoder_);
	if (err < 0)
		return avError(_("the muxer refused the encoder's parameters"), err);
	stream_->time_base = encoder_->time_base;
	if (knownRate)
		stream_->avg_frame_rate = rate;
	err = avformat_write_header(muxer_, nullptr);
	if (err < 0)
		return avError(i18n::format(_("could not write the header of '%s'"),
					    options_.output.c_str()),
			       err);
	headerWritten_ = true;
	return {};
}

Status FromGst::encode(AVFrame *frame)
{
	if (frame && !encoder_)
		if (Status opened = openEncoder(frame); !opened)
			return opened;
	if (!encoder_)
		return {};
	if (frame && frame->pts != AV_NOPTS_VALUE)
		frame->pts = av_rescale_q(frame->pts, graph_.timeBase(), encoder_->time_base);
	int err;
	{
		ffmpeg::HwDeviceLock lock(device_.ref);
		err = avcodec_send_frame(encoder_, frame);
	}
	if (err < 0)
		return avError(_("encoding failed"), err);
	for (;;) {
		{
			ffmpeg::HwDeviceLock lock(device_.ref);
			err = avcodec_receive_packet(encoder_, packet_);
		}
		if (err == AVERROR(EAGAIN) || err == AVERROR_EOF)
			return {};
		if (err < 0)
			return avError(_("encoding failed"), err);
		av_packet_rescale_ts(packet_, encoder_->time_base, stream_->time_base);
		packet_->stream_index = stream_->index;
		err = av_interleaved_write_frame(muxer_, packet_); // takes the packet's data
		if (err < 0)
			return avError(i18n::format(_("writing '%s' failed"),
						    options_.output.c_str()),
				       err);
	}
}

Status FromGst::run()
{
	if (Status opened = openOutput(); !opened)
		return opened;
	if (!options_.hwDevice.empty()) {
		Result<AVBufferRef *> device = createHwDevice(options_.hwDevice);
		if (!device)
			return device.error();
		device_.ref = *device;
	}
	Result<std::unique_ptr<Pipeline>> pipeline = Pipeline::launch(
		options_.pipeline + " ! appsink name=avbridge_sink", options_.pipeline);
	if (!pipeline)
		return pipeline.error();
	pipeline_ = std::move(*pipeline);
	GstAppSink *sink = GST_APP_SINK(pipeline_->element("avbridge_sink"));
	// A few frames queued at most: the rest wait upstream (pool slots, GPU memory).
	g_object_set(sink, "sync", FALSE, "max-buffers", 4u, "drop", FALSE, nullptr);
	if (Status played = pipeline_->play(); !played)
		return played;
	auto lastFrame = std::chrono::steady_clock::now();
	const auto timeout = std::chrono::seconds(options_.timeoutSeconds);
	while (!done()) {
		GstSample *sample = gst_app_sink_try_pull_sample(sink, kPullSlice);
		if (Status polled = pipeline_->poll(std::chrono::milliseconds(0)); !polled) {
			if (sample)
				gst_sample_unref(sample);
			return polled;
		}
		if (!sample) {
			if (gst_app_sink_is_eos(sink))
				break;
			if (std::chrono::steady_clock::now() - lastFrame > timeout)
				return Error::format(
					ErrorCode::Timeout, "pipeline",
					_("the pipeline gave no frame for %lld s"),
					static_cast<long long>(options_.timeoutSeconds));
			continue;
		}
		lastFrame = std::chrono::steady_clock::now();
		Status handled = handleSample(sample);
		gst_sample_unref(sample);
		if (!handled)
			return handled;
	}
	if (report_.frames() == 0)
		return Error(ErrorCode::InvalidArgument, "pipeline",
			     _("the pipeline gave no frame"));
	{
		ffmpeg::HwDeviceLock lock(device_.ref);
		if (Status flushed = graph_.push(nullptr); !flushed)
			return flushed;
	}
	if (Status drained = drainGraph(); !drained)
		return drained;
	if (Status flushed = encode(nullptr); !flushed)
		return flushed;
	if (headerWritten_) {
		const int err = av_write_trailer(muxer_);
		if (err < 0)
			return avError(i18n::format(_("could not finish '%s'"),
						    options_.output.c_str()),
				       err);
	}
	pipeline_->noteStats(report_);
	report_.finish(_("from-gst: wrote"));
	return {};
}

} // namespace

Status runFromGst(const Options &options, Report &report)
{
	FromGst run(options, report);
	return run.run();
}

} // namespace gpuhandle::avbridge
