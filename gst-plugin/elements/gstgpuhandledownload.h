// gpuhandledownload's parts shared by its files (not installed): its state (a Downloader) and
// the system-memory step.
#pragma once

#include "gstgpuhandledownloader.h"

#include <gst/base/gstbasetransform.h>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_download_debug);

namespace gpuhandle::gst::download {

// The element's state (from the GstGpuHandleDownload instance) and GStreamer's base class, for
// the files that make up the element.
Downloader &stateOf(void *self);
GstBaseTransformClass *parentClass();

// gstgpuhandledownloadsystem.cpp: one frame into system memory, wrapped in place or copied into
// a buffer of the negotiated pool.
GstFlowReturn toSystem(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
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
	gpuhandle::gst::download::Downloader *state;
};
