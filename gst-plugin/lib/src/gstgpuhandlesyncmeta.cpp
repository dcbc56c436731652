// GstGpuHandleSyncMeta: registration, transform on copy, waits and the release gate.
#include "thread_block_cache.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <new>
#include <utility>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_sync_meta_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_sync_meta_debug

using namespace gpuhandle;

namespace {

// What every copy of a meta shares (a buffer and its gst_buffer_copy()s): one acquire point and
// one release gate. The gate is signalled when the last meta holding the state goes, unless a
// consumer signalled it earlier, so a pooled producer never waits forever on a dropped buffer.
struct SyncState {
	SyncState(SyncPoint a, ReleaseGate r) : acquire(std::move(a)), release(std::move(r)) {}
	SyncState(const SyncState &) = delete;
	SyncState &operator=(const SyncState &) = delete;
	~SyncState()
	{
		if (release.isNone() || release.isSignaled())
			return;
		if (Status signalled = release.signal(); !signalled)
			GST_WARNING("Signalling the release gate of a freed buffer failed: %s",
				    signalled.error().message().c_str());
	}

	SyncPoint acquire;
	ReleaseGate release;
};

using StateRef = std::shared_ptr<SyncState>;
// A meta is added and freed per buffer: the reference's block and the state's (with its
// control block) are reused on the thread that frees them.
void deleteStateRef(StateRef *ref)
{
	if (ref)
		::gpuhandle::detail::deleteToBlocks(ref);
}

// The meta's priv: a heap shared_ptr, so that a copy adds a reference instead of a state.
StateRef *stateRefOf(const GstGpuHandleSyncMeta *meta)
{
	return meta ? static_cast<StateRef *>(meta->priv) : nullptr;
}

const SyncState *stateOf(const GstGpuHandleSyncMeta *meta)
{
	StateRef *ref = stateRefOf(meta);
	return ref ? ref->get() : nullptr;
}

gboolean metaInit(GstMeta *meta, gpointer, GstBuffer *)
{
	reinterpret_cast<GstGpuHandleSyncMeta *>(meta)->priv = nullptr;
	return TRUE;
}

void metaFree(GstMeta *meta, GstBuffer *)
{
	auto *sync = reinterpret_cast<GstGpuHandleSyncMeta *>(meta);
	deleteStateRef(stateRefOf(sync)); // the last reference signals the gate (~SyncState)
	sync->priv = nullptr;
}

void setState(GstGpuHandleSyncMeta *meta, StateRef state)
{
	StateRef *old = stateRefOf(meta);
	meta->priv = ::gpuhandle::detail::newFromBlocks<StateRef>(std::move(state));
	deleteStateRef(old);
}

// The memory `mem` is, or is a share of: GStreamer makes a share of a share a share of the
// root.
GstMemory *rootOf(GstMemory *mem)
{
	return mem->parent ? mem->parent : mem;
}

// Whether `dest` holds any of the memory of `src` (itself or a share of it).
bool sharesMemory(GstBuffer *dest, GstBuffer *src)
{
	const guint destCount = gst_buffer_n_memory(dest), srcCount = gst_buffer_n_memory(src);
	for (guint i = 0; i < destCount; ++i) {
		GstMemory *d = rootOf(gst_buffer_peek_memory(dest, i));
		for (guint j = 0; j < srcCount; ++j)
			if (d == rootOf(gst_buffer_peek_memory(src, j)))
				return true;
	}
	return false;
}

// Whether every memory of `buffer` is one the CPU reads: system memory, or fd memory that is not
// a DMA-BUF (gpuhandlesrc's memfds). Whoever copies out of it has read it when the copy returns;
// a GPU may still be reading a DMA-BUF, a texture or GpuHandle memory imported into new memory.
bool onlyCpuMemory(GstBuffer *buffer)
{
	for (guint i = 0; i < gst_buffer_n_memory(buffer); ++i) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		const bool cpu = gst_memory_is_type(mem, GST_ALLOCATOR_SYSMEM) ||
				 (gst_is_fd_memory(mem) && !gst_is_dmabuf_memory(mem));
		if (!cpu)
			return false;
	}
	return true;
}

// A copy shares the state (both buffers wait on one point, and the gate is signalled once the
// last of them is freed), unless it is a copy of CPU memory into memory of its own:
// GstBaseTransform (videoconvert, videoscale) copies untagged metas onto its output with the copy
// transform, and a converted frame an encoder keeps (x264enc holds dozens) must not keep the
// producer's memory from its pool, which it no longer reads. A copy over the same memory
// (gst_buffer_copy, make_writable, a share), a buffer without memory yet, and any copy out of
// GPU-readable memory (whose reader may still be at work) keep the state.
gboolean metaTransform(GstBuffer *dest, GstMeta *meta, GstBuffer *src, GQuark type, gpointer)
{
	if (!GST_META_TRANSFORM_IS_COPY(type))
		return FALSE;
	if (gst_buffer_n_memory(dest) > 0 && !sharesMemory(dest, src) && onlyCpuMemory(src))
		return TRUE; // nothing to copy: the new memory has no producer to wait for
	const StateRef *state = stateRefOf(reinterpret_cast<GstGpuHandleSyncMeta *>(meta));
	if (!state)
		return TRUE;
	GstMeta *added = gst_buffer_add_meta(dest, gst_gpu_handle_sync_meta_get_info(), nullptr);
	if (!added)
		return FALSE;
	setState(reinterpret_cast<GstGpuHandleSyncMeta *>(added), *state);
	return TRUE;
}

