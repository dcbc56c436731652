// placeholder: hw_vulkan_import
#include "hw_frames.h"
namespace gpuhandle::ffmpeg::detail {
Result<Frame> frameFromVulkanAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame", "Vulkan frames: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
