// SyncPoint: one explicit "this work is done" value per frame, for every API's fence kind.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/export.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/gl_resources.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_waiter.h>

#include <cstdint>
#include <optional>
#include <span>
#include <variant>

namespace GPUHANDLE_API gpuhandle {

// Stable numbers (C API, wire format).
enum class SyncKind : uint32_t {
	Noop = 0,    // nothing to wait for
	Cpu = 1,     // a CpuFence signalled by a host thread
	FenceFd = 2, // a Linux sync_file, eventfd or any fd that polls readable when done
	VulkanSemaphore = 3,
	D3D12Fence = 4,
	D3D11KeyedMutex = 5,
	CudaExternalSemaphore = 6,
	CudaEvent = 7,
	OpenClEvent = 8,
	MetalSharedEvent = 9,
	GlSemaphore = 10, // a GL_EXT_semaphore object
	GlSync = 11,      // a GLsync (or EGLSync)
	WebGpuSubmission = 12,
	Composite = 13, // chain / all / any of other points
};
// "noop", "fence-fd", "vulkan-semaphore", ...; "unknown" outside the enum. Static, never null.
GPUHANDLE_API const char *syncKindName(SyncKind kind) noexcept;
// The API a kind belongs to (Noop, Cpu and Composite: Cpu; FenceFd: Fd).
GPUHANDLE_API BackendKind backendOf(SyncKind kind) noexcept;

// The producer declares the kind: no API can probe a VkSemaphore safely.
enum class VulkanSemaphoreKind : uint8_t { Binary = 0, Timeline = 1 };

// The raw fields of each kind: plain values that stay valid while any copy of the point lives
// (the waiter, or the anchor of a raw carrier, owns the primitive).
struct VulkanSemaphoreSync {
	uint64_t semaphore = 0; // VkSemaphore
	// Binary or timeline: declared by the producer, never probed.
	VulkanSemaphoreKind kind = VulkanSemaphoreKind::Timeline;
	uint64_t value = 0;     // timeline value to reach; ignored for binary semaphores
	void *device = nullptr; // VkDevice
};
// D3D12Fence: done once the fence's completed value reaches `value`.
struct D3D12FenceSync {
	void *fence = nullptr; // ID3D12Fence*
	uint64_t value = 0;    // the fence value that marks the work done
};
// D3D11KeyedMutex: the work is done once the mutex can be acquired with `key`.
struct D3D11KeyedMutexSync {
	void *keyedMutex = nullptr; // IDXGIKeyedMutex*
	uint64_t key = 0;           // the key the next acquire uses
};
// CudaExternalSemaphore: an imported semaphore, waited on with cuWaitExternalSemaphoresAsync.
struct CudaExternalSemaphoreSync {
	void *semaphore = nullptr; // CUexternalSemaphore
	// The fence value to wait for (timeline semaphores); none for a binary one (0 is passed).
	std::optional<uint64_t> value{};
};
// CudaEvent: done once the event has completed.
struct CudaEventSync {
	void *event = nullptr;   // CUevent
	void *context = nullptr; // CUcontext that owns it
	int32_t ordinal = 0;     // CUDA device ordinal
};
// OpenClEvent: done once the event is CL_COMPLETE (a negative status is an error).
struct OpenClEventSync {
	void *event = nullptr; // cl_event
};
// MetalSharedEvent: done once the event's signaled value reaches `value`.
struct MetalSharedEventSync {
	void *event = nullptr; // id<MTLSharedEvent>
	uint64_t value = 0;    // the signaled value that marks the work done
};
// GlSemaphore: a GL_EXT_semaphore object, which a GL context waits for (glWaitSemaphoreEXT).
struct GlSemaphoreSync {
	uint32_t semaphore = 0;  // GL semaphore name (GL_EXT_semaphore)
	void *context = nullptr; // the context it was imported into
};
// GlSync: a fence sync object, done once it is signalled.
struct GlSyncSync {
	void *sync = nullptr;    // GLsync or EGLSync
	void *context = nullptr; // the context that created it (GLsync waits need it current)
	// The window-system binding `context` was made with (EGL, GLX, WGL, CGL).
	GlFlavour flavour = GlFlavour::Egl;
};
// FenceFd: an fd the core waits on with poll() by itself; the point shares it.
struct FenceFdSync {
	SharedFd fd{}; // sync_file, eventfd, or any fd that polls readable once signalled
};
// WebGpuSubmission: done once `submission` on `queue` has completed.
struct WebGpuSubmissionSync {
	void *queue = nullptr; // WGPUQueue
	// The submission to wait for, as the producer numbers its submissions on the queue.
	uint64_t submission = 0;
};

// A cheap-to-copy fence value: the raw fields plus the waiter that owns the primitive. Copying
// costs one atomic increment. Thread safety: copies may be used and waited on from any thread.
class SyncPoint
{
public:
	// The raw fields of each kind; std::monostate for Noop, Cpu and Composite points.
	using Raw = std::variant<std::monostate, VulkanSemaphoreSync, D3D12FenceSync,
				 D3D11KeyedMutexSync, CudaExternalSemaphoreSync, CudaEventSync,
				 OpenClEventSync, MetalSharedEventSync, GlSemaphoreSync, GlSyncSync,
				 FenceFdSync, WebGpuSubmissionSync>;

	// Nothing to wait for: already done.
	SyncPoint() = default;
	// The same as SyncPoint(): nothing to wait for.
	static SyncPoint noop() noexcept { return {}; }

