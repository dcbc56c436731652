// The fd backend: frames in sealed memfds (shareable across processes and APIs), and DMA-BUFs
// made from them through /dev/udmabuf where the kernel offers it.
#include <gpuhandle/format_mappings.h>

#include "common/backend_internal.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gpuhandle {

namespace {

constexpr const char *kName = "fd";
constexpr const char *kUdmabuf = "/dev/udmabuf";

bool allFdMemory(const Frame &frame)
{
	return allResources(frame, isFdMemory);
}

// Whether the kernel offers udmabuf here (the device node exists and opens).
bool udmabufAvailable()
{
	int fd = open(kUdmabuf, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

// A memfd charged to a budget: its reservation lives as long as the fd (an anchor of the owned
// fd). Owned, so that the frame transport's file cache may keep it: holding the fd keeps the
// memory, and rightly its charge.
struct MemfdCharge final : KeepAlive {
	BudgetReservation charge{};
};

SharedFd chargedFd(UniqueFd fd, BudgetReservation charge)
{
	if (charge.isEmpty())
		return SharedFd(std::move(fd));
	auto anchor = std::make_shared<MemfdCharge>();
	anchor->charge = std::move(charge);
	return SharedFd(std::move(fd), std::move(anchor));
}

class FdBackend final : public HostMemoryBackend
{
public:
	FdBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context)
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
		UniqueFd fd(memfd_create("gpuhandle-frame", MFD_CLOEXEC | MFD_ALLOW_SEALING));
		if (!fd.isValid())
			return Error::format(ErrorCode::Io, "", "fd: memfd_create failed: %s.",
					     std::strerror(errno));
		if (ftruncate(fd.get(), static_cast<off_t>(size)) != 0)
			return Error::format(ErrorCode::OutOfMemory, "size",
					     "fd: sizing a memfd to %llu bytes failed: %s.",
					     static_cast<unsigned long long>(size),
					     std::strerror(errno));
		// Sealed against shrinking, so a consumer's mapping can never SIGBUS.
		if (fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
			return Error::format(ErrorCode::Io, "", "fd: sealing the memfd failed: %s.",
					     std::strerror(errno));
		Result<ShmFd> shm = ShmFd::create(
			{ chargedFd(std::move(fd), std::move(*charged)), 0, size, 0 });
		if (!shm.ok())
			return std::move(shm).error();
		return frameOverBuffer(request, *layout, std::move(*shm));
	}

	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override
	{
		if (!allFdMemory(frame))
			return notThisBackendsFrame(kName, "exportFrame");
		if (kind == ResourceKind::ShmFd || kind == ResourceKind::DmaBuf) {
			bool same = true;
			for (uint32_t i = 0; i < frame.numResources(); ++i)
				same = same && frame.resource(i).kind() == kind;
			if (same)
				return frame;
		}
		if (kind != ResourceKind::DmaBuf)
			return Error::format(
				ErrorCode::NotSupported, "kind",
				"fd: a memfd frame exports as a shm fd or a DMA-BUF, not a %s.",
				resourceKindName(kind));
		return exportAsDmaBuf(frame);
	}

	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override
	{
		if (route != ImportRoute::Direct && route != ImportRoute::DmaBuf)
			return routeNotSupported(
				kName, route, "fd memory takes memfds and DMA-BUFs as they are.");
		if (!allFdMemory(frame))
			return routeNotSupported(kName, route,
						 "the frame is not in memfds or DMA-BUFs.");
		return frame;
	}

	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override
	{
		if (!allFdMemory(frame))
			return notThisBackendsFrame(kName, "map");
		return mapFrame(frame, access, timeout);
	}

	bool holds(const Frame &frame) const override { return allFdMemory(frame); }

private:
	// One udmabuf over the frame's single sealed memfd, with the DRM fourcc of its format.
	Result<Frame> exportAsDmaBuf(const Frame &frame)
	{
		const ShmFd *shm = frame.numResources() == 1 ? frame.resource(0).get<ShmFd>()
							     : nullptr;
		if (!shm)
			return Error(ErrorCode::NotSupported, "frame",
				     "fd: only a frame in one memfd can become a DMA-BUF.");
		Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, frame.format());
		if (!fourcc.ok())
			return Error::format(ErrorCode::NotSupported, "format",
					     "fd: %s has no DRM fourcc, so it cannot be a DMA-BUF.",
					     pixelFormatName(frame.format()));
		const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
		if (!shm->isSealed() || shm->desc().offset % page || shm->desc().size % page)
			return Error(
				ErrorCode::NotSupported, "frame",
				"fd: udmabuf takes page-aligned ranges of memfds sealed against shrinking.");
		UniqueFd device(open(kUdmabuf, O_RDWR | O_CLOEXEC));
		if (!device.isValid())
			return Error::format(
				ErrorCode::NotSupported, "kind",
				"fd: %s cannot be opened (%s), so memfds cannot become DMA-BUFs here.",
				kUdmabuf, std::strerror(errno));
		udmabuf_create create{};
		create.memfd = static_cast<uint32_t>(shm->desc().fd.get());
		create.flags = UDMABUF_FLAGS_CLOEXEC;
		create.offset = shm->desc().offset;
		create.size = shm->desc().size;
		UniqueFd dmabuf(ioctl(device.get(), UDMABUF_CREATE, &create));
		if (!dmabuf.isValid())
			return Error::format(ErrorCode::Io, "", "fd: UDMABUF_CREATE failed: %s.",
					     std::strerror(errno));
		DmaBufDesc desc;
		desc.fourcc = *fourcc;
		desc.modifier = kDrmModifierLinear;
		desc.width = frame.width();
		desc.height = frame.height();
		desc.numObjects = 1;
		desc.objects[0] = DmaBufObject{ SharedFd(std::move(dmabuf)), shm->desc().size };
		desc.numPlanes = frame.numPlanes();
		for (uint32_t i = 0; i < frame.numPlanes(); ++i)
			desc.planes[i] =
				DmaBufPlane{ 0, frame.plane(i).offset, frame.plane(i).stride };
		Result<DmaBuf> buffer = DmaBuf::create(std::move(desc));
		if (!buffer.ok())
			return std::move(buffer).error();
		Resource resource(std::move(*buffer));
		return frameLike(frame, std::span<const Resource>(&resource, 1));
	}
};

} // namespace

Result<BackendRef> openFdBackend(const BackendOpenOptions &options)
{
	if (options.context && options.context->backend() != BackendKind::Cpu)
		return Error::format(
			ErrorCode::InvalidArgument, "context",
			"fd: the backend works in host memory fds, not inside a %s context.",
			backendKindName(options.context->backend()));
	DeviceInfo info;
	info.backend = BackendKind::Fd;
	info.name = "Linux fds (memfd, DMA-BUF)";
	info.id = DeviceId::cpu();
	info.isIntegrated = true;
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::ShmFd };
	caps.exports = { ResourceKind::ShmFd };
	if (udmabufAvailable()) {
		caps.exports.push_back(ResourceKind::DmaBuf);
		caps.drmModifiers = { kDrmModifierLinear };
	}
	caps.imports = { ResourceKind::ShmFd, ResourceKind::DmaBuf };
	caps.routes = { ImportRoute::Direct, ImportRoute::DmaBuf };
	caps.storages = { FrameStorage::Buffer };
	caps.fenceImports = { SyncKind::FenceFd };
	caps.cpuMap = true;
	return BackendRef(
		std::make_shared<FdBackend>(std::move(info), std::move(caps), Context::cpu()));
}

} // namespace gpuhandle
