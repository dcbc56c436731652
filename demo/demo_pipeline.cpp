// gpuhandle-demo's GStreamer pipeline: the bridge into appsrc, the bus, the thumbnails, the stats.
#include "demo_pipeline.h"

#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "gpuhandle_i18n.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#include <gst/video/video.h>

extern "C" {
#include <libavutil/hwcontext.h>
}

// GObject's cast macros are C casts.
#pragma GCC diagnostic ignored "-Wold-style-cast"

namespace gpuhandle::demo {

namespace {

constexpr GstClockTime kFrameDuration = GST_SECOND / 25;
constexpr guint64 kQueuedFrames = 4; // each holds an FFmpeg pool frame

GstFlowReturn newSample(GstAppSink *sink, gpointer self)
{
	return static_cast<Pipeline *>(self)->onSample(GST_ELEMENT(sink));
}

void logFunction(GstDebugCategory *category, GstDebugLevel level, const gchar *, const gchar *,
		 gint, GObject *object, GstDebugMessage *message, gpointer self)
{
	static_cast<Pipeline *>(self)->onLog(category, level, object, message);
}

// The same log through GStreamer's default printer, with its own signature.
void forward(GstDebugCategory *category, GstDebugLevel level, GObject *object,
	     GstDebugMessage *message)
{
	gst_debug_log_default(category, level, "", "", 0, object, message, nullptr);
}

uint64_t field(const GstStructure *stats, const char *name)
{
	guint64 value = 0;
	gst_structure_get_uint64(stats, name, &value);
	return value;
}

const char *memoryWords(const Frame &frame)
{
	switch (frame.resource(0).kind()) {
	case ResourceKind::VulkanMemoryFd: return _("Vulkan memory as opaque fds");
	case ResourceKind::VulkanImage: return _("Vulkan images on FFmpeg's device");
	case ResourceKind::CpuPlanes: return _("host memory (CPU planes)");
	default: return resourceKindName(frame.resource(0).kind());
	}
}

} // namespace

Pipeline::Pipeline(Sheet &sheet, bool viaVulkan) : sheet_(sheet)
{
	// FFmpeg's frames -> GStreamer's Vulkan images -> GpuHandle again -> GStreamer's GL
	// textures; GL converts and scales each frame to a thumbnail, which comes back as RGBA.
	description_ = "appsrc name=src format=time max-bytes=0 ! ";
	if (viaVulkan)
		description_ +=
			"gpuhandledownload name=into-vulkan ! "
			"video/x-raw(memory:VulkanImage) ! gpuhandleupload name=from-vulkan ! ";
	description_ += "gpuhandledownload name=into-gl ! video/x-raw(memory:GLMemory) ! "
			"glcolorconvert ! glcolorscale ! "
			"video/x-raw(memory:GLMemory),format=RGBA,width=" +
			std::to_string(sheet.thumbWidth()) +
			",height=" + std::to_string(sheet.thumbHeight()) +
			",pixel-aspect-ratio=1/1 ! gldownload ! video/x-raw,format=RGBA ! "
			"appsink name=sink sync=false";
}

Pipeline::~Pipeline()
{
	if (pipeline_) {
		gst_element_set_state(pipeline_, GST_STATE_NULL);
		gst_object_unref(bus_);
		gst_object_unref(pipeline_);
	}
	if (logInstalled_) {
		gst_debug_remove_log_function(logFunction);
		gst_debug_add_log_function(gst_debug_log_default, nullptr, nullptr);
	}
	gst_clear_caps(&caps_);
}

Status Pipeline::start(std::chrono::seconds timeout)
{
	timeout_ = timeout;
	// The elements say each change of path (route and reason) at INFO in their categories:
	// the table shows those lines. GStreamer's own printer still gets everything else.
	// They reach GStreamer's printer too only where the user asked for them (GST_DEBUG naming
	// gpuhandle, or INFO for everything); another GST_DEBUG (gldebug:1 under --setup
	// validation) leaves the table its lines.
	const char *userDebug = std::getenv("GST_DEBUG");
	forwardPathLines_ = gst_debug_get_default_threshold() >= GST_LEVEL_INFO ||
			    (userDebug && std::strstr(userDebug, "gpuhandle"));
	gst_debug_remove_log_function(gst_debug_log_default);
	gst_debug_add_log_function(logFunction, this, nullptr);
	logInstalled_ = true;
	// By name: the categories exist once the plugin loads (in gst_parse_launch).
	if (!forwardPathLines_) {
		gst_debug_set_threshold_for_name("gpuhandledownload", GST_LEVEL_INFO);
		gst_debug_set_threshold_for_name("gpuhandleupload", GST_LEVEL_INFO);
	}

	GError *error = nullptr;
	pipeline_ = gst_parse_launch_full(description_.c_str(), nullptr,
					  GST_PARSE_FLAG_FATAL_ERRORS, &error);
	if (error || !pipeline_) {
		Error out = Error::format(ErrorCode::InvalidArgument, "pipeline",
					  _("could not make the GStreamer pipeline: %s"),
					  error ? error->message : _("gst_parse_launch failed"));
		g_clear_error(&error);
		if (pipeline_)
			gst_clear_object(&pipeline_);
		return out;
	}
	bus_ = gst_element_get_bus(pipeline_);
	appsrc_ = gst_bin_get_by_name(GST_BIN(pipeline_), "src");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline_), "sink");
	if (!appsrc_ || !sink) {
		gst_clear_object(&appsrc_);
		gst_clear_object(&sink);
		return Error(ErrorCode::Backend, "pipeline",
			     _("the pipeline has no appsrc or appsink"));
	}
	gst_object_unref(appsrc_); // the bin keeps both
	GstAppSinkCallbacks callbacks{};
	callbacks.new_sample = newSample;
	gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, this, nullptr);
	gst_object_unref(sink);
	if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
		if (Status polled = poll(std::chrono::milliseconds(0)); !polled)
			return polled;
		return Error(ErrorCode::Backend, "pipeline", _("the pipeline did not start"));
	}
	return {};
}

