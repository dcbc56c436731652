// GstGpuHandleMemory from C++: wrapping gpuhandle frames as GstMemory/GstBuffer and back.
#pragma once

#include <gpuhandle/backends/backend.h>

#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A GstGpuHandleMemory over resource `index` of `frame`, holding a copy of the frame (so the
// resource, its anchors and its fences live as long as the memory and every buffer holding it)
// and `backend`, which maps the resource for gst_memory_map() (null: CPU and fd memory, mapped
// with mapFrame()). The memory's size is the resource's byte size, or, when the resource does
// not say (images), the bytes its planes span in `frame`'s layout. Mapping waits for the frame's
// acquire point (bounded by kDefaultWaitTimeout) and gives the resource's bytes from offset 0
// when its planes lie in one CPU range at the frame's offsets and strides; otherwise
// gst_memory_map() returns FALSE with a GST_WARNING saying why (opaque images, several DMA-BUF
// objects, a backend mapping through a staging copy of other strides). The first map maps the
// whole frame (GST_MAP_WRITE as read-write, keeping the contents); nested maps reuse it and the
// last unmap ends it. Not shareable: gst_memory_share() returns null, so GStreamer copies a
// region into system memory instead. Returns null (with a GST_WARNING naming why) for an index
// out of range. `readOnly` memories (GST_MEMORY_FLAG_READONLY) refuse write maps: for frames
// over memory the caller does not own (an upstream buffer it wraps).
GST_GPUHANDLE_API GstMemory *wrapResource(const Frame &frame, uint32_t index,
					  const BackendRef &backend, bool readOnly = false);

// A buffer with one GpuHandle memory per resource of `frame`, and a GstVideoMeta giving each
// plane's memory-relative offset and stride (so gst_video_frame_map() works where the memories
// map). Planes must be in distinct resources or ordered within one; the video meta's offsets are
// counted across the buffer's memories, as GStreamer defines them. Null when the frame's format
// has no GstVideoFormat. `readOnly` as for wrapResource.
GST_GPUHANDLE_API GstBuffer *bufferFromFrame(const Frame &frame, const BackendRef &backend,
					     bool readOnly = false);

// The frame, resource index and backend a GpuHandle memory carries; null/0 for other memories.
GST_GPUHANDLE_API const Frame *memoryFrame(GstMemory *mem);
GST_GPUHANDLE_API uint32_t memoryResourceIndex(GstMemory *mem); // 0 for other memories
GST_GPUHANDLE_API BackendRef memoryBackend(GstMemory *mem);     // null for other memories

// The frame of a buffer made by bufferFromFrame() (every memory a GpuHandle memory of one frame).
// Errors: WrongKind (a memory of another type), InvalidArgument (memories of different frames).
GST_GPUHANDLE_API Result<Frame> frameFromBuffer(GstBuffer *buffer);

} // namespace gst
} // namespace gpuhandle
