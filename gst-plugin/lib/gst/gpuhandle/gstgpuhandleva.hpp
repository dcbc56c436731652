// GstVaMemory -> gpuhandle frames, and GStreamer's VA display as a gpuhandle VA-API backend.
// Built when gstreamer-va-1.0 and gpuhandle's VA-API backend are found (GPUHANDLE_GST_HAVE_VA
// in <gst/gpuhandle/gstgpuhandleconfig.h>).
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>
#include <gst/va/va_fwd.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A gpuhandle VA-API backend working on `display`'s VADisplay (gst_va_display_get_va_dpy; the
// render node from a GstVaDisplayDrm's path, when it has one). It holds a reference to
// `display` for as long as it or any frame it made lives. Cached per display: while one lives,
// the same display gives the same BackendRef. Errors: NullHandle, InvalidArgument (not a
// GstVaDisplay), InvalidState (the display has no VADisplay), and openBackend's errors.
GST_GPUHANDLE_API Result<BackendRef> vaBackendFor(GstVaDisplay *display);
// vaBackendFor the display of `buffer`'s first memory (VAMemory or the VA DMA-BUF allocator's).
// Errors: WrongKind (no VA memory), and vaBackendFor's.
GST_GPUHANDLE_API Result<BackendRef> vaBackendForBuffer(GstBuffer *buffer);

// A frame of one VaSurface resource (the VASurfaceID of `buffer`'s VA memory, on the VADisplay of
// its GstVaDisplay) without a copy: GStreamer's VAMemory (memory:VAMemory caps) or the DMA-BUF
// memories its VA allocator exports for one surface. A buffer reference is the anchor: the
// surface is not recycled while any copy of the frame lives. The planes are the format's, with
// neither offsets nor strides (the driver's layout, which gpuhandle's VA backend learns when it
// maps or exports the surface). The acquire point is a no-op: VA orders the work on a surface,
// and the backend syncs the surface before the CPU touches it. A backend uses the frame through
// importFrame(ImportRoute::Direct) (vaBackendFor the buffer's display). Errors: NullHandle,
// WrongKind (not VA memory), InvalidArgument (memories of several surfaces or displays, a
// display without a VADisplay), NotSupported (a format without a gpuhandle equivalent).
GST_GPUHANDLE_API Result<Frame> frameFromVaBuffer(GstBuffer *buffer, const GstVideoInfo &info);

} // namespace gst
} // namespace gpuhandle
