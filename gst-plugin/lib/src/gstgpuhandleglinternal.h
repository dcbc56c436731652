// What the GL backend-in-context and the two GLMemory conversions share (not installed).
#pragma once

#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/keep_alive.h>

#include <cstdint>
#include <functional>
#include <memory>

#include <gst/gl/gl.h>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_gl_debug);

namespace gpuhandle::gst::detail {

constexpr uint32_t kGlSyncGpuCommandsComplete = 0x9117;

// Registers the "gpuhandlegl" debug category, once (after gst_init()).
void initGlDebug();

// Whether `object` is a GstGLContext (null is not).
bool isGlContext(gpointer object);

// Runs `work` on the context's GL thread and returns once it ran (inline when called there).
void onGlThread(GstGLContext *context, std::function<void()> work);

// The EGLContext of a GStreamer context (null before it is created).
void *eglContextOf(GstGLContext *context);

// A reference on a GstGLContext held by gpuhandle objects (a backend's Context, frame anchors,
// executors). A context's last unref finalizes it, which waits for its GL thread to end: when
// that would happen on the GL thread itself, the unref is handed to a short-lived thread.
class GlContextHold final : public KeepAlive
{
public:
	explicit GlContextHold(GstGLContext *c)
		: context(static_cast<GstGLContext *>(gst_object_ref(c)))
	{
	}
	GlContextHold(const GlContextHold &) = delete;
	GlContextHold &operator=(const GlContextHold &) = delete;
	~GlContextHold() override;

	GstGLContext *const context;
};
using GlContextHoldRef = std::shared_ptr<GlContextHold>;

// gst_gl_context_thread_add as a GlExecutor: blocking, and inline on the GL thread (as
// gl_sync.h requires of a blocking executor). It keeps the context alive.
GlExecutor glExecutorOf(GlContextHoldRef hold);

// The anchor of frames over GLMemory: the buffer, then the context it was made in.
struct GlBufferAnchor final : KeepAlive {
	GlBufferAnchor(GstBuffer *b, GlContextHoldRef h)
		: buffer(gst_buffer_ref(b)), hold(std::move(h))
	{
	}
	GlBufferAnchor(const GlBufferAnchor &) = delete;
	GlBufferAnchor &operator=(const GlBufferAnchor &) = delete;
	// The buffer first: its memories then never drop the context's last reference.
	~GlBufferAnchor() override { gst_buffer_unref(buffer); }

	GstBuffer *const buffer;
	const GlContextHoldRef hold;
};

} // namespace gpuhandle::gst::detail
