// gpuhandleavdec's decoding: the decoder made for the sink caps (codec, codec data, hardware
// device), packets in, pictures out to their GstVideoCodecFrames, drain, flush, and FFmpeg's
// messages about the stream.
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_codec_caps.h"
#include "av_util.h"
#include "gstgpuhandleavdec.h"

#include <cstring>
#include <optional>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_avdec_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_avdec_debug

namespace gpuhandle::gst::avdec {

namespace {

// A receive that keeps failing is given up after this many errors in a row (each failure
// consumes a frame, so this bounds a decoder that never recovers).
constexpr int kMaxErrorsInARow = 64;

// The codec whose caps row `caps` meets.
const av::CodecCaps *rowOf(const GstCaps *caps)
{
	for (const av::CodecCaps &row : av::codecCaps()) {
		GstCaps *rowCaps = gst_caps_from_string(row.caps);
		const bool meets = rowCaps && gst_caps_can_intersect(caps, rowCaps);
		gst_clear_caps(&rowCaps);
		if (meets)
			return &row;
	}
	return nullptr;
}

// The stream's parameters as the caps give them: size, frame rate, pixel aspect ratio and
// codec_data (the decoder's extradata: avcC, hvcC, FFV1's configuration record, ...).
AVCodecParameters *parametersOf(const GstVideoCodecState *state, AVCodecID codec)
{
	AVCodecParameters *p = avcodec_parameters_alloc();
	if (!p)
		return nullptr;
	p->codec_type = AVMEDIA_TYPE_VIDEO;
	p->codec_id = codec;
	p->width = GST_VIDEO_INFO_WIDTH(&state->info);
	p->height = GST_VIDEO_INFO_HEIGHT(&state->info);
	if (GST_VIDEO_INFO_PAR_N(&state->info) > 0 && GST_VIDEO_INFO_PAR_D(&state->info) > 0)
		p->sample_aspect_ratio = { GST_VIDEO_INFO_PAR_N(&state->info),
					   GST_VIDEO_INFO_PAR_D(&state->info) };
	GstMapInfo map;
	if (state->codec_data && gst_buffer_map(state->codec_data, &map, GST_MAP_READ)) {
		p->extradata =
			static_cast<uint8_t *>(av_mallocz(map.size + AV_INPUT_BUFFER_PADDING_SIZE));
		if (p->extradata) {
			std::memcpy(p->extradata, map.data, map.size);
			p->extradata_size = static_cast<int>(map.size);
		}
		gst_buffer_unmap(state->codec_data, &map);
		if (!p->extradata)
			avcodec_parameters_free(&p);
	}
	return p;
}

// Which GstVideoCodecFrame a packet or picture belongs to: its system_frame_number + 1 (0: none),
// carried through the decoder's reordering by FFmpeg itself.
void tagPacket(AVCodecContext *context, AVPacket *packet, guint32 number)
{
#ifdef AV_CODEC_FLAG_COPY_OPAQUE // FFmpeg 6.0 and later
	(void)context;
	packet->opaque = reinterpret_cast<void *>(static_cast<uintptr_t>(number) + 1);
#else
	(void)packet;
	context->reordered_opaque = static_cast<int64_t>(number) + 1;
#endif
}

std::optional<guint32> numberOf(const AVFrame *picture)
{
#ifdef AV_CODEC_FLAG_COPY_OPAQUE
	const auto tag = reinterpret_cast<uintptr_t>(picture->opaque);
#else
	const auto tag = static_cast<uint64_t>(picture->reordered_opaque);
#endif
	if (tag == 0)
		return std::nullopt;
	return static_cast<guint32>(tag - 1);
}

// The decoder's delay in frames, as the latency query reports it: its reordering depth and the
// frames its frame threads hold.
void updateLatency(GstVideoDecoder *decoder, AvdecState &s)
{
	const AVCodecContext *c = s.decoder->context();
	int delay = c->has_b_frames;
	if (c->active_thread_type & FF_THREAD_FRAME)
		delay += c->thread_count - 1;
	const GstVideoInfo &in = s.input->info;
	if (GST_VIDEO_INFO_FPS_N(&in) <= 0 || GST_VIDEO_INFO_FPS_D(&in) <= 0)
		return;
	const GstClockTime latency =
		gst_util_uint64_scale_ceil(static_cast<guint64>(delay) * GST_SECOND,
					   static_cast<guint64>(GST_VIDEO_INFO_FPS_D(&in)),
					   static_cast<guint64>(GST_VIDEO_INFO_FPS_N(&in)));
	GstClockTime min = 0, max = 0;
	gst_video_decoder_get_latency(decoder, &min, &max);
	if (min != latency)
		gst_video_decoder_set_latency(decoder, latency, latency);
}

// A packet or frame the decoder refused, as GstVideoDecoder's own decoders report one: in the
// debug log, counted against max-errors (errors in a row; the default, -1, never ends the
// stream), and an element error only once there are more. No bus warning per error: a damaged
// stream would post one for nearly every frame. `stats` counts them all (decode-errors).
GstFlowReturn decodeError(GstVideoDecoder *decoder, AvdecState &s, int err)
{
	const unsigned long long count = ++s.decodeErrors;
	const std::string reason = av::avErrorText(err);
	return _gst_video_decoder_error(
		decoder, 1, GST_STREAM_ERROR, GST_STREAM_ERROR_DECODE,
		g_strdup(_("The stream could not be decoded: the decoder refused more frames in a "
			   "row than max-errors allows.")),
		g_strdup_printf("%s: %s (%llu refused in all)", s.decoder->context()->codec->name,
				reason.c_str(), count),
		__FILE__, GST_FUNCTION, __LINE__);
}

// FFmpeg's messages about this element's decoder: errors counted (the last kept for the
// warning), everything in the element's debug log instead of stderr.
void logSink(void *user, int level, const char *line)
{
	auto *decoder = static_cast<GstVideoDecoder *>(user);
	AvdecState &s = stateOf(decoder);
	std::string text(line);
	while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
		text.pop_back();
	if (level <= AV_LOG_ERROR) {
		std::lock_guard<std::mutex> lock(s.logMutex);
		s.lastStreamError = text;
		++s.streamErrors;
	}
	GST_CAT_LEVEL_LOG(gst_gpu_handle_avdec_debug,
			  level <= AV_LOG_ERROR     ? GST_LEVEL_WARNING
			  : level <= AV_LOG_WARNING ? GST_LEVEL_INFO
						    : GST_LEVEL_DEBUG,
			  decoder, "FFmpeg: %s", text.c_str());
}

// FFmpeg conceals the errors it finds in a stream and carries on, and so does the element: one
// warning on the bus when the first are reported (as a decoder that conceals says nothing of
// them, a warning per frame would bury the application's bus), then the debug log and `stats`
// (stream-errors) only.
void warnStreamErrors(GstVideoDecoder *decoder, AvdecState &s)
{
	const uint64_t count = s.streamErrors.load();
	if (count == s.warnedStreamErrors)
		return;
	const bool first = !s.toldStreamErrors;
	s.toldStreamErrors = true;
	s.warnedStreamErrors = count;
	std::string last;
	{
		std::lock_guard<std::mutex> lock(s.logMutex);
		last = s.lastStreamError;
	}
	if (!first) {
		GST_WARNING_OBJECT(decoder,
				   "FFmpeg reported %llu stream errors so far; the last: %s",
				   static_cast<unsigned long long>(count), last.c_str());
		return;
	}
	GST_ELEMENT_WARNING(decoder, STREAM, DECODE,
			    (_("The stream has errors; FFmpeg conceals them and decoding goes on "
			       "(the element's stats count them).")),
			    ("FFmpeg: %s", last.c_str()));
}

// Says once that the decoder did not offer the hardware device's frames (ffmpeg's fallback), or
// fails when hwaccel-fallback is error. FFmpeg's errors before the first frame were its hardware
// set-up's (FFmpeg 7.1 offers Vulkan decoding, then fails to set it up on a device without video
// queues): they go with this message, not with the stream's.
bool checkFallback(GstVideoDecoder *decoder, AvdecState &s)
{
	const AVPixelFormat fallback = s.decoder->fallbackFormat();
	if (fallback == AV_PIX_FMT_NONE || s.toldFallback)
		return true;
	s.toldFallback = true;
	std::string setup;
	if (s.frames == 0) {
		std::lock_guard<std::mutex> lock(s.logMutex);
		setup = s.lastStreamError;
		s.lastStreamError.clear();
		s.streamErrors = 0;
	}
	const char *hw = av_get_pix_fmt_name(s.decoder->hwFormat());
	const char *sw = av_get_pix_fmt_name(fallback);
	hw = hw ? hw : "hardware";
	sw = sw ? sw : "software";
	if (s.streamFallback == Fallback::Error) {
		GST_ELEMENT_ERROR(decoder, STREAM, DECODE,
				  (_("The decoder does not offer %s frames for this stream."), hw),
				  ("it offered %s (hwaccel-fallback=error)%s%s", sw,
				   setup.empty() ? "" : "; FFmpeg: ", setup.c_str()));
		return false;
	}
	GST_ELEMENT_WARNING(decoder, STREAM, DECODE,
			    (_("The decoder does not offer %s frames for this stream; decoding "
			       "to %s in software."),
			     hw, sw),
			    ("%s%s", setup.empty() ? "" : "FFmpeg: ", setup.c_str()));
	return true;
}

GstFlowReturn receiveFrames(GstVideoDecoder *decoder, AvdecState &s)
{
	AVCodecContext *context = s.decoder->context();
	int errorsInARow = 0;
	for (;;) {
		int err;
		{
			ffmpeg::HwDeviceLock lock(s.decoder->device());
			err = avcodec_receive_frame(context, s.frame);
		}
		if (err == AVERROR(EAGAIN) || err == AVERROR_EOF)
			return GST_FLOW_OK;
		if (err < 0) {
			if (GstFlowReturn flow = decodeError(decoder, s, err); flow != GST_FLOW_OK)
				return flow;
			if (++errorsInARow >= kMaxErrorsInARow)
				return GST_FLOW_OK;
			continue;
		}
		errorsInARow = 0;
		if (!checkFallback(decoder, s)) {
			av_frame_unref(s.frame);
			return GST_FLOW_ERROR;
		}
		updateLatency(decoder, s);
		const std::optional<guint32> number = numberOf(s.frame);
		GstVideoCodecFrame *frame =
			number ? gst_video_decoder_get_frame(decoder, static_cast<int>(*number))
			       : nullptr;
		if (!frame)
			frame = gst_video_decoder_get_oldest_frame(decoder);
		if (!frame) { // a picture with no input left to carry it
			GST_DEBUG_OBJECT(decoder, "a picture without a frame: dropped");
			av_frame_unref(s.frame);
			continue;
		}
		const GstFlowReturn flow = finishWithFrame(decoder, s, frame, s.frame);
		av_frame_unref(s.frame);
		if (flow != GST_FLOW_OK)
			return flow;
	}
}

// Sends `packet` (null: the end of the stream) and takes every picture it gives.
GstFlowReturn decodePacket(GstVideoDecoder *decoder, AvdecState &s, const AVPacket *packet,
			   std::optional<guint32> number)
{
	AVCodecContext *context = s.decoder->context();
	for (;;) {
		int err;
		{
			ffmpeg::HwDeviceLock lock(s.decoder->device());
			err = avcodec_send_packet(context, packet);
		}
		if (err == AVERROR(EAGAIN)) { // its output is full: take pictures, then send again
			if (GstFlowReturn flow = receiveFrames(decoder, s); flow != GST_FLOW_OK)
				return flow;
			continue;
		}
		if (err < 0 && err != AVERROR_EOF) {
			if (number)
				if (GstVideoCodecFrame *refused = gst_video_decoder_get_frame(
					    decoder, static_cast<int>(*number)))
					gst_video_decoder_release_frame(decoder, refused);
			if (GstFlowReturn flow = decodeError(decoder, s, err); flow != GST_FLOW_OK)
				return flow;
		}
		break;
	}
	const GstFlowReturn flow = receiveFrames(decoder, s);
	warnStreamErrors(decoder, s);
	return flow;
}

// Every frame the decoder holds, out; the decoder then takes a new stream.
GstFlowReturn drainDecoder(GstVideoDecoder *decoder, AvdecState &s)
{
	if (!s.decoder)
		return GST_FLOW_OK;
	const GstFlowReturn flow = decodePacket(decoder, s, nullptr, std::nullopt);
	ffmpeg::HwDeviceLock lock(s.decoder->device());
	avcodec_flush_buffers(s.decoder->context());
	return flow;
}

// The hardware device, as hwaccel and hw-device ask; false (the element error posted) when the
// device cannot be had and hwaccel-fallback is error, or the type is unknown.
bool setUpHardware(GstVideoDecoder *decoder, AvdecState &s, av::VideoDecoder &d,
		   const std::string &hwaccel, const std::string &device, Fallback fallback)
{
	if (hwaccel.empty() || hwaccel == "none")
		return true;
	const Status hw = d.useHardware(hwaccel, device);
	if (hw)
		return true;
	if (hw.error().code() == ErrorCode::InvalidArgument || fallback == Fallback::Error) {
		GPUHANDLE_ELEMENT_ERROR(decoder, RESOURCE, NOT_FOUND,
					(_("Could not decode on %s: %s"), hwaccel.c_str(),
					 hw.error().message().c_str()),
					hw.error());
		return false;
	}
	GST_ELEMENT_WARNING(decoder, RESOURCE, NOT_FOUND,
			    (_("Could not decode on %s: %s; decoding in software."),
			     hwaccel.c_str(), hw.error().message().c_str()),
			    (nullptr));
	(void)s;
	return true;
}

} // namespace

gboolean setFormat(GstVideoDecoder *decoder, GstVideoCodecState *state)
{
	AvdecState &s = stateOf(decoder);
	if (s.decoder) { // new caps mid-stream: the old decoder's frames first
		(void)drainDecoder(decoder, s);
		s.decoder.reset();
	}
	g_clear_pointer(&s.input, gst_video_codec_state_unref);
	s.input = gst_video_codec_state_ref(state);
	s.negotiated = false;
	s.toldFallback = false;

	std::string name, hwaccel, device;
	Fallback fallback;
	int threads;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		name = s.decoderName;
		hwaccel = s.hwaccel;
		device = s.hwDevice;
		fallback = s.fallback;
		threads = s.threads;
	}
	s.streamFallback = fallback;
	const av::CodecCaps *row = rowOf(state->caps);
	const AVCodec *codec = nullptr;
	if (!name.empty()) {
		codec = avcodec_find_decoder_by_name(name.c_str());
		if (!codec || codec->type != AVMEDIA_TYPE_VIDEO) {
			GST_ELEMENT_ERROR(decoder, CORE, MISSING_PLUGIN,
					  (_("This FFmpeg has no video decoder named '%s'."),
					   name.c_str()),
					  (nullptr));
			return FALSE;
		}
		if (row && codec->id != row->codec) {
			GST_ELEMENT_ERROR(decoder, CORE, NEGOTIATION,
					  (_("The decoder '%s' does not decode %s."), name.c_str(),
					   avcodec_get_name(row->codec)),
					  ("caps %" GST_PTR_FORMAT,
					   static_cast<void *>(state->caps)));
			return FALSE;
		}
	} else if (row) {
		codec = avcodec_find_decoder(row->codec);
	}
	if (!codec) {
		GST_ELEMENT_ERROR(decoder, CORE, MISSING_PLUGIN,
				  (_("This FFmpeg has no decoder for %s."),
				   row ? avcodec_get_name(row->codec) : "?"),
				  ("caps %" GST_PTR_FORMAT, static_cast<void *>(state->caps)));
		return FALSE;
	}

