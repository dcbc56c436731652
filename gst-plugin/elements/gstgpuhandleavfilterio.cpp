// gpuhandleavfilter's frames: the graph built for the input (on the input frames' own device
// where they are GPU frames FFmpeg has a device type for), input buffers into FFmpeg without a
// copy where FFmpeg can hold them, and filtered frames out as memory:GpuHandle or system memory
// with the caps the graph gives them.
#include <gpuhandle/ffmpeg/gst_buffer.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "av_gst_frame.h"
#include "gstgpuhandleavfilter.h"

#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
}

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_avfilter_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_avfilter_debug

namespace gpuhandle::gst::avfilter {

namespace {

constexpr AVRational kNanoseconds{ 1, 1000000000 };
// Host-memory inputs kept past the output that followed them (uploads a filter looking ahead
// submitted within the same pull).
constexpr size_t kHeldInputs = 2;

// FFmpeg's device type for a gpuhandle backend's frames, or NONE.
AVHWDeviceType deviceTypeOf(BackendKind kind)
{
	switch (kind) {
	case BackendKind::Vulkan: return AV_HWDEVICE_TYPE_VULKAN;
	case BackendKind::OpenCl: return AV_HWDEVICE_TYPE_OPENCL;
	case BackendKind::Cuda: return AV_HWDEVICE_TYPE_CUDA;
	case BackendKind::VaApi: return AV_HWDEVICE_TYPE_VAAPI;
	default: return AV_HWDEVICE_TYPE_NONE;
	}
}

// The backend holding a GpuHandle buffer's frame (null for other memory and CPU frames).
BackendRef backendOf(GstBuffer *buffer)
{
	if (gst_buffer_n_memory(buffer) == 0)
		return {};
	return memoryBackend(gst_buffer_peek_memory(buffer, 0));
}

struct DeviceChoice {
	AVBufferRef *device = nullptr;
	bool hardwareInput = false; // the input frames are that device's hardware frames
};

// hw-device: empty, the input frames' own device when they are GPU frames (an FFmpeg device
// over the same API objects, so they enter FFmpeg without a copy), else none; "none": no device
// (GPU frames are copied to host memory); TYPE: the input's own device when it is of that
// type, else a new one (TYPE:DEVICE always a new one), the input then in host memory.
Result<DeviceChoice> chooseDevice(const std::string &spec, const BackendRef &input)
{
	if (spec == "none")
		return DeviceChoice{};
	const AVHWDeviceType inputType = input ? deviceTypeOf(input->kind())
					       : AV_HWDEVICE_TYPE_NONE;
	const size_t colon = spec.find(':');
	const bool same =
		inputType != AV_HWDEVICE_TYPE_NONE &&
		(spec.empty() || (colon == std::string::npos &&
				  av_hwdevice_find_type_by_name(spec.c_str()) == inputType));
	if (same) {
		Result<AVBufferRef *> device = ffmpeg::hwDeviceFromContext(input->context());
		if (!device)
			return device.error();
		return DeviceChoice{ *device, true };
	}
	if (spec.empty())
		return DeviceChoice{};
	Result<AVBufferRef *> device = av::createHwDevice(spec);
	if (!device)
		return device.error();
	return DeviceChoice{ *device, false };
}

// A frames context of `device` for the input's format and size: hardware input frames are
// wrapped in it (avFrameFromFrame's hwFrames).
Result<AVBufferRef *> inputFrames(AVBufferRef *device, const GstVideoInfo &info)
{
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format)
		return format.error();
	Result<AVPixelFormat> sw = ffmpeg::toAvPixelFormat(*format);
	if (!sw)
		return sw.error();
	return av::createHwFrames(device, *sw, GST_VIDEO_INFO_WIDTH(&info),
				  GST_VIDEO_INFO_HEIGHT(&info));
}

// What a graph that did not configure may lack, for the error.
std::string hintFor(const AvfilterState &s)
{
	if (!s.feedsHardware)
		return _("the graph gets frames in host memory: a filter of hardware frames needs "
			 "hwupload before it, and hw-device");
	const auto *device = reinterpret_cast<const AVHWDeviceContext *>(s.device.ref->data);
	return i18n::format(_("the graph gets %s frames: a software filter needs hwdownload "
			      "before it"),
			    av_hwdevice_get_type_name(device->type));
}

// The output caps for `frame` (its GstVideoInfo from the bridge), the graph's frame rate, and
// the memory downstream takes; pushed downstream, and downstream's allocation query read.
bool negotiate(GstBaseTransform *trans, AvfilterState &s, const AVFrame *frame,
	       const GstVideoInfo &frameInfo)
{
	GstVideoInfo info = frameInfo;
	AVRational rate = s.graph->frameRate();
	if (rate.num <= 0 || rate.den <= 0)
		rate = { GST_VIDEO_INFO_FPS_N(&s.inInfo), GST_VIDEO_INFO_FPS_D(&s.inInfo) };
	GST_VIDEO_INFO_FPS_N(&info) = rate.num;
	GST_VIDEO_INFO_FPS_D(&info) = rate.den > 0 ? rate.den : 1;
	if (frame->sample_aspect_ratio.num > 0 && frame->sample_aspect_ratio.den > 0) {
		GST_VIDEO_INFO_PAR_N(&info) = frame->sample_aspect_ratio.num;
		GST_VIDEO_INFO_PAR_D(&info) = frame->sample_aspect_ratio.den;
	}
	GstCaps *caps = gst_video_info_to_caps(&info);
	if (!caps)
		return false;
	av::setGpuHandleFeature(caps, s.gpuHandle);
	GST_DEBUG_OBJECT(trans, "output caps %" GST_PTR_FORMAT, static_cast<void *>(caps));
	const bool accepted = gst_pad_peer_query_accept_caps(trans->srcpad, caps) &&
			      gst_base_transform_update_src_caps(trans, caps);
	if (accepted) {
		GstQuery *query = gst_query_new_allocation(caps, FALSE);
		s.downstreamVideoMeta =
			gst_pad_peer_query(trans->srcpad, query) &&
			gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
		gst_query_unref(query);
		s.outInfo = info;
		for (GstEvent *event : s.pendingEvents)
			gst_pad_push_event(trans->srcpad, event);
		s.pendingEvents.clear();
	}
	gst_caps_unref(caps);
	return accepted;
}

} // namespace

