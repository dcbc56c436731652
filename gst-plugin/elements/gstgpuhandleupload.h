// gpuhandleupload's parts shared by its files (not installed): its state and the input's steps.
#pragma once

#include "gstgpuhandleelementbudget.h"
#include "gstgpuhandleelements.h"
#include "gstgpuhandlestats.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

#include <gst/base/gstbasetransform.h>
#include <gst/gpuhandle/gstgpuhandlebufferpool.hpp>
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_upload_debug);

namespace gpuhandle::gst::upload {

// What the element keeps. Properties are read under `mutex` (set from the application's
// thread); the rest belongs to the streaming thread between set_caps and stop.
struct UploadState {
	std::mutex mutex{};
	BackendChoice backendChoice = BackendChoice::Auto;
	StorageChoice storageChoice = StorageChoice::Auto;
	guint64 timeoutNs = defaultTimeoutNs();
	std::string memoryBudget{}; // the property: a cap set on the backend's budget at start

	PathStats stats{};
	BudgetStats budgetStats{}; // of the backend and pool system memory goes to
	DevicesSlot devices{};

	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	BufferMemory input = BufferMemory::System;
	MemoryAdapter *inputAdapter = nullptr; // the input memory type's (null for GpuHandle)
	BackendRef backend{};                  // where system memory goes (cpu: wrapped in place)
	FrameStorage storage = FrameStorage::Buffer;
	GstBufferPool *pool = nullptr; // frames of `backend` (not for cpu)
	uint64_t modifier = 0;         // DMA-BUF input: the caps' modifier (linear on 1.22)
	GstVideoFormat warnedFormat = GST_VIDEO_FORMAT_UNKNOWN; // see warnUnsupportedFormat
	// Set by a flush and by the change to READY: the wait for an input's fence ends at once.
	std::atomic<bool> flushing{ false };
	// Every input memory type's adapter; the Vulkan one holds the instance shared with Vulkan
	// neighbours (one whose devices export memory), guarded against other threads' queries.
	MemoryAdapters adapters{ MemoryRole::Input };
};

// The element's state (from the GstGpuHandleUpload instance) and GStreamer's base class.
UploadState &stateOf(void *self);
GstBaseTransformClass *parentClass();
// Timestamps, flags and the metas GstBaseTransform carries over, onto an output we made.
void copyMetadata(GstBaseTransform *trans, GstBuffer *out, GstBuffer *in);

// gstgpuhandleuploadinput.cpp: the input as a frame without a copy, through its memory type's
// adapter (its backend is where the memory lives), and system memory copied into a pooled frame
// of the chosen backend.
Result<Frame> wrapInput(GstBaseTransform *trans, GstBuffer *inbuf, BackendRef &backend);
GstFlowReturn copyIntoPool(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &input,
			   GstBuffer **outbuf);

} // namespace gpuhandle::gst::upload

// The element type, declared as GStreamer's elements are (G_DECLARE_FINAL_TYPE,
// GST_ELEMENT_REGISTER_DECLARE); its instance holds the state above.
G_BEGIN_DECLS
#define GST_TYPE_GPU_HANDLE_UPLOAD (gst_gpu_handle_upload_get_type())
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DECLARE_FINAL_TYPE(GstGpuHandleUpload, gst_gpu_handle_upload, GST, GPU_HANDLE_UPLOAD,
		     GstBaseTransform)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DECLARE(gpuhandleupload);
G_END_DECLS

struct _GstGpuHandleUpload {
	GstBaseTransform parent;
	gpuhandle::gst::upload::UploadState *state;
};
