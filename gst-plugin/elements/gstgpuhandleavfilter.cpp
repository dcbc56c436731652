// gpuhandleavfilter: a libavfilter graph (`graph`, as ffmpeg's -vf writes it) on every frame, as a
// GstBaseTransform: GPU frames enter FFmpeg on their own device without a copy, the output caps
// are what the graph gives, and filters that change frame counts (fps, select, deinterlacers)
// work.
#include "gstgpuhandleavfilter.h"

#include <gpuhandle/ffmpeg/hw_device.h>

#include "gstgpuhandlestats.h"

#include <gst/gpuhandle/gstgpuhandlememory.h>

extern "C" {
#include <libavutil/frame.h>
}

GST_DEBUG_CATEGORY(gst_gpu_handle_avfilter_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_avfilter_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::avfilter;

namespace {

enum Property { PropGraph = 1, PropHwDevice, PropStats };

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleAvfilter, gst_gpu_handle_avfilter, GST_TYPE_BASE_TRANSFORM)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DEFINE(gpuhandleavfilter, "gpuhandleavfilter", GST_RANK_NONE,
			    GST_TYPE_GPU_HANDLE_AVFILTER);

namespace gpuhandle::gst::avfilter {

AvfilterState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleAvfilter *>(self)->state;
}

} // namespace gpuhandle::gst::avfilter

