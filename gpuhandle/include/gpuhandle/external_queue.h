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
	uint32_t familyIndex = 0;
};
// GL has no queue object: work goes to the context current on the calling thread, named here.
struct GlQueue {
	void *context = nullptr; // EGLContext / GLXContext / HGLRC / CGLContextObj
};
struct CudaStream {
	void *stream = nullptr; // CUstream; null is the legacy default stream
};
struct OpenClQueue {
	void *queue = nullptr; // cl_command_queue
};
struct D3D11DeviceContext {
	void *deviceContext = nullptr; // ID3D11DeviceContext*
};
struct D3D12Queue {
	void *queue = nullptr; // ID3D12CommandQueue*
};
struct MetalCommandBuffer {
	void *commandBuffer = nullptr; // id<MTLCommandBuffer>, not yet committed
};
struct WebGpuEncoder {
	void *encoder = nullptr; // WGPUCommandEncoder, not yet finished
};

// A plain, copyable value; built only by cpu() and the validating create() overloads.
class ExternalQueue
{
public:
	using Native =
		std::variant<std::monostate, VulkanQueue, GlQueue, CudaStream, OpenClQueue,
			     D3D11DeviceContext, D3D12Queue, MetalCommandBuffer, WebGpuEncoder>;

	static ExternalQueue cpu() { return ExternalQueue(BackendKind::Cpu, std::monostate{}); }
	static Result<ExternalQueue> create(VulkanQueue queue);
	static Result<ExternalQueue> create(GlQueue queue);
	static Result<ExternalQueue> create(CudaStream queue);
	static Result<ExternalQueue> create(OpenClQueue queue);
	static Result<ExternalQueue> create(D3D11DeviceContext queue);
	static Result<ExternalQueue> create(D3D12Queue queue);
	static Result<ExternalQueue> create(MetalCommandBuffer queue);
	static Result<ExternalQueue> create(WebGpuEncoder queue);

	BackendKind backend() const noexcept { return backend_; }
	const Native &native() const noexcept { return native_; }
	// WrongKind (field "backend") unless this queue belongs to `context`'s backend.
	Status checkBackend(const Context &context) const;

	// The backend's value, or WrongKind when the queue is of another backend.
	Result<const VulkanQueue *> vulkan() const;
	Result<const GlQueue *> opengl() const;
	Result<const CudaStream *> cuda() const;
	Result<const OpenClQueue *> opencl() const;
	Result<const D3D11DeviceContext *> d3d11() const;
	Result<const D3D12Queue *> d3d12() const;
	Result<const MetalCommandBuffer *> metal() const;
	Result<const WebGpuEncoder *> webgpu() const;

private:
	ExternalQueue(BackendKind backend, Native native) : backend_(backend), native_(native) {}

	BackendKind backend_;
	Native native_;
};

} // namespace gpuhandle
