// FFmpeg helpers shared by gpuhandle-avbridge and the elements (see av_util.h).
#include "av_util.h"

#include <gpuhandle/ffmpeg/hw_device.h>

#include "gpuhandle_i18n.h"

#include <cstdio>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::av {

std::string avErrorText(int code)
{
	char text[AV_ERROR_MAX_STRING_SIZE] = {};
	if (av_strerror(code, text, sizeof text) < 0)
		std::snprintf(text, sizeof text, _("error %d"), code);
	return text;
}

Error avError(const std::string &what, int code)
{
	return Error(ErrorCode::Backend, "ffmpeg", what + ": " + avErrorText(code));
}

AvBufferOwner::~AvBufferOwner()
{
	av_buffer_unref(&ref);
}

Result<AVBufferRef *> createHwDevice(const std::string &spec)
{
	const size_t colon = spec.find(':');
	const std::string typeName = spec.substr(0, colon);
	const std::string device = colon == std::string::npos ? "" : spec.substr(colon + 1);
	const AVHWDeviceType type = av_hwdevice_find_type_by_name(typeName.c_str());
	if (type == AV_HWDEVICE_TYPE_NONE) {
		std::string known;
		for (AVHWDeviceType t = av_hwdevice_iterate_types(AV_HWDEVICE_TYPE_NONE);
		     t != AV_HWDEVICE_TYPE_NONE; t = av_hwdevice_iterate_types(t))
			known += (known.empty() ? "" : ", ") +
				 std::string(av_hwdevice_get_type_name(t));
		return Error(ErrorCode::InvalidArgument, "device",
			     i18n::format(_("unknown device type '%s' (this FFmpeg knows: %s)"),
					  typeName.c_str(),
					  known.empty() ? _("none") : known.c_str()));
	}
	AVBufferRef *ref = nullptr;
	const int err = av_hwdevice_ctx_create(
		&ref, type, device.empty() ? nullptr : device.c_str(), nullptr, 0);
	if (err < 0)
		return avError(device.empty() ? i18n::format(_("could not create a %s device"),
							     typeName.c_str())
					      : i18n::format(_("could not create a %s device '%s'"),
							     typeName.c_str(), device.c_str()),
			       err);
	return ref;
}

namespace {

AVPixelFormat hwFormatOf(AVHWDeviceType type)
{
	switch (type) {
	case AV_HWDEVICE_TYPE_VULKAN: return AV_PIX_FMT_VULKAN;
	case AV_HWDEVICE_TYPE_OPENCL: return AV_PIX_FMT_OPENCL;
	case AV_HWDEVICE_TYPE_CUDA: return AV_PIX_FMT_CUDA;
	case AV_HWDEVICE_TYPE_VAAPI: return AV_PIX_FMT_VAAPI;
	case AV_HWDEVICE_TYPE_DRM: return AV_PIX_FMT_DRM_PRIME;
	default: return AV_PIX_FMT_NONE;
	}
}

} // namespace

Result<AVBufferRef *> createHwFrames(AVBufferRef *device, int swFormat, int width, int height)
{
	const auto type = reinterpret_cast<const AVHWDeviceContext *>(device->data)->type;
	const AVPixelFormat hw = hwFormatOf(type);
	if (hw == AV_PIX_FMT_NONE)
		return Error(ErrorCode::NotSupported, "frames",
			     i18n::format(_("no frames of a %s device here"),
					  av_hwdevice_get_type_name(type)));
	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	if (!frames)
		return Error(ErrorCode::OutOfMemory, "frames", _("av_hwframe_ctx_alloc failed"));
	auto *context = reinterpret_cast<AVHWFramesContext *>(frames->data);
	context->format = hw;
	context->sw_format = static_cast<AVPixelFormat>(swFormat);
	context->width = width;
	context->height = height;
	if (type == AV_HWDEVICE_TYPE_VULKAN)
		if (Status planes = ffmpeg::requestVulkanPlaneImages(frames); !planes) {
			av_buffer_unref(&frames);
			return planes.error();
		}
	int err;
	{
		ffmpeg::HwDeviceLock lock(device); // initialising may submit (layout transitions)
		err = av_hwframe_ctx_init(frames);
	}
	if (err < 0) {
		av_buffer_unref(&frames);
		const char *name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(swFormat));
		return avError(i18n::format(_("could not make %s frames of %s"),
					    av_hwdevice_get_type_name(type), name ? name : "?"),
			       err);
	}
	return frames;
}

} // namespace gpuhandle::av
