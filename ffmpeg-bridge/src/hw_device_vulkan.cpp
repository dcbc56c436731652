// placeholder: hw_device_vulkan
#include "hw_device_internal.h"
namespace gpuhandle::ffmpeg::detail {
Result<AVBufferRef *> vulkanDeviceFromContext(const ContextRef &)
{
	return Error(ErrorCode::NotSupported, "context", "Vulkan devices: not yet.");
}
Result<ContextRef> contextFromVulkanDevice(const AVBufferRef *)
{
	return Error(ErrorCode::NotSupported, "device", "Vulkan devices: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
