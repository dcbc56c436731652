// GstGpuHandleBufferPool: reusable gpuhandle frames of one backend as GstBuffers, which give idle
// frames back when the backend's memory budget is short.
#include <atomic>
#include <mutex>
#include <optional>

#include <gst/gpuhandle/gstgpuhandlebufferpool.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_pool_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_pool_debug

using namespace gpuhandle;

namespace {

// Set while this thread evicts idle buffers: the pool then allocates none (an acquire that
// finds the queue empty would otherwise grow the pool from inside the budget's eviction).
thread_local bool tEvicting = false;

// The pool as its budget sees it: idle buffers (allocated, not handed out) are given back.
// It finds the pool through a weak reference: the registration lasts from bufferPoolNew to
// finalize, and an eviction on another thread holds the pool only while it runs.
class PoolEviction final : public EvictablePool
{
public:
	PoolEviction() { g_weak_ref_init(&pool_, nullptr); }
	~PoolEviction() override { g_weak_ref_clear(&pool_); }
	PoolEviction(const PoolEviction &) = delete;
	PoolEviction &operator=(const PoolEviction &) = delete;
	void setPool(GstBufferPool *pool) { g_weak_ref_set(&pool_, pool); }
	uint64_t evictUnused(uint64_t wantedBytes) override;
	uint64_t bytesInUse() const override { return allocated * frameBytes; }

	std::atomic<uint64_t> allocated{ 0 };   // buffers the pool holds, idle or handed out
	std::atomic<uint64_t> outstanding{ 0 }; // of those, handed out
	std::atomic<uint64_t> evicted{ 0 };     // freed for the budget, ever
	std::atomic<uint64_t> frameBytes{ 0 };  // what each frame reserves (set_config)
	// GstBufferPool's start queues its first buffers through release_buffer without an
	// acquire: those releases are not counted.
	std::atomic<bool> starting{ false };

private:
	GWeakRef pool_;
};

// What set_config decided; read by alloc_buffer, which GstBufferPool calls only while the
// pool is active (after set_config, which it refuses while active).
struct PoolState {
	BackendRef backend{};
	FrameStorage storage = FrameStorage::Buffer;
	std::optional<AllocateRequest> request{};
	PoolEviction eviction;
	// With the backend's budget from bufferPoolNew to finalize. Not per activation: stop and
	// start run under GstBufferPool's lock, which an eviction's acquire may be waiting for
	// (a pool that is flushing takes it when its last buffer comes back), and unregistering
	// waits for a running eviction.
	BudgetRegistration registration{};
	std::mutex errorMutex{};
	std::optional<Error> lastError{}; // the last failed allocation's, under errorMutex
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
		{
			std::lock_guard<std::mutex> lock(state->errorMutex);
			state->lastError = probe.error();
		}
		GST_WARNING_OBJECT(pool, "the %s backend cannot allocate %s %ux%u frames: %s",
				   backendKindName(state->backend->kind()),
				   pixelFormatName(*format), request.width, request.height,
				   probe.error().message().c_str());
		return FALSE;
	}
	GstBuffer *probeBuffer = gst::bufferFromFrame(*probe, state->backend);
	if (!probeBuffer)
		return FALSE;
	Result<uint64_t> frameBytes =
		estimateTextureBytes(request.format, request.width, request.height);
	state->eviction.frameBytes = frameBytes.ok() ? *frameBytes : 0;
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
	if (tEvicting)
		return GST_FLOW_EOS; // ends the eviction's acquire loop without growing the pool
	Result<Frame> frame = state->backend->allocate(*state->request);
	if (!frame.ok()) {
		GST_WARNING_OBJECT(pool, "allocating a frame failed: %s",
				   frame.error().message().c_str());
		std::lock_guard<std::mutex> lock(state->errorMutex);
		state->lastError = frame.error();
		return GST_FLOW_ERROR;
	}
	GstBuffer *out = gst::bufferFromFrame(*frame, state->backend);
	if (!out)
		return GST_FLOW_ERROR;
	// The layout stays with the memories it describes for as long as the buffer is reused.
	if (GstVideoMeta *meta = gst_buffer_get_video_meta(out))
		meta->meta.flags =
			static_cast<GstMetaFlags>(meta->meta.flags | GST_META_FLAG_POOLED);
	state->eviction.allocated++;
	*buffer = out;
	return GST_FLOW_OK;
}

