// Backend: one API's device opened by gpuhandle (allocate, export, import, map, copy, fences).
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/backends/export.h>
#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/context.h>
#include <gpuhandle/device_id.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/memory_budget.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/resource.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// How a frame's pixels are stored on the device. Stable numbers.
enum class FrameStorage : uint8_t {
	Buffer = 0,      // one linear buffer, planes at their layout offsets: every format
	LinearImage = 1, // one linear image per plane: formats whose planes the API has formats for
	// Device-tiled images (no CPU stride); exported with a modifier where offered.
	OptimalImage = 2,
};
// A storage's stable lowercase name for logs ("buffer", "optimal-image"); "unknown" for a value
// outside FrameStorage. Static storage: never freed.
GPUHANDLE_INTEROP_API const char *frameStorageName(FrameStorage storage) noexcept;

// The ways a frame reaches a backend, in the planner's order of preference. Stable numbers.
enum class ImportRoute : uint8_t {
	Direct = 0,   // the frame already lives in the target's memory on its device
	OpaqueFd = 1, // Vulkan memory exported as an OPAQUE_FD (same device and driver)
	DmaBuf = 2,   // a Linux DMA-BUF (any device that can import it)
	// CPU-visible memory used in place (VK_EXT_external_memory_host, USE_HOST_PTR)
	HostPointer = 3,
	GpuCopy = 4, // the bytes are copied on a device, never through system memory
	CpuCopy = 5, // the bytes are copied through system memory
};
// Number of ImportRoute values (one past the largest).
inline constexpr uint32_t kImportRouteCount = 6;
// A route's stable lowercase name for logs ("direct", "dma-buf"); "unknown" for a value outside
// ImportRoute. Static storage: never freed.
GPUHANDLE_INTEROP_API const char *importRouteName(ImportRoute route) noexcept;

// What a backend can do, filled when it is opened; gpuhandle-info prints it.
struct BackendCapabilities {
	std::vector<ResourceKind> allocates{}; // kinds allocate() returns frames of
	std::vector<ResourceKind> exports{};   // kinds exportFrame() gives
	std::vector<ResourceKind> imports{};   // kinds importFrame() takes without a copy
	std::vector<ImportRoute> routes{};     // the routes importFrame() accepts
	std::vector<FrameStorage> storages{};  // storages allocate() makes
	std::vector<uint64_t> drmModifiers{};  // modifiers of the DMA-BUFs it imports and exports
	std::vector<SyncKind> fenceExports{};  // kinds exportFence() turns into fence fds
	// Kinds its queue can wait on without the CPU (a fence fd listed here: after the consumer
	// imports it).
	std::vector<SyncKind> fenceImports{};
	bool cpuMap = false;  // map() works on its frames
	bool gpuCopy = false; // copyFrame() copies on the device
};

// A frame to allocate. The layout is computeLayout(format, width, height, StrideAlign, align)
// with align = strideAlign, or the backend's preferred alignment when strideAlign is 0.
struct AllocateRequest {
	PixelFormat format = PixelFormat::Unknown; // see supportsFormat()
	uint32_t width = 0;                        // pixels; 0 fails with ZeroSize
	uint32_t height = 0;                       // pixels; 0 fails with ZeroSize
	Colorimetry colorimetry{};                 // recorded in the frame's description
	// How the pixels are stored; NotSupported where supportsFormat(format, storage) is false.
	FrameStorage storage = FrameStorage::Buffer;
	uint32_t strideAlign = 0; // power of two, <= 4096; 0: the backend's choice
	bool exportable = true;   // the memory can be exported (opaque fd, DMA-BUF, memfd)
};

// How to open a backend.
struct BackendOpenOptions {
	// The host's context to work inside; null opens the backend's own default device (tools,
	// tests, the demo). Its backend() must be the one opened (Cpu for the cpu and fd backends).
	ContextRef context{};
	// OpenGL only: runs GL work where the host's context is current (required with a host GL
	// context; the backend's own context has its own thread).
	GlExecutor glExecutor{};
	// Vulkan on its own device, CUDA, OpenCL: which device of the platform (0: the first).
	uint32_t deviceIndex = 0;
	// Charged with every allocation the backend makes, under its kind, for as long as the
	// allocation lives: the budget's caps for that kind apply (pressure callbacks and its
	// evictable pools first; past the hard cap allocate() fails with OutOfMemory and the
	// numbers). Null: nothing is charged.
	std::shared_ptr<MemoryBudget> budget{};
};

namespace detail {
struct BackendBudget;
} // namespace detail

class Backend;
// Shared owner of an open Backend (from openBackend()).
using BackendRef = std::shared_ptr<Backend>;

// One API's device as gpuhandle uses it. Made by openBackend(); immutable after opening apart
// from its own synchronised state, so every method may be called from any thread.
// Frames a backend returns keep its device alive (their anchors hold the backend's state), so
// they may outlive the BackendRef. Methods taking a frame "of this backend" recognise the
// frames it allocated or imported and answer WrongKind for any other.
class Backend
{
public:
	virtual ~Backend();
	Backend(const Backend &) = delete;
	Backend &operator=(const Backend &) = delete;

