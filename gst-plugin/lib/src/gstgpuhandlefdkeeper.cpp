// fd and DMA-BUF allocators whose memories keep their frame alive until they are freed, and
// shared parents whose shares do.
#include "gstgpuhandlefdkeeper.h"

#include <array>
#include <mutex>
#include <unistd.h>
#include <utility>
#include <vector>

#include <gst/allocators/allocators.h>

using gpuhandle::Frame;

namespace {

using FrameRef = std::shared_ptr<const Frame>;
using gpuhandle::gst::detail::kMaxHeldPerParent;

// What is kept for the memory whose fd this is.
struct Kept {
	FrameRef frame{}; // its own frame (keepFrameUntilFreed)
	// Set while a newSharedParent memory has this fd: its shares alive (made through
	// shareCounted, freed through dropKept) and the frames they keep.
	GstMemory *sharedParent = nullptr;
	uint32_t liveShares = 0;
	std::array<FrameRef, kMaxHeldPerParent> held{};
};

// What is kept, by the memory's fd. Never destroyed: a memory freed while the process exits (a
// thread of GStreamer's still running) must not find it gone.
struct KeptTable {
	std::mutex mutex;
	std::vector<Kept> slots;

	// The slot of `fd`, made on first use (under the mutex).
	Kept &slot(int fd)
	{
		const auto at = static_cast<size_t>(fd);
		if (at >= slots.size())
			slots.resize(at + 64);
		return slots[at];
	}
	// The slot of `fd` when there is one (under the mutex).
	Kept *find(int fd)
	{
		return fd >= 0 && static_cast<size_t>(fd) < slots.size()
			       ? &slots[static_cast<size_t>(fd)]
			       : nullptr;
	}
};

KeptTable &kept()
{
	static auto *const table = new KeptTable;
	return *table;
}

// Lets go of what `mem` kept. A share (gst_memory_share: same fd, its parent alive) kept nothing
// itself; the last live share of a shared parent lets go of the frames the parent held.
void dropKept(GstMemory *mem)
{
	const int fd = gst_fd_memory_get_fd(mem);
	FrameRef frame;
	std::array<FrameRef, kMaxHeldPerParent> released{};
	{
		KeptTable &table = kept();
		std::lock_guard<std::mutex> lock(table.mutex);
		Kept *k = table.find(fd);
		if (!k)
			return;
		if (mem->parent) {
			if (k->sharedParent == mem->parent && k->liveShares > 0 &&
			    --k->liveShares == 0)
				released.swap(k->held);
			return;
		}
		frame = std::move(k->frame);
		if (k->sharedParent == mem) {
			k->sharedParent = nullptr;
			k->liveShares = 0;
			released.swap(k->held);
		}
	}
	// Dropped outside the lock (a release gate may signal), before the fd is closed: the fd
	// number names this memory's file until then.
}

// GstFdAllocator's share function, which shareCounted wraps.
GstMemoryShareFunction gFdShare = nullptr;

// A share of a keeping fd memory (or of one of its shares: GStreamer makes every share of the
// real parent), counted when that parent is a shared parent.
GstMemory *shareCounted(GstMemory *mem, gssize offset, gssize size)
{
	GstMemory *sub = gFdShare(mem, offset, size);
	if (!sub)
		return sub;
	GstMemory *parent = mem->parent ? mem->parent : mem;
	KeptTable &table = kept();
	std::lock_guard<std::mutex> lock(table.mutex);
	if (Kept *k = table.find(gst_fd_memory_get_fd(parent)); k && k->sharedParent == parent)
		k->liveShares++;
	return sub;
}

} // namespace

// The two subclasses. Their instances are their parents' (mem_type, map functions); only free
// differs.
struct GstGpuHandleKeepingFdAllocator {
	GstFdAllocator parent;
};
struct GstGpuHandleKeepingFdAllocatorClass {
	GstFdAllocatorClass parent_class;
};
struct GstGpuHandleKeepingDmaBufAllocator {
	GstDmaBufAllocator parent;
};
struct GstGpuHandleKeepingDmaBufAllocatorClass {
	GstDmaBufAllocatorClass parent_class;
};

