// Backend names, openBackend() dispatch to the backends this build has, and probeBackends().
#include <gpuhandle/fd_resources.h>

#include "common/backend_internal.h"

#include <algorithm>

namespace gpuhandle {

Backend::~Backend() = default;

Result<SyncPoint> Backend::exportFence(const SyncPoint &point)
{
	return Error::format(ErrorCode::NotSupported, "point",
			     "%s: a %s point cannot be exported as a fence fd here.",
			     backendKindName(kind()), syncKindName(point.kind()));
}

Result<SyncPoint> Backend::importFence(const SyncPoint &point)
{
	return Error::format(ErrorCode::NotSupported, "point",
			     "%s: its queue cannot wait on a %s point without the CPU.",
			     backendKindName(kind()), syncKindName(point.kind()));
}

Result<BudgetReservation> Backend::charge(const AllocateRequest &request) const
{
	if (!budget_)
		return BudgetReservation{};
	Result<uint64_t> bytes =
		estimateTextureBytes(request.format, request.width, request.height);
	if (!bytes.ok())
		return std::move(bytes).error();
	return budget_->tryReserve(kind(), *bytes);
}

namespace detail {

// openBackend's access to a backend's budget (set once, while it is being opened).
struct BackendBudget {
	static void set(Backend &backend, std::shared_ptr<MemoryBudget> budget)
	{
		backend.budget_ = std::move(budget);
	}
};

} // namespace detail

std::vector<uint64_t> Backend::dmaBufImportModifiers(PixelFormat format) const
{
	const std::vector<ResourceKind> &imports = caps_.imports;
	if (!pixelFormatInfo(format).ok() ||
	    std::find(imports.begin(), imports.end(), ResourceKind::DmaBuf) == imports.end())
		return {};
	return { kDrmModifierLinear };
}

const char *frameStorageName(FrameStorage storage) noexcept
{
	switch (storage) {
	case FrameStorage::Buffer: return "buffer";
	case FrameStorage::LinearImage: return "linear-image";
	case FrameStorage::OptimalImage: return "optimal-image";
	}
	return "unknown";
}

const char *importRouteName(ImportRoute route) noexcept
{
	switch (route) {
	case ImportRoute::Direct: return "direct";
	case ImportRoute::OpaqueFd: return "opaque-fd";
	case ImportRoute::DmaBuf: return "dma-buf";
	case ImportRoute::HostPointer: return "host-pointer";
	case ImportRoute::GpuCopy: return "gpu-copy";
	case ImportRoute::CpuCopy: return "cpu-copy";
	}
	return "unknown";
}

std::vector<PixelFormat> Backend::supportedFormats(FrameStorage storage) const
{
	std::vector<PixelFormat> formats;
	for (const PixelFormatInfo &info : allPixelFormats())
		if (supportsFormat(info.format, storage))
			formats.push_back(info.format);
	return formats;
}

namespace detail {
Result<BackendRef> applyEnvironmentFaults(BackendRef backend); // fault_injection.cpp
} // namespace detail

namespace {

Result<BackendRef> openUnwrapped(BackendKind kind, const BackendOpenOptions &options)
{
	switch (kind) {
	case BackendKind::Cpu: return openCpuBackend(options);
	case BackendKind::Fd: return openFdBackend(options);
	case BackendKind::Vulkan: return openVulkanBackend(options);
	case BackendKind::OpenGL: return openGlBackend(options);
	case BackendKind::OpenCl: return openOpenClBackend(options);
	case BackendKind::Cuda: return openCudaBackend(options);
	case BackendKind::VaApi: return openVaApiBackend(options);
	default: break;
	}
	return Error::format(
		ErrorCode::NotSupported, "kind",
		"gpuhandle-interop has no %s backend (it has cpu, fd, vulkan, opengl, opencl, "
		"cuda and vaapi).",
		backendKindName(kind));
}

} // namespace

Result<BackendRef> openBackend(BackendKind kind, const BackendOpenOptions &options)
{
	auto backend = openUnwrapped(kind, options);
	if (!backend.ok())
		return backend;
	detail::BackendBudget::set(**backend, options.budget);
	// A test aid: GPUHANDLE_FAULT_INJECTION makes the backends fail on purpose.
	auto wrapped = detail::applyEnvironmentFaults(std::move(*backend));
	if (wrapped.ok())
		detail::BackendBudget::set(**wrapped, options.budget); // what budget() reports
	return wrapped;
}

std::vector<BackendProbe> probeBackends()
{
	std::vector<BackendProbe> probes;
	for (BackendKind kind : kInteropBackends) {
		BackendProbe probe;
		probe.kind = kind;
		Result<BackendRef> opened = openBackend(kind);
		if (opened.ok())
			probe.backend = std::move(*opened);
		else
			probe.why = std::move(opened).error();
		probes.push_back(std::move(probe));
	}
	return probes;
}

} // namespace gpuhandle
