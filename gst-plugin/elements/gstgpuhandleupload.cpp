// gpuhandleupload: system, DMABuf, GL, Vulkan, CUDA or VA memory in, memory:GpuHandle out.
#include "gstgpuhandleupload.h"

GST_DEBUG_CATEGORY(gst_gpu_handle_upload_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_upload_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::upload;

namespace {

enum Property { PropBackend = 1, PropStorage, PropTimeout, PropStats, PropMemoryBudget };

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleUpload, gst_gpu_handle_upload, GST_TYPE_BASE_TRANSFORM)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DEFINE(gpuhandleupload, "gpuhandleupload", GST_RANK_NONE,
			    GST_TYPE_GPU_HANDLE_UPLOAD);

namespace gpuhandle::gst::upload {

UploadState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleUpload *>(self)->state;
}

GstBaseTransformClass *parentClass()
{
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class);
}

// Timestamps, flags and the metas GstBaseTransform carries over: its own copy_metadata, which
// prepare_output_buffer would have run had it made the buffer.
void copyMetadata(GstBaseTransform *trans, GstBuffer *out, GstBuffer *in)
{
	GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class)->copy_metadata(trans, in, out);
}

} // namespace gpuhandle::gst::upload

namespace {

// Every memory feature the sink pad takes, in the order caps are offered upstream: gpuhandle's
// own, then the memory-type table's input order.
const std::vector<const char *> &sinkFeatures()
{
	static const std::vector<const char *> features = [] {
		std::vector<const char *> all{ GST_CAPS_FEATURE_MEMORY_GPU_HANDLE };
		for (const char *feature : memoryFeatures(MemoryRole::Input))
			all.push_back(feature);
		return all;
	}();
	return features;
}

// The drm-formats the sink offers DMA-BUF producers (GStreamer 1.24+): linear, and every
// modifier that the backend the property names imports, opened through the element's device set
// (the one that would take them). For auto, cpu and memfd: linear, which every importer takes.
DrmFormatOffer sinkDrmFormats(GstBaseTransform *trans)
{
	if (!hasDmaDrmCaps())
		return {};
	UploadState &s = stateOf(trans);
	BackendChoice choice;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		choice = s.backendChoice;
	}
	const std::optional<BackendKind> kind = backendKindOf(choice);
	if (!kind || *kind == BackendKind::Cpu || *kind == BackendKind::Fd)
		return {};
	DeviceSetRef devices = ensureDevices(GST_ELEMENT_CAST(trans), s.devices);
	Result<BackendRef> backend = devices->backend(*kind);
	if (!backend.ok()) {
		GST_DEBUG_OBJECT(trans, "DMA_DRM caps: linear only (%s)",
				 backend.error().message().c_str());
		return {};
	}
	BackendRef target = std::move(*backend);
	return DrmFormatOffer{ false, [target](PixelFormat format) {
				      return target->dmaBufImportModifiers(format);
			      } };
}

GstCaps *transformCaps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
		       GstCaps *filter)
{
	GstCaps *out = direction == GST_PAD_SINK
			       ? capsWithFeatures(caps, { GST_CAPS_FEATURE_MEMORY_GPU_HANDLE })
			       : capsWithFeatures(caps, sinkFeatures(), sinkDrmFormats(trans));
	out = intersectFilter(out, filter);
	GST_TRACE_OBJECT(trans, "%s caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
			 direction == GST_PAD_SINK ? "sink" : "src", static_cast<void *>(caps),
			 static_cast<void *>(out));
	return out;
}

BufferMemory memoryOfCaps(GstCaps *caps)
{
	GstCapsFeatures *features = gst_caps_get_features(caps, 0);
	if (gst_caps_features_contains(features, GST_CAPS_FEATURE_MEMORY_GPU_HANDLE))
		return BufferMemory::GpuHandle;
	return memoryTypeOfCaps(caps).memory;
}

void clearPool(UploadState &s)
{
	if (s.pool) {
		gst_buffer_pool_set_active(s.pool, FALSE);
		gst_object_unref(s.pool);
		s.pool = nullptr;
	}
}

