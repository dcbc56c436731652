// gpuhandledownload's parts shared by its files (not installed): its state and a frame's steps.
#pragma once

#include "gstgpuhandleelements.h"
#include "gstgpuhandlestats.h"

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gpuhandle/gstgpuhandlegl.hpp>
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>
#endif
#if GPUHANDLE_GST_HAVE_CUDA
#include <gst/gpuhandle/gstgpuhandlecuda.hpp>
#endif

#include <gpuhandle/backends/planner.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <gst/base/gstbasetransform.h>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_download_debug);

namespace gpuhandle::gst::download {

// Where frames go, from the negotiated src caps.
enum class Target { System, Gl, Vulkan, DmaBuf, Cuda };
const char *targetName(Target target);

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
	Target target = Target::System;
	BackendRef targetBackend{}; // GL, Vulkan, CUDA or fd
	bool downstreamVideoMeta = false;
	bool downstreamSyncMeta = false; // downstream waits on GstGpuHandleSyncMeta itself
	ExecutionPath::Kind lastPath = ExecutionPath::Kind::NotRun; // logged when it changes
	ImportRoute lastRoute = ImportRoute::Direct;
	// The input backend whose frames did not wrap as the target's memory as they are: its next
	// frames go straight to the planner (whose Direct route still wraps one that would),
	// without an error made per frame. Cleared when caps are set (the target may change).
	const void *noDirectWrapFrom = nullptr;
	// Guards the GL, Vulkan and CUDA object fields below: context queries and set_context
	// arrive from other threads while the streaming thread negotiates. Recursive, as
	// GstGLBaseFilter's: the neighbours' answers to the queries made under it come back into
	// this element (query, set_context) on the same thread. The streaming thread alone replaces
	// glContext and vkDevice, so it reads them without the lock.
	std::recursive_mutex contextMutex{};
#if GPUHANDLE_GST_HAVE_GL
	GstGLDisplay *glDisplay = nullptr;
	GstGLContext *glOtherContext = nullptr;
	GstGLContext *glContext = nullptr;
	GstBufferPool *glPool = nullptr; // the CPU-copy fallback into GLMemory, made on first use
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	GstVulkanInstance *vkInstance = nullptr;
	GstVulkanDevice *vkDevice = nullptr;
#endif
#if GPUHANDLE_GST_HAVE_CUDA
	GstCudaContext *cudaContext = nullptr;
	// GStreamer 1.22 wraps no foreign device memory: frames are copied on the GPU into this
	// pool's buffers. Made on first use, for the negotiated caps.
	GstBufferPool *cudaPool = nullptr;
#endif
};

// The element's state (from the GstGpuHandleDownload instance), its properties and GStreamer's
// base class, for the files that make up the element.
DownloadState &stateOf(void *self);
WaitDuration timeoutOf(DownloadState &s);
bool allowCopyOf(DownloadState &s);
GstBaseTransformClass *parentClass();

// Timestamps, flags and the metas GstBaseTransform carries over, onto an output we made.
void copyMetadata(GstBaseTransform *trans, GstBuffer *out, GstBuffer *in);
// Counts a frame's path and logs each change of path.
void notePath(GstBaseTransform *trans, ExecutionPath path, ImportRoute route);

// gstgpuhandledownloadtargets.cpp: the target API's device (GL and Vulkan shared with the
// neighbours, CUDA, the fd backend), the context queries and set_context for them.
bool openTarget(GstBaseTransform *trans);
void releaseContexts(DownloadState &s);
gboolean contextQuery(GstBaseTransform *trans, GstQuery *query);
void setTargetContexts(GstElement *element, GstContext *context);

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
