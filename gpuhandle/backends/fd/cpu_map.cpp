// mapFrame: CPU pointers for CPU memory, shared-memory fds and DMA-BUFs, after the acquire wait.
#include <gpuhandle/backends/cpu_map.h>

#include <cerrno>
#include <cstring>
#include <linux/dma-buf.h>
#include <new>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gpuhandle {

namespace {

int protection(MapAccess access)
{
	return (static_cast<int>(access) & static_cast<int>(MapAccess::Write))
		       ? PROT_READ | PROT_WRITE
		       : PROT_READ;
}

uint64_t dmaBufSyncFlags(MapAccess access)
{
	uint64_t flags = 0;
	if (static_cast<int>(access) & static_cast<int>(MapAccess::Read))
		flags |= DMA_BUF_SYNC_READ;
	if (static_cast<int>(access) & static_cast<int>(MapAccess::Write))
		flags |= DMA_BUF_SYNC_WRITE;
	return flags;
}

// DMA_BUF_IOCTL_SYNC, retried on EINTR. ENOTTY means the fd is not a dma-buf (a memfd standing
// in for one), which needs no cache maintenance: that counts as success.
int dmaBufSync(int fd, uint64_t flags)
{
	dma_buf_sync sync = { flags };
	for (;;) {
		if (ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync) == 0)
			return 0;
		if (errno == EINTR || errno == EAGAIN)
			continue;
		return (errno == ENOTTY || errno == EINVAL) ? 1 : -1;
	}
}

} // namespace

CpuMapping::CpuMapping(CpuMapping &&other) noexcept
{
	*this = std::move(other);
}

CpuMapping &CpuMapping::operator=(CpuMapping &&other) noexcept
{
	if (this == &other)
		return *this;
	(void)unmap();
	frame_ = std::move(other.frame_);
	access_ = other.access_;
	numPlanes_ = std::exchange(other.numPlanes_, 0);
	planes_ = other.planes_;
	strides_ = other.strides_;
	numRegions_ = std::exchange(other.numRegions_, 0);
	regions_ = other.regions_;
	end_ = std::exchange(other.end_, nullptr);
	return *this;
}

CpuMapping::~CpuMapping()
{
	(void)unmap();
}

Status CpuMapping::unmap() noexcept
{
	Status status;
	for (uint32_t i = 0; i < numRegions_; ++i) {
		Region &region = regions_[i];
		if (region.dmaBufFd >= 0 &&
		    dmaBufSync(region.dmaBufFd, DMA_BUF_SYNC_END | dmaBufSyncFlags(access_)) < 0 &&
		    status.ok())
			status = Error::format(ErrorCode::Io, "fd",
					       "Ending the CPU access to dma-buf fd %d failed: %s.",
					       region.dmaBufFd, std::strerror(errno));
		if (region.address)
			munmap(region.address, region.length);
		region = {};
	}
	numRegions_ = 0;
	if (end_) {
		std::function<Status()> end = std::exchange(end_, nullptr);
		Status ended;
		// A backend's end may allocate (command buffers, staging); unmap() is noexcept.
		try {
			ended = end();
		} catch (const std::bad_alloc &) {
			ended = Error(ErrorCode::OutOfMemory, "",
				      "Ending a CPU mapping ran out of memory.");
		} catch (...) {
			ended = Error(ErrorCode::Fatal, "",
				      "Ending a CPU mapping threw an exception.");
		}
		if (!ended.ok() && status.ok())
			status = std::move(ended);
	}
	numPlanes_ = 0;
	planes_ = {};
	frame_.reset();
	return status;
}

CpuMapping CpuMapping::adopt(const Frame &frame, MapAccess access, uint32_t numPlanes,
			     const std::array<uint8_t *, 4> &planes,
			     const std::array<uint32_t, 4> &strides, std::function<Status()> end)
{
	CpuMapping mapping;
	mapping.frame_ = frame;
	mapping.access_ = access;
	mapping.numPlanes_ = numPlanes;
	mapping.planes_ = planes;
	mapping.strides_ = strides;
	mapping.end_ = std::move(end);
	return mapping;
}

namespace {

// The CPU address of each subresource of one resource (mapping fds as needed).
struct Bases {
	std::array<uint8_t *, 4> at{};
};

} // namespace

