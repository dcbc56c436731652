// Names of BackendKind values.
#include <gpuhandle/backend_kind.h>

namespace gpuhandle {

const char *backendKindName(BackendKind kind) noexcept
{
	switch (kind) {
	case BackendKind::Cpu: return "cpu";
	case BackendKind::Vulkan: return "vulkan";
	case BackendKind::OpenGL: return "opengl";
	case BackendKind::Cuda: return "cuda";
	case BackendKind::OpenCl: return "opencl";
	case BackendKind::VaApi: return "vaapi";
	case BackendKind::Fd: return "fd";
	case BackendKind::D3D11: return "d3d11";
	case BackendKind::D3D12: return "d3d12";
	case BackendKind::Metal: return "metal";
	case BackendKind::WebGpu: return "webgpu";
	}
	return "unknown";
}

} // namespace gpuhandle
