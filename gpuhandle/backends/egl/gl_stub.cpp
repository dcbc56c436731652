// GL through EGL in a build without it: openGlBackend and every call answer notBuilt().
#include <gpuhandle/backends/gl_memory.h>
#include <gpuhandle/backends/gl_sync.h>

#include "common/backend_internal.h"

namespace gpuhandle {

namespace {
constexpr MissingApi kEgl{ "EGL", "EGL/egl.h, libegl-dev" };
} // namespace

Result<BackendRef> openGlBackend(const BackendOpenOptions &)
{
	return notBuilt(kEgl, "openBackend", "kind");
}

Result<SyncPoint> importGlSync(const GlSyncSync &, GlExecutor, KeepAliveRef)
{
	return notBuilt(kEgl, "importGlSync", "sync");
}

Result<SyncPoint> importEglSync(void *, void *, KeepAliveRef)
{
	return notBuilt(kEgl, "importEglSync", "sync");
}

Result<Resource> importVulkanMemoryIntoGl(const VulkanMemoryFd &, GlExecutor, void *, uint64_t,
					  uint32_t, KeepAliveRef)
{
	return notBuilt(kEgl, "importVulkanMemoryIntoGl", "glContext");
}

} // namespace gpuhandle
