// placeholder: hw_opencl
#include "hw_frames.h"
namespace gpuhandle::ffmpeg::detail {
Result<Frame> frameFromOpenClAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame", "OpenCl frames: not yet.");
}
Status wrapOpenClAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "frame", "OpenCl frames: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
