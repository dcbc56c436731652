// GStreamer's memory types as one table (system, DMA-BUF, GL, Vulkan, CUDA, VA): each type's caps
// feature and backend, and an adapter per element that turns its buffers into frames and frames
// into its buffers. Every entry exists whatever this build found; `built` says which work.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// Which side of gpuhandle a memory type is on in an element: gpuhandleupload's input (its
// buffers become frames) or gpuhandledownload's output (frames become its buffers).
enum class MemoryRole : uint8_t { Input = 0, Output = 1 };

// How gpuhandledownload fills a buffer of a memory type when a frame cannot become one as it is.
enum class OutputCopy : uint8_t {
	// No fallback: the failure is the element's error.
	None = 0,
	// A buffer of GStreamer's own pool, written through its CPU map (pooledBuffer).
	CpuWrite = 1,
	// Always: imported into the type's backend, then copied on the GPU into a buffer of
	// GStreamer's own pool (gpuCopyOf); the frame is never wrapped.
	GpuCopy = 2,
};

// One row of the table. Static data: valid for the process's life.
struct MemoryTypeInfo {
	BufferMemory memory;   // System, DmaBuf, GlMemory, VulkanImage, CudaMemory, VaMemory
	const char *name;      // `GLMemory`, as the caps feature without `memory:`
	const char *feature;   // the caps feature (`memory:GLMemory`)
	BackendKind backend;   // the backend that serves its device (Cpu for system memory)
	FrameStorage storage;  // what frames copied into that backend for it are made of
	bool built;            // libgstgpuhandle-1.0 was built with its GStreamer library
	int8_t inputRank;      // order offered by gpuhandleupload's sink pad (lower first), -1: not
	int8_t outputRank;     // order offered by gpuhandledownload's src pad, -1: not
	OutputCopy outputCopy; // see OutputCopy
	// Its buffers carry the frame's fences on a GstGpuHandleSyncMeta to a consumer that asked
	// for one, instead of being waited for before they leave (DMA-BUFs).
	bool syncMetaOutput;
	// The formats its GStreamer elements take, as caps ("video/x-raw, format = ..."), or null
	// for any (GStreamer's GL library aborts on formats outside its list).
	const char *videoFormats;
	// Why frames are copied when outputCopy is GpuCopy (for logs and errors), else null.
	const char *copyReason;
	// gst-launch syntax of elements that turn system-memory video into buffers of this type
	// (GStreamer's own: "glupload"), "" for system memory itself, or null when there is none
	// (gpuhandle-info's bridge matrix runs it in front of gpuhandleupload).
	const char *producer;
};

// Every memory type, built or not, in the table's order (static: never destroyed, so elements
// finalized at exit may still read their rows).
GST_GPUHANDLE_API std::span<const MemoryTypeInfo> memoryTypes() noexcept;
// The row of `memory`, or null (GpuHandle, Fd, Mixed are not GStreamer memory types here).
GST_GPUHANDLE_API const MemoryTypeInfo *memoryTypeInfo(BufferMemory memory) noexcept;
// The row whose feature the first structure of `caps` has (system memory when none does).
GST_GPUHANDLE_API const MemoryTypeInfo &memoryTypeOfCaps(const GstCaps *caps);
// The features of the built types that `role` takes, in that role's order.
GST_GPUHANDLE_API std::vector<const char *> memoryFeatures(MemoryRole role);

// What an input adapter needs beside the buffer: the negotiated info, the DMA-BUF modifier of
// the caps, and the element's device set (the fd backend for DMA-BUFs).
struct InputBuffer {
	// The buffer to wrap, borrowed for the call (no reference is taken by the struct).
	GstBuffer *buffer = nullptr;
	// The negotiated video info of the buffer, borrowed.
	const GstVideoInfo *info = nullptr;
	uint64_t modifier = 0; // DRM_FORMAT_MOD_LINEAR
	// The element's device set, borrowed. A null buffer, info or devices: NullHandle.
	DevicesSlot *devices = nullptr;
};

