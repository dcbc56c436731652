// The CUDA driver entry points gpuhandle uses, loaded once per process from libcuda with dlopen.
#pragma once

#include <gpuhandle/error.h>

#include "common/runtime_library.h"

#ifdef GPUHANDLE_CUDA_TOOLKIT
#include <cuda.h>
#else
#include <ffnvcodec/dynlink_cuda.h>
#endif

#include <cstddef>
#include <optional>

namespace gpuhandle::cuda {

// Values ffnvcodec's dynlink_cuda.h does not define (it carries a subset of cuda.h); the numbers
// are the driver ABI's, the same in every cuda.h.
inline constexpr unsigned int kMemHostRegisterDeviceMap = 0x02; // CU_MEMHOSTREGISTER_DEVICEMAP
inline constexpr unsigned int kExternalMemoryDedicated = 0x1;   // CUDA_EXTERNAL_MEMORY_DEDICATED
inline constexpr int kErrorOutOfMemory = 2;                     // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr int kErrorHostMemoryAlreadyRegistered = 712; // ..._HOST_MEMORY_ALREADY_REGISTERED

// The CUeglFrame of the Toolkit's cudaEGL.h (driver ABI since CUDA 7), declared here because
// cudaEGL.h needs the EGL headers and ffnvcodec's copy varies by version; cuda_backend_egl.cpp
// checks this layout against cudaEGL.h where the Toolkit is installed.
inline constexpr unsigned int kEglFrameMaxPlanes = 3;
inline constexpr unsigned int kEglFrameTypeArray = 0; // CU_EGL_FRAME_TYPE_ARRAY: CUarrays
inline constexpr unsigned int kEglFrameTypePitch = 1; // CU_EGL_FRAME_TYPE_PITCH: device pointers
inline constexpr unsigned int kGraphicsRegisterFlagsNone = 0; // CU_GRAPHICS_REGISTER_FLAGS_NONE
struct EglFrame {
	union Planes {
		CUarray arrays[kEglFrameMaxPlanes];
		void *pitched[kEglFrameMaxPlanes];
	};
	Planes planes{};
	unsigned int width = 0;  // of the first plane
	unsigned int height = 0; // of the first plane
	unsigned int depth = 0;
	unsigned int pitch = 0; // of the first plane, in bytes
	unsigned int planeCount = 0;
	unsigned int numChannels = 0;
	unsigned int frameType = 0;   // CUeglFrameType
	unsigned int colorFormat = 0; // CUeglColorFormat
	CUarray_format arrayFormat{};
};

// The driver entry points, by their ABI names (cuda.h renames several with _v2 macros, so the
// members are not called after them). Types are spelled here because ffnvcodec and the Toolkit
// name their function types differently, and ffnvcodec lacks some of these functions.
struct Driver {
	// Needed by every user (the fence waiters): a driver without them is unusable.
	CUresult(CUDAAPI *init)(unsigned int) = nullptr;
	CUresult(CUDAAPI *getErrorName)(CUresult, const char **) = nullptr;
	CUresult(CUDAAPI *ctxPushCurrent)(CUcontext) = nullptr;
	CUresult(CUDAAPI *ctxPopCurrent)(CUcontext *) = nullptr;
	CUresult(CUDAAPI *eventCreate)(CUevent *, unsigned int) = nullptr;
	CUresult(CUDAAPI *eventQuery)(CUevent) = nullptr;
	CUresult(CUDAAPI *eventRecord)(CUevent, CUstream) = nullptr;
	CUresult(CUDAAPI *eventDestroy)(CUevent) = nullptr;
	CUresult(CUDAAPI *streamCreate)(CUstream *, unsigned int) = nullptr;
	CUresult(CUDAAPI *streamDestroy)(CUstream) = nullptr;
	// CUDA >= 10 only; null on older drivers.
	CUresult(CUDAAPI *waitExternalSemaphoresAsync)(const CUexternalSemaphore *,
						       const CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS *,
						       unsigned int, CUstream) = nullptr;

