// GstGpuHandleMemory: the allocator, CPU mapping through the backend, and Frame <-> GstBuffer.
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/pixel_format.h>

#include "thread_block_cache.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>

#include <gst/gpuhandle/gstgpuhandlememory.hpp>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_debug

using namespace gpuhandle;

namespace {

// Whether `frame`'s mapping may outlive its map: every resource a shared-memory fd, mapped
// by mmap alone (no backend, or the fd backend, whose map is mapFrame).
bool mappingMayStay(const Frame &frame, const BackendRef &backend)
{
	if (backend && backend->kind() != BackendKind::Fd)
		return false;
	for (uint32_t r = 0; r < frame.numResources(); r++)
		if (frame.resource(r).kind() != ResourceKind::ShmFd)
			return false;
	return frame.numResources() > 0;
}

// What one memory carries. The frame copy keeps the resource, its anchors (and so its device)
// and its acquire point alive for as long as the memory lives, even after the BackendRef and
// the caller's frame are gone. GStreamer serialises a memory's map count through its lock, but
// the mapping itself is guarded too: two threads may map one read-only memory at once.
struct MemoryState {
	MemoryState(const Frame &f, uint32_t i, BackendRef b)
		: frame(f), index(i), backend(std::move(b)),
		  keepsMapping(mappingMayStay(f, backend))
	{
	}

	Frame frame;
	uint32_t index = 0;
	BackendRef backend{};
	std::mutex mutex{};
	std::optional<CpuMapping> mapping{}; // while mapCount > 0, or kept (below)
	uint32_t mapCount = 0;
	uint8_t *base = nullptr; // byte 0 of the resource in `mapping`
	// A shared-memory frame's mapping stays after its last unmap, for the memory's life: a
	// pooled memfd written every frame is mapped (and its pages faulted in) once, not per
	// frame. Only plain memfds: DMA-BUFs need their sync ioctls around each access, and a
	// backend's staging mapping its end step.
	bool keepsMapping = false;
};

} // namespace

// GstMemory first, so that the GstMemory pointer GStreamer hands around is this struct's. The
// state lives in the same block (one allocation per memory, not two), made in `storage`.
struct GstGpuHandleMemory {
	GstMemory mem;
	alignas(MemoryState) unsigned char storage[sizeof(MemoryState)];

	MemoryState &state() { return *std::launder(reinterpret_cast<MemoryState *>(storage)); }
};

struct GstGpuHandleAllocator {
	GstAllocator parent;
};

struct GstGpuHandleAllocatorClass {
	GstAllocatorClass parent_class;
};

// G_DEFINE_TYPE casts its init functions C-style; GLib's headers are system headers, but the
// expansion lands in this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleAllocator, gst_gpu_handle_allocator, GST_TYPE_ALLOCATOR)
#pragma GCC diagnostic pop

namespace {

// The registered allocator, set once by gst_gpu_handle_init(); atomic because
// gst_is_gpu_handle_memory() reads it on any thread, maybe while another sets it.
std::atomic<GstAllocator *> gAllocator{ nullptr };

MemoryState *stateOf(GstMemory *mem)
{
	if (!gst_is_gpu_handle_memory(mem))
		return nullptr;
	return &reinterpret_cast<GstGpuHandleMemory *>(mem)->state();
}

// The pixel bytes plane `p` spans from its offset: stride * rows, or, for an opaque plane
// (stride 0: an optimal-tiled image), what one tightly packed copy of it would take.
uint64_t planeBytes(const Frame &frame, const PixelFormatInfo &info, uint32_t p)
{
	const PlaneInfo &plane = info.planes[p];
	const uint64_t stride = frame.plane(p).stride ? frame.plane(p).stride
						      : plane.rowBytes(frame.width());
	return stride * plane.rows(frame.height());
}

// The resource's byte size when its handle says and it is one range (not a DMA-BUF of several
// objects); else the span of its planes in the frame: max over them of offset + stride * rows.
uint64_t memorySize(const Frame &frame, uint32_t index)
{
	const Resource &resource = frame.resource(index);
	if (resource.subresourceCount() <= 1 && resource.byteSize(0) != 0)
		return resource.byteSize(0);
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info)
		return 0;
	uint64_t span = 0;
	for (uint32_t p = 0; p < frame.numPlanes() && p < (*info)->numPlanes; p++)
		if (frame.plane(p).resource == index)
			span = std::max(span, frame.plane(p).offset + planeBytes(frame, **info, p));
	return span;
}

