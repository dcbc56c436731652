// gpuhandle-demo's clip: lavfi testsrc2 -> FFV1 packets -> FFV1 decoder -> FFmpeg Vulkan frames.
#include "demo_source.h"

#include <gpuhandle/ffmpeg/hw_device.h>

#include "gpuhandle_i18n.h"

extern "C" {
#include <libavfilter/buffersink.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/mem.h>
}

namespace gpuhandle::demo {

namespace {

constexpr int kFrameRate = 25;

std::string avErrorText(int code)
{
	char text[AV_ERROR_MAX_STRING_SIZE] = {};
	if (av_strerror(code, text, sizeof text) < 0)
		return i18n::format(_("error %d"), code);
	return text;
}

} // namespace

Error avError(const std::string &what, int code)
{
	return Error(ErrorCode::Backend, "ffmpeg", what + ": " + avErrorText(code));
}

Clip::~Clip()
{
	av_frame_free(&generated_);
	av_packet_free(&packet_);
	avcodec_free_context(&decoder_);
	avcodec_free_context(&encoder_);
	avfilter_graph_free(&graph_);
	av_buffer_unref(&frames_);
	av_buffer_unref(&device_);
}

Status Clip::openGraph(int width, int height)
{
	graph_ = avfilter_graph_alloc();
	if (!graph_)
		return Error(ErrorCode::OutOfMemory, "filter", _("avfilter_graph_alloc failed"));
	if (!avfilter_get_by_name("testsrc2"))
		return Error(ErrorCode::NotSupported, "filter",
			     _("this FFmpeg's libavfilter has no testsrc2 source"));
	int err = avfilter_graph_create_filter(&sink_, avfilter_get_by_name("buffersink"), "out",
					       nullptr, nullptr, graph_);
	if (err < 0)
		return avError(_("the clip's buffersink was not made"), err);
	AVFilterInOut *inputs = avfilter_inout_alloc();
	if (!inputs)
		return Error(ErrorCode::OutOfMemory, "filter", _("avfilter_inout_alloc failed"));
	inputs->name = av_strdup("out");
	inputs->filter_ctx = sink_;
	// A source-only graph: its one open output feeds the sink.
	const std::string text = "testsrc2=size=" + std::to_string(width) + "x" +
				 std::to_string(height) + ":rate=" + std::to_string(kFrameRate) +
				 ",format=yuv420p";
	err = avfilter_graph_parse_ptr(graph_, text.c_str(), &inputs, nullptr, nullptr);
	avfilter_inout_free(&inputs);
	if (err < 0)
		return avError(i18n::format(_("the clip's filter graph '%s' does not parse"),
					    text.c_str()),
			       err);
	err = avfilter_graph_config(graph_, nullptr);
	if (err < 0)
		return avError(i18n::format(_("the clip's filter graph '%s' was refused"),
					    text.c_str()),
			       err);
	return {};
}

Status Clip::openCodecs(int width, int height)
{
	const AVCodec *encoder = avcodec_find_encoder(AV_CODEC_ID_FFV1);
	const AVCodec *decoder = avcodec_find_decoder(AV_CODEC_ID_FFV1);
	if (!encoder || !decoder)
		return Error(ErrorCode::NotSupported, "codec",
			     _("this FFmpeg's libavcodec has no FFV1 encoder or decoder"));
	encoder_ = avcodec_alloc_context3(encoder);
	decoder_ = avcodec_alloc_context3(decoder);
	packet_ = av_packet_alloc();
	generated_ = av_frame_alloc();
	if (!encoder_ || !decoder_ || !packet_ || !generated_)
		return Error(ErrorCode::OutOfMemory, "codec", _("the codecs were not allocated"));
	encoder_->width = width;
	encoder_->height = height;
	encoder_->pix_fmt = AV_PIX_FMT_YUV420P;
	encoder_->time_base = AVRational{ 1, kFrameRate };
	encoder_->framerate = AVRational{ kFrameRate, 1 };
	encoder_->thread_count = 1; // frame threads would hold frames back; the clip is small
	int err = avcodec_open2(encoder_, encoder, nullptr);
	if (err < 0)
		return avError(_("could not open the FFV1 encoder"), err);
	// The decoder learns the stream from the encoder's parameters, as a demuxer would say them.
	AVCodecParameters *parameters = avcodec_parameters_alloc();
	if (!parameters)
		return Error(ErrorCode::OutOfMemory, "codec", _("avcodec_parameters_alloc failed"));
	err = avcodec_parameters_from_context(parameters, encoder_);
	if (err >= 0)
		err = avcodec_parameters_to_context(decoder_, parameters);
	avcodec_parameters_free(&parameters);
	if (err < 0)
		return avError(_("the FFV1 decoder refused the encoder's parameters"), err);
	decoder_->pkt_timebase = encoder_->time_base;
	decoder_->thread_count = 1;
	err = avcodec_open2(decoder_, decoder, nullptr);
	if (err < 0)
		return avError(_("could not open the FFV1 decoder"), err);
	return {};
}

void Clip::openVulkan(int width, int height)
{
	int err = av_hwdevice_ctx_create(&device_, AV_HWDEVICE_TYPE_VULKAN, nullptr, nullptr, 0);
	if (err < 0) {
		stats_.vulkanProblem = i18n::format(
			_("FFmpeg could not create a Vulkan device: %s"), avErrorText(err).c_str());
		return;
	}
	frames_ = av_hwframe_ctx_alloc(device_);
	if (!frames_) {
		stats_.vulkanProblem = _("av_hwframe_ctx_alloc failed");
		av_buffer_unref(&device_);
		return;
	}
	auto *frames = reinterpret_cast<AVHWFramesContext *>(frames_->data);
	frames->format = AV_PIX_FMT_VULKAN;
	frames->sw_format = AV_PIX_FMT_YUV420P;
	frames->width = width;
	frames->height = height;
	// One image per plane (FFmpeg 6.1+ makes one multi-planar image otherwise): the demo
	// exports each plane's memory to GStreamer's Vulkan device, which needs that shape.
	if (Status planes = ffmpeg::requestVulkanPlaneImages(frames_); !planes) {
		stats_.vulkanProblem = planes.error().message();
		av_buffer_unref(&frames_);
		av_buffer_unref(&device_);
		return;
	}
	err = av_hwframe_ctx_init(frames_);
	if (err < 0) {
		stats_.vulkanProblem =
			i18n::format(_("FFmpeg's Vulkan device has no yuv420p frames: %s"),
				     avErrorText(err).c_str());
		av_buffer_unref(&frames_);
		av_buffer_unref(&device_);
		return;
	}
	if (Result<BackendRef> backend = ffmpeg::backendForHwDevice(device_); backend)
		stats_.vulkanDevice = (*backend)->deviceInfo().name;
	else
		stats_.vulkanDevice =
			i18n::format(_("(unnamed: %s)"), backend.error().message().c_str());
}

Status Clip::open(int width, int height, bool useVulkan)
{
	if (Status graph = openGraph(width, height); !graph)
		return graph;
	if (Status codecs = openCodecs(width, height); !codecs)
		return codecs;
	if (useVulkan)
		openVulkan(width, height);
	else
		stats_.vulkanProblem = "--no-vulkan";
	return {};
}

// The next decoded frame: feeds the encoder from the graph and the decoder from the encoder
// until the decoder gives one (FFV1 is intra-only: one in, one out, but the loop does not rely
// on it).
Result<AVFrame *> Clip::decoded()
{
	AVFrame *out = av_frame_alloc();
	if (!out)
		return Error(ErrorCode::OutOfMemory, "codec", _("av_frame_alloc failed"));
	for (;;) {
		int err = avcodec_receive_frame(decoder_, out);
		if (err >= 0) {
			++stats_.decoded;
			return out;
		}
		if (err == AVERROR_EOF) {
			av_frame_free(&out);
			return static_cast<AVFrame *>(nullptr);
		}
		if (err != AVERROR(EAGAIN)) {
			av_frame_free(&out);
			return avError(_("the FFV1 decoder failed"), err);
		}
		err = avcodec_receive_packet(encoder_, packet_);
		if (err >= 0) {
			++stats_.encoded;
			err = avcodec_send_packet(decoder_, packet_);
			av_packet_unref(packet_);
			if (err < 0) {
				av_frame_free(&out);
				return avError(_("the FFV1 decoder refused a packet"), err);
			}
			continue;
		}
		if (err == AVERROR_EOF) {
			avcodec_send_packet(decoder_, nullptr); // drain the decoder
			continue;
		}
		if (err != AVERROR(EAGAIN)) {
			av_frame_free(&out);
			return avError(_("the FFV1 encoder failed"), err);
		}
		// The encoder wants a frame: the graph's next (testsrc2 never ends; the caller
		// stops asking).
		err = graphEnded_ ? AVERROR_EOF : av_buffersink_get_frame(sink_, generated_);
		if (err == AVERROR_EOF) {
			graphEnded_ = true;
			if (!encoderDrained_) {
				encoderDrained_ = true;
				avcodec_send_frame(encoder_, nullptr);
			}
			continue;
		}
		if (err < 0) {
			av_frame_free(&out);
			return avError(_("the clip's filter graph failed"), err);
		}
		++stats_.generated;
		generated_->pict_type = AV_PICTURE_TYPE_NONE;
		err = avcodec_send_frame(encoder_, generated_);
		av_frame_unref(generated_);
		if (err < 0) {
			av_frame_free(&out);
			return avError(_("the FFV1 encoder refused a frame"), err);
		}
	}
}

Result<AVFrame *> Clip::upload(AVFrame *software)
{
	AVFrame *hw = av_frame_alloc();
	if (!hw)
		return Error(ErrorCode::OutOfMemory, "upload", _("av_frame_alloc failed"));
	int err = av_hwframe_get_buffer(frames_, hw, 0);
	if (err < 0) {
		av_frame_free(&hw);
		return avError(_("no frame from FFmpeg's Vulkan frames pool"), err);
	}
	const auto start = std::chrono::steady_clock::now();
	err = av_hwframe_transfer_data(hw, software, 0);
	stats_.uploadTime += std::chrono::steady_clock::now() - start;
	if (err < 0) {
		av_frame_free(&hw);
		return avError(_("FFmpeg could not upload a frame to its Vulkan device"), err);
	}
	av_frame_copy_props(hw, software);
	++stats_.uploaded;
	return hw;
}

Result<AVFrame *> Clip::next()
{
	Result<AVFrame *> frame = decoded();
	if (!frame || !*frame || !frames_)
		return frame;
	AVFrame *software = *frame;
	Result<AVFrame *> hw = upload(software);
	// FFmpeg 5.1 may upload straight from the host memory it maps, without waiting: the
	// caller waits for the frame's acquire point (which follows the upload) before it asks for
	// the next frame, so the decoder cannot reuse `software`'s buffer before the GPU read it.
	av_frame_free(&software);
	return hw;
}

} // namespace gpuhandle::demo
