// GL fence waiters and memory import in a build without EGL: every import answers NotSupported.
#include <gpuhandle/backends/gl_memory.h>
#include <gpuhandle/backends/gl_sync.h>

namespace gpuhandle {

Result<SyncPoint> importGlSync(const GlSyncSync &, GlExecutor, KeepAliveRef)
{
	return Error(ErrorCode::NotSupported, "sync",
		     "gpuhandle-interop was built without EGL, so it cannot wait on a GLsync.");
}

Result<SyncPoint> importEglSync(void *, void *, KeepAliveRef)
{
	return Error(ErrorCode::NotSupported, "sync",
		     "gpuhandle-interop was built without EGL, so it cannot wait on an EGLSync.");
}

Result<Resource> importVulkanMemoryIntoGl(const VulkanMemoryFd &, GlExecutor, void *, uint64_t,
					  uint32_t, KeepAliveRef)
{
	return Error(
		ErrorCode::NotSupported, "glContext",
		"gpuhandle-interop was built without EGL, so it cannot import Vulkan memory into GL.");
}

} // namespace gpuhandle
