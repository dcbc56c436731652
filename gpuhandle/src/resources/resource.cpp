// Resource: kind names, backend mapping, sizes and consumption notice across all handle kinds.
#include <gpuhandle/resource.h>

namespace gpuhandle {

namespace {

constexpr const char *kKindNames[kResourceKindCount] = {
	"none",         "vulkan-image",    "vulkan-buffer", "vulkan-memory-fd", "gl-texture",
	"gl-buffer",    "cuda-pitched-2d", "cuda-buffer",   "cuda-surface",     "opencl-mem",
	"dmabuf",       "shm-fd",          "va-surface",    "d3d11-texture",    "d3d12-resource",
	"d3d12-buffer", "metal-texture",   "metal-buffer",  "webgpu-texture",   "cpu-bytes",
	"cpu-planes",   "cpu-shared-slot",
};

static_assert(std::variant_size_v<Resource::Variant> == kResourceKindCount,
	      "ResourceKind and Resource::Variant must list the same kinds");
static_assert(Resource::kindOf<CpuSharedSlot> == ResourceKind::CpuSharedSlot);
static_assert(Resource::kindOf<DmaBuf> == ResourceKind::DmaBuf);

template<typename H>
void markHandleConsumed(const H &handle)
{
	const auto &d = handle.desc();
	if constexpr (requires { d.anchor; }) {
		if (d.anchor)
			d.anchor->markConsumed();
	}
	if constexpr (requires { d.fd; })
		d.fd.markConsumed();
	if constexpr (requires { d.objects; }) {
		for (uint32_t i = 0; i < d.numObjects; ++i)
			d.objects[i].fd.markConsumed();
	}
}

} // namespace

const char *resourceKindName(ResourceKind kind) noexcept
{
	auto index = static_cast<uint32_t>(kind);
	return index < kResourceKindCount ? kKindNames[index] : "unknown";
}

BackendKind backendOf(ResourceKind kind) noexcept
{
	switch (kind) {
	case ResourceKind::VulkanImage:
	case ResourceKind::VulkanBuffer:
	case ResourceKind::VulkanMemoryFd: return BackendKind::Vulkan;
	case ResourceKind::GlTexture:
	case ResourceKind::GlBuffer: return BackendKind::OpenGL;
	case ResourceKind::CudaPitched2D:
	case ResourceKind::CudaBuffer:
	case ResourceKind::CudaSurface: return BackendKind::Cuda;
	case ResourceKind::OpenClMem: return BackendKind::OpenCl;
	case ResourceKind::DmaBuf:
	case ResourceKind::ShmFd: return BackendKind::Fd;
	case ResourceKind::VaSurface: return BackendKind::VaApi;
	case ResourceKind::D3D11Texture: return BackendKind::D3D11;
	case ResourceKind::D3D12Resource:
	case ResourceKind::D3D12Buffer: return BackendKind::D3D12;
	case ResourceKind::MetalTexture:
	case ResourceKind::MetalBuffer: return BackendKind::Metal;
	case ResourceKind::WebGpuTexture: return BackendKind::WebGpu;
	case ResourceKind::None:
	case ResourceKind::CpuBytes:
	case ResourceKind::CpuPlanes:
	case ResourceKind::CpuSharedSlot: return BackendKind::Cpu;
	}
	return BackendKind::Cpu;
}

uint64_t Resource::byteSize(uint32_t subresource) const noexcept
{
	switch (kind()) {
	case ResourceKind::VulkanBuffer: return get<VulkanBuffer>()->desc().size;
	case ResourceKind::VulkanMemoryFd:
		return get<VulkanMemoryFd>()->desc().exportDesc.allocationSize;
	case ResourceKind::GlBuffer: return get<GlBuffer>()->desc().size;
	case ResourceKind::CudaPitched2D: return get<CudaPitched2D>()->desc().size;
	case ResourceKind::CudaBuffer: return get<CudaBuffer>()->desc().size;
	case ResourceKind::OpenClMem: return get<OpenClMem>()->desc().size;
	case ResourceKind::ShmFd: return get<ShmFd>()->desc().size;
	case ResourceKind::D3D12Buffer: return get<D3D12Buffer>()->desc().size;
	case ResourceKind::MetalBuffer: return get<MetalBuffer>()->desc().size;
	case ResourceKind::CpuBytes: return get<CpuBytes>()->desc().size;
	case ResourceKind::CpuSharedSlot: return get<CpuSharedSlot>()->desc().size;
	case ResourceKind::DmaBuf: {
		const DmaBufDesc &d = get<DmaBuf>()->desc();
		return subresource < d.numObjects ? d.objects[subresource].size : 0;
	}
	case ResourceKind::CpuPlanes: {
		const CpuPlanesDesc &d = get<CpuPlanes>()->desc();
		if (subresource >= d.numPlanes)
			return 0;
		return uint64_t(d.planes[subresource].stride) * d.planes[subresource].rows;
	}
	default: return 0;
	}
}

uint32_t Resource::subresourceCount() const noexcept
{
	switch (kind()) {
	case ResourceKind::None: return 0;
	case ResourceKind::DmaBuf: return get<DmaBuf>()->desc().numObjects;
	case ResourceKind::CpuPlanes: return get<CpuPlanes>()->desc().numPlanes;
	case ResourceKind::VulkanImage: return get<VulkanImage>()->desc().planes;
	default: return 1;
	}
}

void Resource::markConsumed() const noexcept
{
	std::visit(
		[](const auto &handle) {
			if constexpr (!std::is_same_v<std::decay_t<decltype(handle)>,
						      std::monostate>)
				markHandleConsumed(handle);
		},
		v_);
}

Error Resource::wrongKind(ResourceKind wanted) const
{
	return Error::format(ErrorCode::WrongKind, "kind",
			     "The resource is a %s; a %s was asked for.", resourceKindName(kind()),
			     resourceKindName(wanted));
}

} // namespace gpuhandle
