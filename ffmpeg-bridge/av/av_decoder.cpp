// The shared FFmpeg video decoder (see av_decoder.h).
#include "av_decoder.h"

#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_util.h"
#include "gpuhandle_i18n.h"

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
}

namespace gpuhandle::av {

VideoDecoder::~VideoDecoder()
{
	avcodec_free_context(&context_);
	av_buffer_unref(&device_);
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

Status VideoDecoder::useHardware(const std::string &type)
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
	Result<AVBufferRef *> device = createHwDevice(type);
	if (!device)
		return device.error();
	device_ = *device;
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
