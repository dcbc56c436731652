// placeholder: hw_vaapi
#include "hw_frames.h"
namespace gpuhandle::ffmpeg::detail {
Result<Frame> frameFromVaapiAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame", "Vaapi frames: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
