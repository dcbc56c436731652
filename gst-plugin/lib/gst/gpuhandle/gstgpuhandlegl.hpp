// GstGLMemory <-> gpuhandle frames, and GStreamer's GL context as a gpuhandle OpenGL backend.
// Built when gstreamer-gl-1.0 (with EGL) and gpuhandle's OpenGL backend are found
// (GPUHANDLE_GST_HAVE_GL in <gst/gpuhandle/gstgpuhandleconfig.h>).
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <gst/gl/gl.h>
#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A gpuhandle OpenGL backend working inside `context` (an EGL context of GStreamer's GL library:
// GST_GL_PLATFORM_EGL), on the EGLDisplay the context is current on, its GL work run on the
// context's thread with gst_gl_context_thread_add (which blocks, and runs inline when called on
// that thread). The backend holds a reference to `context` (and so its display) for as long as
// it or any frame it made lives; the last one, if dropped on the GL thread, is released from
// another thread (finalizing a context waits for its GL thread). Backends are cached per
// context: while one lives, the same context gives the same BackendRef. Frames over GStreamer's
// own textures (frameFromGlBuffer) are not the backend's objects: its map() and copyFrame()
// take only textures and buffers it allocated or imported, and answer WrongKind for them.
// Errors: NullHandle, InvalidArgument (not a GstGLContext), NotSupported (a non-EGL platform),
// InvalidState (the context is not created yet), and openBackend's errors.
GST_GPUHANDLE_API Result<BackendRef> glBackendFor(GstGLContext *context);

// A frame of GlTexture resources (one per plane: GstGLMemory's tex_id and target, the sized
// internal format GStreamer made the texture with, the EGL context) over `buffer`'s GLMemory,
// without a copy; a buffer reference (and one on the context) is the resources' anchor. Each
// memory is first mapped for GL, which uploads what a CPU writer left in it. When the buffer has
// a GstGLSyncMeta, the frame's acquire point is a GLsync set after a GPU wait for it in the
// memories' context (without sync objects, the meta is waited for on the CPU here). Errors:
// NullHandle, WrongKind (not GLMemory), InvalidArgument (memories that are not the info's planes
// in order, or of several contexts), NotSupported (a format, or a texture format or size
// without a gpuhandle equivalent: GStreamer's YUY2 is a full-width two-channel texture),
// Backend (the GL map failed).
GST_GPUHANDLE_API Result<Frame> frameFromGlBuffer(GstBuffer *buffer, const GstVideoInfo &info);

// A GLMemory buffer (one GstGLMemory per plane, wrapping the frame's textures, which the memory
// does not delete; a copy of the frame is kept until the last memory is freed, then its release
// gate is signalled with a GLsync set after GStreamer's work) for a frame whose resources are
// GlTexture objects of `context`'s EGL context, or of a GStreamer context sharing with it (a
// frame of frameFromGlBuffer), one per plane, of the size and the sized internal format
// GStreamer makes for `info`'s planes. The memories carry GStreamer's own (often unsized)
// texture format, as its GLMemory does, and are laid out as GStreamer's GL buffer pool lays out
// its own: planes back to back, each memory stride x component-height bytes, the memories' and
// the GstVideoMeta's plane offsets the sums of the sizes before them (not `info`'s offsets,
// which round a 4:2:0 luma plane up to an even height), so that GLMemory's CPU transfers
// (gldownload) find each plane in its memory. The frame's acquire point is waited for on the
// CPU, bounded by `timeout`, and a GstGLSyncMeta is set, so GL consumers wait on the GPU for
// work before the buffer. Errors: NullHandle, InvalidArgument, NotSupported (a format without
// a gpuhandle equivalent or that GLMemory does not hold), FormatMismatch (format, size, shared
// textures, texture formats or sizes GStreamer would not use), WrongKind (not textures),
// DeviceMismatch (textures of an unrelated context), Timeout, Backend.
GST_GPUHANDLE_API Result<GstBuffer *> glBufferFromFrame(const Frame &frame, GstGLContext *context,
							const GstVideoInfo &info,
							WaitDuration timeout = kDefaultWaitTimeout);

// For elements: finds the GL display and context neighbouring GL elements share (the
// GstContext queries GStreamer's GL elements answer, gst_gl_ensure_element_data and
// gst_gl_query_local_gl_context in `direction`), creating a context on the display when none is
// shared. `display`, `otherContext` and `context` are the element's fields (refs it owns; the
// element forwards set_context and context queries with gst_gl_handle_set_context and
// gst_gl_handle_context_query). Errors: NullHandle, NotSupported (no display could be made),
// Backend (GStreamer could not create a context; its message is in the error).
GST_GPUHANDLE_API Status ensureGlContext(GstElement *element, GstPadDirection direction,
					 GstGLDisplay **display, GstGLContext **otherContext,
					 GstGLContext **context);

} // namespace gst
} // namespace gpuhandle
