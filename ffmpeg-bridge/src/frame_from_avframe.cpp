// AVFrame -> Frame: software frames as CpuPlanes over data[]/linesize[], anchored by their
// buffers; hardware frames checked here and described by hw_*.cpp.
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "hw_frames.h"

#include <array>
#include <cctype>
#include <climits>
#include <cstdio>
#include <memory>
#include <vector>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
#include <libavutil/version.h>
}

namespace gpuhandle::ffmpeg {

namespace {

Status checkCrop(const FrameProperties &p, int width, int height)
{
	if (p.cropLeft + p.cropRight >= static_cast<uint64_t>(width) ||
	    p.cropTop + p.cropBottom >= static_cast<uint64_t>(height) || p.cropLeft > INT_MAX ||
	    p.cropRight > INT_MAX || p.cropTop > INT_MAX || p.cropBottom > INT_MAX)
		return Error::format(
			ErrorCode::OutOfRange, "crop",
			"The crop (left %llu, right %llu, top %llu, bottom %llu) leaves "
			"nothing of a %dx%d frame.",
			static_cast<unsigned long long>(p.cropLeft),
			static_cast<unsigned long long>(p.cropRight),
			static_cast<unsigned long long>(p.cropTop),
			static_cast<unsigned long long>(p.cropBottom), width, height);
	return {};
}

} // namespace

FrameProperties framePropertiesOf(const AVFrame *frame) noexcept
{
	FrameProperties p;
	if (!frame)
		return p;
	p.pts = frame->pts;
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
	p.duration = frame->duration;
#else
	p.duration = frame->pkt_duration;
#endif
	p.timeBase = frame->time_base;
	p.sampleAspectRatio = frame->sample_aspect_ratio;
	p.cropTop = frame->crop_top;
	p.cropBottom = frame->crop_bottom;
	p.cropLeft = frame->crop_left;
	p.cropRight = frame->crop_right;
	return p;
}

Status applyFrameProperties(AVFrame *frame, const FrameProperties &properties)
{
	if (!frame)
		return Error::format(ErrorCode::NullHandle, "frame", "No AVFrame was given.");
	if (properties.cropLeft || properties.cropRight || properties.cropTop ||
	    properties.cropBottom) {
		if (Status crop = checkCrop(properties, frame->width, frame->height); !crop)
			return crop;
	}
	frame->pts = properties.pts;
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
	frame->duration = properties.duration;
#else
	frame->pkt_duration = properties.duration;
#endif
	frame->time_base = properties.timeBase;
	frame->sample_aspect_ratio = properties.sampleAspectRatio;
	frame->crop_top = static_cast<size_t>(properties.cropTop);
	frame->crop_bottom = static_cast<size_t>(properties.cropBottom);
	frame->crop_left = static_cast<size_t>(properties.cropLeft);
	frame->crop_right = static_cast<size_t>(properties.cropRight);
	return {};
}

namespace {

// avPixelFormatName's spelling (AV_PIX_FMT_NV12) in place: it goes into error messages only, but
// is made for every frame, and a std::string of it would be a heap block each time.
struct FormatLabel {
	char text[64];
};

FormatLabel labelOf(int number)
{
	FormatLabel label{};
	const char *name = av_get_pix_fmt_name(static_cast<AVPixelFormat>(number));
	int n = std::snprintf(label.text, sizeof label.text, "AV_PIX_FMT_%s", name ? name : "?");
	for (int i = 11; i < n && i < int(sizeof label.text); i++)
		label.text[i] =
			static_cast<char>(std::toupper(static_cast<unsigned char>(label.text[i])));
	return label;
}

// The hardware frame's sw_format, size and colour, then the importer of its format.
Result<Frame> frameFromHwAVFrame(const AVFrame *frame, const char *name,
				 const FrameFromAvOptions &options)
{
	switch (frame->format) {
	case AV_PIX_FMT_VULKAN:
	case AV_PIX_FMT_DRM_PRIME:
	case AV_PIX_FMT_VAAPI:
	case AV_PIX_FMT_CUDA:
	case AV_PIX_FMT_OPENCL: break;
	default:
		return Error::format(ErrorCode::NotSupported, "frame.format",
				     "%s frames are not supported by libgpuhandle-ffmpeg (it takes "
				     "VULKAN, DRM_PRIME, VAAPI, CUDA and OPENCL frames; "
				     "av_hwframe_transfer_data() gives a software frame).",
				     name);
	}
	const AVHWFramesContext *frames = detail::framesOf(frame);
	Result<PixelFormat> format = fromAvPixelFormat(frames->sw_format);
	if (!format)
		return Error::format(format.error().code(), "frame.hw_frames_ctx",
				     "The %s frame's sw_format: %s", name,
				     format.error().message().c_str());
	if (frame->width <= 0 || frame->height <= 0)
		return Error::format(ErrorCode::ZeroSize, "frame.width",
				     "The %s AVFrame is %dx%d: no picture.", name, frame->width,
				     frame->height);
	if (frame->width > frames->width || frame->height > frames->height)
		return Error::format(ErrorCode::OutOfRange, "frame.width",
				     "The %s AVFrame is %dx%d, larger than its frames context "
				     "(%dx%d).",
				     name, frame->width, frame->height, frames->width,
				     frames->height);
	if (!frame->data[0])
		return Error::format(ErrorCode::NullHandle, "frame.data",
				     "The %s AVFrame has no data[0] (its handle).", name);
	if (!frame->buf[0])
		return Error::format(ErrorCode::InvalidArgument, "frame.buf",
				     "The %s AVFrame is not reference-counted (buf[0] is null), "
				     "so nothing can keep its handles alive.",
				     name);
	Result<std::shared_ptr<detail::AvBuffersAnchor>> anchor = detail::anchorBuffers(frame);
	if (!anchor)
		return std::move(anchor).error();
	detail::HwImport in;
	in.frame = frame;
	in.format = *format;
	in.width = static_cast<uint32_t>(frame->width);
	in.height = static_cast<uint32_t>(frame->height);
	in.colorimetry = colorimetryOf(frame);
	if (in.colorimetry.range == ColorRange::Unknown && isFullRangeAlias(frames->sw_format))
		in.colorimetry.range = ColorRange::Full;
	in.anchor = std::move(*anchor);
	in.options = options;
	switch (frame->format) {
	case AV_PIX_FMT_VULKAN: return detail::frameFromVulkanAVFrame(in);
	case AV_PIX_FMT_DRM_PRIME: return detail::frameFromDrmAVFrame(in);
	case AV_PIX_FMT_VAAPI: return detail::frameFromVaapiAVFrame(in);
	case AV_PIX_FMT_CUDA: return detail::frameFromCudaAVFrame(in);
	default: // AV_PIX_FMT_OPENCL: the formats were checked above
		return detail::frameFromOpenClAVFrame(in);
	}
}

} // namespace

Result<Frame> frameFromAVFrame(const AVFrame *frame, FrameProperties *properties,
			       const FrameFromAvOptions &options)
{
	if (!frame)
		return Error::format(ErrorCode::NullHandle, "frame", "No AVFrame was given.");
	const int number = frame->format;
	if (number < 0 || !av_pix_fmt_desc_get(static_cast<AVPixelFormat>(number)))
		return Error::format(ErrorCode::InvalidArgument, "frame.format",
				     "The AVFrame's format %d is not a pixel format this libavutil "
				     "(%s) knows (an audio frame, or an unset format?).",
				     number, LIBAVUTIL_IDENT);
	const FormatLabel label = labelOf(number);
	const char *name = label.text;
	if (isHwPixelFormat(number)) {
		if (!frame->hw_frames_ctx)
			return Error::format(ErrorCode::InvalidArgument, "frame.hw_frames_ctx",
					     "The %s AVFrame has no hw_frames_ctx: a hardware "
					     "frame cannot be described without its frames "
					     "context.",
					     name);
		const FrameProperties hwProps = framePropertiesOf(frame);
		if (hwProps.cropLeft || hwProps.cropRight || hwProps.cropTop ||
		    hwProps.cropBottom) {
			if (Status crop = checkCrop(hwProps, frame->width, frame->height); !crop)
				return std::move(crop).error();
		}
		Result<Frame> hw = frameFromHwAVFrame(frame, name, options);
		if (hw && properties)
			*properties = hwProps;
		return hw;
	}
	Result<PixelFormat> format = fromAvPixelFormat(static_cast<AVPixelFormat>(number));
	if (!format)
		return Error::format(format.error().code(), "frame.format", "%s",
				     format.error().message().c_str());
	if (frame->width <= 0 || frame->height <= 0)
		return Error::format(ErrorCode::ZeroSize, "frame.width",
				     "The %s AVFrame is %dx%d: no picture.", name, frame->width,
				     frame->height);
	if (!frame->buf[0])
		return Error::format(ErrorCode::InvalidArgument, "frame.buf",
				     "The %s AVFrame is not reference-counted (buf[0] is null), so "
				     "nothing can keep its planes alive; av_frame_make_writable() "
				     "or av_frame_ref() makes a counted copy.",
				     name);
	FrameProperties props = framePropertiesOf(frame);
	if (props.cropLeft || props.cropRight || props.cropTop || props.cropBottom) {
		if (Status crop = checkCrop(props, frame->width, frame->height); !crop)
			return std::move(crop).error();
	}

	const PixelFormatInfo &info = **pixelFormatInfo(*format);
	const int avPlanes = av_pix_fmt_count_planes(static_cast<AVPixelFormat>(number));
	if (avPlanes != info.numPlanes)
		return Error::format(ErrorCode::FormatMismatch, "frame.format",
				     "%s has %d planes in this libavutil, %u in gpuhandle's %s.",
				     name, avPlanes, info.numPlanes, info.name);
	const auto width = static_cast<uint32_t>(frame->width);
	const auto height = static_cast<uint32_t>(frame->height);
	CpuPlanesDesc desc;
	desc.numPlanes = info.numPlanes;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		if (!frame->data[p])
			return Error::format(ErrorCode::NullHandle, "frame.data",
					     "Plane %u of the %s AVFrame has no data pointer.", p,
					     name);
		if (frame->linesize[p] < 0)
			return Error::format(ErrorCode::NotSupported, "frame.linesize",
					     "Plane %u of the %s AVFrame has a negative linesize "
					     "(%d): a bottom-up picture, which a CPU plane cannot "
					     "describe; copy it (av_frame_copy into a new frame) "
					     "first.",
					     p, name, frame->linesize[p]);
		if (frame->linesize[p] == 0)
			return Error::format(ErrorCode::ZeroSize, "frame.linesize",
					     "Plane %u of the %s AVFrame has a linesize of 0.", p,
					     name);
		desc.planes[p].data = frame->data[p];
		desc.planes[p].stride = static_cast<uint32_t>(frame->linesize[p]);
		desc.planes[p].rows = info.planes[p].rows(height);
	}
	Result<std::shared_ptr<detail::AvBuffersAnchor>> anchor = detail::anchorBuffers(frame);
	if (!anchor)
		return std::move(anchor).error();
	desc.anchor = std::move(*anchor);
	Result<CpuPlanes> planes = CpuPlanes::create(std::move(desc));
	if (!planes)
		return std::move(planes).error();
	Colorimetry colorimetry = colorimetryOf(frame);
	if (colorimetry.range == ColorRange::Unknown &&
	    isFullRangeAlias(static_cast<AVPixelFormat>(number)))
		colorimetry.range = ColorRange::Full;
	Result<Frame> wrapped =
		Frame::wrap(*format, width, height, colorimetry, Resource(std::move(*planes)));
	if (wrapped && properties)
		*properties = props;
	return wrapped;
}

} // namespace gpuhandle::ffmpeg