MapAccess accessOf(GstMapFlags flags)
{
	// GStreamer writers often read what they map for writing (an overlay drawn onto a frame),
	// so a write map keeps the contents: Write alone would let a staging backend skip them.
	return (flags & GST_MAP_WRITE) ? MapAccess::ReadWrite : MapAccess::Read;
}

// Maps the whole frame and finds byte 0 of resource `s.index` in it; null (with a warning
// saying why) when a plane is opaque, the mapping fails, or the resource's planes do not lie
// in one CPU range at the frame's offsets and strides.
uint8_t *mapResource(MemoryState &s, MapAccess access)
{
	const Frame &frame = s.frame;
	const char *format = pixelFormatName(frame.format());
	const char *kind = resourceKindName(frame.resource(s.index).kind());
	bool anyPlane = false;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		if (frame.plane(p).resource != s.index)
			continue;
		anyPlane = true;
		if (frame.plane(p).stride == 0) {
			GST_WARNING(
				"Resource %u (%s) of the %s %ux%u frame cannot be mapped: plane %u "
				"has no CPU stride (an opaque handle, such as an optimal-tiled image).",
				s.index, kind, format, frame.width(), frame.height(), p);
			return nullptr;
		}
	}
	if (!anyPlane) {
		GST_WARNING(
			"Resource %u (%s) of the %s %ux%u frame cannot be mapped: no plane lives "
			"in it.",
			s.index, kind, format, frame.width(), frame.height());
		return nullptr;
	}
	Result<CpuMapping> mapped = s.backend ? s.backend->map(frame, access, kDefaultWaitTimeout)
					      : mapFrame(frame, access, kDefaultWaitTimeout);
	if (!mapped) {
		GST_WARNING("Resource %u (%s) of the %s %ux%u frame could not be mapped: %s",
			    s.index, kind, format, frame.width(), frame.height(),
			    mapped.error().message().c_str());
		return nullptr;
	}
	uintptr_t base = 0;
	const char *why = nullptr;
	uint32_t badPlane = 0;
	for (uint32_t p = 0; p < frame.numPlanes() && !why; p++) {
		if (frame.plane(p).resource != s.index)
			continue;
		badPlane = p;
		// Addresses as integers: plane data minus its offset need not point into the
		// mapping.
		const uintptr_t b = reinterpret_cast<uintptr_t>(mapped->data(p)) -
				    static_cast<uintptr_t>(frame.plane(p).offset);
		if (p >= mapped->numPlanes() || !mapped->data(p))
			why = "the mapping does not give it";
		else if (mapped->stride(p) != frame.plane(p).stride)
			why = "the mapping's stride differs from the frame's (a staging copy), so the video "
			      "meta would be wrong";
		else if (base != 0 && b != base)
			why = "it does not lie at its offset from the resource's first mapped plane (the "
			      "planes are in separate CPU ranges, such as several DMA-BUF objects)";
		else
			base = b;
	}
	if (why) {
		GST_WARNING("Resource %u (%s) of the %s %ux%u frame cannot be mapped as one range: "
			    "plane %u: %s.",
			    s.index, kind, format, frame.width(), frame.height(), badPlane, why);
		if (Status ended = mapped->unmap(); !ended)
			GST_WARNING("Unmapping it failed too: %s", ended.error().message().c_str());
		return nullptr;
	}
	s.mapping = std::move(*mapped);
	return reinterpret_cast<uint8_t *>(base);
}

gpointer memMap(GstMemory *mem, gsize, GstMapFlags flags)
{
	MemoryState &s = reinterpret_cast<GstGpuHandleMemory *>(mem)->state();
	const MapAccess access = accessOf(flags);
	std::lock_guard<std::mutex> lock(s.mutex);
	if (s.mapCount > 0) {
		// Nested maps (one per plane in gst_video_frame_map()) share the first one's
		// mapping.
		if (access != MapAccess::Read && s.mapping->access() == MapAccess::Read) {
			GST_WARNING(
				"Resource %u is mapped for reading; it cannot also be mapped for "
				"writing until that mapping ends.",
				s.index);
			return nullptr;
		}
		s.mapCount++;
		return s.base;
	}
	if (s.mapping && (access == MapAccess::Read || s.mapping->access() != MapAccess::Read)) {
		// The kept mapping of a shared-memory frame: only its acquire point is waited, as
		// mapFrame() waits it.
		if (Status acquired = s.frame.acquire().wait(kDefaultWaitTimeout); !acquired) {
			GST_WARNING("Resource %u could not be mapped: %s", s.index,
				    acquired.error().message().c_str());
			return nullptr;
		}
		s.mapCount = 1;
		return s.base;
	}
	if (s.mapping) { // kept for reading, now wanted for writing
		(void)s.mapping->unmap();
		s.mapping.reset();
	}
	uint8_t *base = mapResource(s, access);
	if (!base)
		return nullptr;
	s.base = base;
	s.mapCount = 1;
	return base;
}