Result<CpuMapping> mapFrame(const Frame &frame, MapAccess access, WaitDuration timeout)
{
	if (access != MapAccess::Read && access != MapAccess::Write &&
	    access != MapAccess::ReadWrite)
		return Error::format(ErrorCode::InvalidArgument, "access",
				     "mapFrame: access %u is not read, write or both.",
				     static_cast<unsigned>(access));
	// The producer's work must be done before the CPU touches the memory.
	Status acquired = frame.acquire().wait(timeout);
	if (!acquired.ok())
		return std::move(acquired).error();

	CpuMapping mapping;
	mapping.frame_ = frame;
	mapping.access_ = access;
	const long page = sysconf(_SC_PAGESIZE);
	std::array<Bases, 4> bases{};

	auto mapFd = [&](int fd, uint64_t offset, uint64_t size, bool dmaBuf) -> Result<uint8_t *> {
		uint64_t pageOffset = offset % static_cast<uint64_t>(page);
		size_t length = static_cast<size_t>(size + pageOffset);
		void *address = mmap(nullptr, length, protection(access), MAP_SHARED, fd,
				     static_cast<off_t>(offset - pageOffset));
		if (address == MAP_FAILED)
			return Error::format(ErrorCode::Io, "fd",
					     "mapFrame: mmap of fd %d (%zu bytes) failed: %s.", fd,
					     length, std::strerror(errno));
		CpuMapping::Region &region = mapping.regions_[mapping.numRegions_++];
		region.address = address;
		region.length = length;
		if (dmaBuf) {
			int synced = dmaBufSync(fd, DMA_BUF_SYNC_START | dmaBufSyncFlags(access));
			if (synced < 0)
				return Error::format(
					ErrorCode::Io, "fd",
					"mapFrame: starting the CPU access to dma-buf fd %d failed: %s.",
					fd, std::strerror(errno));
			if (synced == 0)
				region.dmaBufFd = fd;
		}
		return static_cast<uint8_t *>(address) + pageOffset;
	};

	for (uint32_t r = 0; r < frame.numResources(); ++r) {
		const Resource &resource = frame.resource(r);
		if (const CpuBytes *bytes = resource.get<CpuBytes>()) {
			bases[r].at[0] = static_cast<uint8_t *>(bytes->desc().data);
		} else if (const CpuPlanes *planes = resource.get<CpuPlanes>()) {
			for (uint32_t i = 0; i < planes->desc().numPlanes; ++i)
				bases[r].at[i] =
					static_cast<uint8_t *>(planes->desc().planes[i].data);
		} else if (const ShmFd *shm = resource.get<ShmFd>()) {
			auto base = mapFd(shm->desc().fd.get(), shm->desc().offset,
					  shm->desc().size, false);
			if (!base.ok())
				return std::move(base).error();
			bases[r].at[0] = *base;
		} else if (const DmaBuf *dmabuf = resource.get<DmaBuf>()) {
			// A tiled or compressed layout has no CPU rows: the bytes would be
			// scrambled.
			if (dmabuf->desc().modifier != kDrmModifierLinear &&
			    dmabuf->desc().modifier != kDrmModifierInvalid)
				return Error::format(
					ErrorCode::NotSupported, "modifier",
					"mapFrame: a DMA-BUF with modifier 0x%016llx is tiled or compressed; only "
					"linear (or implicit) DMA-BUFs map for the CPU.",
					static_cast<unsigned long long>(dmabuf->desc().modifier));
			for (uint32_t i = 0; i < dmabuf->desc().numObjects; ++i) {
				const DmaBufObject &object = dmabuf->desc().objects[i];
				auto base = mapFd(object.fd.get(), 0, object.size, true);
				if (!base.ok())
					return std::move(base).error();
				bases[r].at[i] = *base;
			}
		} else {
			return Error::format(
				ErrorCode::NotSupported, "resources",
				"mapFrame: a %s cannot be mapped here; map it through its %s backend.",
				resourceKindName(resource.kind()),
				backendKindName(resource.backend()));
		}
	}
	for (uint32_t i = 0; i < frame.numPlanes(); ++i) {
		const PlaneView &plane = frame.plane(i);
		if (!plane.stride)
			return Error::format(
				ErrorCode::InvalidArgument, "planes",
				"mapFrame: plane %u has no stride (opaque memory cannot be read by the CPU).",
				i);
		mapping.planes_[i] = bases[plane.resource].at[plane.subresource] + plane.offset;
		mapping.strides_[i] = plane.stride;
	}
	mapping.numPlanes_ = frame.numPlanes();
	return mapping;
}

} // namespace gpuhandle