void freeBuffer(GstBufferPool *pool, GstBuffer *buffer)
{
	stateOf(pool)->eviction.allocated--;
	GST_BUFFER_POOL_CLASS(gst_gpu_handle_buffer_pool_parent_class)->free_buffer(pool, buffer);
}

GstFlowReturn acquireBuffer(GstBufferPool *pool, GstBuffer **buffer,
			    GstBufferPoolAcquireParams *params)
{
	GstFlowReturn ret = GST_BUFFER_POOL_CLASS(gst_gpu_handle_buffer_pool_parent_class)
				    ->acquire_buffer(pool, buffer, params);
	if (ret == GST_FLOW_OK)
		stateOf(pool)->eviction.outstanding++;
	return ret;
}

void releaseBuffer(GstBufferPool *pool, GstBuffer *buffer)
{
	if (!stateOf(pool)->eviction.starting)
		stateOf(pool)->eviction.outstanding--;
	GST_BUFFER_POOL_CLASS(gst_gpu_handle_buffer_pool_parent_class)
		->release_buffer(pool, buffer);
}

gboolean start(GstBufferPool *pool)
{
	PoolState *state = stateOf(pool);
	state->eviction.starting = true;
	const gboolean started =
		GST_BUFFER_POOL_CLASS(gst_gpu_handle_buffer_pool_parent_class)->start(pool);
	state->eviction.starting = false;
	return started;
}

// Takes idle buffers out of the queue and hands them back tagged, which GstBufferPool frees
// instead of queueing (a buffer whose memory was tagged is not reused): their frames, and the
// reservations those hold, go. Buffers handed out are not touched.
uint64_t PoolEviction::evictUnused(uint64_t wantedBytes)
{
	auto *pool = static_cast<GstBufferPool *>(g_weak_ref_get(&pool_));
	if (!pool)
		return 0; // being finalized
	uint64_t freed = 0;
	tEvicting = true;
	GstBufferPoolAcquireParams params{};
	params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
	while (freed < wantedBytes && allocated.load() > outstanding.load()) {
		GstBuffer *buffer = nullptr;
		if (gst_buffer_pool_acquire_buffer(pool, &buffer, &params) != GST_FLOW_OK)
			break;
		GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_TAG_MEMORY);
		gst_buffer_unref(buffer);
		freed += frameBytes;
		evicted++;
	}
	tEvicting = false;
	GST_DEBUG_OBJECT(pool, "gave back %" G_GUINT64_FORMAT " bytes of idle frames to the budget",
			 static_cast<guint64>(freed));
	// Last: when this is the last reference, finalize runs here and frees this object (it
	// unregisters from inside the budget's own call, which the budget allows).
	gst_object_unref(pool);
	return freed;
}

void finalize(GObject *object)
{
	auto *self = reinterpret_cast<GstGpuHandleBufferPool *>(object);
	self->state->registration.reset();
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
	pool->free_buffer = freeBuffer;
	pool->acquire_buffer = acquireBuffer;
	pool->release_buffer = releaseBuffer;
	pool->start = start;
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
	PoolState *state = stateOf(pool);
	state->backend = backend;
	state->storage = storage;
	state->eviction.setPool(pool);
	// Pressure finds the idle frames (a pool holding none is skipped).
	if (const std::shared_ptr<MemoryBudget> &budget = backend->budget()) {
		Result<BudgetRegistration> registered =
			budget->registerPool(backend->kind(), state->eviction);
		if (registered.ok())
			state->registration = std::move(*registered);
	}
	return pool;
}

namespace {
bool isGpuHandlePool(GstBufferPool *pool)
{
	return pool && G_TYPE_CHECK_INSTANCE_TYPE(pool, gst_gpu_handle_buffer_pool_get_type());
}
} // namespace

BackendRef bufferPoolBackend(GstBufferPool *pool)
{
	return isGpuHandlePool(pool) ? stateOf(pool)->backend : nullptr;
}

std::optional<Error> bufferPoolLastError(GstBufferPool *pool)
{
	if (!isGpuHandlePool(pool))
		return std::nullopt;
	PoolState *state = stateOf(pool);
	std::lock_guard<std::mutex> lock(state->errorMutex);
	return state->lastError;
}

uint64_t bufferPoolEvictions(GstBufferPool *pool)
{
	return isGpuHandlePool(pool) ? stateOf(pool)->eviction.evicted.load() : 0;
}

} // namespace gpuhandle::gst
