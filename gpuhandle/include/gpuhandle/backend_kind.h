// BackendKind: the GPU or host API that owns a resource, a context, a queue or a fence.
#pragma once

#include <gpuhandle/export.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// Stable numbers (shared with the C API and, later, the wire format).
enum class BackendKind : uint32_t {
	Cpu = 0,     // host memory; work done on the calling thread
	Vulkan = 1,  // VkQueue submissions, timeline/binary semaphores
	OpenGL = 2,  // GL/GLES on EGL, GLX, WGL or CGL; GLsync
	Cuda = 3,    // CUstream work, CUevent / external semaphores
	OpenCl = 4,  // cl_command_queue work, cl_event
	VaApi = 5,   // VADisplay surfaces, vaSyncSurface
	Fd = 6,      // Linux fds: DMA-BUF, memfd, sync_file
	D3D11 = 7,   // ID3D11DeviceContext, IDXGIKeyedMutex
	D3D12 = 8,   // ID3D12CommandQueue::Signal on an ID3D12Fence
	Metal = 9,   // MTLCommandBuffer, MTLSharedEvent
	WebGpu = 10, // webgpu.h WGPUQueue submissions
};

// How many BackendKind values there are (the largest plus one): the size of a table indexed by
// a backend's number.
inline constexpr uint32_t kBackendKindCount = 11;

// Lower-case name ("vulkan"), or "unknown" for a value outside the enum.
GPUHANDLE_API const char *backendKindName(BackendKind kind) noexcept;

} // namespace gpuhandle