// The backend system memory goes to: the property's, or for auto the one downstream imports
// from best (the target hint), else cpu (wrapped in place: no copy at all).
BackendKind chooseBackend(BackendChoice choice, const std::optional<TargetHint> &hint)
{
	if (auto kind = backendKindOf(choice))
		return *kind;
	if (!hint)
		return BackendKind::Cpu;
	switch (hint->backend) {
	case BackendKind::OpenGL:
		// GL imports Vulkan's exportable memory without a copy; its own textures would need
		// a CPU upload anyway.
		return BackendKind::Vulkan;
	case BackendKind::Vulkan:
	case BackendKind::Cuda:
	case BackendKind::VaApi: return hint->backend;
	default: return BackendKind::Cpu;
	}
}

FrameStorage chooseStorage(StorageChoice choice, const std::optional<TargetHint> &hint)
{
	switch (choice) {
	case StorageChoice::Buffer: return FrameStorage::Buffer;
	case StorageChoice::LinearImage: return FrameStorage::LinearImage;
	case StorageChoice::OptimalImage: return FrameStorage::OptimalImage;
	case StorageChoice::Auto: break;
	}
	return hint ? hint->storage : FrameStorage::Buffer;
}

gboolean setCaps(GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
	UploadState &s = stateOf(trans);
	GstVideoInfo info;
	// DMA-BUF caps may be GStreamer 1.24's DMA_DRM form, which gst_video_info_from_caps
	// refuses.
	Result<DmaDrmInfo> drm =
		memoryOfCaps(incaps) == BufferMemory::DmaBuf
			? dmaDrmInfoFromCaps(incaps)
			: Result<DmaDrmInfo>(Error(ErrorCode::NotSupported, "caps", ""));
	if (drm.ok())
		info = drm->info;
	else if (!gst_video_info_from_caps(&info, incaps)) {
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
	s.info = info;
	s.format = *format;
	s.input = memoryOfCaps(incaps);
	s.inputAdapter = s.adapters.find(s.input);
	clearPool(s);
	s.backend.reset();
	gst_base_transform_set_passthrough(trans, s.input == BufferMemory::GpuHandle);
	if (s.input == BufferMemory::DmaBuf)
		s.modifier = drm.ok() ? drm->modifier : kDrmModifierLinear;
	GST_DEBUG_OBJECT(trans, "%s %s input -> %" GST_PTR_FORMAT, bufferMemoryName(s.input),
			 pixelFormatName(s.format), static_cast<void *>(outcaps));
	return TRUE;
}

// Opens the backend system memory goes to and a pool of its frames; posts the element error.
bool prepareBackend(GstBaseTransform *trans, GstQuery *query)
{
	UploadState &s = stateOf(trans);
	BackendChoice choice;
	StorageChoice storageChoice;
	std::string memoryBudget;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		choice = s.backendChoice;
		storageChoice = s.storageChoice;
		memoryBudget = s.memoryBudget;
	}
	const std::optional<TargetHint> hint = findTargetHint(query);
	BackendKind kind = chooseBackend(choice, hint);
	FrameStorage storage = chooseStorage(storageChoice, hint);
	DeviceSetRef devices = ensureDevices(GST_ELEMENT_CAST(trans), s.devices);
	Result<BackendRef> backend = devices->backend(kind);
	if (!backend.ok() && choice == BackendChoice::Auto && kind != BackendKind::Cpu) {
		GST_INFO_OBJECT(trans, "auto: %s did not open (%s); using cpu",
				backendKindName(kind), backend.error().message().c_str());
		kind = BackendKind::Cpu;
		backend = devices->backend(kind);
	}
	if (!backend.ok()) {
		GST_ELEMENT_ERROR(trans, RESOURCE, NOT_FOUND,
				  (_("The gpuhandle backend \"%s\" is not available."),
				   backendKindName(kind)),
				  ("%s", backend.error().message().c_str()));
		return false;
	}
	// cpu frames wrap the input in place; the others copy into pooled frames, which need
	// the format in the chosen storage (auto falls back to a buffer, which every format has).
	if (kind != BackendKind::Cpu && !(*backend)->supportsFormat(s.format, storage) &&
	    storageChoice == StorageChoice::Auto)
		storage = FrameStorage::Buffer;
	if (kind != BackendKind::Cpu && !(*backend)->supportsFormat(s.format, storage)) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("The gpuhandle backend \"%s\" cannot hold %s frames."),
				   backendKindName(kind), pixelFormatName(s.format)),
				  ("no %s storage for %s on %s", frameStorageName(storage),
				   pixelFormatName(s.format),
				   (*backend)->deviceInfo().name.c_str()));
		return false;
	}
	s.backend = *backend;
	s.storage = storage;
	GST_INFO_OBJECT(trans, "system memory goes to %s (%s, %s)%s", backendKindName(kind),
			(*backend)->deviceInfo().name.c_str(),
			kind == BackendKind::Cpu ? "wrapped in place" : frameStorageName(storage),
			hint ? " following downstream's target hint" : "");
	if (kind == BackendKind::Cpu) // frames wrapped in place charge nothing: only checked
		return checkMemoryBudget(GST_ELEMENT_CAST(trans), memoryBudget);
	// The cap before the pool: its first frames are charged already.
	if (!applyMemoryBudget(GST_ELEMENT_CAST(trans), memoryBudget, s.backend))
		return false;
	GstCaps *outcaps = nullptr;
	gst_query_parse_allocation(query, &outcaps, nullptr);
	s.pool = bufferPoolNew(s.backend, storage);
	GstStructure *config = gst_buffer_pool_get_config(s.pool);
	gst_buffer_pool_config_set_params(config, outcaps, 0, 2, 0);
	if (!gst_buffer_pool_set_config(s.pool, config) ||
	    !gst_buffer_pool_set_active(s.pool, TRUE)) {
		if (std::optional<Error> why = bufferPoolLastError(s.pool)) {
			clearPool(s);
			GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, NO_SPACE_LEFT,
						(_("Could not allocate gpuhandle frames.")), *why);
			return false;
		}
		clearPool(s);
		GST_ELEMENT_ERROR(
			trans, RESOURCE, NO_SPACE_LEFT, (_("Could not allocate gpuhandle frames.")),
			("a pool of %s %s frames on %s did not start", frameStorageName(storage),
			 pixelFormatName(s.format), backendKindName(kind)));
		return false;
	}
	s.budgetStats.set(s.backend, s.pool);
	return true;
}

