// OpenCL fence waiter and host-memory import in a build without OpenCL: both answer NotSupported.
#include <gpuhandle/backends/opencl_memory.h>
#include <gpuhandle/backends/opencl_sync.h>

namespace gpuhandle {

Result<SyncPoint> importOpenClEvent(const OpenClEventSync &, KeepAliveRef)
{
	return Error(
		ErrorCode::NotSupported, "event",
		"gpuhandle-interop was built without OpenCL, so it cannot wait on a cl_event.");
}

Result<Resource> importHostMemoryIntoOpenCl(const CpuBytes &, void *, void *, MapAccess,
					    KeepAliveRef)
{
	return Error(
		ErrorCode::NotSupported, "clContext",
		"gpuhandle-interop was built without OpenCL, so it cannot import host memory.");
}

} // namespace gpuhandle
