// GL import of Vulkan memory: an opaque fd made a GL buffer through GL_EXT_memory_object_fd.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/resource.h>
#include <gpuhandle/result.h>

#include <cstdint>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// GL_COPY_READ_BUFFER: the target recorded in the GlBuffer unless the caller names another.
inline constexpr uint32_t kGlCopyReadBuffer = 0x8F36;

// Imports `memory` (a buffer export: exportDesc.format is 0) into the EGL context `glContext` as
// a GlBuffer of `size` bytes, without a copy: GL reads and writes the Vulkan allocation itself.
// `size` may be smaller than exportDesc.allocationSize, and has to be on llvmpipe, which refuses
// buffer storage that fills the whole memory object. `executor` runs the GL work on the thread
// where `glContext` is current; the call waits for it, so with a posting executor it must be
// made off the GL thread. On that thread the import checks that the context offers
// GL_EXT_memory_object and GL_EXT_memory_object_fd, that its device and driver UUIDs equal the
// export's (when the export carries them), then imports a dup() of the fd (GL owns it once the
// import succeeds) into a memory object and gives a new buffer name storage in it.
// The GlBuffer's anchor keeps a copy of `memory` and `owner` alive; the last copy of the
// resource deletes the buffer and the memory object through `executor`, once, then releases them.
// On error nothing is kept and no fd stays open.
// Errors: NullHandle (executor, glContext), ZeroSize (size), OutOfRange (size larger than the
// allocation), WrongKind (an image export), InvalidState (glContext is not current where the
// executor ran the work), NotSupported (no extension or entry point, a build without EGL),
// DeviceMismatch (the UUIDs differ), Io (dup failed), Backend (a GL error).
GPUHANDLE_INTEROP_API Result<Resource> importVulkanMemoryIntoGl(const VulkanMemoryFd &memory,
								GlExecutor executor,
								void *glContext, uint64_t size,
								uint32_t target = kGlCopyReadBuffer,
								KeepAliveRef owner = {});

} // namespace gpuhandle