GstFlowReturn Pipeline::onSample(GstElement *sink)
{
	GstSample *sample = gst_app_sink_pull_sample(GST_APP_SINK(sink));
	if (!sample)
		return GST_FLOW_FLUSHING;
	int64_t index;
	{
		std::lock_guard<std::mutex> lock(mutex_);
		index = rendered_++;
	}
	const int cell = sheet_.cellOf(index);
	Status placed{};
	if (cell >= 0) {
		GstVideoInfo info;
		GstVideoFrame frame;
		if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) ||
		    !gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample),
					 GST_MAP_READ)) {
			placed = Error(ErrorCode::Backend, "sheet",
				       _("a thumbnail could not be mapped"));
		} else {
			placed = sheet_.place(
				cell,
				static_cast<const uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)),
				GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0),
				GST_VIDEO_FRAME_WIDTH(&frame), GST_VIDEO_FRAME_HEIGHT(&frame));
			gst_video_frame_unmap(&frame);
		}
	}
	gst_sample_unref(sample);
	if (!placed) {
		std::lock_guard<std::mutex> lock(mutex_);
		if (sampleStatus_)
			sampleStatus_ = placed;
		return GST_FLOW_ERROR;
	}
	return GST_FLOW_OK;
}

void Pipeline::onLog(GstDebugCategory *category, GstDebugLevel level, GObject *object,
		     GstDebugMessage *message)
{
	const std::string_view name = gst_debug_category_get_name(category);
	const bool ours = name == "gpuhandledownload" || name == "gpuhandleupload";
	if (ours && level == GST_LEVEL_INFO && object && GST_IS_OBJECT(object)) {
		const char *text = gst_debug_message_get(message);
		const std::string_view line = text ? text : "";
		// Paths ("nv12 into GLMemory: zero-copy (opaque-fd)"), devices ("frames go into
		// GLMemory on llvmpipe"), and where system memory goes.
		if (line.find(" into ") != std::string_view::npos ||
		    line.find(" goes to ") != std::string_view::npos) {
			std::lock_guard<std::mutex> lock(mutex_);
			std::vector<std::string> &lines = pathLines_[GST_OBJECT_NAME(object)];
			if (lines.size() < 8)
				lines.emplace_back(line);
		}
	}
	// What we raised the threshold for (INFO, WARNING) is the table's; errors still print.
	if (ours && !forwardPathLines_ && level > GST_LEVEL_ERROR)
		return;
	forward(category, level, object, message);
}

