// GstGpuHandleBufferPool: reusable gpuhandle frames of one backend as GstBuffers.
#include <optional>

#include <gst/gpuhandle/gstgpuhandlebufferpool.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_pool_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_pool_debug

using namespace gpuhandle;

namespace {

// What set_config decided; read by alloc_buffer, which GstBufferPool calls only while the
// pool is active (after set_config, which it refuses while active).
struct PoolState {
	BackendRef backend{};
	FrameStorage storage = FrameStorage::Buffer;
	std::optional<AllocateRequest> request{};
};

} // namespace

struct GstGpuHandleBufferPool {
	GstBufferPool parent;
	PoolState *state;
};

struct GstGpuHandleBufferPoolClass {
	GstBufferPoolClass parent_class;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleBufferPool, gst_gpu_handle_buffer_pool, GST_TYPE_BUFFER_POOL)
#pragma GCC diagnostic pop

namespace {

PoolState *stateOf(GstBufferPool *pool)
{
	return reinterpret_cast<GstGpuHandleBufferPool *>(pool)->state;
}

gboolean setConfig(GstBufferPool *pool, GstStructure *config)
{
	PoolState *state = stateOf(pool);
	GstCaps *caps = nullptr;
	guint size = 0, min = 0, max = 0;
	if (!gst_buffer_pool_config_get_params(config, &caps, &size, &min, &max) || !caps) {
		GST_WARNING_OBJECT(pool, "the configuration has no caps");
		return FALSE;
	}
	GstVideoInfo info;
	if (!gst_video_info_from_caps(&info, caps)) {
		GST_WARNING_OBJECT(pool, "caps %" GST_PTR_FORMAT " are not raw video",
				   static_cast<void *>(caps));
		return FALSE;
	}
	Result<PixelFormat> format = gst::pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format.ok()) {
		GST_WARNING_OBJECT(pool, "%s", format.error().message().c_str());
		return FALSE;
	}
	if (!state->backend->supportsFormat(*format, state->storage)) {
		GST_WARNING_OBJECT(pool, "the %s backend cannot allocate %s frames as %s",
				   backendKindName(state->backend->kind()),
				   pixelFormatName(*format), frameStorageName(state->storage));
		return FALSE;
	}
	AllocateRequest request{};
	request.format = *format;
	request.width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
	request.height = static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info));
	request.colorimetry = gst::colorimetryOf(info);
	request.storage = state->storage;
	request.exportable = true;
	// GStreamer drops returned buffers whose size differs from the configured one, and the
	// size depends on the backend's alignment: one frame allocated now tells it.
	Result<Frame> probe = state->backend->allocate(request);
	if (!probe.ok()) {
		GST_WARNING_OBJECT(pool, "the %s backend cannot allocate %s %ux%u frames: %s",
				   backendKindName(state->backend->kind()),
				   pixelFormatName(*format), request.width, request.height,
				   probe.error().message().c_str());
		return FALSE;
	}
	GstBuffer *probeBuffer = gst::bufferFromFrame(*probe, state->backend);
	if (!probeBuffer)
		return FALSE;
	size = static_cast<guint>(gst_buffer_get_size(probeBuffer));
	gst_buffer_unref(probeBuffer);
	state->request = request;
	gst_buffer_pool_config_set_params(config, caps, size, min, max);
	auto *parent = GST_BUFFER_POOL_CLASS(gst_gpu_handle_buffer_pool_parent_class);
	return parent->set_config(pool, config);
}

GstFlowReturn allocBuffer(GstBufferPool *pool, GstBuffer **buffer,
			  GstBufferPoolAcquireParams * /*params*/)
{
	PoolState *state = stateOf(pool);
	if (!state->request)
		return GST_FLOW_NOT_NEGOTIATED;
	Result<Frame> frame = state->backend->allocate(*state->request);
	if (!frame.ok()) {
		GST_WARNING_OBJECT(pool, "allocating a frame failed: %s",
				   frame.error().message().c_str());
		return GST_FLOW_ERROR;
	}
	GstBuffer *out = gst::bufferFromFrame(*frame, state->backend);
	if (!out)
		return GST_FLOW_ERROR;
	// The layout stays with the memories it describes for as long as the buffer is reused.
	if (GstVideoMeta *meta = gst_buffer_get_video_meta(out))
		meta->meta.flags =
			static_cast<GstMetaFlags>(meta->meta.flags | GST_META_FLAG_POOLED);
	*buffer = out;
	return GST_FLOW_OK;
}

void finalize(GObject *object)
{
	auto *self = reinterpret_cast<GstGpuHandleBufferPool *>(object);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_buffer_pool_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_buffer_pool_class_init(GstGpuHandleBufferPoolClass *klass)
{
	G_OBJECT_CLASS(klass)->finalize = finalize;
	GstBufferPoolClass *pool = GST_BUFFER_POOL_CLASS(klass);
	pool->set_config = setConfig;
	pool->alloc_buffer = allocBuffer;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_pool_debug, "gpuhandlepool", 0,
				"pools of gpuhandle frames");
}

static void gst_gpu_handle_buffer_pool_init(GstGpuHandleBufferPool *self)
{
	self->state = new PoolState();
}

namespace gpuhandle::gst {

GstBufferPool *bufferPoolNew(const BackendRef &backend, FrameStorage storage)
{
	if (!backend)
		return nullptr;
	gst_gpu_handle_init();
	auto *pool = static_cast<GstBufferPool *>(
		g_object_new(gst_gpu_handle_buffer_pool_get_type(), nullptr));
	gst_object_ref_sink(pool);
	stateOf(pool)->backend = backend;
	stateOf(pool)->storage = storage;
	return pool;
}

BackendRef bufferPoolBackend(GstBufferPool *pool)
{
	if (!pool || !G_TYPE_CHECK_INSTANCE_TYPE(pool, gst_gpu_handle_buffer_pool_get_type()))
		return {};
	return stateOf(pool)->backend;
}

} // namespace gpuhandle::gst