	// A point over raw fields with the waiter that owns them. A null waiter makes a raw
	// carrier: its fields crossed an API or process boundary and a CPU wait answers
	// NotSupported until a backend imports it. `owner` keeps a raw carrier's primitive alive.
	template<typename R>
	static Result<SyncPoint> create(R raw, SyncWaiterRef waiter, KeepAliveRef owner = {});
	// A sync_file / eventfd / pollable fd: the core waits on it with poll() by itself.
	static Result<SyncPoint> fromFenceFd(SharedFd fd);
	// A point over any waiter (a CpuFence, a composite) with no raw fields of its own.
	static Result<SyncPoint> fromWaiter(SyncKind kind, SyncWaiterRef waiter);

	// The fence kind (Noop for a default point).
	SyncKind kind() const noexcept { return kind_; }
	// The API the kind belongs to (see backendOf()).
	BackendKind backend() const noexcept { return backendOf(kind_); }
	// Nothing to wait for: wait() and isSignaled() succeed at once.
	bool isNoop() const noexcept { return kind_ == SyncKind::Noop; }
	// True when no waiter came with the raw fields (see create()).
	bool isRawCarrier() const noexcept { return !isNoop() && !waiter_; }
	// The raw fields when they are of type R (VulkanSemaphoreSync, ...), else null. Points into
	// this object: valid while it lives.
	template<typename R>
	const R *raw() const noexcept
	{
		return std::get_if<R>(&raw_);
	}
	// The waiter that owns the primitive; null for a Noop point and for a raw carrier.
	const SyncWaiterRef &waiter() const noexcept { return waiter_; }

	// Blocks until signalled or the timeout passes (Timeout, Recoverable). Noop returns at
	// once; a raw carrier answers NotSupported.
	Status wait(WaitDuration timeout = kDefaultWaitTimeout) const;
	// True once signalled, without blocking (Noop: true). A raw carrier answers NotSupported;
	// a driver failure is its own error, never false.
	Result<bool> isSignaled() const;

	// Composites: a point done when every point is (all), when any is (any), or when each in
	// turn is (chain: waits in order, so a later one is not polled before the earlier is done).
	// Noop points are dropped: none left gives a Noop point, one left (all, chain) that point.
	// ZeroSize for no points, NotSupported when one is a raw carrier.
	static Result<SyncPoint> all(std::span<const SyncPoint> points);
	// Done when any point is; a Noop point among them makes it a Noop point at once.
	static Result<SyncPoint> any(std::span<const SyncPoint> points);
	// Done when each point in turn is (see all()).
	static Result<SyncPoint> chain(std::span<const SyncPoint> points);

private:
	static Result<SyncPoint> make(SyncKind kind, Raw raw, SyncWaiterRef waiter,
				      KeepAliveRef owner);

	SyncKind kind_ = SyncKind::Noop;
	Raw raw_{};
	// Declared before waiter_ so that it is destroyed after it: the waiter may still need the
	// owner's objects (a device, a context) while it destroys its primitive.
	KeepAliveRef owner_{};
	SyncWaiterRef waiter_{};
};

namespace detail {
// The SyncKind of raw fields of type R, for create(); one specialization per kind.
template<typename R>
constexpr SyncKind syncKindOf();
// VulkanSemaphoreSync: VulkanSemaphore.
template<>
constexpr SyncKind syncKindOf<VulkanSemaphoreSync>()
{
	return SyncKind::VulkanSemaphore;
}
// D3D12FenceSync: D3D12Fence.
template<>
constexpr SyncKind syncKindOf<D3D12FenceSync>()
{
	return SyncKind::D3D12Fence;
}
// D3D11KeyedMutexSync: D3D11KeyedMutex.
template<>
constexpr SyncKind syncKindOf<D3D11KeyedMutexSync>()
{
	return SyncKind::D3D11KeyedMutex;
}
// CudaExternalSemaphoreSync: CudaExternalSemaphore.
template<>
constexpr SyncKind syncKindOf<CudaExternalSemaphoreSync>()
{
	return SyncKind::CudaExternalSemaphore;
}
// CudaEventSync: CudaEvent.
template<>
constexpr SyncKind syncKindOf<CudaEventSync>()
{
	return SyncKind::CudaEvent;
}
// OpenClEventSync: OpenClEvent.
template<>
constexpr SyncKind syncKindOf<OpenClEventSync>()
{
	return SyncKind::OpenClEvent;
}
// MetalSharedEventSync: MetalSharedEvent.
template<>
constexpr SyncKind syncKindOf<MetalSharedEventSync>()
{
	return SyncKind::MetalSharedEvent;
}
// GlSemaphoreSync: GlSemaphore.
template<>
constexpr SyncKind syncKindOf<GlSemaphoreSync>()
{
	return SyncKind::GlSemaphore;
}
// GlSyncSync: GlSync.
template<>
constexpr SyncKind syncKindOf<GlSyncSync>()
{
	return SyncKind::GlSync;
}
// FenceFdSync: FenceFd.
template<>
constexpr SyncKind syncKindOf<FenceFdSync>()
{
	return SyncKind::FenceFd;
}
// WebGpuSubmissionSync: WebGpuSubmission.
template<>
constexpr SyncKind syncKindOf<WebGpuSubmissionSync>()
{
	return SyncKind::WebGpuSubmission;
}
} // namespace detail

template<typename R>
Result<SyncPoint> SyncPoint::create(R raw, SyncWaiterRef waiter, KeepAliveRef owner)
{
	return make(detail::syncKindOf<R>(), Raw(std::move(raw)), std::move(waiter),
		    std::move(owner));
}

} // namespace gpuhandle
