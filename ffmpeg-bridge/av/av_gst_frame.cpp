// AVFrames as memory:GpuHandle GstBuffers (see av_gst_frame.h).
#include "av_gst_frame.h"

#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_util.h"
#include "gpuhandle_i18n.h"

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
}

namespace gpuhandle::av {

namespace {

// Frees a frame at the end of a scope.
struct FrameOwner {
	AVFrame *frame = nullptr;
	~FrameOwner() { av_frame_free(&frame); }
};

// A software copy of a hardware frame (FFmpeg's own download), with its properties.
Result<AVFrame *> downloaded(const AVFrame *frame)
{
	AVFrame *copy = av_frame_alloc();
	if (!copy)
		return Error(ErrorCode::OutOfMemory, "frame", _("a frame was not allocated"));
	int err;
	{
		ffmpeg::HwDeviceLock lock(
			reinterpret_cast<const AVHWFramesContext *>(frame->hw_frames_ctx->data)
				->device_ref);
		err = av_hwframe_transfer_data(copy, frame, 0);
	}
	if (err >= 0)
		err = av_frame_copy_props(copy, frame);
	if (err < 0) {
		av_frame_free(&copy);
		return avError(i18n::format(_("a %s frame could not be copied to system memory"),
					    ffmpeg::avPixelFormatName(frame->format).c_str()),
			       err);
	}
	return copy;
}

} // namespace

Result<GstFrame> gstFrameOf(AVFrame *frame, const GstFrameOptions &options)
{
	GstFrame out{};
	FrameOwner software{};
	if (options.systemMemory && frame->hw_frames_ctx) {
		Result<AVFrame *> copy = downloaded(frame);
		if (!copy)
			return copy.error();
		software.frame = *copy;
		out.hardware = true;
		out.copied = true;
		frame = software.frame;
	}
	Result<Frame> bridged = ffmpeg::frameFromAVFrame(frame, &out.properties);
	if (!bridged)
		return Error(bridged.error().code(), "frame",
			     i18n::format(_("a %s frame could not become a gpuhandle frame: %s"),
					  ffmpeg::avPixelFormatName(frame->format).c_str(),
					  bridged.error().message().c_str()));
	BackendRef backend{};
	if (frame->hw_frames_ctx) {
		out.hardware = true;
		const auto *frames =
			reinterpret_cast<const AVHWFramesContext *>(frame->hw_frames_ctx->data);
		Result<BackendRef> opened = ffmpeg::backendForHwDevice(frames->device_ref);
		if (!opened)
			return Error(
				opened.error().code(), "backend",
				i18n::format(_("no gpuhandle backend for the frame's device: %s"),
					     opened.error().message().c_str()));
		backend = *opened;
		if (options.waitVulkanFrames && frames->device_ctx->type == AV_HWDEVICE_TYPE_VULKAN)
			if (Status waited = bridged->acquire().wait(kDefaultWaitTimeout); !waited)
				return waited.error();
	}
	Result<GstVideoInfo> info = gst::videoInfoOf(*bridged);
	if (!info)
		return info.error();
	out.info = *info;
	if (options.systemMemory) {
		Result<GstBuffer *> buffer = gst::systemBufferFromFrame(*bridged);
		if (!buffer)
			return buffer.error();
		out.buffer = *buffer;
		return out;
	}
	out.buffer = gst::bufferFromFrame(*bridged, backend, true);
	if (!out.buffer)
		return Error(ErrorCode::NotSupported, "frame",
			     i18n::format(_("a %s frame could not be wrapped as a GstBuffer"),
					  ffmpeg::avPixelFormatName(frame->format).c_str()));
	return out;
}

bool peerNamesGpuHandle(GstPad *srcpad)
{
	GstCaps *peer = gst_pad_peer_query_caps(srcpad, nullptr);
	if (!peer)
		return false;
	bool names = false;
	for (guint i = 0; i < gst_caps_get_size(peer) && !names; ++i) {
		const GstCapsFeatures *features = gst_caps_get_features(peer, i);
		names = features && !gst_caps_features_is_any(features) &&
			gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
	}
	gst_caps_unref(peer);
	return names;
}

void setGpuHandleFeature(GstCaps *caps, bool gpuHandle)
{
	gst_caps_set_features(caps, 0,
			      gpuHandle ? gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE,
								nullptr)
					: gst_caps_features_new_empty());
}

} // namespace gpuhandle::av
