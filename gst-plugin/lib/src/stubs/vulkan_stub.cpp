// VulkanImage memory in a libgstgpuhandle-1.0 built without gstreamer-vulkan-1.0:
// gstgpuhandlevulkan.hpp's functions, each answering NotSupported, and no adapter.
#include "../memorytypes/memorytypes_internal.h"
#include "stub_internal.h"

// gstgpuhandlevulkan.hpp's types, declared as GStreamer's Vulkan headers declare them.
typedef struct _GstVulkanDevice GstVulkanDevice;
typedef struct _GstVulkanInstance GstVulkanInstance;

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

namespace {
constexpr const char *kLibrary = "gstreamer-vulkan-1.0";
} // namespace

GST_GPUHANDLE_API Result<BackendRef> vulkanBackendFor(GstVulkanDevice *)
{
	return detail::notBuilt("vulkanBackendFor", kLibrary);
}

GST_GPUHANDLE_API Result<Frame> frameFromVulkanBuffer(GstBuffer *, const GstVideoInfo &)
{
	return detail::notBuilt("frameFromVulkanBuffer", kLibrary);
}

GST_GPUHANDLE_API Result<GstBuffer *> vulkanBufferFromFrame(const Frame &, GstVulkanDevice *,
							    const GstVideoInfo &, WaitDuration)
{
	return detail::notBuilt("vulkanBufferFromFrame", kLibrary);
}

GST_GPUHANDLE_API Status ensureVulkanDevice(GstElement *, GstVulkanInstance **, GstVulkanDevice **)
{
	return detail::notBuilt("ensureVulkanDevice", kLibrary);
}

} // namespace gst
} // namespace gpuhandle

// Not exported: outside the blocks the export macro marks.
namespace gpuhandle::gst::detail {
std::unique_ptr<MemoryAdapter> vulkanAdapter(const MemoryTypeInfo &, MemoryRole)
{
	return nullptr;
}
} // namespace gpuhandle::gst::detail