gboolean decideAllocation(GstBaseTransform *trans, GstQuery *query)
{
	UploadState &s = stateOf(trans);
	clearPool(s);
	// Our buffers come from our own frames (or wrap the input); downstream's pools hold other
	// memory, so none is used.
	while (gst_query_get_n_allocation_pools(query) > 0)
		gst_query_remove_nth_allocation_pool(query, 0);
	if (s.input != BufferMemory::System)
		return TRUE;
	return prepareBackend(trans, query) ? TRUE : FALSE;
}

gboolean proposeAllocation(GstBaseTransform *trans, GstQuery *decideQuery, GstQuery *query)
{
	(void)trans;
	(void)decideQuery;
	// Upstream may give any layout: the video meta says it, and a sync meta says when to read.
	gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	gst_query_add_allocation_meta(query, GST_GPU_HANDLE_SYNC_META_API_TYPE, nullptr);
	return TRUE;
}

GstFlowReturn prepareOutputBuffer(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer **outbuf)
{
	UploadState &s = stateOf(trans);
	if (gst_base_transform_is_passthrough(trans)) {
		*outbuf = inbuf;
		return GST_FLOW_OK;
	}
	if (s.input == BufferMemory::System && !s.backend) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION, (_("The element was not negotiated.")),
				  ("no allocation query reached gpuhandleupload"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (gst_buffer_n_memory(inbuf) == 0) {
		if (GST_BUFFER_FLAG_IS_SET(inbuf, GST_BUFFER_FLAG_GAP)) {
			// A gap carries no picture: it goes on as an empty gap buffer.
			*outbuf = gst_buffer_new();
			copyMetadata(trans, *outbuf, inbuf);
			GST_BUFFER_FLAG_SET(*outbuf, GST_BUFFER_FLAG_GAP);
			return GST_FLOW_OK;
		}
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("the buffer has no memory"));
		return GST_FLOW_ERROR;
	}
	BackendRef backend;
	Result<Frame> frame = wrapInput(trans, inbuf, backend);
	if (!frame.ok()) {
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("%s input: %s", bufferMemoryName(s.input),
				   frame.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	if (s.pool)
		return copyIntoPool(trans, inbuf, *frame, outbuf);
	// Upstream owns the memory: the wrap refuses write maps (a tee may share the buffer).
	GstBuffer *out = bufferFromFrame(*frame, backend, true);
	if (!out) {
		GST_ELEMENT_ERROR(trans, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("no GstVideoFormat for %s", pixelFormatName(frame->format())));
		return GST_FLOW_ERROR;
	}
	if (!frame->acquire().isNoop() || !frame->release().isNone())
		// The release gate stays with the frame (signalled when its last user is done): a
		// meta of its own would signal it when this buffer goes, while the consumer's
		// zero-copy output may still read the memory.
		addSyncMeta(out, frame->acquire());
	// A native memory stays findable (and alive) as the parent: a consumer whose backend cannot
	// map GStreamer's own textures or images reads them through GStreamer.
	if (s.input != BufferMemory::System)
		gst_buffer_add_parent_buffer_meta(out, inbuf);
	copyMetadata(trans, out, inbuf);
	s.stats.count(ExecutionPath::Kind::ZeroCopy);
	*outbuf = out;
	return GST_FLOW_OK;
}

GstFlowReturn transform(GstBaseTransform *, GstBuffer *, GstBuffer *)
{
	// prepare_output_buffer did the work: the output wraps or holds the frame already.
	return GST_FLOW_OK;
}

gboolean sinkEvent(GstBaseTransform *trans, GstEvent *event)
{
	noteFlush(event, stateOf(trans).flushing);
	if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) // before the sink's EOS reaches the bus
		postStats(GST_ELEMENT(trans));
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class)
		->sink_event(trans, event);
}

