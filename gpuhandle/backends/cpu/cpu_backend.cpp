// The cpu backend: frames in page-aligned host memory, and host memory of any kind used in place.
#include <gpuhandle/backends/planner.h>

#include "common/backend_internal.h"

#include <cstdlib>
#include <new>
#include <unistd.h>

namespace gpuhandle {

namespace {

constexpr const char *kName = "cpu";

// Page-aligned, so that Vulkan (VK_EXT_external_memory_host), CUDA (cuMemHostRegister) and
// OpenCL can use the bytes in place; sizes are rounded up to whole pages for the same reason.
struct CpuAllocation final : KeepAlive {
	void *data = nullptr;
	BudgetReservation charge{}; // given back when the memory is
	~CpuAllocation() override { std::free(data); }
};

class CpuBackend final : public HostMemoryBackend
{
public:
	CpuBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context)
		: HostMemoryBackend(std::move(info), std::move(caps), std::move(context))
	{
	}

	Result<Frame> allocate(const AllocateRequest &request) override
	{
		uint64_t size = 0;
		Result<FrameLayout> layout = hostBufferLayout(request, kName, size);
		if (!layout.ok())
			return std::move(layout).error();
		Result<BudgetReservation> charged = charge(request);
		if (!charged.ok())
			return std::move(charged).error();
		const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
		auto allocation = std::make_shared<CpuAllocation>();
		allocation->charge = std::move(*charged);
		allocation->data = std::aligned_alloc(page, size);
		if (!allocation->data)
			return Error::format(ErrorCode::OutOfMemory, "size",
					     "cpu: could not allocate %llu bytes.",
					     static_cast<unsigned long long>(size));
		Result<CpuBytes> bytes = CpuBytes::create({ allocation->data, size, allocation });
		if (!bytes.ok())
			return std::move(bytes).error();
		return frameOverBuffer(request, *layout, std::move(*bytes));
	}

	Result<Frame> exportFrame(const Frame &, ResourceKind kind) override
	{
		return Error::format(
			ErrorCode::NotSupported, "kind",
			"cpu: host memory cannot be exported as a %s; allocate it in the fd backend "
			"(a memfd) to share it.",
			resourceKindName(kind));
	}

	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override
	{
		if (route == ImportRoute::Direct) {
			if (holds(frame))
				return frame;
			return routeNotSupported(kName, route, "the frame is not in host memory.");
		}
		if (route != ImportRoute::HostPointer)
			return routeNotSupported(
				kName, route,
				"host memory takes frames in place only (direct or host pointer).");
		if (holds(frame))
			return frame;
		if (allResources(frame, isFdMemory))
			return mapAsCpuFrame(frame, MapAccess::ReadWrite, nullptr);
		return routeNotSupported(
			kName, route,
			"only CPU memory, memfds and DMA-BUFs have host pointers here.");
	}

	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override
	{
		if (!allResources(frame, isHostMemory))
			return notThisBackendsFrame(kName, "map");
		return mapFrame(frame, access, timeout);
	}

	bool holds(const Frame &frame) const override { return allResources(frame, isCpuMemory); }
};

} // namespace

Result<BackendRef> openCpuBackend(const BackendOpenOptions &options)
{
	if (options.context && options.context->backend() != BackendKind::Cpu)
		return Error::format(
			ErrorCode::InvalidArgument, "context",
			"cpu: the backend works in host memory, not inside a %s context.",
			backendKindName(options.context->backend()));
	DeviceInfo info;
	info.backend = BackendKind::Cpu;
	info.name = "host memory";
	info.id = DeviceId::cpu();
	info.isIntegrated = true;
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::CpuBytes };
	caps.imports = { ResourceKind::CpuBytes, ResourceKind::CpuPlanes, ResourceKind::ShmFd,
			 ResourceKind::DmaBuf };
	caps.routes = { ImportRoute::Direct, ImportRoute::HostPointer };
	caps.storages = { FrameStorage::Buffer };
	caps.cpuMap = true;
	return BackendRef(
		std::make_shared<CpuBackend>(std::move(info), std::move(caps), Context::cpu()));
}

} // namespace gpuhandle
