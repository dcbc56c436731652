// GLMemory in a libgstgpuhandle-1.0 built without gstreamer-gl-1.0: gstgpuhandlegl.hpp's functions,
// each answering NotSupported, and no adapter (the table's row says `built` false).
#include "../memorytypes/memorytypes_internal.h"
#include "stub_internal.h"

// gstgpuhandlegl.hpp's types, declared as GStreamer's GL headers declare them.
typedef struct _GstGLContext GstGLContext;
typedef struct _GstGLDisplay GstGLDisplay;

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

namespace {
constexpr const char *kLibrary = "gstreamer-gl-1.0";
} // namespace

GST_GPUHANDLE_API Result<BackendRef> glBackendFor(GstGLContext *)
{
	return detail::notBuilt("glBackendFor", kLibrary);
}

GST_GPUHANDLE_API Result<Frame> frameFromGlBuffer(GstBuffer *, const GstVideoInfo &)
{
	return detail::notBuilt("frameFromGlBuffer", kLibrary);
}

GST_GPUHANDLE_API Result<GstBuffer *> glBufferFromFrame(const Frame &, GstGLContext *,
							const GstVideoInfo &, WaitDuration)
{
	return detail::notBuilt("glBufferFromFrame", kLibrary);
}

GST_GPUHANDLE_API Status ensureGlContext(GstElement *, GstPadDirection, GstGLDisplay **,
					 GstGLContext **, GstGLContext **)
{
	return detail::notBuilt("ensureGlContext", kLibrary);
}

} // namespace gst
} // namespace gpuhandle

// Not exported: outside the blocks the export macro marks.
namespace gpuhandle::gst::detail {
std::unique_ptr<MemoryAdapter> glAdapter(const MemoryTypeInfo &, MemoryRole)
{
	return nullptr;
}
} // namespace gpuhandle::gst::detail