void memUnmap(GstMemory *mem)
{
	MemoryState &s = reinterpret_cast<GstGpuHandleMemory *>(mem)->state();
	std::lock_guard<std::mutex> lock(s.mutex);
	if (s.mapCount == 0) {
		GST_WARNING("Resource %u was unmapped more often than it was mapped.", s.index);
		return;
	}
	if (--s.mapCount > 0 || s.keepsMapping)
		return;
	if (Status ended = s.mapping->unmap(); !ended)
		GST_WARNING("Ending the mapping of resource %u failed: %s", s.index,
			    ended.error().message().c_str());
	s.mapping.reset();
	s.base = nullptr;
}

// Not shareable: a sub-range of a resource is no gpuhandle resource. GStreamer then copies a
// region into system memory (through mem_copy's map) where it needs one.
GstMemory *memShare(GstMemory *mem, gssize offset, gssize size)
{
	GST_DEBUG("A GpuHandle memory (resource %u) cannot be shared as a sub-memory (offset "
		  "%" G_GSSIZE_FORMAT ", size %" G_GSSIZE_FORMAT "); GStreamer copies it instead.",
		  reinterpret_cast<GstGpuHandleMemory *>(mem)->state().index, offset, size);
	return nullptr;
}

// Two resources are never one contiguous range.
gboolean memIsSpan(GstMemory *, GstMemory *, gsize *)
{
	return FALSE;
}

GstMemory *allocatorAlloc(GstAllocator *, gsize size, GstAllocationParams *)
{
	GST_WARNING("The GpuHandle allocator allocates nothing (asked for %" G_GSIZE_FORMAT
		    " bytes): GpuHandle memories wrap gpuhandle frames (wrapResource, "
		    "bufferFromFrame).",
		    size);
	return nullptr;
}

void allocatorFree(GstAllocator *, GstMemory *mem)
{
	auto *m = reinterpret_cast<GstGpuHandleMemory *>(mem);
	if (m->state().mapCount > 0)
		GST_WARNING(
			"Resource %u is freed while still mapped %u times; its mapping ends now.",
			m->state().index, m->state().mapCount);
	m->state().~MemoryState(); // ends a leftover mapping, drops the frame (and its device)
	// Memories made and freed per buffer on one streaming thread reuse their blocks.
	::gpuhandle::detail::deleteToBlocks(m);
}

} // namespace

static void gst_gpu_handle_allocator_class_init(GstGpuHandleAllocatorClass *klass)
{
	GstAllocatorClass *allocatorClass = reinterpret_cast<GstAllocatorClass *>(klass);
	allocatorClass->alloc = allocatorAlloc;
	allocatorClass->free = allocatorFree;
}

static void gst_gpu_handle_allocator_init(GstGpuHandleAllocator *self)
{
	GstAllocator *allocator = &self->parent;
	allocator->mem_type = GST_GPU_HANDLE_MEMORY_TYPE;
	allocator->mem_map = memMap;
	allocator->mem_unmap = memUnmap;
	allocator->mem_share = memShare;
	allocator->mem_is_span = memIsSpan;
	// mem_copy stays GStreamer's fallback: map for reading, copy into system memory.
	GST_OBJECT_FLAG_SET(allocator, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

void gst_gpu_handle_init(void)
{
	// Called on every per-buffer path: once done, a plain load (std::call_once takes a TLS
	// lookup and a pthread_once per call).
	static std::atomic<bool> done{ false };
	if (done.load(std::memory_order_acquire))
		return;
	// Needs gst_init() first (the allocator table is made there).
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_debug, "gpuhandle", 0,
					"gpuhandle GStreamer memory");
		auto *allocator = static_cast<GstAllocator *>(
			g_object_new(GST_TYPE_GPU_HANDLE_ALLOCATOR, nullptr));
		gst_object_ref_sink(allocator);
		// Registered allocators live until gst_deinit(); the leaks tracer should not list
		// it.
		GST_OBJECT_FLAG_SET(allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
		gAllocator.store(allocator, std::memory_order_release);
		gst_allocator_register(GST_GPU_HANDLE_MEMORY_TYPE,
				       static_cast<GstAllocator *>(gst_object_ref(allocator)));
		done.store(true, std::memory_order_release);
	});
}

