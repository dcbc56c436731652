// SyncPoint: validated raw fields per fence kind, waits through the owning waiter, kind names.
#include <gpuhandle/sync_point.h>

#include "fence_fd_waiter.h"
#include "validation.h"

namespace gpuhandle {

namespace {

constexpr const char *kKindNames[] = {
	"noop",
	"cpu",
	"fence-fd",
	"vulkan-semaphore",
	"d3d12-fence",
	"d3d11-keyed-mutex",
	"cuda-external-semaphore",
	"cuda-event",
	"opencl-event",
	"metal-shared-event",
	"gl-semaphore",
	"gl-sync",
	"webgpu-submission",
	"composite",
};

constexpr const char *kType = "SyncPoint";

// Checks the raw fields of one kind; std::monostate has none.
struct RawCheck {
	std::optional<Error> operator()(const std::monostate &) const { return std::nullopt; }
	std::optional<Error> operator()(const VulkanSemaphoreSync &r) const
	{
		if (auto e = detail::requireHandle(kType, "semaphore", r.semaphore))
			return e;
		if (r.kind != VulkanSemaphoreKind::Binary &&
		    r.kind != VulkanSemaphoreKind::Timeline)
			return Error::format(
				ErrorCode::InvalidArgument, "kind",
				"SyncPoint: Vulkan semaphore kind %u is neither binary nor timeline.",
				static_cast<unsigned>(r.kind));
		return detail::requireHandle(kType, "device", r.device);
	}
	std::optional<Error> operator()(const D3D12FenceSync &r) const
	{
		return detail::requireHandle(kType, "fence", r.fence);
	}
	std::optional<Error> operator()(const D3D11KeyedMutexSync &r) const
	{
		return detail::requireHandle(kType, "keyedMutex", r.keyedMutex);
	}
	std::optional<Error> operator()(const CudaExternalSemaphoreSync &r) const
	{
		return detail::requireHandle(kType, "semaphore", r.semaphore);
	}
	std::optional<Error> operator()(const CudaEventSync &r) const
	{
		if (auto e = detail::requireHandle(kType, "event", r.event))
			return e;
		if (r.ordinal < 0)
			return Error::format(ErrorCode::OutOfRange, "ordinal",
					     "SyncPoint: CUDA device ordinal %d is negative.",
					     r.ordinal);
		return std::nullopt;
	}
	std::optional<Error> operator()(const OpenClEventSync &r) const
	{
		return detail::requireHandle(kType, "event", r.event);
	}
	std::optional<Error> operator()(const MetalSharedEventSync &r) const
	{
		return detail::requireHandle(kType, "event", r.event);
	}
	std::optional<Error> operator()(const GlSemaphoreSync &r) const
	{
		return detail::requireHandle(kType, "semaphore", uint64_t(r.semaphore));
	}
	std::optional<Error> operator()(const GlSyncSync &r) const
	{
		if (auto e = detail::requireHandle(kType, "sync", r.sync))
			return e;
		if (static_cast<uint32_t>(r.flavour) > static_cast<uint32_t>(GlFlavour::Cgl))
			return Error::format(
				ErrorCode::InvalidArgument, "flavour",
				"SyncPoint: GL flavour %u is not one of EGL, GLX, WGL, CGL.",
				static_cast<unsigned>(r.flavour));
		return std::nullopt;
	}
	std::optional<Error> operator()(const FenceFdSync &r) const
	{
		return detail::requireOpenFd(kType, "fd", r.fd);
	}
	std::optional<Error> operator()(const WebGpuSubmissionSync &r) const
	{
		return detail::requireHandle(kType, "queue", r.queue);
	}
};

} // namespace

const char *syncKindName(SyncKind kind) noexcept
{
	auto index = static_cast<uint32_t>(kind);
	return index < std::size(kKindNames) ? kKindNames[index] : "unknown";
}

BackendKind backendOf(SyncKind kind) noexcept
{
	switch (kind) {
	case SyncKind::VulkanSemaphore: return BackendKind::Vulkan;
	case SyncKind::D3D12Fence: return BackendKind::D3D12;
	case SyncKind::D3D11KeyedMutex: return BackendKind::D3D11;
	case SyncKind::CudaExternalSemaphore:
	case SyncKind::CudaEvent: return BackendKind::Cuda;
	case SyncKind::OpenClEvent: return BackendKind::OpenCl;
	case SyncKind::MetalSharedEvent: return BackendKind::Metal;
	case SyncKind::GlSemaphore:
	case SyncKind::GlSync: return BackendKind::OpenGL;
	case SyncKind::FenceFd: return BackendKind::Fd;
	case SyncKind::WebGpuSubmission: return BackendKind::WebGpu;
	case SyncKind::Noop:
	case SyncKind::Cpu:
	case SyncKind::Composite: return BackendKind::Cpu;
	}
	return BackendKind::Cpu;
}

Result<SyncPoint> SyncPoint::make(SyncKind kind, Raw raw, SyncWaiterRef waiter, KeepAliveRef owner)
{
	if (auto e = std::visit(RawCheck{}, raw))
		return std::move(*e);
	SyncPoint point;
	point.kind_ = kind;
	point.raw_ = std::move(raw);
	point.waiter_ = std::move(waiter);
	point.owner_ = std::move(owner);
	return point;
}

Result<SyncPoint> SyncPoint::fromFenceFd(SharedFd fd)
{
	if (auto e = detail::requireOpenFd(kType, "fd", fd))
		return std::move(*e);
	auto waiter = std::make_shared<detail::FenceFdWaiter>(fd);
	return make(SyncKind::FenceFd, FenceFdSync{ std::move(fd) }, std::move(waiter), {});
}

Result<SyncPoint> SyncPoint::fromWaiter(SyncKind kind, SyncWaiterRef waiter)
{
	if (!waiter)
		return detail::nullHandle(kType, "waiter");
	if (kind != SyncKind::Cpu && kind != SyncKind::Composite)
		return Error::format(
			ErrorCode::InvalidArgument, "kind",
			"SyncPoint: a %s point needs its raw fields; use SyncPoint::create().",
			syncKindName(kind));
	return make(kind, std::monostate{}, std::move(waiter), {});
}

Status SyncPoint::wait(WaitDuration timeout) const
{
	if (isNoop())
		return {};
	if (!waiter_)
		return Error::format(
			ErrorCode::NotSupported, "waiter",
			"The %s sync point is a raw carrier (it crossed an API or process boundary); "
			"import it with a backend before waiting on the CPU.",
			syncKindName(kind_));
	return waiter_->wait(timeout);
}

Result<bool> SyncPoint::isSignaled() const
{
	if (isNoop())
		return true;
	if (!waiter_)
		return Error::format(
			ErrorCode::NotSupported, "waiter",
			"The %s sync point is a raw carrier; import it with a backend before polling it.",
			syncKindName(kind_));
	return waiter_->isSignaled();
}

} // namespace gpuhandle