	// The backend object's calls: loaded when present, checked by openCudaBackend().
	CUresult(CUDAAPI *deviceGetCount)(int *) = nullptr;
	CUresult(CUDAAPI *deviceGet)(CUdevice *, int) = nullptr;
	CUresult(CUDAAPI *deviceGetName)(char *, int, CUdevice) = nullptr;
	CUresult(CUDAAPI *deviceGetAttribute)(int *, CUdevice_attribute, CUdevice) = nullptr;
	CUresult(CUDAAPI *deviceGetUuid)(CUuuid *, CUdevice) = nullptr;
	CUresult(CUDAAPI *deviceGetPciBusId)(char *, int, CUdevice) = nullptr;
	CUresult(CUDAAPI *deviceTotalMem)(size_t *, CUdevice) = nullptr;
	CUresult(CUDAAPI *driverGetVersion)(int *) = nullptr;
	CUresult(CUDAAPI *ctxGetDevice)(CUdevice *) = nullptr;
	CUresult(CUDAAPI *primaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
	CUresult(CUDAAPI *primaryCtxRelease)(CUdevice) = nullptr;
	CUresult(CUDAAPI *memAlloc)(CUdeviceptr *, size_t) = nullptr;
	CUresult(CUDAAPI *memFree)(CUdeviceptr) = nullptr;
	// Page-locked host memory: the staging copies of CPU mappings, so that a device-to-host
	// cuMemcpy2DAsync stays asynchronous (into pageable memory it blocks until done).
	CUresult(CUDAAPI *memAllocHost)(void **, size_t) = nullptr;
	CUresult(CUDAAPI *memFreeHost)(void *) = nullptr;
	CUresult(CUDAAPI *memcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream) = nullptr;
	CUresult(CUDAAPI *memcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
	CUresult(CUDAAPI *memcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
	CUresult(CUDAAPI *streamSynchronize)(CUstream) = nullptr;
	CUresult(CUDAAPI *streamWaitEvent)(CUstream, CUevent, unsigned int) = nullptr;
	CUresult(CUDAAPI *memHostRegister)(void *, size_t, unsigned int) = nullptr;
	CUresult(CUDAAPI *memHostUnregister)(void *) = nullptr;
	CUresult(CUDAAPI *memHostGetDevicePointer)(CUdeviceptr *, void *, unsigned int) = nullptr;
	CUresult(CUDAAPI *importExternalMemory)(CUexternalMemory *,
						const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *) = nullptr;
	CUresult(CUDAAPI *externalMemoryGetMappedBuffer)(CUdeviceptr *, CUexternalMemory,
							 const CUDA_EXTERNAL_MEMORY_BUFFER_DESC *) =
		nullptr;
	CUresult(CUDAAPI *destroyExternalMemory)(CUexternalMemory) = nullptr;
	// EGL interop (DMA-BUF imports through an EGLImage): optional, null where the driver
	// lacks them (not counted in missingBackendCall).
	CUresult(CUDAAPI *graphicsEglRegisterImage)(CUgraphicsResource *, void *,
						    unsigned int) = nullptr;
	CUresult(CUDAAPI *graphicsResourceGetMappedEglFrame)(EglFrame *, CUgraphicsResource,
							     unsigned int, unsigned int) = nullptr;
	CUresult(CUDAAPI *graphicsUnregisterResource)(CUgraphicsResource) = nullptr;
	// The first backend call the loaded driver lacks (null: it has them all).
	const char *missingBackendCall = nullptr;

	// Set when the driver is unusable; every user returns it.
	std::optional<Error> failure{};
};

inline constexpr const char *kLibrary = "libcuda.so.1";

inline Driver loadDriver()
{
	Driver d;
	RuntimeLibrary library(kLibrary, "The CUDA driver", "driver",
			       "it is older than gpuhandle supports");
	library.need("cuInit", d.init);
	library.need("cuGetErrorName", d.getErrorName);
	library.need("cuCtxPushCurrent_v2", d.ctxPushCurrent);
	library.need("cuCtxPopCurrent_v2", d.ctxPopCurrent);
	library.need("cuEventCreate", d.eventCreate);
	library.need("cuEventQuery", d.eventQuery);
	library.need("cuEventRecord", d.eventRecord);
	library.need("cuEventDestroy_v2", d.eventDestroy);
	library.need("cuStreamCreate", d.streamCreate);
	library.need("cuStreamDestroy_v2", d.streamDestroy);
	if (library.failure()) {
		d.failure = library.failure();
		return d;
	}
	library.optional("cuWaitExternalSemaphoresAsync", d.waitExternalSemaphoresAsync);

	// The backend's calls; the newest ABI name first where the driver renamed one.
	auto want = [&](const char *name, auto &out) {
		if (!library.optional(name, out) && !d.missingBackendCall)
			d.missingBackendCall = name;
	};
	auto wantEither = [&](const char *newer, const char *older, auto &out) {
		if (!library.optional(newer, out))
			want(older, out);
	};
	want("cuDeviceGetCount", d.deviceGetCount);
	want("cuDeviceGet", d.deviceGet);
	want("cuDeviceGetName", d.deviceGetName);
	want("cuDeviceGetAttribute", d.deviceGetAttribute);
	wantEither("cuDeviceGetUuid_v2", "cuDeviceGetUuid", d.deviceGetUuid);
	want("cuDeviceGetPCIBusId", d.deviceGetPciBusId);
	want("cuDeviceTotalMem_v2", d.deviceTotalMem);
	want("cuDriverGetVersion", d.driverGetVersion);
	want("cuCtxGetDevice", d.ctxGetDevice);
	want("cuDevicePrimaryCtxRetain", d.primaryCtxRetain);
	wantEither("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease",
		   d.primaryCtxRelease);
	want("cuMemAlloc_v2", d.memAlloc);
	want("cuMemFree_v2", d.memFree);
	wantEither("cuMemAllocHost_v2", "cuMemAllocHost", d.memAllocHost);
	want("cuMemFreeHost", d.memFreeHost);
	want("cuMemcpy2DAsync_v2", d.memcpy2DAsync);
	want("cuMemcpyDtoH_v2", d.memcpyDtoH);
	want("cuMemcpyHtoD_v2", d.memcpyHtoD);
	want("cuStreamSynchronize", d.streamSynchronize);
	want("cuStreamWaitEvent", d.streamWaitEvent);
	wantEither("cuMemHostRegister_v2", "cuMemHostRegister", d.memHostRegister);
	want("cuMemHostUnregister", d.memHostUnregister);
	wantEither("cuMemHostGetDevicePointer_v2", "cuMemHostGetDevicePointer",
		   d.memHostGetDevicePointer);
	want("cuImportExternalMemory", d.importExternalMemory);
	want("cuExternalMemoryGetMappedBuffer", d.externalMemoryGetMappedBuffer);
	want("cuDestroyExternalMemory", d.destroyExternalMemory);
	library.optional("cuGraphicsEGLRegisterImage", d.graphicsEglRegisterImage);
	library.optional("cuGraphicsResourceGetMappedEglFrame",
			 d.graphicsResourceGetMappedEglFrame);
	library.optional("cuGraphicsUnregisterResource", d.graphicsUnregisterResource);

	CUresult result = d.init(0);
	if (result != CUDA_SUCCESS) {
		const char *name = nullptr;
		if (d.getErrorName(result, &name) != CUDA_SUCCESS || !name)
			name = "an unknown CUresult";
		d.failure = Error::format(ErrorCode::Backend, "cuInit",
					  "cuInit(0) failed with %s (%d).", name,
					  static_cast<int>(result));
	}
	return d;
}

// Loaded on first use, once per process (one instance across the library: an inline function's
// static); thread-safe through the static's initialisation.
inline const Driver &driver()
{
	static const Driver instance = loadDriver();
	return instance;
}

inline const char *resultName(const Driver &d, CUresult result)
{
	const char *name = nullptr;
	if (d.getErrorName(result, &name) != CUDA_SUCCESS || !name)
		name = "an unknown CUresult";
	return name;
}

// "<call> failed with CUDA_ERROR_X (n)." as a Backend error (OutOfMemory for out of memory).
inline Error error(const Driver &d, const char *field, const char *call, CUresult result)
{
	ErrorCode code = static_cast<int>(result) == kErrorOutOfMemory ? ErrorCode::OutOfMemory
								       : ErrorCode::Backend;
	return Error::format(code, field, "%s failed with %s (%d).", call, resultName(d, result),
			     static_cast<int>(result));
}

// Makes `context` current for a scope when it is set; pops only what it pushed.
class ContextScope
{
public:
	ContextScope(const Driver &d, CUcontext context) : driver_(d)
	{
		if (context) {
			result_ = d.ctxPushCurrent(context);
			pushed_ = result_ == CUDA_SUCCESS;
		}
	}
	~ContextScope()
	{
		if (pushed_) {
			CUcontext popped = nullptr;
			driver_.ctxPopCurrent(&popped);
		}
	}
	ContextScope(const ContextScope &) = delete;
	ContextScope &operator=(const ContextScope &) = delete;

	CUresult result() const noexcept { return result_; }

private:
	const Driver &driver_;
	CUresult result_ = CUDA_SUCCESS;
	bool pushed_ = false;
};

} // namespace gpuhandle::cuda