	auto d = std::make_unique<av::VideoDecoder>();
	AVCodecParameters *parameters = parametersOf(state, codec->id);
	Status created = parameters ? d->create(codec, parameters, AVRational{ 1, GST_SECOND })
				    : Status(Error(ErrorCode::OutOfMemory, "decoder",
						   _("the decoder was not allocated")));
	avcodec_parameters_free(&parameters);
	if (!created) {
		GPUHANDLE_ELEMENT_ERROR(decoder, LIBRARY, INIT,
					(_("Could not set up the %s decoder: %s"), codec->name,
					 created.error().message().c_str()),
					created.error());
		return FALSE;
	}
	AVCodecContext *context = d->context();
	context->thread_count = threads;
	if (GST_VIDEO_INFO_FPS_N(&state->info) > 0 && GST_VIDEO_INFO_FPS_D(&state->info) > 0)
		context->framerate = { GST_VIDEO_INFO_FPS_N(&state->info),
				       GST_VIDEO_INFO_FPS_D(&state->info) };
#ifdef AV_CODEC_FLAG_COPY_OPAQUE
	context->flags |= AV_CODEC_FLAG_COPY_OPAQUE;
#endif
	if (!setUpHardware(decoder, s, *d, hwaccel, device, fallback))
		return FALSE;
	d->setLogSink(logSink, decoder);
	if (Status opened = d->open(); !opened) {
		GPUHANDLE_ELEMENT_ERROR(decoder, LIBRARY, INIT,
					(_("Could not set up the %s decoder: %s"), codec->name,
					 opened.error().message().c_str()),
					opened.error());
		return FALSE;
	}
	GST_INFO_OBJECT(decoder, "decoding %s with %s (%d threads, hwaccel %s)",
			avcodec_get_name(codec->id), codec->name, context->thread_count,
			d->device() ? hwaccel.c_str() : "none");
	s.decoder = std::move(d);
	updateLatency(decoder, s);
	return TRUE;
}

