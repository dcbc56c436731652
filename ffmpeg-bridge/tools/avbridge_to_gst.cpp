// gpuhandle-avbridge to-gst: FFmpeg decodes and filters, frames go into appsrc as GpuHandle memory.
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_decoder.h"
#include "av_filter_graph.h"
#include "av_gst_frame.h"
#include "avbridge_ffmpeg.h"
#include "avbridge_modes.h"
#include "avbridge_pipeline.h"
#include "gpuhandle_i18n.h"

#include <chrono>
#include <cstdio>

#include <gst/app/gstappsrc.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
}

namespace gpuhandle::avbridge {

using av::FilterGraph;

namespace {

constexpr AVRational kNanoseconds{ 1, 1000000000 };
constexpr GstClockTime kNoTime = static_cast<GstClockTime>(-1);
// Frames queued in appsrc at most: each holds a decoder or filter frame (a pool slot).
constexpr guint64 kQueuedFrames = 4;

struct Decoder {
	AVFormatContext *format = nullptr;
	av::VideoDecoder decoder{}; // on the --hwaccel device when one is given
	AVPacket *packet = nullptr;
	AVFrame *frame = nullptr;
	int stream = -1;
	bool toldFallback = false; // the software fallback was reported

	~Decoder()
	{
		av_frame_free(&frame);
		av_packet_free(&packet);
		avformat_close_input(&format);
	}
	AVCodecContext *codec() const { return decoder.context(); }
	AVBufferRef *device() const { return decoder.device(); }
};

// --hwaccel: the option's own message for a type FFmpeg does not know, then the shared decoder's.
Status setupHwaccel(const std::string &typeName, Decoder &d)
{
	if (av_hwdevice_find_type_by_name(typeName.c_str()) == AV_HWDEVICE_TYPE_NONE)
		return Error(ErrorCode::InvalidArgument, "hwaccel",
			     i18n::format(_("unknown --hwaccel type '%s'"), typeName.c_str()));
	return d.decoder.useHardware(typeName);
}

// Says once that the decoder did not offer the --hwaccel device's frames (ffmpeg's fallback).
void tellFallback(Decoder &d)
{
	if (d.toldFallback || d.decoder.fallbackFormat() == AV_PIX_FMT_NONE)
		return;
	d.toldFallback = true;
	std::fprintf(stderr,
		     _("gpuhandle-avbridge: the decoder does not offer %s frames "
		       "here; decoding to %s\n"),
		     ffmpeg::avPixelFormatName(d.decoder.hwFormat()).c_str(),
		     ffmpeg::avPixelFormatName(d.decoder.fallbackFormat()).c_str());
}

Status openInput(const Options &options, Decoder &d)
{
	int err = avformat_open_input(&d.format, options.input.c_str(), nullptr, nullptr);
	if (err < 0)
		return avError(i18n::format(_("could not open '%s'"), options.input.c_str()), err);
	err = avformat_find_stream_info(d.format, nullptr);
	if (err < 0)
		return avError(i18n::format(_("could not read the streams of '%s'"),
					    options.input.c_str()),
			       err);
	const AVCodec *codec = nullptr;
	d.stream = av_find_best_stream(d.format, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
	if (d.stream == AVERROR_STREAM_NOT_FOUND)
		return Error(ErrorCode::NotSupported, "input",
			     i18n::format(_("'%s' has no video stream"), options.input.c_str()));
	if (d.stream < 0 || !codec)
		return avError(i18n::format(_("no decoder for the video of '%s'"),
					    options.input.c_str()),
			       d.stream < 0 ? d.stream : AVERROR_DECODER_NOT_FOUND);
	AVStream *stream = d.format->streams[d.stream];
	d.packet = av_packet_alloc();
	d.frame = av_frame_alloc();
	if (!d.packet || !d.frame)
		return Error(ErrorCode::OutOfMemory, "decoder", _("the decoder was not allocated"));
	if (Status created = d.decoder.create(codec, stream->codecpar, stream->time_base); !created)
		return created;
	if (!options.hwaccel.empty())
		if (Status hw = setupHwaccel(options.hwaccel, d); !hw)
			return hw;
	return d.decoder.open();
}

class ToGst
{
public:
	ToGst(const Options &options, Report &report) : options_(options), report_(report) {}
	~ToGst() { gst_clear_caps(&caps_); }
	ToGst(const ToGst &) = delete;
	ToGst &operator=(const ToGst &) = delete;
	Status run();

private:
	Status decode(const AVPacket *packet);
	Status filter(AVFrame *frame);
	Status drainGraph();
	Status push(AVFrame *frame);
	Status waitForRoom();
	bool done() const
	{
		return interrupted() ||
		       (options_.frames > 0 && report_.frames() >= options_.frames);
	}

	const Options &options_;
	Report &report_;
	Decoder decoder_{};
	AvBufferOwner filterDevice_{};
	FilterGraph graph_{};
	// Last, so freed first: its buffers hold decoder and filter frames.
	std::unique_ptr<Pipeline> pipeline_{};
	GstAppSrc *appsrc_ = nullptr;
	GstCaps *caps_ = nullptr;
	AVRational streamRate_{ 0, 1 };
	int64_t startPts_ = AV_NOPTS_VALUE;
};

// FFmpeg 5.1 takes no lock around its Vulkan submissions: decoding, filtering and transfers hold
// the devices' locks (no-ops for other device types).
struct DeviceLocks {
	ffmpeg::HwDeviceLock decoder;
	ffmpeg::HwDeviceLock filter;
	DeviceLocks(const AVBufferRef *a, const AVBufferRef *b) : decoder(a), filter(b) {}
};

Status ToGst::decode(const AVPacket *packet)
{
	int err;
	{
		DeviceLocks locks(decoder_.device(), filterDevice_.ref);
		err = avcodec_send_packet(decoder_.codec(), packet);
	}
	if (err < 0 && err != AVERROR_EOF)
		return avError(i18n::format(_("decoding '%s' failed"), options_.input.c_str()),
			       err);
	while (!done()) {
		{
			DeviceLocks locks(decoder_.device(), filterDevice_.ref);
			err = avcodec_receive_frame(decoder_.codec(), decoder_.frame);
		}
		if (err == AVERROR(EAGAIN) || err == AVERROR_EOF)
			break;
		if (err < 0)
			return avError(i18n::format(_("decoding '%s' failed"),
						    options_.input.c_str()),
				       err);
		tellFallback(decoder_);
		decoder_.frame->pts = decoder_.frame->best_effort_timestamp;
		Status filtered = filter(decoder_.frame);
		av_frame_unref(decoder_.frame);
		if (!filtered)
			return filtered;
	}
	return {};
}

Status ToGst::filter(AVFrame *frame)
{
	if (!graph_.accepts(frame)) {
		if (graph_.configured()) { // a new size or format: the old graph's frames first
			{
				DeviceLocks locks(decoder_.device(), filterDevice_.ref);
				if (Status flushed = graph_.push(nullptr); !flushed)
					return flushed;
			}
			if (Status drained = drainGraph(); !drained)
				return drained;
		}
		const AVStream *stream = decoder_.format->streams[decoder_.stream];
		// Configuring may initialise frames contexts, which may submit (layout
		// transitions).
		DeviceLocks locks(decoder_.device(), filterDevice_.ref);
		if (Status configured = graph_.configure(
			    options_.filter,
			    FilterGraph::inputOf(frame, stream->time_base, streamRate_),
			    filterDevice_.ref, {}, _("does it need --hw-device?"));
		    !configured)
			return configured;
	}
	{
		DeviceLocks locks(decoder_.device(), filterDevice_.ref);
		if (Status pushed = graph_.push(frame); !pushed)
			return pushed;
	}
	return drainGraph();
}

Status ToGst::drainGraph()
{
	while (!done()) {
		Result<AVFrame *> out = static_cast<AVFrame *>(nullptr);
		{
			DeviceLocks locks(decoder_.device(), filterDevice_.ref);
			out = graph_.pull();
		}
		if (!out)
			return out.error();
		if (!*out)
			break;
		AVFrame *frame = *out;
		Status pushed = push(frame);
		av_frame_free(&frame);
		if (!pushed)
			return pushed;
	}
	return {};
}

Status ToGst::waitForRoom()
{
	const auto deadline =
		std::chrono::steady_clock::now() + std::chrono::seconds(options_.timeoutSeconds);
	for (;;) {
		if (Status polled = pipeline_->poll(std::chrono::milliseconds(0)); !polled)
			return polled;
		if (pipeline_->eos())
			return Error(ErrorCode::Backend, "pipeline",
				     _("the pipeline ended before it took every frame"));
		if (gst_app_src_get_current_level_buffers(appsrc_) < kQueuedFrames)
			return {};
		if (std::chrono::steady_clock::now() >= deadline)
			return Error::format(ErrorCode::Timeout, "pipeline",
					     _("the pipeline took no frame for %lld s"),
					     static_cast<long long>(options_.timeoutSeconds));
		if (Status polled = pipeline_->poll(std::chrono::milliseconds(10)); !polled)
			return polled;
	}
}

Status ToGst::push(AVFrame *frame)
{
	av::GstFrameOptions frameOptions{};
	frameOptions.waitVulkanFrames = true; // a graph's hwupload (see GstFrameOptions)
	Result<av::GstFrame> wrapped = av::gstFrameOf(frame, frameOptions);
	if (!wrapped)
		return wrapped.error();
	GstBuffer *buffer = wrapped->buffer;
	const ffmpeg::FrameProperties &properties = wrapped->properties;
	GstVideoInfo *info = &wrapped->info;
	const AVRational timeBase = graph_.timeBase();
	AVRational rate = graph_.frameRate();
	if (rate.num <= 0 || rate.den <= 0)
		rate = streamRate_;
	if (frame->pts != AV_NOPTS_VALUE) {
		if (startPts_ == AV_NOPTS_VALUE)
			startPts_ = frame->pts;
		const int64_t ns = av_rescale_q(frame->pts - startPts_, timeBase, kNanoseconds);
		GST_BUFFER_PTS(buffer) = ns >= 0 ? static_cast<GstClockTime>(ns) : 0;
	}
	if (properties.duration > 0)
		GST_BUFFER_DURATION(buffer) = static_cast<GstClockTime>(
			av_rescale_q(properties.duration, timeBase, kNanoseconds));
	else if (rate.num > 0 && rate.den > 0)
		GST_BUFFER_DURATION(buffer) =
			static_cast<GstClockTime>(av_rescale_q(1, av_inv_q(rate), kNanoseconds));
	else
		GST_BUFFER_DURATION(buffer) = kNoTime;

	if (rate.num > 0 && rate.den > 0) {
		info->fps_n = rate.num;
		info->fps_d = rate.den;
	}
	if (properties.sampleAspectRatio.num > 0 && properties.sampleAspectRatio.den > 0) {
		info->par_n = properties.sampleAspectRatio.num;
		info->par_d = properties.sampleAspectRatio.den;
	}
	GstCaps *caps = gst_video_info_to_caps(info);
	if (caps)
		av::setGpuHandleFeature(caps, true);
	if (!caps) {
		gst_buffer_unref(buffer);
		return Error(ErrorCode::NotSupported, "caps", _("the frame has no GStreamer caps"));
	}
	if (!caps_ || !gst_caps_is_equal(caps, caps_)) {
		gst_app_src_set_caps(appsrc_, caps);
		gst_caps_replace(&caps_, caps);
	}
	gst_caps_unref(caps);
	if (Status room = waitForRoom(); !room) {
		gst_buffer_unref(buffer);
		return room;
	}
	const GstFlowReturn flow = gst_app_src_push_buffer(appsrc_, buffer); // takes the buffer
	if (flow != GST_FLOW_OK) {
		if (Status polled = pipeline_->poll(std::chrono::milliseconds(100)); !polled)
			return polled;
		return Error::format(ErrorCode::Backend, "pipeline",
				     _("appsrc refused a frame: %s"), gst_flow_get_name(flow));
	}
	report_.frame(ExecutionPath::zeroCopy());
	return {};
}

Status ToGst::run()
{
	Result<std::unique_ptr<Pipeline>> pipeline = Pipeline::launch(
		"appsrc name=avbridge_src ! " + options_.pipeline, options_.pipeline);
	if (!pipeline)
		return pipeline.error();
	pipeline_ = std::move(*pipeline);
	appsrc_ = GST_APP_SRC(pipeline_->element("avbridge_src"));
	g_object_set(appsrc_, "format", GST_FORMAT_TIME, "max-bytes", static_cast<guint64>(0),
		     nullptr);
	if (Status opened = openInput(options_, decoder_); !opened)
		return opened;
	streamRate_ = av_guess_frame_rate(decoder_.format,
					  decoder_.format->streams[decoder_.stream], nullptr);
	if (!options_.hwDevice.empty()) {
		Result<AVBufferRef *> device = createHwDevice(options_.hwDevice);
		if (!device)
			return device.error();
		filterDevice_.ref = *device;
	}
	if (Status played = pipeline_->play(); !played)
		return played;
	watchDemuxer(decoder_.format);
	Status status{};
	while (status && !done()) {
		const int err = av_read_frame(decoder_.format, decoder_.packet);
		if (err == AVERROR_EOF)
			break;
		if (err < 0)
			return avError(i18n::format(_("reading '%s' failed"),
						    options_.input.c_str()),
				       err);
		if (decoder_.packet->stream_index == decoder_.stream) {
			if (decoder_.packet->flags & AV_PKT_FLAG_CORRUPT)
				status = Error(ErrorCode::InvalidArgument, "input",
					       i18n::format(_("'%s' has a corrupt packet"),
							    options_.input.c_str()));
			else
				status = decode(decoder_.packet);
		}
		av_packet_unref(decoder_.packet);
		if (std::string damage = demuxerDamage(); status && !damage.empty())
			status = Error(ErrorCode::InvalidArgument, "input",
				       i18n::format(_("'%s' is damaged or truncated: %s"),
						    options_.input.c_str(), damage.c_str()));
	}
	if (status && !done())
		status = decode(nullptr);
	if (status && !done() && graph_.configured()) {
		{
			DeviceLocks locks(decoder_.device(), filterDevice_.ref);
			status = graph_.push(nullptr);
		}
		if (status)
			status = drainGraph();
	}
	if (std::string damage = demuxerDamage(); status && !damage.empty())
		status = Error(ErrorCode::InvalidArgument, "input",
			       i18n::format(_("'%s' is damaged or truncated: %s"),
					    options_.input.c_str(), damage.c_str()));
	if (status && report_.frames() == 0)
		status = Error(ErrorCode::InvalidArgument, "input",
			       i18n::format(_("'%s' gave no video frame"), options_.input.c_str()));
	if (status) {
		gst_app_src_end_of_stream(appsrc_);
		status = pipeline_->waitEos(std::chrono::seconds(options_.timeoutSeconds));
	}
	gst_clear_caps(&caps_);
	if (!status)
		return status;
	pipeline_->noteStats(report_);
	report_.finish(_("to-gst: pushed"));
	return {};
}

} // namespace

Status runToGst(const Options &options, Report &report)
{
	ToGst run(options, report);
	return run.run();
}

} // namespace gpuhandle::avbridge