namespace {

// The next filtered frame (null when the graph has none ready), as an output buffer.
GstFlowReturn pullOne(GstBaseTransform *trans, AvfilterState &s, GstBuffer **out)
{
	*out = nullptr;
	if (!s.built)
		return GST_FLOW_OK;
	Result<AVFrame *> frame = static_cast<AVFrame *>(nullptr);
	{
		ffmpeg::HwDeviceLock lock(s.device.ref);
		frame = s.graph->pull();
	}
	if (!frame) {
		GPUHANDLE_ELEMENT_ERROR(trans, STREAM, FAILED,
					(_("The filter graph failed: %s"),
					 frame.error().message().c_str()),
					frame.error());
		return GST_FLOW_ERROR;
	}
	if (!*frame)
		return GST_FLOW_OK;
	const GstFlowReturn flow = outputOf(trans, s, *frame, out);
	av_frame_free(&*frame);
	return flow;
}

// The end of the graph's input: every frame it still holds goes downstream.
GstFlowReturn drainGraph(GstBaseTransform *trans, AvfilterState &s)
{
	if (!s.built)
		return GST_FLOW_OK;
	Status flushed;
	{
		ffmpeg::HwDeviceLock lock(s.device.ref);
		flushed = s.graph->push(nullptr);
	}
	if (!flushed) {
		GPUHANDLE_ELEMENT_ERROR(trans, STREAM, FAILED,
					(_("The filter graph failed: %s"),
					 flushed.error().message().c_str()),
					flushed.error());
		return GST_FLOW_ERROR;
	}
	for (;;) {
		GstBuffer *out = nullptr;
		if (GstFlowReturn flow = pullOne(trans, s, &out); flow != GST_FLOW_OK)
			return flow;
		if (!out)
			break;
		if (GstFlowReturn flow = gst_pad_push(trans->srcpad, out); flow != GST_FLOW_OK)
			return flow;
	}
	dropGraph(s); // a graph takes no frame after its end: the next buffer builds a new one
	return GST_FLOW_OK;
}

// A buffer into the graph (built for it when the caps are new).
GstFlowReturn submit(GstBaseTransform *trans, AvfilterState &s, GstBuffer *buffer)
{
	if (!s.haveInCaps) {
		gst_buffer_unref(buffer);
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (s.inCapsChanged) { // the old graph's frames first, then one for the new caps
		s.inCapsChanged = false;
		if (GstFlowReturn flow = drainGraph(trans, s); flow != GST_FLOW_OK) {
			gst_buffer_unref(buffer);
			return flow;
		}
	}
	if (!s.built && !buildGraph(trans, s, buffer)) {
		gst_buffer_unref(buffer);
		return GST_FLOW_NOT_NEGOTIATED;
	}
	const GstFlowReturn flow = feed(trans, s, buffer);
	gst_buffer_unref(buffer);
	return flow;
}

// Remembers that the element failed (its error posted).
GstFlowReturn noteFailure(AvfilterState &s, GstFlowReturn flow)
{
	if (flow == GST_FLOW_ERROR || flow == GST_FLOW_NOT_NEGOTIATED)
		s.failed = true;
	return flow;
}

GstFlowReturn submitInputBuffer(GstBaseTransform *trans, gboolean, GstBuffer *buffer)
{
	AvfilterState &s = stateOf(trans);
	return noteFailure(s, submit(trans, s, buffer));
}

GstFlowReturn generateOutput(GstBaseTransform *trans, GstBuffer **out)
{
	AvfilterState &s = stateOf(trans);
	return noteFailure(s, pullOne(trans, s, out));
}

void pushPendingEvents(GstBaseTransform *trans, AvfilterState &s)
{
	for (GstEvent *event : s.pendingEvents)
		gst_pad_push_event(trans->srcpad, event);
	s.pendingEvents.clear();
}

void clearPendingEvents(AvfilterState &s)
{
	for (GstEvent *event : s.pendingEvents)
		gst_event_unref(event);
	s.pendingEvents.clear();
}

// CAPS are kept for the next buffer (the graph is built on its frames, and the output caps are
// what the graph gives); EOS drains the graph; a flush drops it.
gboolean sinkEvent(GstBaseTransform *trans, GstEvent *event)
{
	AvfilterState &s = stateOf(trans);
	switch (GST_EVENT_TYPE(event)) {
	case GST_EVENT_CAPS: {
		GstCaps *caps = nullptr;
		gst_event_parse_caps(event, &caps);
		GstVideoInfo info;
		const bool ok = gst_video_info_from_caps(&info, caps);
		if (ok) {
			const GstCapsFeatures *features = gst_caps_get_features(caps, 0);
			const bool gpuHandle =
				features && gst_caps_features_contains(
						    features, GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
			s.inCapsChanged = s.haveInCaps &&
					  (!gst_video_info_is_equal(&info, &s.inInfo) ||
					   gpuHandle != s.inGpuHandle);
			s.inInfo = info;
			s.inGpuHandle = gpuHandle;
			s.haveInCaps = true;
		}
		gst_event_unref(event);
		return ok;
	}
	case GST_EVENT_EOS:
		if (!s.failed)
			(void)noteFailure(s, drainGraph(trans, s));
		if (s.failed) {
			gst_event_unref(event);
			return TRUE;
		}
		pushPendingEvents(trans, s); // no caps came: the segment still precedes EOS
		// The totals, the graph's last frames counted, before EOS reaches the bus.
		postStats(GST_ELEMENT(trans));
		break;
	case GST_EVENT_FLUSH_STOP:
		dropGraph(s);
		s.failed = false;
		break;
	default:
		// Sticky events wait for the output caps, which the graph's first frame gives
		// (GStreamer's order: stream-start, caps, segment).
		if (!s.negotiated && GST_EVENT_IS_STICKY(event) &&
		    GST_EVENT_TYPE(event) != GST_EVENT_STREAM_START) {
			s.pendingEvents.push_back(event);
			return TRUE;
		}
		break;
	}
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_avfilter_parent_class)
		->sink_event(trans, event);
}

// Any input gpuhandle has a format for; any output (the graph decides): caps are not mapped
// through the graph before it runs.
GstCaps *transformCaps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *,
		       GstCaps *filter)
{
	GstPad *other = direction == GST_PAD_SINK ? trans->srcpad : trans->sinkpad;
	GstCaps *caps = gst_pad_get_pad_template_caps(other);
	return intersectFilter(caps, filter);
}

// Upstream may send frames described by a GstVideoMeta (they enter FFmpeg as they lie).
gboolean proposeAllocation(GstBaseTransform *, GstQuery *, GstQuery *query)
{
	gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	return TRUE;
}

gboolean start(GstBaseTransform *trans)
{
	AvfilterState &s = stateOf(trans);
	s.framesIn = s.framesOut = s.gpuHandleFrames = s.copiesIn = s.copiesOut = 0;
	return TRUE;
}

gboolean stop(GstBaseTransform *trans)
{
	AvfilterState &s = stateOf(trans);
	dropGraph(s);
	clearPendingEvents(s);
	s.failed = false;
	s.haveInCaps = false;
	s.inCapsChanged = false;
	s.negotiated = false;
	return TRUE;
}

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	AvfilterState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	const char *text = G_VALUE_HOLDS_STRING(value) ? g_value_get_string(value) : nullptr;
	switch (id) {
	case PropGraph: s.graphText = text && *text ? text : "null"; break;
	case PropHwDevice: s.hwDevice = text ? text : ""; break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	AvfilterState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropGraph: g_value_set_string(value, s.graphText.c_str()); break;
	case PropHwDevice: g_value_set_string(value, s.hwDevice.c_str()); break;
	case PropStats:
		g_value_take_boxed(value,
				   gst_structure_new("gpuhandleavfilter-stats", "frames-in",
						     G_TYPE_UINT64, s.framesIn.load(), "frames-out",
						     G_TYPE_UINT64, s.framesOut.load(),
						     "frames-gpuhandle", G_TYPE_UINT64,
						     s.gpuHandleFrames.load(), "copies-in",
						     G_TYPE_UINT64, s.copiesIn.load(), "copies-out",
						     G_TYPE_UINT64, s.copiesOut.load(), nullptr));
		break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleAvfilter *>(static_cast<void *>(object));
	clearPendingEvents(*self->state);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_avfilter_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_avfilter_class_init(GstGpuHandleAvfilterClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropGraph,
		g_param_spec_string(
			"graph", "Filter graph",
			"The libavfilter graph every frame goes through, as ffmpeg's -vf "
			"writes it (scale=640:360, scale_vulkan=w=1280:h=720, "
			"hwupload,avgblur_opencl, fps=10, ...)",
			"null", flags));
	g_object_class_install_property(
		object, PropHwDevice,
		g_param_spec_string(
			"hw-device", "Hardware device",
			"The graph's FFmpeg device, as ffmpeg's -init_hw_device TYPE[:DEVICE] "
			"(vulkan, opencl, cuda, vaapi); empty: the input frames' own device when "
			"they are GPU frames (they enter FFmpeg without a copy), none otherwise; "
			"none: no device (GPU frames are copied to host memory)",
			nullptr, flags));
	g_object_class_install_property(
		object, PropStats,
		g_param_spec_boxed("stats", "Statistics",
				   "frames-in, frames-out, frames-gpuhandle (pushed as "
				   "memory:GpuHandle), copies-in (input frames copied to reach "
				   "FFmpeg), copies-out (output frames copied) (guint64)",
				   GST_TYPE_STRUCTURE,
				   static_cast<GParamFlags>(G_PARAM_READABLE |
							    G_PARAM_STATIC_STRINGS)));

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	gst_element_class_set_static_metadata(
		element, "gpuhandle FFmpeg filter graph", "Filter/Effect/Converter/Video/Hardware",
		"Runs an FFmpeg (libavfilter) graph on every frame: GPU frames enter FFmpeg on "
		"their own device without a copy and go out as memory:GpuHandle",
		"gpuhandle developers");
	for (const auto &[name, direction] :
	     { std::make_pair("sink", GST_PAD_SINK), std::make_pair("src", GST_PAD_SRC) }) {
		GstCaps *caps = templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
		gst_caps_append(caps, templateCaps(GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY));
		gst_element_class_add_pad_template(
			element, gst_pad_template_new(name, direction, GST_PAD_ALWAYS, caps));
		gst_caps_unref(caps);
	}

	GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
	base->passthrough_on_same_caps = FALSE;
	base->transform_caps = transformCaps;
	base->submit_input_buffer = submitInputBuffer;
	base->generate_output = generateOutput;
	base->sink_event = sinkEvent;
	base->propose_allocation = proposeAllocation;
	base->start = start;
	base->stop = stop;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_avfilter_debug, "gpuhandleavfilter", 0,
				"gpuhandle FFmpeg filter graph");
}

static void gst_gpu_handle_avfilter_init(GstGpuHandleAvfilter *self)
{
	self->state = new AvfilterState();
}