GstFlowReturn handleFrame(GstVideoDecoder *decoder, GstVideoCodecFrame *frame)
{
	AvdecState &s = stateOf(decoder);
	if (!s.decoder) {
		gst_video_decoder_release_frame(decoder, frame);
		return GST_FLOW_NOT_NEGOTIATED;
	}
	GstMapInfo map;
	if (!gst_buffer_map(frame->input_buffer, &map, GST_MAP_READ)) {
		gst_video_decoder_release_frame(decoder, frame);
		GST_ELEMENT_ERROR(decoder, STREAM, DECODE,
				  (_("An input buffer could not be read.")), (nullptr));
		return GST_FLOW_ERROR;
	}
	av_packet_unref(s.packet);
	const int err = map.size <= INT_MAX ? av_new_packet(s.packet, static_cast<int>(map.size))
					    : AVERROR(EINVAL);
	if (err >= 0 && map.size > 0)
		std::memcpy(s.packet->data, map.data, map.size);
	gst_buffer_unmap(frame->input_buffer, &map);
	if (err < 0) {
		gst_video_decoder_release_frame(decoder, frame);
		GST_ELEMENT_ERROR(decoder, RESOURCE, NO_SPACE_LEFT,
				  (_("An input buffer could not be copied for the decoder.")),
				  (nullptr));
		return GST_FLOW_ERROR;
	}
	const GstBuffer *in = frame->input_buffer;
	s.packet->pts = GST_BUFFER_PTS_IS_VALID(in) ? static_cast<int64_t>(GST_BUFFER_PTS(in))
						    : AV_NOPTS_VALUE;
	s.packet->dts = GST_BUFFER_DTS_IS_VALID(in) ? static_cast<int64_t>(GST_BUFFER_DTS(in))
						    : AV_NOPTS_VALUE;
	if (GST_BUFFER_DURATION_IS_VALID(in))
		s.packet->duration = static_cast<int64_t>(GST_BUFFER_DURATION(in));
	if (!GST_BUFFER_FLAG_IS_SET(in, GST_BUFFER_FLAG_DELTA_UNIT))
		s.packet->flags |= AV_PKT_FLAG_KEY;
	const guint32 number = frame->system_frame_number;
	tagPacket(s.decoder->context(), s.packet, number);
	gst_video_codec_frame_unref(frame); // GstVideoDecoder keeps it until a picture finishes it
	return decodePacket(decoder, s, s.packet, number);
}

