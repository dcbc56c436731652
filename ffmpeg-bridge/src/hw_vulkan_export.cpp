// placeholder: hw_vulkan_export
#include "hw_frames.h"
namespace gpuhandle::ffmpeg::detail {
Status wrapVulkanAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "frame", "Vulkan frames: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
