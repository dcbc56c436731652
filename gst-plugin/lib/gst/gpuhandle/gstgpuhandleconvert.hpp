// GstBuffer <-> gpuhandle Frame for system memory and fd memories (GstFdMemory, GstDmaBufMemory).
#pragma once

#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <cstdint>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// Which kind of memory a buffer holds, judged by its memories (all must agree).
enum class BufferMemory : uint8_t {
	System = 0,      // mappable memory of any other allocator (system memory caps)
	Fd = 1,          // GstFdMemory that is not a DMA-BUF (memfd, shm)
	DmaBuf = 2,      // GstDmaBufMemory
	GpuHandle = 3,   // GstGpuHandleMemory
	GlMemory = 4,    // GstGLMemory
	VulkanImage = 5, // GstVulkanImageMemory
	CudaMemory = 6,  // GstCudaMemory
	VaMemory = 7,    // GstVaMemory
	Mixed = 8,       // memories of several of the kinds above
};
// A kind's stable lowercase name for logs ("dmabuf", "gl"); "unknown" for a value outside
// BufferMemory. Static storage: never freed.
GST_GPUHANDLE_API const char *bufferMemoryName(BufferMemory memory) noexcept;
// The kind of every memory of `buffer` (borrowed), Mixed when they differ; System for a null
// buffer or one without memories.
GST_GPUHANDLE_API BufferMemory bufferMemoryOf(GstBuffer *buffer);

// A frame over `buffer`'s memory, without a copy: one CpuBytes range when the buffer has one
// memory (mapped with gst_buffer_map, or with gst_video_frame_map where its video meta has a map
// function of the producer's own), else CpuPlanes through gst_video_frame_map (`access` read or
// read-write); the map and a buffer reference are the resource's anchor, released when the last
// copy of the frame goes. Layout from the video meta or `info`; colorimetry from `info`. The
// buffer's GstGpuHandleSyncMeta, when present, becomes the frame's acquire point and release
// gate. Errors: NotSupported (format), InvalidArgument (a buffer too small for `info`, write
// access to a shared buffer, a failed map: the message says which), NullHandle (no buffer).
GST_GPUHANDLE_API Result<Frame> frameFromSystemBuffer(GstBuffer *buffer, const GstVideoInfo &info,
						      MapAccess access = MapAccess::Read);

// The buffer a frame made by frameFromSystemBuffer() wraps (a new reference), or null for any
// other frame: a consumer that wants system memory can take that buffer itself (no copy).
GST_GPUHANDLE_API GstBuffer *sourceBufferOf(const Frame &frame);

// A frame over `buffer`'s fd memories, without a copy: one DmaBuf resource (objects = the
// buffer's distinct DMA-BUF memories, fds duplicated, `modifier` on every object) or one ShmFd
// resource per memory for GstFdMemory; plane offsets and strides from the video meta (or
// `info`), counted from each memory's start. The fds are dup'd, so the frame owns its own and
// also holds a buffer reference (the producer's pool slot). Sync meta as above.
// Errors: WrongKind (memories that are not all fd memories, or not all DMA-BUFs or all plain
// fd memories), NotSupported (format, or a DMA-BUF format without a DRM fourcc),
// InvalidArgument (a plane past its memory, planes in more than 4 memories, a resource the
// core refuses), Io (dup).
GST_GPUHANDLE_API Result<Frame>
frameFromFdBuffer(GstBuffer *buffer, const GstVideoInfo &info,
		  uint64_t modifier = 0 /* DRM_FORMAT_MOD_LINEAR */);

// A system-memory buffer over `frame` without a copy, for frames of CPU memory (CpuBytes,
// CpuPlanes) and of ShmFd resources (mapped; the mapping and the frame are the memories'
// anchor): gst_memory_new_wrapped per resource (per plane of a CpuPlanes resource), read-only
// unless `writable`, with a GstVideoMeta. The frame's acquire point is waited (bounded by
// `timeout`) before it returns, since system-memory consumers read at once; its release gate is
// signalled when the last memory goes. Errors: WrongKind (other resources, CpuSharedSlot
// included: the consumer cannot dereference it), Timeout, NotSupported (format).
GST_GPUHANDLE_API Result<GstBuffer *>
systemBufferFromFrame(const Frame &frame, bool writable = false,
		      WaitDuration timeout = kDefaultWaitTimeout);

// A memory:DMABuf buffer over a frame of DmaBuf resources (one GstDmaBufMemory per object, fds
// dup'd, a GstVideoMeta), or of ShmFd resources as GstFdMemory when `allowShm` is set. Each
// memory keeps a copy of the frame (its fds may be borrowed from a pool slot). The acquire point
// and release gate go on a GstGpuHandleSyncMeta when the frame has either (never waited here).
// Errors: WrongKind, NotSupported (format), Io (dup).
GST_GPUHANDLE_API Result<GstBuffer *> fdBufferFromFrame(const Frame &frame, bool allowShm = false);

} // namespace gst
} // namespace gpuhandle