gboolean flush(GstVideoDecoder *decoder)
{
	AvdecState &s = stateOf(decoder);
	if (s.decoder) {
		ffmpeg::HwDeviceLock lock(s.decoder->device());
		avcodec_flush_buffers(s.decoder->context());
	}
	return TRUE;
}

GstFlowReturn drain(GstVideoDecoder *decoder)
{
	return drainDecoder(decoder, stateOf(decoder));
}

gboolean start(GstVideoDecoder *decoder)
{
	AvdecState &s = stateOf(decoder);
	s.packet = av_packet_alloc();
	s.frame = av_frame_alloc();
	s.frames = 0;
	s.gpuHandleFrames = 0;
	s.copies = 0;
	s.decodeErrors = 0;
	s.corruptFrames = 0;
	s.streamErrors = 0;
	s.warnedStreamErrors = 0;
	s.toldStreamErrors = false;
	s.out.stats.reset();
	if (!s.packet || !s.frame) {
		GST_ELEMENT_ERROR(decoder, RESOURCE, NO_SPACE_LEFT,
				  (_("The decoder was not allocated.")), (nullptr));
		return FALSE;
	}
	return TRUE;
}

gboolean stop(GstVideoDecoder *decoder)
{
	AvdecState &s = stateOf(decoder);
	s.decoder.reset();
	av_packet_free(&s.packet);
	av_frame_free(&s.frame);
	g_clear_pointer(&s.input, gst_video_codec_state_unref);
	s.negotiated = false;
	s.device = false;
	download::release(s.out);
	return TRUE;
}

} // namespace gpuhandle::gst::avdec