// G_DEFINE_TYPE casts its init functions C-style; GLib's headers are system headers, but the
// expansion lands in this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleKeepingFdAllocator, gst_gpu_handle_keeping_fd_allocator,
	      GST_TYPE_FD_ALLOCATOR)
G_DEFINE_TYPE(GstGpuHandleKeepingDmaBufAllocator, gst_gpu_handle_keeping_dma_buf_allocator,
	      GST_TYPE_DMABUF_ALLOCATOR)
#pragma GCC diagnostic pop

namespace {

void freeFdMemory(GstAllocator *allocator, GstMemory *mem)
{
	dropKept(mem);
	GST_ALLOCATOR_CLASS(gst_gpu_handle_keeping_fd_allocator_parent_class)->free(allocator, mem);
}

void freeDmaBufMemory(GstAllocator *allocator, GstMemory *mem)
{
	dropKept(mem);
	GST_ALLOCATOR_CLASS(gst_gpu_handle_keeping_dma_buf_allocator_parent_class)
		->free(allocator, mem);
}

} // namespace

static void
gst_gpu_handle_keeping_fd_allocator_class_init(GstGpuHandleKeepingFdAllocatorClass *klass)
{
	GST_ALLOCATOR_CLASS(klass)->free = freeFdMemory;
}

static void gst_gpu_handle_keeping_fd_allocator_init(GstGpuHandleKeepingFdAllocator *self)
{
	// GstFdAllocator's init (run before this one) set its share function: wrapped, so that
	// shared parents count their shares.
	GstAllocator *allocator = &self->parent.parent;
	gFdShare = allocator->mem_share;
	allocator->mem_share = shareCounted;
}

static void
gst_gpu_handle_keeping_dma_buf_allocator_class_init(GstGpuHandleKeepingDmaBufAllocatorClass *klass)
{
	GST_ALLOCATOR_CLASS(klass)->free = freeDmaBufMemory;
}

static void gst_gpu_handle_keeping_dma_buf_allocator_init(GstGpuHandleKeepingDmaBufAllocator *)
{
}

namespace gpuhandle::gst::detail {

namespace {

// Held for the process's life, like registered allocators: not a leak.
GstAllocator *madeForLife(GType type)
{
	auto *allocator = static_cast<GstAllocator *>(g_object_new(type, nullptr));
	gst_object_ref_sink(allocator);
	GST_OBJECT_FLAG_SET(allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
	return allocator;
}

} // namespace

GstAllocator *keepingFdAllocator(bool dmaBuf)
{
	static GstAllocator *const fds =
		madeForLife(gst_gpu_handle_keeping_fd_allocator_get_type());
	static GstAllocator *const dmaBufs =
		madeForLife(gst_gpu_handle_keeping_dma_buf_allocator_get_type());
	return dmaBuf ? dmaBufs : fds;
}

void keepFrameUntilFreed(GstMemory *mem, std::shared_ptr<const Frame> frame)
{
	const int fd = gst_fd_memory_get_fd(mem);
	if (fd < 0)
		return;
	KeptTable &table = kept();
	std::lock_guard<std::mutex> lock(table.mutex);
	table.slot(fd).frame = std::move(frame);
}

GstMemory *newSharedParent(int fd, gsize size)
{
	GstMemory *mem = gst_fd_allocator_alloc(keepingFdAllocator(false), fd, size,
						GST_FD_MEMORY_FLAG_KEEP_MAPPED);
	if (!mem) {
		close(fd);
		return nullptr;
	}
	KeptTable &table = kept();
	std::lock_guard<std::mutex> lock(table.mutex);
	Kept &k = table.slot(fd);
	k.sharedParent = mem;
	k.liveShares = 0;
	return mem;
}

bool holdUntilSharesGo(GstMemory *parent, std::shared_ptr<const Frame> frame)
{
	KeptTable &table = kept();
	std::lock_guard<std::mutex> lock(table.mutex);
	Kept *k = table.find(gst_fd_memory_get_fd(parent));
	if (!k || k->sharedParent != parent || k->liveShares == 0)
		return false;
	for (FrameRef &held : k->held)
		if (!held) {
			held = std::move(frame);
			return true;
		}
	return false;
}

} // namespace gpuhandle::gst::detail
