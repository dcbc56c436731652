// ExternalQueue factories (validation of the host's queue handle) and typed accessors.
#include <gpuhandle/context.h>
#include <gpuhandle/external_queue.h>

#include "validation.h"

namespace gpuhandle {

namespace {

// VK_QUEUE_FAMILY_FOREIGN_EXT, _EXTERNAL and _IGNORED: ownership-transfer markers, not families.
constexpr uint32_t kVkFirstSpecialQueueFamily = 0xfffffffdu;

template<typename T>
Result<const T *> access(const ExternalQueue::Native &native, BackendKind actual,
			 BackendKind wanted)
{
	if (const T *value = std::get_if<T>(&native))
		return value;
	return Error::format(ErrorCode::WrongKind, "backend",
			     "The queue is a %s queue; %s() needs a %s queue.",
			     backendKindName(actual), backendKindName(wanted),
			     backendKindName(wanted));
}

} // namespace

/**
 * \class ExternalQueue
 * \brief The host's queue for one call: where gpuhandle records or submits its work
 *
 * A borrowed value: the caller guarantees the queue is valid and not used concurrently by
 * another thread for the duration of the call (what the crate's `&mut` borrow expressed), and
 * gpuhandle keeps no copy after the call returns. Copying it copies a few plain words and allocates
 * nothing.
 */

/**
 * \brief A Vulkan queue and its family
 *
 * queue must be non-null (NullHandle); familyIndex must not be VK_QUEUE_FAMILY_IGNORED, EXTERNAL
 * or FOREIGN_EXT (OutOfRange), because barriers recorded for this queue name its family.
 */
Result<ExternalQueue> ExternalQueue::create(VulkanQueue queue)
{
	if (auto error = detail::requireHandle("VulkanQueue", "queue", queue.queue))
		return std::move(*error);
	if (queue.familyIndex >= kVkFirstSpecialQueueFamily)
		return Error::format(
			ErrorCode::OutOfRange, "familyIndex",
			"VulkanQueue: familyIndex is 0x%x, a queue-ownership marker, not a queue family.",
			queue.familyIndex);
	return ExternalQueue(BackendKind::Vulkan, queue);
}

/**
 * \brief The GL context current on the calling thread; context must be non-null (NullHandle)
 */
Result<ExternalQueue> ExternalQueue::create(GlQueue queue)
{
	if (auto error = detail::requireHandle("GlQueue", "context", queue.context))
		return std::move(*error);
	return ExternalQueue(BackendKind::OpenGL, queue);
}

/**
 * \brief A CUDA stream; always valid
 *
 * A null stream is the legacy default stream, and CU_STREAM_LEGACY (0x1) and
 * CU_STREAM_PER_THREAD (0x2) are legal special values, so nothing can be refused. The Result is
 * kept so that every create() reads the same.
 */
Result<ExternalQueue> ExternalQueue::create(CudaStream queue)
{
	return ExternalQueue(BackendKind::Cuda, queue);
}

/**
 * \brief An OpenCL command queue; queue must be non-null (NullHandle)
 */
Result<ExternalQueue> ExternalQueue::create(OpenClQueue queue)
{
	if (auto error = detail::requireHandle("OpenClQueue", "queue", queue.queue))
		return std::move(*error);
	return ExternalQueue(BackendKind::OpenCl, queue);
}

/**
 * \brief A D3D11 device context (immediate or deferred); deviceContext must be non-null
 * (NullHandle)
 */
Result<ExternalQueue> ExternalQueue::create(D3D11DeviceContext queue)
{
	if (auto error = detail::requireHandle("D3D11DeviceContext", "deviceContext",
					       queue.deviceContext))
		return std::move(*error);
	return ExternalQueue(BackendKind::D3D11, queue);
}

/**
 * \brief A D3D12 command queue; queue must be non-null (NullHandle)
 */
Result<ExternalQueue> ExternalQueue::create(D3D12Queue queue)
{
	if (auto error = detail::requireHandle("D3D12Queue", "queue", queue.queue))
		return std::move(*error);
	return ExternalQueue(BackendKind::D3D12, queue);
}

/**
 * \brief A Metal command buffer not yet committed; commandBuffer must be non-null (NullHandle)
 */
Result<ExternalQueue> ExternalQueue::create(MetalCommandBuffer queue)
{
	if (auto error = detail::requireHandle("MetalCommandBuffer", "commandBuffer",
					       queue.commandBuffer))
		return std::move(*error);
	return ExternalQueue(BackendKind::Metal, queue);
}

/**
 * \brief A WebGPU command encoder not yet finished; encoder must be non-null (NullHandle)
 */
Result<ExternalQueue> ExternalQueue::create(WebGpuEncoder queue)
{
	if (auto error = detail::requireHandle("WebGpuEncoder", "encoder", queue.encoder))
		return std::move(*error);
	return ExternalQueue(BackendKind::WebGpu, queue);
}

/**
 * \brief Checks that this queue can carry work for `context`
 *
 * Only the backends are compared: the native handles cannot be checked without calling the API.
 * A VA-API context has no queue kind, so every queue is refused for it.
 *
 * \return Success, or WrongKind (field "backend") with both backends named
 */
Status ExternalQueue::checkBackend(const Context &context) const
{
	if (context.backend() == backend_)
		return {};
	return Error::format(ErrorCode::WrongKind, "backend",
			     "The queue is a %s queue; the context is a %s context.",
			     backendKindName(backend_), backendKindName(context.backend()));
}

/**
 * \fn ExternalQueue::vulkan()
 * \brief The Vulkan queue, or WrongKind (field "backend") when the queue is another backend's
 *
 * opengl(), cuda(), opencl(), d3d11(), d3d12(), metal() and webgpu() do the same for theirs.
 * The pointer lives as long as this ExternalQueue.
 */
Result<const VulkanQueue *> ExternalQueue::vulkan() const
{
	return access<VulkanQueue>(native_, backend_, BackendKind::Vulkan);
}
Result<const GlQueue *> ExternalQueue::opengl() const
{
	return access<GlQueue>(native_, backend_, BackendKind::OpenGL);
}
Result<const CudaStream *> ExternalQueue::cuda() const
{
	return access<CudaStream>(native_, backend_, BackendKind::Cuda);
}
Result<const OpenClQueue *> ExternalQueue::opencl() const
{
	return access<OpenClQueue>(native_, backend_, BackendKind::OpenCl);
}
Result<const D3D11DeviceContext *> ExternalQueue::d3d11() const
{
	return access<D3D11DeviceContext>(native_, backend_, BackendKind::D3D11);
}
Result<const D3D12Queue *> ExternalQueue::d3d12() const
{
	return access<D3D12Queue>(native_, backend_, BackendKind::D3D12);
}
Result<const MetalCommandBuffer *> ExternalQueue::metal() const
{
	return access<MetalCommandBuffer>(native_, backend_, BackendKind::Metal);
}
Result<const WebGpuEncoder *> ExternalQueue::webgpu() const
{
	return access<WebGpuEncoder>(native_, backend_, BackendKind::WebGpu);
}

} // namespace gpuhandle