Status Pipeline::poll(std::chrono::milliseconds wait)
{
	{
		std::lock_guard<std::mutex> lock(mutex_);
		if (!sampleStatus_)
			return sampleStatus_;
	}
	const auto types = static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
	GstClockTime timeout = static_cast<GstClockTime>(wait.count()) * GST_MSECOND;
	while (GstMessage *message = gst_bus_timed_pop_filtered(bus_, timeout, types)) {
		timeout = 0;
		if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS) {
			eos_ = true;
			gst_message_unref(message);
			continue;
		}
		GError *error = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(message, &error, &debug);
		const char *what = error ? error->message : _("unknown error");
		Error out = debug ? Error::format(ErrorCode::Backend, "pipeline",
						  _("the pipeline failed in %s: %s (%s)"),
						  GST_MESSAGE_SRC_NAME(message), what, debug)
				  : Error::format(ErrorCode::Backend, "pipeline",
						  _("the pipeline failed in %s: %s"),
						  GST_MESSAGE_SRC_NAME(message), what);
		g_clear_error(&error);
		g_free(debug);
		gst_message_unref(message);
		return out;
	}
	return {};
}

Status Pipeline::waitForRoom()
{
	const auto deadline = std::chrono::steady_clock::now() + timeout_;
	for (;;) {
		if (Status polled = poll(std::chrono::milliseconds(0)); !polled)
			return polled;
		if (eos_)
			return Error(ErrorCode::Backend, "pipeline",
				     _("the pipeline ended before it took every frame"));
		if (gst_app_src_get_current_level_buffers(GST_APP_SRC(appsrc_)) < kQueuedFrames)
			return {};
		if (std::chrono::steady_clock::now() >= deadline)
			return Error::format(ErrorCode::Timeout, "pipeline",
					     _("the pipeline took no frame for %lld s"),
					     static_cast<long long>(timeout_.count()));
		if (Status polled = poll(std::chrono::milliseconds(5)); !polled)
			return polled;
	}
}

