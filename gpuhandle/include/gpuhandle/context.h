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

// The host's Vulkan instance, device and queue.
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
	std::optional<Uuid> driverUuid{};    // its driverUUID (opaque fds import only when equal)
	std::optional<Luid> deviceLuid{};    // VkPhysicalDeviceIDProperties.deviceLUID (Windows)
	std::optional<PciBusId> pciBusId{};  // VK_EXT_pci_bus_info
	std::optional<DrmNode> renderNode{}; // VK_EXT_physical_device_drm
	// The host's lock of `queue` (Vulkan requires vkQueueSubmit on one queue to be externally
	// synchronised): called with true before and false after each submission gpuhandle makes
	// on it, from any thread. Empty: the host submits on `queue` only from threads that never
	// run gpuhandle work at the same time.
	std::function<void(bool lock)> queueLock{};
};

// The host's OpenGL or GLES context and the display it belongs to.
struct GlContext {
	void *display = nullptr; // EGLDisplay / X11 Display* / HDC; null only for CGL
	void *context = nullptr; // EGLContext / GLXContext / HGLRC / CGLContextObj
	// Opaque token: contexts with equal tokens share names.
	std::optional<uint64_t> shareGroup{};
	GlFlavour flavour = GlFlavour::Egl;  // window-system binding of display and context
	std::optional<Uuid> deviceUuid{};    // GL_DEVICE_UUID_EXT (GL_EXT_memory_object)
	std::optional<DrmNode> renderNode{}; // EGL_EXT_device_drm_render_node
};

// The host's CUDA context and the stream it submits on.
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
	// The GL context's window-system binding, which says what glContext and glDisplay are.
	GlFlavour flavour = GlFlavour::Egl;
};

// The host's OpenCL context, command queue and device.
struct OpenClContext {
	void *context = nullptr; // cl_context
	void *queue = nullptr;   // cl_command_queue
	void *device = nullptr;  // cl_device_id
	// Set when the CL context was created to use a GL context's objects.
	std::optional<OpenClGlSharing> glSharing{};
	std::optional<Uuid> deviceUuid{};   // CL_DEVICE_UUID_KHR (cl_khr_device_uuid)
	std::optional<PciBusId> pciBusId{}; // CL_DEVICE_PCI_BUS_INFO_KHR (cl_khr_pci_bus_info)
};

// The host's VA-API display.
struct VaApiContext {
	void *display = nullptr;             // VADisplay
	std::optional<DrmNode> renderNode{}; // the render node a DRM display was opened on
};

// The host's D3D11 device and its immediate context.
struct D3D11Context {
	void *device = nullptr;        // ID3D11Device*
	void *deviceContext = nullptr; // ID3D11DeviceContext* (the immediate context)
	std::optional<Luid> luid{};    // DXGI_ADAPTER_DESC::AdapterLuid
};

// The host's D3D12 device and command queue.
struct D3D12Context {
	void *device = nullptr; // ID3D12Device*
	void *queue = nullptr;  // ID3D12CommandQueue*
	// DXGI_ADAPTER_DESC.AdapterLuid of the device's adapter.
	std::optional<Luid> luid{};
};

// The host's Metal device and command queue.
struct MetalContext {
	void *device = nullptr;               // id<MTLDevice>
	void *queue = nullptr;                // id<MTLCommandQueue>
	std::optional<uint64_t> registryId{}; // MTLDevice.registryID
};

// The host's WebGPU (webgpu.h) device and queue.
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
	// The backend's values: std::monostate for the CPU context, else what create() was given.
	using Native =
		std::variant<std::monostate, VulkanContext, GlContext, CudaContext, OpenClContext,
			     VaApiContext, D3D11Context, D3D12Context, MetalContext, WebGpuContext>;

	// The host CPU as a context: work runs on the calling thread, memory is system memory.
	static ContextRef cpu();
	// `anchor`, when set, keeps the host's objects alive as long as the Context lives.
	// Each create() checks its backend's values and reports the first failure: NullHandle for a
	// required handle left null, InvalidArgument for an identity set to zero (or an empty
	// extension name). Vulkan: queueFamilyIndex must be a real family, not
	// VK_QUEUE_FAMILY_IGNORED / EXTERNAL / FOREIGN_EXT (OutOfRange).
	static Result<ContextRef> create(VulkanContext native, KeepAliveRef anchor = {});
	// OpenGL / GLES: display may be null only for CGL; flavour must be a GlFlavour value.
	static Result<ContextRef> create(GlContext native, KeepAliveRef anchor = {});
	// CUDA: ordinal must be >= 0 (OutOfRange); a null stream is the legacy default stream.
	static Result<ContextRef> create(CudaContext native, KeepAliveRef anchor = {});
	// OpenCL: context, queue and device non-null; with glSharing, its glContext too, and its
	// glDisplay unless the flavour is CGL (field "glSharing.glContext" and so on).
	static Result<ContextRef> create(OpenClContext native, KeepAliveRef anchor = {});
	// VA-API: display non-null; renderNode may stay unset (X11 and Wayland displays do not tell
	// it), and DrmNode::fromPath() turns the path a DRM display was opened on into one.
	static Result<ContextRef> create(VaApiContext native, KeepAliveRef anchor = {});
	// D3D11: device and deviceContext non-null.
	static Result<ContextRef> create(D3D11Context native, KeepAliveRef anchor = {});
	// D3D12: device and queue non-null.
	static Result<ContextRef> create(D3D12Context native, KeepAliveRef anchor = {});
	// Metal: device and queue non-null; registryId non-zero when set.
	static Result<ContextRef> create(MetalContext native, KeepAliveRef anchor = {});
	// WebGPU: device and queue non-null; adapter and instance may be null.
	static Result<ContextRef> create(WebGpuContext native, KeepAliveRef anchor = {});

	Context(const Context &) = delete;
	Context &operator=(const Context &) = delete;

	// Whose values the context holds: Cpu for cpu(), else the backend create() was given.
	BackendKind backend() const noexcept { return backend_; }
	// What the context knows of its device: DeviceId::cpu() for the CPU context, else the
	// identities create() was given (an empty DeviceId when none were, and always for WebGPU).
	DeviceId deviceId() const;
	// The validated values, alive as long as the Context.
	const Native &native() const noexcept { return native_; }
	// The anchor create() was given; empty when none was, and for cpu().
	const KeepAliveRef &anchor() const noexcept { return anchor_; }

	// The backend's values, or WrongKind when the context is of another backend. The pointer
	// lives as long as the Context.
	Result<const VulkanContext *> vulkan() const;
	Result<const GlContext *> opengl() const;     // as vulkan(), for an OpenGL context
	Result<const CudaContext *> cuda() const;     // as vulkan(), for a CUDA context
	Result<const OpenClContext *> opencl() const; // as vulkan(), for an OpenCL context
	Result<const VaApiContext *> vaapi() const;   // as vulkan(), for a VA-API context
	Result<const D3D11Context *> d3d11() const;   // as vulkan(), for a D3D11 context
	Result<const D3D12Context *> d3d12() const;   // as vulkan(), for a D3D12 context
	Result<const MetalContext *> metal() const;   // as vulkan(), for a Metal context
	Result<const WebGpuContext *> webgpu() const; // as vulkan(), for a WebGPU context

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
