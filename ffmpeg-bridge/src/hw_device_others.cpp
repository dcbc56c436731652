// placeholder: hw_device_others
#include "hw_device_internal.h"
namespace gpuhandle::ffmpeg::detail {
Result<AVBufferRef *> cudaDeviceFromContext(const ContextRef &)
{
	return Error(ErrorCode::NotSupported, "context", "Cuda devices: not yet.");
}
Result<ContextRef> contextFromCudaDevice(const AVBufferRef *)
{
	return Error(ErrorCode::NotSupported, "device", "Cuda devices: not yet.");
}
Result<AVBufferRef *> openClDeviceFromContext(const ContextRef &)
{
	return Error(ErrorCode::NotSupported, "context", "OpenCl devices: not yet.");
}
Result<ContextRef> contextFromOpenClDevice(const AVBufferRef *)
{
	return Error(ErrorCode::NotSupported, "device", "OpenCl devices: not yet.");
}
Result<AVBufferRef *> vaapiDeviceFromContext(const ContextRef &)
{
	return Error(ErrorCode::NotSupported, "context", "Vaapi devices: not yet.");
}
Result<ContextRef> contextFromVaapiDevice(const AVBufferRef *)
{
	return Error(ErrorCode::NotSupported, "device", "Vaapi devices: not yet.");
}
} // namespace gpuhandle::ffmpeg::detail
