// Example: a GStreamer pipeline's buffers into an FFmpeg filter graph and encoder, without a copy.
//
// What it shows: appsink buffers become AVFrames over the same memory (avFrameFromGstBuffer: the
// AVFrame holds the GstBuffer; zero-copy), go through hflip and FFV1 (rawvideo without FFV1)
// into the Matroska file given as argument (default appsink-to-ffmpeg.mkv).
// Why: this replaces the usual gst_video_frame_copy() into an av_frame_get_buffer() frame.
// What to look at: main()'s loop. Checked: the first filtered frame mirrors GStreamer's, and the
// file holds every frame.
#include <gpuhandle/ffmpeg/gst_buffer.h>

#include <algorithm>
#include <cstdio>
#include <iterator>

#include <gst/app/gstappsink.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
}

using namespace gpuhandle;

namespace {

constexpr int kWidth = 320, kHeight = 240, kFrames = 10;

// bufferSrc ! hflip ! bufferSink for the appsink's frames (size and format as in main()'s caps).
bool makeGraph(AVFilterGraph *graph, AVFilterContext **src, AVFilterContext **sink)
{
	const char *args = "video_size=320x240:pix_fmt=yuv420p:time_base=1/25:pixel_aspect=1/1";
	AVFilterContext *flip = nullptr;
	return avfilter_graph_create_filter(src, avfilter_get_by_name("buffer"), "in", args,
					    nullptr, graph) >= 0 &&
	       avfilter_graph_create_filter(&flip, avfilter_get_by_name("hflip"), "flip", nullptr,
					    nullptr, graph) >= 0 &&
	       avfilter_graph_create_filter(sink, avfilter_get_by_name("buffersink"), "out",
					    nullptr, nullptr, graph) >= 0 &&
	       avfilter_link(*src, 0, flip, 0) >= 0 && avfilter_link(flip, 0, *sink, 0) >= 0 &&
	       avfilter_graph_config(graph, nullptr) >= 0;
}

// Encodes `frame` (null: flush) and writes every packet the encoder has ready.
bool encode(AVCodecContext *enc, AVFormatContext *out, AVFrame *frame)
{
	AVPacket *packet = av_packet_alloc();
	int err = packet ? avcodec_send_frame(enc, frame) : AVERROR(ENOMEM);
	const bool sent = err >= 0;
	while (err >= 0 && (err = avcodec_receive_packet(enc, packet)) >= 0) {
		av_packet_rescale_ts(packet, enc->time_base, out->streams[0]->time_base);
		packet->stream_index = 0;
		err = av_interleaved_write_frame(out, packet);
	}
	av_packet_free(&packet);
	return sent && (err == AVERROR(EAGAIN) || err == AVERROR_EOF); // EAGAIN: all written
}

} // namespace

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	const char *path = argc > 1 ? argv[1] : "appsink-to-ffmpeg.mkv";
	GstElement *pipeline = gst_parse_launch(
		"videotestsrc num-buffers=10 pattern=ball ! "
		"video/x-raw,format=I420,width=320,height=240,framerate=25/1 ! appsink name=sink sync=false",
		nullptr);
	if (!pipeline) { // GStreamer without its base plugins (videotestsrc, appsink)
		std::printf("SKIP: no videotestsrc or appsink here\n");
		return 77;
	}
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");

	// FFmpeg's side: hflip, then FFV1 (lossless) or rawvideo, in Matroska.
	AVFilterGraph *graph = avfilter_graph_alloc();
	AVFilterContext *bufferSrc = nullptr, *bufferSink = nullptr;
	const AVCodec *codec = avcodec_find_encoder(AV_CODEC_ID_FFV1);
	codec = codec ? codec : avcodec_find_encoder(AV_CODEC_ID_RAWVIDEO);
	AVFormatContext *out = nullptr;
	avformat_alloc_output_context2(&out, nullptr, "matroska", path);
	AVCodecContext *enc = codec ? avcodec_alloc_context3(codec) : nullptr;
	AVFrame *filtered = av_frame_alloc();
	auto finish = [&](int status) { // frees everything above, on every way out
		gst_element_set_state(pipeline, GST_STATE_NULL);
		for (GstElement *element : { sink, pipeline })
			gst_object_unref(element);
		av_frame_free(&filtered);
		avfilter_graph_free(&graph);
		avcodec_free_context(&enc);
		if (out)
			avio_closep(&out->pb); // null when closed already, or never opened
		avformat_free_context(out);
		gst_deinit(); // optional; lets GStreamer's leaks tracer check that nothing is left
		return status;
	};
	if (!makeGraph(graph, &bufferSrc, &bufferSink) || !out || !enc || !filtered) {
		std::printf("SKIP: this FFmpeg lacks hflip, FFV1 and rawvideo, or Matroska\n");
		return finish(77);
	}
	enc->width = kWidth;
	enc->height = kHeight;
	enc->pix_fmt = AV_PIX_FMT_YUV420P;
	enc->time_base = AVRational{ 1, 25 };
	if (out->oformat->flags & AVFMT_GLOBALHEADER)
		enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if (!avformat_new_stream(out, nullptr) || avcodec_open2(enc, codec, nullptr) < 0 ||
	    avcodec_parameters_from_context(out->streams[0]->codecpar, enc) < 0 ||
	    avio_open(&out->pb, path, AVIO_FLAG_WRITE) < 0 ||
	    avformat_write_header(out, nullptr) < 0) {
		std::fprintf(stderr, "could not open %s for writing with %s\n", path, codec->name);
		return finish(1);
	}
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	int frames = 0;
	bool mirrored = false, encoded = true;
	while (GstSample *sample =
		       gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)) {
		// GstBuffer -> AVFrame over the same pages; the AVFrame holds the buffer.
		GstVideoInfo info;
		ExecutionPath how;
		Result<AVFrame *> frame =
			gst_video_info_from_caps(&info, gst_sample_get_caps(sample))
				? ffmpeg::avFrameFromGstBuffer(gst_sample_get_buffer(sample), info,
							       {}, &how)
				: Error(ErrorCode::InvalidArgument, "caps",
					"appsink's caps: not video");
		gst_sample_unref(sample);
		if (!frame) {
			std::fprintf(stderr, "%s\n", frame.error().message().c_str());
			break;
		}
		if (frames == 0)
			std::printf("GstBuffer -> AVFrame: %s\n",
				    executionPathKindName(how.kind()));
		(*frame)->pts = frames; // in the graph's 1/25 time base
		if (av_buffersrc_add_frame_flags(bufferSrc, *frame, AV_BUFFERSRC_FLAG_KEEP_REF) < 0)
			encoded = false;
		while (av_buffersink_get_frame(bufferSink, filtered) >= 0) {
			// Hflip: the first row read right to left.
			const uint8_t *row = (*frame)->data[0];
			if (frames == 0)
				mirrored = std::equal(
					row, row + kWidth,
					std::make_reverse_iterator(filtered->data[0] + kWidth));
			encoded = encode(enc, out, filtered) && encoded;
			av_frame_unref(filtered);
		}
		av_frame_free(&*frame); // FFmpeg's last reference: GStreamer's buffer is released
		++frames;
	}
	const bool flushed = encode(enc, out, nullptr) && av_write_trailer(out) >= 0;
	avio_closep(&out->pb);
	// Read the file back: one packet per frame.
	AVFormatContext *in = nullptr;
	AVPacket *packet = av_packet_alloc();
	int packets = 0;
	if (packet && avformat_open_input(&in, path, nullptr, nullptr) >= 0)
		for (; av_read_frame(in, packet) >= 0; ++packets)
			av_packet_unref(packet);
	av_packet_free(&packet);
	avformat_close_input(&in); // does nothing when the file did not open
	std::printf("frames from appsink: %d, first frame mirrored by hflip: %s\n"
		    "%s: %d %s packets\n",
		    frames, mirrored ? "yes" : "no", path, packets, codec->name);
	const bool ok = frames == kFrames && mirrored && encoded && flushed && packets == kFrames;
	std::printf("%s\n", ok ? "OK" : "FAILED");
	return finish(ok ? 0 : 1);
}