// One memory type in one element: the GStreamer objects of its device that the element shares
// with its neighbours (GL display and contexts, Vulkan instance and device, CUDA context), and
// the conversions. Context queries and set_context may come from any thread; the other calls
// come from the streaming thread. Calls a type does not support answer NotSupported.
class GST_GPUHANDLE_API MemoryAdapter
{
public:
	// For the adapters' implementations: `info` is the type's row of memoryTypes() (static,
	// kept by reference) and `role` the side the adapter serves.
	MemoryAdapter(const MemoryTypeInfo &info, MemoryRole role) noexcept;
	virtual ~MemoryAdapter();
	MemoryAdapter(const MemoryAdapter &) = delete;
	MemoryAdapter &operator=(const MemoryAdapter &) = delete;

	// The type's row of the table.
	const MemoryTypeInfo &info() const noexcept { return info_; }
	// The side of the element it serves: Input (gpuhandleupload) or Output (gpuhandledownload).
	MemoryRole role() const noexcept { return role_; }

	// A neighbour's GST_QUERY_CONTEXT for this type's objects, answered with the element's
	// (the input Vulkan adapter makes an instance whose devices export memory); false when it
	// is not this type's or there is nothing to answer with.
	virtual bool answerContextQuery(GstElement *element, GstQuery *query);
	// set_context's part for this type's objects.
	virtual void setContext(GstElement *element, GstContext *context);

	// Input: `in.buffer` as a frame without a copy; `backend` gets the backend where its memory
	// lives (left as it is for system memory, which goes where the element chose).
	virtual Result<Frame> frameFromBuffer(GstElement *element, const InputBuffer &in,
					      BackendRef &backend);

	// Output: finds or makes the device the neighbours share (GStreamer's context queries) and
	// opens the backend frames go into (null for system memory).
	virtual Result<BackendRef> openOutput(GstElement *element, DevicesSlot &devices);
	// Output: `frame` as a buffer of this type without a copy, when its resources are this
	// type's objects on the output's device. `exporter`, when set, may export the frame first
	// (memfd frames become DMA-BUFs through udmabuf).
	virtual Result<GstBuffer *> bufferFromFrame(const Frame &frame, const GstVideoInfo &info,
						    WaitDuration timeout,
						    const BackendRef &exporter);
	// Output, OutputCopy::CpuWrite: an empty buffer of GStreamer's own pool for `info` (made on
	// first use, for the negotiated caps).
	virtual Result<GstBuffer *> pooledBuffer(const GstVideoInfo &info);
	// Output, OutputCopy::GpuCopy: `frame` (of `backend`, the output's) copied on the GPU into
	// a buffer of GStreamer's own pool for `info`.
	virtual Result<GstBuffer *> gpuCopyOf(const Frame &frame, const BackendRef &backend,
					      const GstVideoInfo &info, WaitDuration timeout);
	// The caps changed: pools made for the old ones go.
	virtual void dropPools();
	// The element stops: pools and the neighbours' objects go.
	virtual void release();

private:
	const MemoryTypeInfo &info_;
	MemoryRole role_;
};

// An element's adapters: one per built memory type that `role` takes.
class GST_GPUHANDLE_API MemoryAdapters
{
public:
	// One adapter per memory type built in and taken in `role` (its row has a rank for it).
	explicit MemoryAdapters(MemoryRole role);
	~MemoryAdapters();
	MemoryAdapters(const MemoryAdapters &) = delete;
	MemoryAdapters &operator=(const MemoryAdapters &) = delete;

	// The adapter of `memory`, or null when it is not built or not taken in this role.
	MemoryAdapter *find(BufferMemory memory) const noexcept;
	// Each adapter in turn, until one answers.
	bool answerContextQuery(GstElement *element, GstQuery *query);
	// Passes set_context's context to every adapter.
	void setContext(GstElement *element, GstContext *context);
	// The caps changed: every adapter drops its pools.
	void dropPools();
	// The element stops: every adapter releases its pools and the neighbours' objects. The
	// destructor calls it too.
	void release();

private:
	std::vector<std::unique_ptr<MemoryAdapter>> adapters_;
};

} // namespace gst
} // namespace gpuhandle