GstStateChangeReturn changeState(GstElement *element, GstStateChange transition)
{
	noteFlush(transition, stateOf(element).flushing);
	return GST_ELEMENT_CLASS(gst_gpu_handle_upload_parent_class)
		->change_state(element, transition);
}

gboolean stop(GstBaseTransform *trans)
{
	UploadState &s = stateOf(trans);
	clearPool(s);
	s.backend.reset();
	s.budgetStats.clear();
	return TRUE;
}

gboolean start(GstBaseTransform *trans)
{
	stateOf(trans).stats.reset();
	return TRUE;
}

gboolean query(GstBaseTransform *trans, GstPadDirection direction, GstQuery *q)
{
	if (handleDevicesQuery(q, stateOf(trans).devices))
		return TRUE;
	if (stateOf(trans).adapters.answerContextQuery(GST_ELEMENT_CAST(trans), q))
		return TRUE;
	if (direction == GST_PAD_SINK &&
	    (GST_QUERY_TYPE(q) == GST_QUERY_CAPS || GST_QUERY_TYPE(q) == GST_QUERY_ACCEPT_CAPS))
		warnUnsupportedFormat(GST_ELEMENT_CAST(trans), q, stateOf(trans).warnedFormat);
	return GST_BASE_TRANSFORM_CLASS(gst_gpu_handle_upload_parent_class)
		->query(trans, direction, q);
}

void setContext(GstElement *element, GstContext *context)
{
	handleDevicesSetContext(context, stateOf(element).devices);
	stateOf(element).adapters.setContext(element, context);
	GST_ELEMENT_CLASS(gst_gpu_handle_upload_parent_class)->set_context(element, context);
}

