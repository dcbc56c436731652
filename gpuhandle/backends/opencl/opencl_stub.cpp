// OpenCL in a build without it: openOpenClBackend and every call answer notBuilt().
#include <gpuhandle/backends/opencl_memory.h>
#include <gpuhandle/backends/opencl_sync.h>

#include "common/backend_internal.h"

namespace gpuhandle {

namespace {
constexpr MissingApi kOpenCl{ "OpenCL", "CL/cl.h, ocl-icd-opencl-dev" };
} // namespace

Result<BackendRef> openOpenClBackend(const BackendOpenOptions &)
{
	return notBuilt(kOpenCl, "openBackend", "kind");
}

Result<SyncPoint> importOpenClEvent(const OpenClEventSync &, KeepAliveRef)
{
	return notBuilt(kOpenCl, "importOpenClEvent", "event");
}

Result<Resource> importHostMemoryIntoOpenCl(const CpuBytes &, void *, void *, MapAccess,
					    KeepAliveRef)
{
	return notBuilt(kOpenCl, "importHostMemoryIntoOpenCl", "clContext");
}

} // namespace gpuhandle
