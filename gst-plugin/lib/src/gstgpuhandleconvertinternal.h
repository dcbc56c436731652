// What the two halves of the buffer conversions share (not installed).
#pragma once

#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <cstdint>
#include <memory>

#include <gst/gst.h>
#include <gst/video/video.h>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_convert_debug);

namespace gpuhandle::gst::detail {

// Registers the debug category and makes the fd allocators, once (after gst_init()).
void initConvert();
// The process's GstDmaBufAllocator (dmaBuf) or GstFdAllocator, made by initConvert().
GstAllocator *fdAllocator(bool dmaBuf);

// Where fdBufferFromFrame takes a ShmFd resource's memory from (ShmMemoryCache): the memory over
// `fd`'s [offset, offset + size), keeping `keep` until it and its shares are freed; null to make
// it the uncached way.
using ShmMemorySource = GstMemory *(*)(void *source, const SharedFd &fd, uint64_t offset,
				       uint64_t size, const std::shared_ptr<const Frame> &keep);
// fdBufferFromFrame, with ShmFd memories from `source` first when it is set. With
// `defaultLayout`, a frame over one ShmFd resource whose planes lie where GStreamer's default
// layout for it puts them gets a memory of exactly GST_VIDEO_INFO_SIZE bytes and no GstVideoMeta
// (what a peer without GstVideoMeta reads; `*laidOut` says so), without the meta made and
// removed again per frame; any other frame is made as without it.
Result<GstBuffer *> fdBufferFromFrameWith(const Frame &frame, bool allowShm, ShmMemorySource source,
					  void *sourceData,
					  const GstVideoInfo *defaultLayout = nullptr,
					  bool *laidOut = nullptr);

} // namespace gpuhandle::gst::detail