GstAllocator *gst_gpu_handle_allocator_get(void)
{
	gst_gpu_handle_init();
	return static_cast<GstAllocator *>(gst_object_ref(gAllocator.load()));
}

gboolean gst_is_gpu_handle_memory(GstMemory *mem)
{
	if (mem != nullptr && mem->allocator != nullptr &&
	    mem->allocator == gAllocator.load(std::memory_order_relaxed))
		return TRUE; // the registered allocator: no string compare or type check per call
	return mem != nullptr && mem->allocator != nullptr &&
	       gst_memory_is_type(mem, GST_GPU_HANDLE_MEMORY_TYPE) &&
	       G_TYPE_CHECK_INSTANCE_TYPE(mem->allocator, GST_TYPE_GPU_HANDLE_ALLOCATOR);
}

guint gst_gpu_handle_memory_get_resource_kind(GstMemory *mem)
{
	MemoryState *s = stateOf(mem);
	return s ? static_cast<guint>(s->frame.resource(s->index).kind()) : 0;
}

gint gst_gpu_handle_memory_get_backend(GstMemory *mem)
{
	MemoryState *s = stateOf(mem);
	if (!s)
		return -1;
	const BackendKind kind = s->backend ? s->backend->kind()
					    : s->frame.resource(s->index).backend();
	return static_cast<gint>(kind);
}

namespace gpuhandle::gst {

GstMemory *wrapResource(const Frame &frame, uint32_t index, const BackendRef &backend,
			bool readOnly)
{
	gst_gpu_handle_init();
	if (index >= frame.numResources()) {
		GST_WARNING(
			"Resource index %u is out of range: the %s %ux%u frame has %u resources.",
			index, pixelFormatName(frame.format()), frame.width(), frame.height(),
			frame.numResources());
		return nullptr;
	}
	const uint64_t size = memorySize(frame, index);
	if (size > G_MAXSIZE) {
		GST_WARNING("Resource %u spans %" G_GUINT64_FORMAT " bytes, more than a GstMemory "
			    "can address.",
			    index, size);
		return nullptr;
	}
	auto *m = ::gpuhandle::detail::newFromBlocks<GstGpuHandleMemory>();
	new (m->storage) MemoryState(frame, index, backend);
	gst_memory_init(&m->mem,
			readOnly ? GST_MEMORY_FLAG_READONLY : static_cast<GstMemoryFlags>(0),
			gAllocator.load(), nullptr, static_cast<gsize>(size), 0, 0,
			static_cast<gsize>(size));
	return &m->mem;
}

GstBuffer *bufferFromFrame(const Frame &frame, const BackendRef &backend, bool readOnly)
{
	gst_gpu_handle_init();
	Result<uint32_t> format = toApiFormat(FormatApi::GStreamer, frame.format());
	if (!format) {
		GST_WARNING("The %s frame has no GstVideoFormat: %s",
			    pixelFormatName(frame.format()), format.error().message().c_str());
		return nullptr;
	}
	GstBuffer *buffer = gst_buffer_new();
	std::array<gsize, 4> starts{}; // where each memory begins in the buffer
	std::array<gsize, 4> sizes{};
	gsize total = 0;
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		GstMemory *mem = wrapResource(frame, r, backend, readOnly);
		if (!mem) {
			gst_buffer_unref(buffer);
			return nullptr;
		}
		starts[r] = total;
		sizes[r] = mem->size;
		total += mem->size;
		gst_buffer_append_memory(buffer, mem);
	}
	std::array<gsize, GST_VIDEO_MAX_PLANES> offsets{};
	std::array<gint, GST_VIDEO_MAX_PLANES> strides{};
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		// GStreamer finds a plane's memory from its buffer offset: it must lie in its own.
		if (view.offset >= sizes[view.resource] || view.stride > G_MAXINT) {
			GST_WARNING("Plane %u of the %s frame (offset %" G_GUINT64_FORMAT
				    ", stride %u) "
				    "does not fit in its memory of %" G_GSIZE_FORMAT " bytes or a "
				    "GstVideoMeta stride.",
				    p, pixelFormatName(frame.format()), view.offset, view.stride,
				    sizes[view.resource]);
			gst_buffer_unref(buffer);
			return nullptr;
		}
		offsets[p] = starts[view.resource] + static_cast<gsize>(view.offset);
		strides[p] = static_cast<gint>(view.stride);
	}
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE,
				       static_cast<GstVideoFormat>(*format), frame.width(),
				       frame.height(), frame.numPlanes(), offsets.data(),
				       strides.data());
	return buffer;
}

