// fd and DMA-BUF memories that keep a frame alive until GStreamer frees them, without qdata; and
// shared parents, whose shares keep their frames alive.
#pragma once

#include <gpuhandle/frame.h>

#include <memory>

#include <gst/gst.h>

namespace gpuhandle::gst::detail {

// The allocator of fdBufferFromFrame's memories: a GstFdAllocator or GstDmaBufAllocator
// subclass (gst_is_fd_memory and gst_is_dmabuf_memory hold for its memories as for theirs)
// whose free first lets go of the frame kept for the memory. One per kind, for the process.
GstAllocator *keepingFdAllocator(bool dmaBuf);

// Keeps `frame` until `mem`, made by keepingFdAllocator, is freed. Kept by the memory's fd (its
// own, open as long as the memory lives) in a table that only grows with the highest fd seen,
// so that a buffer per frame costs no heap block here: a memory's qdata would (GStreamer then
// allocates the memory's private data, and its parent list grows a block more).
void keepFrameUntilFreed(GstMemory *mem, std::shared_ptr<const Frame> frame);

// A memory over `fd` (taken) of `size` bytes, by keepingFdAllocator(false), kept mapped once
// mapped (GST_FD_MEMORY_FLAG_KEEP_MAPPED), whose shares are counted: every share made of it
// (gst_memory_share, by anyone, of it or of a share) counts until freed, and the frames
// holdUntilSharesGo() gave it are let go once none lives. Null when GStreamer made no memory
// (the fd is closed).
GstMemory *newSharedParent(int fd, gsize size);

// Keeps `frame` until no share of `parent` (a newSharedParent memory) lives. Takes a share
// made before this call: a share made after it could end first. False when `parent` already
// holds as many frames as it can (kMaxHeldPerParent); the caller then lets its share go.
bool holdUntilSharesGo(GstMemory *parent, std::shared_ptr<const Frame> frame);

// Frames a shared parent can hold at once: one normally (a producer reuses a file only once the
// frame over it is released), more only after a producer counted one back on a timeout.
inline constexpr size_t kMaxHeldPerParent = 4;

} // namespace gpuhandle::gst::detail