Status Pipeline::push(const AVFrame *frame, bool exportVulkanMemory)
{
	ffmpeg::FrameFromAvOptions options{};
	options.exportVulkanMemory = exportVulkanMemory;
	Result<Frame> bridged = ffmpeg::frameFromAVFrame(frame, nullptr, options);
	if (!bridged)
		return Error(
			bridged.error().code(), "bridge",
			i18n::format(_("FFmpeg's %s frame could not become a gpuhandle frame: %s"),
				     ffmpeg::avPixelFormatName(frame->format).c_str(),
				     bridged.error().message().c_str()));
	BackendRef backend{};
	if (frame->hw_frames_ctx) {
		const auto *frames =
			reinterpret_cast<const AVHWFramesContext *>(frame->hw_frames_ctx->data);
		Result<BackendRef> opened = ffmpeg::backendForHwDevice(frames->device_ref);
		if (!opened)
			return Error(opened.error().code(), "bridge",
				     i18n::format(_("no gpuhandle backend for FFmpeg's device: %s"),
						  opened.error().message().c_str()));
		backend = *opened;
		// The acquire point follows FFmpeg's upload, which may read the decoder's buffer in
		// place: waiting here keeps the next decode from overwriting it (see demo_source).
		const auto start = std::chrono::steady_clock::now();
		if (Status waited = bridged->acquire().wait(timeout_); !waited)
			return Error(waited.error().code(), "bridge",
				     i18n::format(_("FFmpeg's upload did not finish: %s"),
						  waited.error().message().c_str()));
		const auto waitedFor = std::chrono::duration_cast<std::chrono::nanoseconds>(
			std::chrono::steady_clock::now() - start);
		++bridge_.fenceWaits;
		bridge_.waitTime += waitedFor;
		if (waitedFor > bridge_.maxWait)
			bridge_.maxWait = waitedFor;
	}
	if (bridge_.memory.empty())
		bridge_.memory = memoryWords(*bridged);
	Result<GstVideoInfo> info = gst::videoInfoOf(*bridged);
	if (!info)
		return info.error();
	GstBuffer *buffer = gst::bufferFromFrame(*bridged, backend, true);
	if (!buffer)
		return Error(ErrorCode::NotSupported, "bridge",
			     i18n::format(_("a %s frame could not be wrapped as a GstBuffer"),
					  ffmpeg::avPixelFormatName(frame->format).c_str()));
	GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(bridge_.frames) * kFrameDuration;
	GST_BUFFER_DURATION(buffer) = kFrameDuration;
	info->fps_n = 25;
	info->fps_d = 1;
	GstCaps *caps = gst_video_info_to_caps(&*info);
	if (!caps) {
		gst_buffer_unref(buffer);
		return Error(ErrorCode::NotSupported, "caps", _("the frame has no GStreamer caps"));
	}
	gst_caps_set_features(caps, 0,
			      gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE, nullptr));
	if (!caps_ || !gst_caps_is_equal(caps, caps_)) {
		gst_app_src_set_caps(GST_APP_SRC(appsrc_), caps);
		gst_caps_replace(&caps_, caps);
	}
	gst_caps_unref(caps);
	if (Status room = waitForRoom(); !room) {
		gst_buffer_unref(buffer);
		return room;
	}
	const GstFlowReturn flow = gst_app_src_push_buffer(GST_APP_SRC(appsrc_), buffer);
	if (flow != GST_FLOW_OK) {
		if (Status polled = poll(std::chrono::milliseconds(100)); !polled)
			return polled;
		return Error::format(ErrorCode::Backend, "pipeline",
				     _("appsrc refused a frame: %s"), gst_flow_get_name(flow));
	}
	++bridge_.frames;
	++bridge_.zeroCopy;
	return {};
}

Status Pipeline::finish()
{
	gst_app_src_end_of_stream(GST_APP_SRC(appsrc_));
	const auto deadline = std::chrono::steady_clock::now() + timeout_;
	while (!eos_) {
		if (std::chrono::steady_clock::now() >= deadline)
			return Error::format(
				ErrorCode::Timeout, "pipeline",
				_("the pipeline did not finish within %lld s of the last frame"),
				static_cast<long long>(timeout_.count()));
		if (Status polled = poll(std::chrono::milliseconds(50)); !polled)
			return polled;
	}
	return poll(std::chrono::milliseconds(0));
}

int64_t Pipeline::rendered() const
{
	std::lock_guard<std::mutex> lock(mutex_);
	return rendered_;
}

std::vector<ElementReport> Pipeline::elements() const
{
	std::vector<ElementReport> out;
	for (const char *name : { "into-vulkan", "from-vulkan", "into-gl" }) {
		GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline_), name);
		if (!element)
			continue;
		ElementReport report{};
		report.name = name;
		GstElementFactory *factory = gst_element_get_factory(element);
		const std::string factoryName =
			factory ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) : "";
		const std::string_view step = name;
		report.factory = factoryName + (step == "into-vulkan"   ? " -> VulkanImage"
						: step == "from-vulkan" ? " (VulkanImage in)"
									: " -> GLMemory");
		GstStructure *stats = nullptr;
		g_object_get(element, "stats", &stats, nullptr);
		if (stats) {
			report.frames = field(stats, "frames");
			report.zeroCopy = field(stats, "zero-copy");
			report.gpuCopies = field(stats, "gpu-copies");
			report.cpuCopies = field(stats, "cpu-copies");
			report.fenceWaits = field(stats, "fence-waits");
			report.waitNs = field(stats, "wait-time");
			gst_structure_free(stats);
		}
		gst_object_unref(element);
		{
			std::lock_guard<std::mutex> lock(mutex_);
			if (auto it = pathLines_.find(name); it != pathLines_.end())
				report.paths = it->second;
		}
		out.push_back(std::move(report));
	}
	return out;
}

} // namespace gpuhandle::demo
