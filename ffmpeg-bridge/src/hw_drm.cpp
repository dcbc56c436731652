// placeholder: hw_drm
#include "hw_frames.h"
namespace gpuhandle::ffmpeg::detail {
Result<Frame> frameFromDrmAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame", "Drm frames: not yet.");
}
Status wrapDrmAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "frame", "Drm frames: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
