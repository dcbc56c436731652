// The shared FFmpeg video decoder (see av_decoder.h).
#include "av_decoder.h"

#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_util.h"
#include "gpuhandle_i18n.h"

#include <mutex>
#include <unordered_set>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
}

namespace gpuhandle::av {

namespace {

// The decoders with a log sink: FFmpeg's callback looks a context's decoder up here (its
// `opaque`, which frame threads copy from the user's context), under the lock, so that a decoder
// being destroyed is never called.
std::mutex &sinksLock()
{
	static std::mutex lock;
	return lock;
}
std::unordered_set<const VideoDecoder *> &sinks()
{
	static std::unordered_set<const VideoDecoder *> set;
	return set;
}

} // namespace

void routeLog(void *object, int level, const char *format, va_list args)
{
	const AVClass *const *cls = static_cast<const AVClass *const *>(object);
	if (cls && *cls == avcodec_get_class()) {
		const auto *context = static_cast<const AVCodecContext *>(object);
		const auto *decoder = static_cast<const VideoDecoder *>(context->opaque);
		std::lock_guard<std::mutex> lock(sinksLock());
		if (decoder && sinks().count(decoder)) {
			if (level > av_log_get_level())
				return;
			char line[1024];
			int prefix = 0;
			va_list copy;
			va_copy(copy, args);
			av_log_format_line2(object, level, format, copy, line, sizeof line,
					    &prefix);
			va_end(copy);
			decoder->sink_(decoder->sinkUser_, level, line);
			return;
		}
	}
	av_log_default_callback(object, level, format, args);
}

VideoDecoder::~VideoDecoder()
{
	if (sink_) {
		std::lock_guard<std::mutex> lock(sinksLock());
		sinks().erase(this);
	}
	avcodec_free_context(&context_);
	av_buffer_unref(&device_);
}

void VideoDecoder::setLogSink(LogSink sink, void *user)
{
	static std::once_flag installed;
	std::call_once(installed, [] { av_log_set_callback(routeLog); });
	std::lock_guard<std::mutex> lock(sinksLock());
	sink_ = sink;
	sinkUser_ = user;
	if (context_)
		context_->opaque = this;
	sinks().insert(this);
}

Status VideoDecoder::create(const AVCodec *codec, const AVCodecParameters *parameters,
			    AVRational timeBase)
{
	codec_ = codec;
	context_ = avcodec_alloc_context3(codec);
	if (!context_)
		return Error(ErrorCode::OutOfMemory, "decoder", _("the decoder was not allocated"));
	if (parameters)
		if (const int err = avcodec_parameters_to_context(context_, parameters); err < 0)
			return avError(_("the decoder refused the stream's parameters"), err);
	context_->pkt_timebase = timeBase;
	context_->opaque = this; // pickFormat's and the log sink's way back
	return {};
}

// The hardware format when the decoder offers it, else (as ffmpeg falls back) the first software
// one, remembered for the caller to say so.
AVPixelFormat VideoDecoder::pickFormat(AVCodecContext *context, const AVPixelFormat *formats)
{
	auto *self = static_cast<VideoDecoder *>(context->opaque);
	for (const AVPixelFormat *p = formats; *p != AV_PIX_FMT_NONE; ++p)
		if (*p == self->hwFormat_)
			return *p;
	for (const AVPixelFormat *p = formats; *p != AV_PIX_FMT_NONE; ++p)
		if (!ffmpeg::isHwPixelFormat(*p)) {
			self->fallback_ = *p;
			return *p;
		}
	return AV_PIX_FMT_NONE;
}

Status VideoDecoder::useHardware(const std::string &type, const std::string &device)
{
	const AVHWDeviceType kind = av_hwdevice_find_type_by_name(type.c_str());
	if (kind == AV_HWDEVICE_TYPE_NONE)
		return createHwDevice(type).error(); // names the known types
	for (int i = 0;; ++i) {
		const AVCodecHWConfig *config = avcodec_get_hw_config(codec_, i);
		if (!config)
			return Error(
				ErrorCode::NotSupported, "hwaccel",
				i18n::format(_("the %s decoder of this FFmpeg cannot decode on %s"),
					     codec_->name, type.c_str()));
		if ((config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) &&
		    config->device_type == kind) {
			hwFormat_ = config->pix_fmt;
			break;
		}
	}
	Result<AVBufferRef *> created = createHwDevice(device.empty() ? type : type + ":" + device);
	if (!created)
		return created.error();
	device_ = *created;
	context_->hw_device_ctx = av_buffer_ref(device_);
	context_->opaque = this;
	context_->get_format = pickFormat;
	return {};
}

Status VideoDecoder::open()
{
	if (const int err = avcodec_open2(context_, codec_, nullptr); err < 0)
		return avError(i18n::format(_("could not open the %s decoder"), codec_->name), err);
	return {};
}

} // namespace gpuhandle::av
