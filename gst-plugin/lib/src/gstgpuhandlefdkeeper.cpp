// fd and DMA-BUF allocators whose memories keep their frame alive until they are freed.
#include "gstgpuhandlefdkeeper.h"

#include <mutex>
#include <utility>
#include <vector>

#include <gst/allocators/allocators.h>

using gpuhandle::Frame;

namespace {

using FrameRef = std::shared_ptr<const Frame>;

// The frames kept for memories, by the memory's fd. Never destroyed: a memory freed while the
// process exits (a thread of GStreamer's still running) must not find it gone.
struct KeptTable {
	std::mutex mutex;
	std::vector<FrameRef> frames;
};

KeptTable &kept()
{
	static auto *const table = new KeptTable;
	return *table;
}

// Lets go of what `mem` kept. A share (gst_memory_share: same fd, its parent alive) kept
// nothing.
void dropKept(GstMemory *mem)
{
	if (mem->parent)
		return;
	const int fd = gst_fd_memory_get_fd(mem);
	FrameRef frame;
	{
		KeptTable &table = kept();
		std::lock_guard<std::mutex> lock(table.mutex);
		if (fd >= 0 && static_cast<size_t>(fd) < table.frames.size())
			frame = std::move(table.frames[static_cast<size_t>(fd)]);
	}
	// Dropped outside the lock (its release gate may signal), before the fd is closed: the
	// fd number names this memory's file until then.
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

static void gst_gpu_handle_keeping_fd_allocator_init(GstGpuHandleKeepingFdAllocator *)
{
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
	const auto at = static_cast<size_t>(fd);
	KeptTable &table = kept();
	std::lock_guard<std::mutex> lock(table.mutex);
	if (at >= table.frames.size())
		table.frames.resize(at + 64);
	table.frames[at] = std::move(frame);
}

} // namespace gpuhandle::gst::detail
