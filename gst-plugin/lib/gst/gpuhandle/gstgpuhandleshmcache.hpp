// Shared-memory files that come back frame after frame, each mapped once (gpuhandlesrc's reads).
#pragma once

#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <cstdint>
#include <memory>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A producer's pool sends the same memfds again and again (gpuhandlesink's slots, received by
// gpuhandlesrc as a new fd each time). A GstFdMemory per frame is mapped anew by each reader of
// its pixels: an mmap, a munmap and a page fault per 64 KiB per frame, where shmsrc maps its one
// area once. With a cache, each file seen a second time gets one GstFdMemory, kept mapped
// (GST_FD_MEMORY_FLAG_KEEP_MAPPED), and each frame's memory is a share of it (still a
// GstFdMemory over the file's fd). The frame lives until the last share of the file made since
// (by anyone: gst_buffer_copy_region, a resize) is freed.
//
// A file is known again only when it is the same open file description as the cached one
// (kcmp(2) KCMP_FILE, after fstat's inode): a producer that sends a new file per frame, or a
// kernel or sandbox without kcmp, gets the uncached memories. An owned fd the file first came in
// (FrameReceiver's file cache hands out the same one for every frame over a file) is kept open
// with the entry, and a frame with that fd number is known without a system call. A file seen once
// is not cached, so that a producer without a pool does not leave dead files mapped here. At most
// `capacity` files are kept (the least recently used goes). Not thread-safe: one streaming
// thread's.
class GST_GPUHANDLE_API ShmMemoryCache
{
public:
	// Keeps at most `capacity` files (0 counts as 1).
	explicit ShmMemoryCache(uint32_t capacity = 16);
	~ShmMemoryCache();
	ShmMemoryCache(const ShmMemoryCache &) = delete;
	ShmMemoryCache &operator=(const ShmMemoryCache &) = delete;

	// Forgets every file (caps changed, or the element stops); memories made from them live
	// on until GStreamer frees them.
	void clear() noexcept;
	// Memories made as shares of a cached file, and files cached, since this cache was made.
	uint64_t hits() const noexcept;
	uint64_t filesCached() const noexcept; // see hits()

private:
	friend Result<GstBuffer *> fdBufferFromFrame(const Frame &frame, ShmMemoryCache &cache);
	friend Result<GstBuffer *> defaultLayoutBufferFromFrame(const Frame &frame,
								ShmMemoryCache &cache,
								const GstVideoInfo &info);
	struct GPUHANDLE_LOCAL Impl;
	// The memory source the conversions take memories from (`impl` is an Impl).
	GPUHANDLE_LOCAL static GstMemory *memoryFrom(void *impl, const SharedFd &fd,
						     uint64_t offset, uint64_t size,
						     const std::shared_ptr<const Frame> &keep);
	std::unique_ptr<Impl> impl_;
};

// fdBufferFromFrame(frame, true) with each ShmFd resource's memory a share of `cache`'s memory
// for its file when it has (or now makes) one; other resources, and files not cached, as there.
GST_GPUHANDLE_API Result<GstBuffer *> fdBufferFromFrame(const Frame &frame, ShmMemoryCache &cache);

// What a peer without GstVideoMeta must receive (toDefaultLayout()'s rule), made from `frame` as
// above. A frame over one shared-memory file whose planes lie where GStreamer's default layout
// for `info` puts them (a producer's pool for these caps) is a share of exactly
// GST_VIDEO_INFO_SIZE(info) bytes with no GstVideoMeta: no meta made and removed, no resize, per
// frame. Any other frame goes through toDefaultLayout() (trimmed in place, or copied into the
// default layout). Errors: those of both.
GST_GPUHANDLE_API Result<GstBuffer *>
defaultLayoutBufferFromFrame(const Frame &frame, ShmMemoryCache &cache, const GstVideoInfo &info);

} // namespace gst
} // namespace gpuhandle
