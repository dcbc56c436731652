// fd and DMA-BUF memories that keep a frame alive until GStreamer frees them, without qdata.
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

} // namespace gpuhandle::gst::detail