void releaseHeldInputs(AvfilterState &s, size_t keep)
{
	while (s.heldInputs.size() > keep) {
		av_frame_free(&s.heldInputs.front());
		s.heldInputs.pop_front();
	}
}

void dropGraph(AvfilterState &s)
{
	s.graph.reset(); // its frames contexts hold the device (freeing them waits for its work)
	releaseHeldInputs(s, 0);
	av_buffer_unref(&s.inFrames.ref);
	av_buffer_unref(&s.device.ref);
	s.built = false;
	s.feedsHardware = false;
}

bool buildGraph(GstBaseTransform *trans, AvfilterState &s, GstBuffer *first)
{
	dropGraph(s);
	s.graph = std::make_unique<av::FilterGraph>();
	std::string text, spec;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		text = s.graphText;
		spec = s.hwDevice;
	}
	const BackendRef backend = s.inGpuHandle ? backendOf(first) : BackendRef{};
	Result<DeviceChoice> choice = chooseDevice(spec, backend);
	if (!choice) {
		GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, NOT_FOUND,
					(_("The filter graph's device could not be had: %s"),
					 choice.error().message().c_str()),
					choice.error());
		return false;
	}
	s.device.ref = choice->device;
	s.feedsHardware = choice->hardwareInput;
	av::FilterInput input{};
	input.width = GST_VIDEO_INFO_WIDTH(&s.inInfo);
	input.height = GST_VIDEO_INFO_HEIGHT(&s.inInfo);
	input.timeBase = kNanoseconds;
	input.sampleAspectRatio = { GST_VIDEO_INFO_PAR_N(&s.inInfo),
				    GST_VIDEO_INFO_PAR_D(&s.inInfo) };
	if (GST_VIDEO_INFO_FPS_N(&s.inInfo) > 0)
		input.frameRate = { GST_VIDEO_INFO_FPS_N(&s.inInfo),
				    GST_VIDEO_INFO_FPS_D(&s.inInfo) };
	if (AVFrame *colors = av_frame_alloc()) { // the input frames' colours, as the bridge sets
						  // them
		ffmpeg::setColorimetry(colors, colorimetryOf(s.inInfo));
		input.colorSpace = colors->colorspace;
		input.colorRange = colors->color_range;
		av_frame_free(&colors);
	}
	Status status{};
	if (s.feedsHardware) {
		Result<AVBufferRef *> frames = inputFrames(s.device.ref, s.inInfo);
		if (frames) {
			s.inFrames.ref = *frames;
			input.format =
				reinterpret_cast<AVHWFramesContext *>((*frames)->data)->format;
			input.hwFrames = *frames;
		} else {
			status = frames.error();
		}
	} else {
		Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&s.inInfo));
		Result<AVPixelFormat> av = format ? ffmpeg::toAvPixelFormat(*format)
						  : Result<AVPixelFormat>(format.error());
		if (av)
			input.format = *av;
		else
			status = av.error();
	}
	if (status) {
		// Configuring may initialise frames contexts, which may submit.
		ffmpeg::HwDeviceLock lock(s.device.ref);
		status = s.graph->configure(text, input, s.device.ref, {}, hintFor(s));
		if (!status && s.feedsHardware && status.error().field() == std::string("filter"))
			status = Error(status.error().code(), "filter",
				       status.error().message() + " (" + hintFor(s) + ")");
	}
	if (!status) {
		GPUHANDLE_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
					(_("The filter graph '%s' could not be set up: %s"),
					 text.c_str(), status.error().message().c_str()),
					status.error());
		dropGraph(s);
		return false;
	}
	GST_INFO_OBJECT(trans, "graph '%s' on %s frames", text.c_str(),
			s.feedsHardware ? "hardware" : "host-memory");
	s.built = true;
	return true;
}

