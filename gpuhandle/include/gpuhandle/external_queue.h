// ExternalQueue: the host's queue, stream, command buffer or encoder that one call works on.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/export.h>
#include <gpuhandle/result.h>

#include <cstdint>
#include <variant>

namespace GPUHANDLE_API gpuhandle {

class Context;

// Borrowed for the duration of one call; gpuhandle records or submits work on it, never keeps it.

struct VulkanQueue {
	void *queue = nullptr; // VkQueue
	// The queue's family, which barriers recorded for it name; a real family, not a
	// queue-ownership marker (IGNORED, EXTERNAL, FOREIGN_EXT).
	uint32_t familyIndex = 0;
};
// GL has no queue object: work goes to the context current on the calling thread, named here.
struct GlQueue {
	void *context = nullptr; // EGLContext / GLXContext / HGLRC / CGLContextObj
};
// A CUDA stream. Every value is legal (CU_STREAM_LEGACY and CU_STREAM_PER_THREAD too).
struct CudaStream {
	void *stream = nullptr; // CUstream; null is the legacy default stream
};
// An OpenCL command queue.
struct OpenClQueue {
	void *queue = nullptr; // cl_command_queue
};
// A D3D11 device context, immediate or deferred.
struct D3D11DeviceContext {
	void *deviceContext = nullptr; // ID3D11DeviceContext*
};
// A D3D12 command queue.
struct D3D12Queue {
	void *queue = nullptr; // ID3D12CommandQueue*
};
// A Metal command buffer that gpuhandle encodes its work into.
struct MetalCommandBuffer {
	void *commandBuffer = nullptr; // id<MTLCommandBuffer>, not yet committed
};
// A WebGPU command encoder that gpuhandle records its work into.
struct WebGpuEncoder {
	void *encoder = nullptr; // WGPUCommandEncoder, not yet finished
};

// A plain, copyable value; built only by cpu() and the validating create() overloads.
class ExternalQueue
{
public:
	// The handle, one alternative per backend; std::monostate for the CPU.
	using Native =
		std::variant<std::monostate, VulkanQueue, GlQueue, CudaStream, OpenClQueue,
			     D3D11DeviceContext, D3D12Queue, MetalCommandBuffer, WebGpuEncoder>;

	// The CPU's queue (BackendKind::Cpu): no handle; what a CPU context's queue() gives.
	static ExternalQueue cpu() { return ExternalQueue(BackendKind::Cpu, std::monostate{}); }
	// NullHandle for a null queue; OutOfRange for a familyIndex that is a queue-ownership
	// marker (VK_QUEUE_FAMILY_IGNORED, _EXTERNAL, _FOREIGN_EXT), not a family.
	static Result<ExternalQueue> create(VulkanQueue queue);
	static Result<ExternalQueue> create(GlQueue queue);            // NullHandle when null
	static Result<ExternalQueue> create(CudaStream queue);         // never fails
	static Result<ExternalQueue> create(OpenClQueue queue);        // NullHandle when null
	static Result<ExternalQueue> create(D3D11DeviceContext queue); // NullHandle when null
	static Result<ExternalQueue> create(D3D12Queue queue);         // NullHandle when null
	static Result<ExternalQueue> create(MetalCommandBuffer queue); // NullHandle when null
	static Result<ExternalQueue> create(WebGpuEncoder queue);      // NullHandle when null

	BackendKind backend() const noexcept { return backend_; } // whose queue this is
	const Native &native() const noexcept { return native_; } // the handle create() was given
	// WrongKind (field "backend") unless this queue belongs to `context`'s backend.
	Status checkBackend(const Context &context) const;

	// The backend's value, or WrongKind when the queue is of another backend. The pointer lives
	// as long as this ExternalQueue.
	Result<const VulkanQueue *> vulkan() const;
	Result<const GlQueue *> opengl() const;           // as vulkan(), for GL
	Result<const CudaStream *> cuda() const;          // as vulkan(), for CUDA
	Result<const OpenClQueue *> opencl() const;       // as vulkan(), for OpenCL
	Result<const D3D11DeviceContext *> d3d11() const; // as vulkan(), for D3D11
	Result<const D3D12Queue *> d3d12() const;         // as vulkan(), for D3D12
	Result<const MetalCommandBuffer *> metal() const; // as vulkan(), for Metal
	Result<const WebGpuEncoder *> webgpu() const;     // as vulkan(), for WebGPU

private:
	ExternalQueue(BackendKind backend, Native native) : backend_(backend), native_(native) {}

	BackendKind backend_;
	Native native_;
};

} // namespace gpuhandle