const Frame *memoryFrame(GstMemory *mem)
{
	MemoryState *s = stateOf(mem);
	return s ? &s->frame : nullptr;
}

uint32_t memoryResourceIndex(GstMemory *mem)
{
	MemoryState *s = stateOf(mem);
	return s ? s->index : 0;
}

BackendRef memoryBackend(GstMemory *mem)
{
	MemoryState *s = stateOf(mem);
	return s ? s->backend : nullptr;
}

} // namespace gpuhandle::gst

namespace {

// What makes two copies of a resource the same handle: the anchor or fd they share (copies of
// one Frame share both), else the CPU address. Separately made resources never share them.
const void *identityOf(const Resource &resource)
{
	return resource.visit([](const auto &handle) -> const void * {
		if constexpr (requires { handle.desc().anchor; }) {
			if (handle.desc().anchor)
				return handle.desc().anchor.get();
		}
		if constexpr (requires { handle.desc().data; })
			return handle.desc().data;
		if constexpr (requires { handle.desc().fd.get(); })
			return reinterpret_cast<const void *>(
				static_cast<intptr_t>(handle.desc().fd.get()));
		if constexpr (requires { handle.desc().objects[0].fd.get(); })
			return reinterpret_cast<const void *>(
				static_cast<intptr_t>(handle.desc().objects[0].fd.get()));
		return nullptr;
	});
}

bool sameFrame(const Frame &a, const Frame &b)
{
	if (a.format() != b.format() || a.width() != b.width() || a.height() != b.height() ||
	    a.numResources() != b.numResources() || a.numPlanes() != b.numPlanes())
		return false;
	for (uint32_t p = 0; p < a.numPlanes(); p++)
		if (!(a.plane(p) == b.plane(p)))
			return false;
	for (uint32_t r = 0; r < a.numResources(); r++)
		if (a.resource(r).kind() != b.resource(r).kind() ||
		    identityOf(a.resource(r)) != identityOf(b.resource(r)))
			return false;
	return true;
}

} // namespace

namespace gpuhandle::gst {

Result<Frame> frameFromBuffer(GstBuffer *buffer)
{
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const guint n = gst_buffer_n_memory(buffer);
	if (n == 0)
		return Error(ErrorCode::InvalidArgument, "buffer",
			     "The buffer has no memory, so it carries no gpuhandle frame.");
	const Frame *first = nullptr;
	for (guint i = 0; i < n; i++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		MemoryState *s = stateOf(mem);
		if (!s)
			return Error::format(
				ErrorCode::WrongKind, "buffer.memory",
				"Memory %u of the buffer is a %s memory, not a %s memory.", i,
				mem && mem->allocator && mem->allocator->mem_type
					? mem->allocator->mem_type
					: "typeless",
				GST_GPU_HANDLE_MEMORY_TYPE);
		if (!first)
			first = &s->frame;
		if (!sameFrame(*first, s->frame))
			return Error::format(
				ErrorCode::InvalidArgument, "buffer.memory",
				"Memory %u of the buffer carries a resource of another frame "
				"than memory 0 (a %s %ux%u frame).",
				i, pixelFormatName(first->format()), first->width(),
				first->height());
		if (s->index != i)
			return Error::format(
				ErrorCode::InvalidArgument, "buffer.memory",
				"Memory %u of the buffer carries resource %u of its frame; "
				"the buffer's memories must be the frame's resources in order.",
				i, s->index);
	}
	if (n != first->numResources())
		return Error::format(
			ErrorCode::InvalidArgument, "buffer.memory",
			"The buffer has %u memories but its %s frame has %u resources.", n,
			pixelFormatName(first->format()), first->numResources());
	return *first;
}

} // namespace gpuhandle::gst
