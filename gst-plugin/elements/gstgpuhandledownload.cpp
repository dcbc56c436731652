// gpuhandledownload: memory:GpuHandle in; system, GL, Vulkan, DMABuf or CUDA memory out (planner).
#include "gstgpuhandledownload.h"

GST_DEBUG_CATEGORY(gst_gpu_handle_download_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_download_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::download;

namespace {

enum Property { PropAllowCopy = 1, PropTimeout, PropStats };

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleDownload, gst_gpu_handle_download, GST_TYPE_BASE_TRANSFORM)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DEFINE(gpuhandledownload, "gpuhandledownload", GST_RANK_NONE,
			    GST_TYPE_GPU_HANDLE_DOWNLOAD);

namespace gpuhandle::gst::download {

Downloader &stateOf(void *self)
{
	return *static_cast<GstGpuHandleDownload *>(self)->state;
}

GstBaseTransformClass *parentClass()
{
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class);
}

} // namespace gpuhandle::gst::download

namespace {

// Src memories in the order offered downstream (the memory-type table's output order): system
// memory first, so that a sink taking anything gets plain bytes; GPU memories when downstream
// asks for them in its caps.
const std::vector<const char *> &srcFeatures()
{
	static const std::vector<const char *> features = memoryFeatures(MemoryRole::Output);
	return features;
}

GstCaps *transformCaps(GstBaseTransform *, GstPadDirection direction, GstCaps *caps,
		       GstCaps *filter)
{
	GstCaps *out = direction == GST_PAD_SINK
			       ? capsWithFeatures(caps, srcFeatures())
			       : capsWithFeatures(caps, { GST_CAPS_FEATURE_MEMORY_GPU_HANDLE });
	out = intersectFilter(out, filter);
	return out;
}

gboolean setCaps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
	Downloader &s = stateOf(trans);
	GstVideoInfo info;
	if (!gst_video_info_from_caps(&info, incaps)) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION, (_("The input is not raw video.")),
				  ("caps %" GST_PTR_FORMAT, static_cast<void *>(incaps)));
		return FALSE;
	}
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format.ok()) {
		GPUHANDLE_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
					(_("The video format is not supported by gpuhandle.")),
					format.error());
		return FALSE;
	}
	return setTarget(s, info, *format, memoryTypeOfCaps(outcaps)) ? TRUE : FALSE;
}

gboolean proposeAllocation(GstBaseTransform *trans, GstQuery *, GstQuery *query)
{
	Downloader &s = stateOf(trans);
	// Tell upstream which API we import into, and what it imports without a copy: GL and
	// Vulkan take images (textures) from Vulkan's exportable memory.
	addTargetHint(query, TargetHint{ s.target->backend, s.target->storage });
	gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	return TRUE;
}

gboolean decideAllocation(GstBaseTransform *trans, GstQuery *query)
{
	Downloader &s = stateOf(trans);
	noteDownstreamMetas(s, query);
	if (!toSystemMemory(s)) {
		// Output buffers wrap imported frames; no pool of ours or downstream's is used.
		while (gst_query_get_n_allocation_pools(query) > 0)
			gst_query_remove_nth_allocation_pool(query, 0);
		return TRUE;
	}
	// System memory copies go into a video pool (downstream's when it offers one).
	GstCaps *caps = nullptr;
	gst_query_parse_allocation(query, &caps, nullptr);
	GstBufferPool *pool = nullptr;
	guint size = static_cast<guint>(GST_VIDEO_INFO_SIZE(&s.info)), min = 2, max = 0;
	if (gst_query_get_n_allocation_pools(query) > 0) {
		gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
		size = std::max(size, static_cast<guint>(GST_VIDEO_INFO_SIZE(&s.info)));
	}
	if (!pool)
		pool = gst_video_buffer_pool_new();
	GstStructure *config = gst_buffer_pool_get_config(pool);
	gst_buffer_pool_config_set_params(config, caps, size, min, max);
	if (s.downstreamVideoMeta)
		gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
	gst_buffer_pool_set_config(pool, config);
	if (gst_query_get_n_allocation_pools(query) > 0)
		gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
	else
		gst_query_add_allocation_pool(query, pool, size, min, max);
	gst_object_unref(pool);
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)
		->decide_allocation(trans, query);
}

GstFlowReturn prepareOutputBuffer(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
	Downloader &s = stateOf(trans);
	std::optional<Frame> assembled;
	BackendRef backend;
	const Frame *frame = inputFrame(s, inbuf, assembled, backend);
	if (!frame)
		return GST_FLOW_ERROR;
	if (toSystemMemory(s))
		return toSystem(trans, inbuf, *frame, backend, outbuf);
	return toDevice(s, inbuf, *frame, backend, outbuf);
}

