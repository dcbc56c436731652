// VAMemory in a libgstgpuhandle-1.0 built without gstreamer-va-1.0 (or gpuhandle's VA-API
// backend): gstgpuhandleva.hpp's functions, each answering NotSupported, and no adapter.
#include "../memorytypes/memorytypes_internal.h"
#include "stub_internal.h"

// gstgpuhandleva.hpp's type, declared as GStreamer's va_fwd.h declares it.
typedef struct _GstVaDisplay GstVaDisplay;

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

namespace {
constexpr const char *kLibrary = "gstreamer-va-1.0 and gpuhandle's VA-API backend";
} // namespace

GST_GPUHANDLE_API Result<BackendRef> vaBackendFor(GstVaDisplay *)
{
	return detail::notBuilt("vaBackendFor", kLibrary);
}

GST_GPUHANDLE_API Result<BackendRef> vaBackendForBuffer(GstBuffer *)
{
	return detail::notBuilt("vaBackendForBuffer", kLibrary);
}

GST_GPUHANDLE_API Result<Frame> frameFromVaBuffer(GstBuffer *, const GstVideoInfo &)
{
	return detail::notBuilt("frameFromVaBuffer", kLibrary);
}

} // namespace gst
} // namespace gpuhandle

// Not exported: outside the blocks the export macro marks.
namespace gpuhandle::gst::detail {
std::unique_ptr<MemoryAdapter> vaAdapter(const MemoryTypeInfo &, MemoryRole)
{
	return nullptr;
}
} // namespace gpuhandle::gst::detail