void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	UploadState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropBackend:
		s.backendChoice = static_cast<BackendChoice>(g_value_get_enum(value));
		break;
	case PropStorage:
		s.storageChoice = static_cast<StorageChoice>(g_value_get_enum(value));
		break;
	case PropTimeout: s.timeoutNs = g_value_get_uint64(value); break;
	case PropMemoryBudget: {
		const gchar *text = g_value_get_string(value);
		s.memoryBudget = text ? text : "";
		break;
	}
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	UploadState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropBackend: g_value_set_enum(value, static_cast<int>(s.backendChoice)); break;
	case PropStorage: g_value_set_enum(value, static_cast<int>(s.storageChoice)); break;
	case PropTimeout: g_value_set_uint64(value, s.timeoutNs); break;
	case PropMemoryBudget: g_value_set_string(value, s.memoryBudget.c_str()); break;
	case PropStats: {
		GstStructure *stats = s.stats.toStructure("gpuhandleupload-stats");
		s.budgetStats.addTo(stats);
		g_value_take_boxed(value, stats);
		break;
	}
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleUpload *>(static_cast<void *>(object));
	clearPool(*self->state);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_upload_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_upload_class_init(GstGpuHandleUploadClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropBackend,
		g_param_spec_enum("backend", "Backend",
				  "Where system memory goes: wrapped in place (cpu), copied into "
				  "pooled frames of the named API, or (auto) what downstream "
				  "imports best. Native memories are always wrapped in place.",
				  backendChoiceType(), static_cast<int>(BackendChoice::Auto),
				  flags));
	g_object_class_install_property(
		object, PropStorage,
		g_param_spec_enum("storage", "Storage",
				  "How pooled frames are stored: one buffer, or images per plane "
				  "(auto: what downstream imports without a copy, else a buffer)",
				  storageChoiceType(), static_cast<int>(StorageChoice::Auto),
				  flags));
	g_object_class_install_property(
		object, PropTimeout,
		timeoutParamSpec("Longest wait for a frame's fence or a device, in nanoseconds"));
	g_object_class_install_property(object, PropStats, statsParamSpec());
	g_object_class_install_property(object, PropMemoryBudget, memoryBudgetParamSpec());

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	element->set_context = setContext;
	element->change_state = changeState;
	gst_element_class_set_static_metadata(
		element, "gpuhandle upload", "Filter/Video/Hardware",
		"Wraps system, DMABuf, GL and Vulkan memory as gpuhandle frames "
		"(memory:GpuHandle) without a copy, or copies system memory into a gpuhandle "
		"backend's pooled frames",
		"gpuhandle developers");
	GstCaps *sinkCaps = gst_caps_new_empty();
	for (const char *feature : sinkFeatures()) {
		// In the form the caps transform offers: GL's and Vulkan's formats, DMA_DRM (with
		// any drm-format: the transform names the backend's).
		GstCaps *any = templateCaps(feature);
		gst_caps_append(sinkCaps,
				capsWithFeatures(any, { feature }, DrmFormatOffer{ true, {} }));
		gst_caps_unref(any);
	}
	gst_element_class_add_pad_template(element, gst_pad_template_new("sink", GST_PAD_SINK,
									 GST_PAD_ALWAYS, sinkCaps));
	gst_caps_unref(sinkCaps);
	GstCaps *srcCaps = templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
	gst_element_class_add_pad_template(element, gst_pad_template_new("src", GST_PAD_SRC,
									 GST_PAD_ALWAYS, srcCaps));
	gst_caps_unref(srcCaps);

	GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
	base->passthrough_on_same_caps = TRUE;
	base->transform_caps = transformCaps;
	base->set_caps = setCaps;
	base->decide_allocation = decideAllocation;
	base->propose_allocation = proposeAllocation;
	base->prepare_output_buffer = prepareOutputBuffer;
	base->transform = transform;
	base->transform_meta = transformMetaKeepingPixels;
	base->start = start;
	base->stop = stop;
	base->query = query;
	base->sink_event = sinkEvent;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_upload_debug, "gpuhandleupload", 0,
				"gpuhandle upload");
}

static void gst_gpu_handle_upload_init(GstGpuHandleUpload *self)
{
	self->state = new UploadState();
}