GstFlowReturn transform(GstBaseTransform *, GstBuffer *, GstBuffer *)
{
	// prepare_output_buffer did the work (wrapped, imported or copied).
	return GST_FLOW_OK;
}

gboolean sinkEvent(GstBaseTransform *trans, GstEvent *event)
{
	noteFlush(event, stateOf(trans).flushing);
	if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) // before the sink's EOS reaches the bus
		postStats(GST_ELEMENT(trans));
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)
		->sink_event(trans, event);
}

GstStateChangeReturn changeState(GstElement *element, GstStateChange transition)
{
	noteFlush(transition, stateOf(element).flushing);
	return GST_ELEMENT_CLASS(gst_gpu_handle_download_parent_class)
		->change_state(element, transition);
}

gboolean start(GstBaseTransform *trans)
{
	stateOf(trans).stats.reset();
	return TRUE;
}

gboolean stop(GstBaseTransform *trans)
{
	release(stateOf(trans));
	return TRUE;
}

gboolean query(GstBaseTransform *trans, GstPadDirection direction, GstQuery *q)
{
	if (answerQuery(stateOf(trans), q))
		return TRUE;
	return parentClass()->query(trans, direction, q);
}

void setContext(GstElement *element, GstContext *context)
{
	download::setContext(stateOf(element), context);
	GST_ELEMENT_CLASS(gst_gpu_handle_download_parent_class)->set_context(element, context);
}

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	Downloader &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropAllowCopy: s.allowCopy = g_value_get_boolean(value) != FALSE; break;
	case PropTimeout: s.timeoutNs = g_value_get_uint64(value); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	Downloader &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropAllowCopy: g_value_set_boolean(value, s.allowCopy); break;
	case PropTimeout: g_value_set_uint64(value, s.timeoutNs); break;
	case PropStats:
		g_value_take_boxed(value, s.stats.toStructure("gpuhandledownload-stats"));
		break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleDownload *>(static_cast<void *>(object));
	release(*self->state);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_download_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_download_class_init(GstGpuHandleDownloadClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropAllowCopy,
		g_param_spec_boolean(
			"allow-copy", "Allow copies",
			"Copy frames (on the GPU, else through system memory) when no "
			"zero-copy path into the negotiated memory exists; when false, "
			"such a frame is a not-negotiated error",
			TRUE, flags));
	g_object_class_install_property(
		object, PropTimeout,
		timeoutParamSpec("Longest wait for a frame's fence, in nanoseconds; a fence that "
				 "does not signal in time is an element error"));
	g_object_class_install_property(object, PropStats, statsParamSpec());

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	element->set_context = setContext;
	element->change_state = changeState;
	gst_element_class_set_static_metadata(
		element, "gpuhandle download", "Filter/Video/Hardware",
		"Moves gpuhandle frames (memory:GpuHandle) into system, GL, Vulkan, DMABuf or CUDA "
		"memory through gpuhandle's path planner, without a copy where a route exists",
		"gpuhandle developers");
	GstCaps *sinkCaps = templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
	gst_element_class_add_pad_template(element, gst_pad_template_new("sink", GST_PAD_SINK,
									 GST_PAD_ALWAYS, sinkCaps));
	gst_caps_unref(sinkCaps);
	GstCaps *srcCaps = gst_caps_new_empty();
	for (const char *feature : srcFeatures()) {
		GstCaps *any = templateCaps(feature);
		gst_caps_append(srcCaps, capsWithFeatures(any, { feature }));
		gst_caps_unref(any);
	}
	gst_element_class_add_pad_template(element, gst_pad_template_new("src", GST_PAD_SRC,
									 GST_PAD_ALWAYS, srcCaps));
	gst_caps_unref(srcCaps);

	GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
	base->transform_caps = transformCaps;
	base->set_caps = setCaps;
	base->propose_allocation = proposeAllocation;
	base->decide_allocation = decideAllocation;
	base->prepare_output_buffer = prepareOutputBuffer;
	base->transform = transform;
	base->transform_meta = transformMetaKeepingPixels;
	base->start = start;
	base->stop = stop;
	base->query = query;
	base->sink_event = sinkEvent;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_download_debug, "gpuhandledownload", 0,
				"gpuhandle download");
}

static void gst_gpu_handle_download_init(GstGpuHandleDownload *self)
{
	self->state = new Downloader();
	self->state->element = GST_ELEMENT(self);
	self->state->category = gst_gpu_handle_download_debug;
	self->state->carryMetadata = [](GstElement *element, GstBuffer *out, GstBuffer *in) {
		// GstBaseTransform's own copy_metadata, which prepare_output_buffer would have
		// run had it made the buffer: timestamps, flags and the metas it carries.
		GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_download_parent_class)
			->copy_metadata(GST_BASE_TRANSFORM(element), in, out);
	};
}
