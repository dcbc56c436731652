// Private to libgpuhandle-ffmpeg: hwcontext_cuda.h over the CUDA types it needs, and the few
// driver calls the bridge makes, loaded from libcuda at run time (FFmpeg loads it the same way).
#pragma once

#include <gpuhandle/result.h>

// GPUHANDLE_FFMPEG_CUDA: 1 when CUDA's types are available (the Toolkit's cuda.h, else
// ffnvcodec's dynlink_cuda.h, which defines CUDA_VERSION so that hwcontext_cuda.h does not ask
// for cuda.h), 0 when the bridge was built without them (CUDA frames and devices: NotSupported).
#if GPUHANDLE_FFMPEG_HAVE_CUDA_H
#define GPUHANDLE_FFMPEG_CUDA 1
#ifdef GPUHANDLE_CUDA_TOOLKIT
#include <cuda.h>
#else
#include <ffnvcodec/dynlink_cuda.h>
#endif
extern "C" {
#include <libavutil/hwcontext_cuda.h>
}
#else
#define GPUHANDLE_FFMPEG_CUDA 0
#endif

#if GPUHANDLE_FFMPEG_CUDA
namespace gpuhandle::ffmpeg::detail {

// Driver entry points by their ABI names (the Toolkit's cuda.h renames several with _v2 macros).
struct CudaApi {
	CUresult(CUDAAPI *init)(unsigned int) = nullptr;
	CUresult(CUDAAPI *ctxPushCurrent)(CUcontext) = nullptr;
	CUresult(CUDAAPI *ctxPopCurrent)(CUcontext *) = nullptr;
	CUresult(CUDAAPI *ctxGetDevice)(CUdevice *) = nullptr;
	CUresult(CUDAAPI *deviceGetUuid)(CUuuid *, CUdevice) = nullptr;
	CUresult(CUDAAPI *deviceGetPciBusId)(char *, int, CUdevice) = nullptr;
};

// libcuda.so.1's entry points (loaded once, never unloaded); NotSupported with the reason when
// the driver is absent or lacks one of them.
Result<const CudaApi *> cudaApi();

} // namespace gpuhandle::ffmpeg::detail
#endif
