// Context: the host application's existing GPU context (device, queue) that gpuhandle works inside.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/device_id.h>
#include <gpuhandle/export.h>
#include <gpuhandle/external_queue.h>
#include <gpuhandle/gl_resources.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/uuid.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace GPUHANDLE_API gpuhandle {

// Native handles are borrowed plain values (no native headers); the host keeps them alive,
// through the Context's anchor when it wants the Context to hold them. Optional identities
// (UUIDs, LUIDs, nodes) feed deviceId(); leave them unset when unknown.

struct VulkanContext {
	void *instance = nullptr;            // VkInstance
	void *physicalDevice = nullptr;      // VkPhysicalDevice
	void *device = nullptr;              // VkDevice
	void *queue = nullptr;               // VkQueue the host submits on
	uint32_t queueFamilyIndex = 0;       // family of `queue`
	void *getInstanceProcAddr = nullptr; // PFN_vkGetInstanceProcAddr; null: the loader's
	std::vector<std::string> enabledInstanceExtensions{}; // empty: not told
	std::vector<std::string> enabledDeviceExtensions{};   // empty: not told
	std::optional<Uuid> deviceUuid{};    // VkPhysicalDeviceIDProperties::deviceUUID
	std::optional<Uuid> driverUuid{};    // ... ::driverUUID (opaque fds import only when equal)
	std::optional<Luid> deviceLuid{};    // ... ::deviceLUID (Windows)
	std::optional<PciBusId> pciBusId{};  // VK_EXT_pci_bus_info
	std::optional<DrmNode> renderNode{}; // VK_EXT_physical_device_drm
	// The host's lock of `queue` (Vulkan requires vkQueueSubmit on one queue to be externally
	// synchronised): called with true before and false after each submission gpuhandle makes
	// on it, from any thread. Empty: the host submits on `queue` only from threads that never
	// run gpuhandle work at the same time.
	std::function<void(bool lock)> queueLock{};
};

struct GlContext {
	void *display = nullptr; // EGLDisplay / X11 Display* / HDC; null only for CGL
	void *context = nullptr; // EGLContext / GLXContext / HGLRC / CGLContextObj
	// Opaque token: contexts with equal tokens share names.
	std::optional<uint64_t> shareGroup{};
	GlFlavour flavour = GlFlavour::Egl;
	std::optional<Uuid> deviceUuid{};    // GL_DEVICE_UUID_EXT (GL_EXT_memory_object)
	std::optional<DrmNode> renderNode{}; // EGL_EXT_device_drm_render_node
};

struct CudaContext {
	void *context = nullptr;            // CUcontext
	void *stream = nullptr;             // CUstream; null is the legacy default stream
	int32_t ordinal = 0;                // CUdevice ordinal, >= 0
	std::optional<Uuid> uuid{};         // cuDeviceGetUuid
	std::optional<PciBusId> pciBusId{}; // cuDeviceGetPCIBusId
};

// The values given to clCreateContext as CL_GL_CONTEXT_KHR (CL_CGL_SHAREGROUP_KHR for CGL) and
// CL_EGL_DISPLAY_KHR / CL_GLX_DISPLAY_KHR / CL_WGL_HDC_KHR: the CL context can see GL objects.
struct OpenClGlSharing {
	void *glContext = nullptr; // EGLContext / GLXContext / HGLRC / CGLShareGroupObj
	void *glDisplay = nullptr; // EGLDisplay / Display* / HDC; null only for CGL
	GlFlavour flavour = GlFlavour::Egl;
};

struct OpenClContext {
	void *context = nullptr; // cl_context
	void *queue = nullptr;   // cl_command_queue
	void *device = nullptr;  // cl_device_id
	std::optional<OpenClGlSharing> glSharing{};
	std::optional<Uuid> deviceUuid{};   // CL_DEVICE_UUID_KHR (cl_khr_device_uuid)
	std::optional<PciBusId> pciBusId{}; // CL_DEVICE_PCI_BUS_INFO_KHR (cl_khr_pci_bus_info)
};

struct VaApiContext {
	void *display = nullptr;             // VADisplay
	std::optional<DrmNode> renderNode{}; // the render node a DRM display was opened on
};

struct D3D11Context {
	void *device = nullptr;        // ID3D11Device*
	void *deviceContext = nullptr; // ID3D11DeviceContext* (the immediate context)
	std::optional<Luid> luid{};    // DXGI_ADAPTER_DESC::AdapterLuid
};

struct D3D12Context {
	void *device = nullptr; // ID3D12Device*
	void *queue = nullptr;  // ID3D12CommandQueue*
	std::optional<Luid> luid{};
};

struct MetalContext {
	void *device = nullptr;               // id<MTLDevice>
	void *queue = nullptr;                // id<MTLCommandQueue>
	std::optional<uint64_t> registryId{}; // MTLDevice.registryID
};

struct WebGpuContext {
	void *device = nullptr;   // WGPUDevice
	void *queue = nullptr;    // WGPUQueue
	void *adapter = nullptr;  // WGPUAdapter; may be null
	void *instance = nullptr; // WGPUInstance, for event processing; may be null
};

class Context;
// How a Context is held and passed: shared, immutable.
using ContextRef = std::shared_ptr<const Context>;

// One host context of one backend. Not copyable: the same shared value feeds a decoder's, an
// encoder's and an interop bridge's constructors. Immutable, so safe to read from any thread.
class Context
{
public:
	using Native =
		std::variant<std::monostate, VulkanContext, GlContext, CudaContext, OpenClContext,
			     VaApiContext, D3D11Context, D3D12Context, MetalContext, WebGpuContext>;

	static ContextRef cpu();
	// `anchor`, when set, keeps the host's objects alive as long as the Context lives.
	static Result<ContextRef> create(VulkanContext native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(GlContext native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(CudaContext native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(OpenClContext native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(VaApiContext native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(D3D11Context native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(D3D12Context native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(MetalContext native, KeepAliveRef anchor = {});
	static Result<ContextRef> create(WebGpuContext native, KeepAliveRef anchor = {});

	Context(const Context &) = delete;
	Context &operator=(const Context &) = delete;

	BackendKind backend() const noexcept { return backend_; }
	DeviceId deviceId() const;
	const Native &native() const noexcept { return native_; }
	const KeepAliveRef &anchor() const noexcept { return anchor_; }

	// The backend's values, or WrongKind when the context is of another backend.
	Result<const VulkanContext *> vulkan() const;
	Result<const GlContext *> opengl() const;
	Result<const CudaContext *> cuda() const;
	Result<const OpenClContext *> opencl() const;
	Result<const VaApiContext *> vaapi() const;
	Result<const D3D11Context *> d3d11() const;
	Result<const D3D12Context *> d3d12() const;
	Result<const MetalContext *> metal() const;
	Result<const WebGpuContext *> webgpu() const;

	// The host's queue that backends opened in this context submit on (under the host's lock
	// where it gave one: VulkanContext::queueLock): the VkQueue and its family, the CUstream,
	// the cl_command_queue, the GL context, the ID3D11DeviceContext or ID3D12CommandQueue;
	// cpu() for the CPU context. NotSupported for a context whose queue is not a one-call queue
	// (VA-API has none; a Metal or WebGPU queue is not the command buffer or encoder an
	// ExternalQueue names).
	Result<ExternalQueue> queue() const;

private:
	Context(BackendKind backend, Native native, KeepAliveRef anchor);
	static Result<ContextRef> build(BackendKind backend, Native native, KeepAliveRef anchor,
					std::optional<Error> error);

	BackendKind backend_;
	Native native_;
	KeepAliveRef anchor_;
};

} // namespace gpuhandle