	// The API it drives (deviceInfo().backend).
	BackendKind kind() const noexcept { return info_.backend; }
	// The device it opened: name, identity, vendor, driver, memory.
	const DeviceInfo &deviceInfo() const noexcept { return info_; }
	// The device's identity (deviceInfo().id), which tells frames and contexts of it apart.
	const DeviceId &deviceId() const noexcept { return info_.id; }
	// What it can do, filled when it was opened and fixed from then on.
	const BackendCapabilities &capabilities() const noexcept { return caps_; }
	// The host's Context, or the one describing the backend's own device.
	const ContextRef &context() const noexcept { return context_; }
	// The budget its allocations are charged to (BackendOpenOptions::budget), or null.
	const std::shared_ptr<MemoryBudget> &budget() const noexcept { return budget_; }

	// Whether allocate() makes `format` in `storage` (through the format tables).
	virtual bool supportsFormat(PixelFormat format, FrameStorage storage) const = 0;
	// Every known format supportsFormat() accepts for `storage`.
	std::vector<PixelFormat> supportedFormats(FrameStorage storage) const;

	// A new frame in this backend's memory, contents undefined.
	// Errors: InvalidArgument/ZeroSize (the request), NotSupported (format or storage),
	// OutOfMemory, Backend.
	virtual Result<Frame> allocate(const AllocateRequest &request) = 0;
	// The same memory as a frame of fd-backed `kind` resources (VulkanMemoryFd, DmaBuf, ShmFd),
	// keeping `frame` alive, with the same planes and acquire point.
	// Errors: WrongKind (not a frame of this backend), NotSupported (kind or driver).
	virtual Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) = 0;
	// A frame of this backend's native resources over `frame`'s memory, without a copy, through
	// `route` (Direct, OpaqueFd, DmaBuf or HostPointer); the result keeps `frame` alive and
	// carries its acquire point. Errors: NotSupported naming what is missing (route, kind,
	// modifier, alignment), DeviceMismatch (another device), FormatMismatch, Backend.
	virtual Result<Frame> importFrame(const Frame &frame, ImportRoute route) = 0;
	// CPU pointers to a frame of this backend, after its acquire point (bounded by `timeout`).
	virtual Result<CpuMapping> map(const Frame &frame, MapAccess access,
				       WaitDuration timeout) = 0;
	// Copies `src` into `dst` on the device (both frames of this backend, same format and size)
	// and waits for the copy. Errors: NotSupported (no device copy), WrongKind, FormatMismatch.
	virtual Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) = 0;
	// Whether `frame`'s resources all live in this backend's memory on its device, so that its
	// work can use them as they are (the Direct route).
	virtual bool holds(const Frame &frame) const = 0;
	// The DRM modifiers of `format` DMA-BUFs that importFrame(DmaBuf) takes, linear first;
	// empty where it takes none of that format. GStreamer elements offer them as drm-format
	// caps. Default: linear, where the backend imports DMA-BUFs at all.
	virtual std::vector<uint64_t> dmaBufImportModifiers(PixelFormat format) const;

	// Fences across APIs. exportFence: a point of this backend's API (a semaphore of its
	// device) as a fence fd point that other APIs import, where the driver can export it (a
	// binary Vulkan semaphore exportable as SYNC_FD). importFence: a point another API made (a
	// fence fd) that this backend's queue can wait on without the CPU. Both answer NotSupported
	// with the reason by default; the planner then waits on the CPU and says so.
	virtual Result<SyncPoint> exportFence(const SyncPoint &point);
	// See exportFence(): `point` (a fence fd) as a point this backend's queue waits on.
	virtual Result<SyncPoint> importFence(const SyncPoint &point);

protected:
	// For the backends' implementations: the device opened, what it can do, and the Context
	// that context() returns (the host's, or one describing the backend's own device).
	Backend(DeviceInfo info, BackendCapabilities caps, ContextRef context)
		: info_(std::move(info)), caps_(std::move(caps)), context_(std::move(context))
	{
	}

	// What an allocation of `request` is charged, held by the allocation while it lives: the
	// frame's bytes as estimateTextureBytes() counts them, on budget() under kind(); an empty
	// reservation without a budget. Called after the request's checks, before the memory is
	// made. Errors: OutOfMemory (past the hard cap: the bytes asked, in use and the cap).
	Result<BudgetReservation> charge(const AllocateRequest &request) const;

	DeviceInfo info_;          // what deviceInfo() returns
	BackendCapabilities caps_; // what capabilities() returns
	ContextRef context_;       // what context() returns

private:
	friend struct detail::BackendBudget;
	std::shared_ptr<MemoryBudget> budget_{};
};

// Opens the backend of `kind`: Cpu (host memory), Fd (memfd and DMA-BUF), Vulkan, OpenGL (EGL),
// OpenCl, Cuda, VaApi. Errors: NotSupported with the reason (not built here, no driver, no
// device), InvalidArgument (a context of another backend, a GL context without an executor).
GPUHANDLE_INTEROP_API Result<BackendRef> openBackend(BackendKind kind,
						     const BackendOpenOptions &options = {});

// The backends gpuhandle has, in the order gpuhandle-info lists them.
inline constexpr BackendKind kInteropBackends[] = { BackendKind::Cpu,    BackendKind::Fd,
						    BackendKind::Vulkan, BackendKind::OpenGL,
						    BackendKind::OpenCl, BackendKind::Cuda,
						    BackendKind::VaApi };

// One backend's default device, or why it did not open.
struct BackendProbe {
	// The backend tried, one of kInteropBackends.
	BackendKind kind = BackendKind::Cpu;
	BackendRef backend{};       // null when it did not open
	std::optional<Error> why{}; // set when it did not open
};
// Opens every backend of kInteropBackends on its default device.
GPUHANDLE_INTEROP_API std::vector<BackendProbe> probeBackends();

} // namespace gpuhandle