WaitDuration waitDurationOf(GstClockTime timeout)
{
	if (!GST_CLOCK_TIME_IS_VALID(timeout))
		return kDefaultWaitTimeout; // never forever: every wait is bounded
	if (timeout > static_cast<GstClockTime>(WaitDuration::max().count() - 1))
		return WaitDuration(WaitDuration::max().count() - 1);
	return WaitDuration(static_cast<WaitDuration::rep>(timeout));
}

} // namespace

GType gst_gpu_handle_sync_meta_api_get_type(void)
{
	// No tags: the meta says nothing about the picture's contents, size or memory layout, so
	// elements keep it through any transform they copy metas in.
	static const GType type = [] {
		static const gchar *tags[] = { nullptr };
		return gst_meta_api_type_register("GstGpuHandleSyncMetaAPI", tags);
	}();
	return type;
}

const GstMetaInfo *gst_gpu_handle_sync_meta_get_info(void)
{
	// C++ initialises a function's static once, thread-safely.
	static const GstMetaInfo *info = [] {
		gst_gpu_handle_init();
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_sync_meta_debug, "gpuhandlesyncmeta", 0,
					"gpuhandle sync meta");
		return gst_meta_register(GST_GPU_HANDLE_SYNC_META_API_TYPE, "GstGpuHandleSyncMeta",
					 sizeof(GstGpuHandleSyncMeta), metaInit, metaFree,
					 metaTransform);
	}();
	return info;
}

GstGpuHandleSyncMeta *gst_buffer_get_gpu_handle_sync_meta(GstBuffer *buffer)
{
	if (!buffer)
		return nullptr;
	return reinterpret_cast<GstGpuHandleSyncMeta *>(
		gst_buffer_get_meta(buffer, GST_GPU_HANDLE_SYNC_META_API_TYPE));
}

gboolean gst_gpu_handle_sync_meta_wait(GstGpuHandleSyncMeta *meta, GstClockTime timeout,
				       GError **error)
{
	if (!meta) {
		g_set_error(error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
			    "No sync meta to wait on (the meta is NULL).");
		return FALSE;
	}
	Status waited = gpuhandle::gst::syncMetaAcquire(meta).wait(waitDurationOf(timeout));
	if (waited)
		return TRUE;
	const bool timedOut = waited.error().code() == ErrorCode::Timeout;
	GST_DEBUG("The sync meta's wait failed: %s", waited.error().message().c_str());
	g_set_error(error, GST_RESOURCE_ERROR,
		    timedOut ? GST_RESOURCE_ERROR_BUSY : GST_RESOURCE_ERROR_FAILED, "%s",
		    waited.error().message().c_str());
	return FALSE;
}

gboolean gst_gpu_handle_sync_meta_is_signaled(GstGpuHandleSyncMeta *meta)
{
	Result<bool> done = gpuhandle::gst::syncMetaAcquire(meta).isSignaled();
	if (!done) {
		GST_WARNING("Polling the sync meta's acquire point failed: %s",
			    done.error().message().c_str());
		return FALSE;
	}
	return *done ? TRUE : FALSE;
}

void gst_gpu_handle_sync_meta_release(GstGpuHandleSyncMeta *meta)
{
	const SyncState *state = stateOf(meta);
	if (!state || state->release.isNone())
		return;
	if (Status signalled = state->release.signal(); !signalled)
		GST_WARNING("Signalling the sync meta's release gate failed: %s",
			    signalled.error().message().c_str());
}

namespace gpuhandle::gst {

GstGpuHandleSyncMeta *addSyncMeta(GstBuffer *buffer, SyncPoint acquire, ReleaseGate release)
{
	const GstMetaInfo *info = gst_gpu_handle_sync_meta_get_info();
	if (!buffer || !gst_buffer_is_writable(buffer)) {
		GST_WARNING("A sync meta needs a writable buffer (%s).",
			    buffer ? "this one is shared" : "the buffer is NULL");
		return nullptr;
	}
	auto state = std::allocate_shared<SyncState>(
		::gpuhandle::detail::ThreadRecyclingAllocator<SyncState>{}, std::move(acquire),
		std::move(release));
	GstGpuHandleSyncMeta *meta = gst_buffer_get_gpu_handle_sync_meta(buffer);
	if (!meta)
		meta = reinterpret_cast<GstGpuHandleSyncMeta *>(
			gst_buffer_add_meta(buffer, info, nullptr));
	if (!meta)
		return nullptr;
	// Replacing drops the old state: its gate is signalled now if nothing else shares it.
	setState(meta, std::move(state));
	return meta;
}

SyncPoint syncMetaAcquire(const GstGpuHandleSyncMeta *meta)
{
	const SyncState *state = stateOf(meta);
	return state ? state->acquire : SyncPoint::noop();
}

ReleaseGate syncMetaRelease(const GstGpuHandleSyncMeta *meta)
{
	const SyncState *state = stateOf(meta);
	return state ? state->release : ReleaseGate::none();
}

Status waitBufferAcquire(GstBuffer *buffer, WaitDuration timeout)
{
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	GstGpuHandleSyncMeta *meta = gst_buffer_get_gpu_handle_sync_meta(buffer);
	if (!meta)
		return {};
	return syncMetaAcquire(meta).wait(timeout);
}

} // namespace gpuhandle::gst