GstFlowReturn feed(GstBaseTransform *trans, AvfilterState &s, GstBuffer *buffer)
{
	ffmpeg::AvFrameOptions options{};
	options.hwFrames = s.feedsHardware ? s.inFrames.ref : nullptr;
	ExecutionPath path{};
	Result<AVFrame *> frame = ffmpeg::avFrameFromGstBuffer(buffer, s.inInfo, options, &path);
	if (!frame) {
		GPUHANDLE_ELEMENT_ERROR(trans, STREAM, FORMAT,
					(_("An input frame could not enter FFmpeg: %s"),
					 frame.error().message().c_str()),
					frame.error());
		return GST_FLOW_ERROR;
	}
	++s.framesIn;
	if (path.kind() != ExecutionPath::Kind::ZeroCopy)
		++s.copiesIn;
	Status pushed;
	{
		ffmpeg::HwDeviceLock lock(s.device.ref);
		pushed = s.graph->push(*frame);
	}
	const auto *device =
		s.device.ref ? reinterpret_cast<const AVHWDeviceContext *>(s.device.ref->data)
			     : nullptr;
	if (device && device->type == AV_HWDEVICE_TYPE_VULKAN && !s.feedsHardware)
		s.heldInputs.push_back(*frame);
	else
		av_frame_free(&*frame);
	if (!pushed) {
		GPUHANDLE_ELEMENT_ERROR(trans, STREAM, FAILED,
					(_("The filter graph failed: %s"),
					 pushed.error().message().c_str()),
					pushed.error());
		return GST_FLOW_ERROR;
	}
	return GST_FLOW_OK;
}

GstFlowReturn outputOf(GstBaseTransform *trans, AvfilterState &s, AVFrame *frame, GstBuffer **out)
{
	const bool changed = !s.negotiated || frame->width != s.outWidth ||
			     frame->height != s.outHeight || frame->format != s.outFormat;
	if (changed)
		s.gpuHandle = av::peerNamesGpuHandle(trans->srcpad);
	av::GstFrameOptions options{};
	options.systemMemory = !s.gpuHandle;
	options.waitVulkanFrames = true; // hwupload in the graph (see GstFrameOptions)
	Result<av::GstFrame> wrapped = av::gstFrameOf(frame, options);
	if (!wrapped) {
		GPUHANDLE_ELEMENT_ERROR(trans, STREAM, FAILED,
					(_("A filtered frame could not be handed on: %s"),
					 wrapped.error().message().c_str()),
					wrapped.error());
		return GST_FLOW_ERROR;
	}
	if (changed) {
		if (!negotiate(trans, s, frame, wrapped->info)) {
			gst_buffer_unref(wrapped->buffer);
			if (GST_PAD_IS_FLUSHING(trans->srcpad))
				return GST_FLOW_FLUSHING;
			GST_ELEMENT_ERROR(
				trans, CORE, NEGOTIATION,
				(_("Downstream does not take the filtered %dx%d %s "
				   "frames."),
				 frame->width, frame->height,
				 gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&wrapped->info))),
				(nullptr));
			return GST_FLOW_NOT_NEGOTIATED;
		}
		s.negotiated = true;
		s.outWidth = frame->width;
		s.outHeight = frame->height;
		s.outFormat = frame->format;
	}
	GstBuffer *buffer = wrapped->buffer;
	bool copied = wrapped->copied;
	if (!s.gpuHandle && !s.downstreamVideoMeta) { // GStreamer's layout rule for such a peer
		copied = copied || !hasDefaultLayout(buffer, s.outInfo);
		Result<GstBuffer *> fixed = toDefaultLayout(buffer, s.outInfo); // takes `buffer`
		if (!fixed) {
			GPUHANDLE_ELEMENT_ERROR(trans, STREAM, FAILED,
						(_("A filtered frame could not be handed on: %s"),
						 fixed.error().message().c_str()),
						fixed.error());
			return GST_FLOW_ERROR;
		}
		buffer = *fixed;
	}
	const AVRational timeBase = s.graph->timeBase();
	if (frame->pts != AV_NOPTS_VALUE) {
		const int64_t ns = av_rescale_q(frame->pts, timeBase, kNanoseconds);
		GST_BUFFER_PTS(buffer) = ns >= 0 ? static_cast<GstClockTime>(ns) : 0;
	}
	// The output frame rate when the graph has one: FFmpeg 5.1's filters carry the input's
	// durations through rate changes (fps) unscaled.
	if (GST_VIDEO_INFO_FPS_N(&s.outInfo) > 0)
		GST_BUFFER_DURATION(buffer) =
			gst_util_uint64_scale_int(GST_SECOND, GST_VIDEO_INFO_FPS_D(&s.outInfo),
						  GST_VIDEO_INFO_FPS_N(&s.outInfo));
	else if (wrapped->properties.duration > 0)
		GST_BUFFER_DURATION(buffer) = static_cast<GstClockTime>(
			av_rescale_q(wrapped->properties.duration, timeBase, kNanoseconds));
	++s.framesOut;
	if (s.gpuHandle)
		++s.gpuHandleFrames;
	if (copied)
		++s.copiesOut;
	releaseHeldInputs(s, kHeldInputs);
	*out = buffer;
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::avfilter
