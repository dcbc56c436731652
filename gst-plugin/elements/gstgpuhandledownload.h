// gpuhandledownload's parts shared by its files (not installed): its state and a frame's steps.
#pragma once

#include <gpuhandle/backends/planner.h>

#include "gstgpuhandleelements.h"
#include "gstgpuhandlestats.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <gst/base/gstbasetransform.h>
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_download_debug);

namespace gpuhandle::gst::download {

struct DownloadState {
	std::mutex mutex{};
	bool allowCopy = true;
	guint64 timeoutNs = defaultTimeoutNs();

	PathStats stats{};
	DevicesSlot devices{};
	// Set by a flush and by the state change to READY: fence waits end at once (FLUSHING).
	std::atomic<bool> flushing{ false };

	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	// Where frames go (the memory type of the negotiated src caps), its adapter and the backend
	// that adapter opened (none for system memory).
	const MemoryTypeInfo *target = memoryTypeInfo(BufferMemory::System);
	MemoryAdapter *targetAdapter = nullptr;
	BackendRef targetBackend{};
	bool downstreamVideoMeta = false;
	bool downstreamSyncMeta = false; // downstream waits on GstGpuHandleSyncMeta itself
	ExecutionPath::Kind lastPath = ExecutionPath::Kind::NotRun; // logged when it changes
	ImportRoute lastRoute = ImportRoute::Direct;
	// The input backend whose frames did not wrap as the target's memory as they are: its next
	// frames go straight to the planner (whose Direct route still wraps one that would),
	// without an error made per frame. Cleared when caps are set (the target may change).
	const void *noDirectWrapFrom = nullptr;
	// Every output memory type's adapter: the GL, Vulkan and CUDA objects shared with the
	// neighbours live in them (each guarded against the queries of other threads).
	MemoryAdapters adapters{ MemoryRole::Output };
};

// The element's state (from the GstGpuHandleDownload instance), its properties and GStreamer's
// base class, for the files that make up the element.
DownloadState &stateOf(void *self);
WaitDuration timeoutOf(DownloadState &s);
bool allowCopyOf(DownloadState &s);
GstBaseTransformClass *parentClass();

// The target's name in messages ("system memory", "GLMemory", ...).
const char *targetName(const DownloadState &s);
bool toSystemMemory(const DownloadState &s);

// Timestamps, flags and the metas GstBaseTransform carries over, onto an output we made.
void copyMetadata(GstBaseTransform *trans, GstBuffer *out, GstBuffer *in);
// Counts a frame's path and logs each change of path.
void notePath(GstBaseTransform *trans, ExecutionPath path, ImportRoute route);

// The target's device (GL and Vulkan shared with the neighbours, CUDA, the fd backend), opened
// through its adapter; posts the element error when it cannot.
bool openTarget(GstBaseTransform *trans);

// gstgpuhandledownloadsystem.cpp: the frame's acquire point waited in slices that a flush
// ends (the element error posted when it does not signal in time), as a flow return; a frame
// mapped (through its backend, or GStreamer's own memory it wraps) and copied into `out`.
enum class Acquired { Yes, Flushing, Failed };
Acquired waitAcquire(GstBaseTransform *trans, const Frame &frame, WaitDuration timeout);
GstFlowReturn flowOf(Acquired acquired);
bool copyFrameInto(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		   const BackendRef &backend, GstBuffer *out, WaitDuration timeout);

// gstgpuhandledownloadsystem.cpp and gstgpuhandledownloaddevice.cpp: one frame into system
// memory, or into the target API's memory.
GstFlowReturn toSystem(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf);
GstFlowReturn toDevice(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf);

} // namespace gpuhandle::gst::download

// The element type, declared as GStreamer's elements are (G_DECLARE_FINAL_TYPE,
// GST_ELEMENT_REGISTER_DECLARE); its instance holds the state above.
G_BEGIN_DECLS
#define GST_TYPE_GPU_HANDLE_DOWNLOAD (gst_gpu_handle_download_get_type())
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DECLARE_FINAL_TYPE(GstGpuHandleDownload, gst_gpu_handle_download, GST, GPU_HANDLE_DOWNLOAD,
		     GstBaseTransform)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DECLARE(gpuhandledownload);
G_END_DECLS

struct _GstGpuHandleDownload {
	GstBaseTransform parent;
	gpuhandle::gst::download::DownloadState *state;
};
