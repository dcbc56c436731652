// placeholder: hw_cuda
#include "hw_frames.h"
namespace gpuhandle::ffmpeg::detail {
Result<Frame> frameFromCudaAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame", "Cuda frames: not yet.");
}
Status wrapCudaAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "frame", "Cuda frames: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
