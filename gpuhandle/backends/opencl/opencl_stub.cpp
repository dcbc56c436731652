// OpenCL fence waiter in a build without OpenCL: importing answers NotSupported.
#include <gpuhandle/backends/opencl_sync.h>

namespace gpuhandle {

Result<SyncPoint> importOpenClEvent(const OpenClEventSync &, KeepAliveRef)
{
	return Error(ErrorCode::NotSupported, "event",
		     "gpuhandle-interop was built without OpenCL, so it cannot wait on a cl_event.");
}

} // namespace gpuhandle
