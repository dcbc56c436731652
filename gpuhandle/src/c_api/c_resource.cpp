// C API: gpuhandle_resource's lifetime, and the kinds that carry fds (DMA-BUF, shm, Vulkan fd).
#include <gpuhandle/gpuhandle_resource.h>

#include "c_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

namespace gpuhandle::capi {

gpuhandle_resource *newResource(Resource resource)
{
	return new gpuhandle_resource(std::move(resource));
}

} // namespace gpuhandle::capi

namespace {

// Owned fds need no anchor; one given anyway would be silently meaningless, so it is refused.
std::optional<Error> checkBorrowAnchor(const char *type, const char *flag, bool borrow,
				       const KeepAliveRef &anchor)
{
	if (borrow || !anchor)
		return std::nullopt;
	return Error::format(
		ErrorCode::InvalidArgument, "anchor",
		"%s: an anchor keeps borrowed fds open, but %s is false: the fds are owned "
		"and closed by the resource.",
		type, flag);
}

// One fd: taken into a SharedFd, or borrowed under the anchor.
SharedFd sharedFdOf(UniqueFd &owned, int fd, bool borrow, const KeepAliveRef &anchor)
{
	return borrow ? SharedFd::borrow(fd, anchor) : SharedFd(std::move(owned));
}

void putFd(const SharedFd &fd, int &out, bool &borrowed)
{
	out = fd.get();
	borrowed = fd.isValid() && !fd.isOwned();
}

Result<DmaBufDesc> nativeDmaBuf(const gpuhandle_dmabuf_desc &c)
{
	constexpr const char *kType = "DmaBuf";
	uint32_t count = std::min<uint32_t>(c.numObjects, 4);
	// Take every fd before anything can fail; an fd listed twice gets one owner, closed once.
	std::array<UniqueFd, 4> owned;
	std::array<uint32_t, 4> first{};
	for (uint32_t i = 0; i < count; ++i) {
		first[i] = i;
		for (uint32_t j = 0; j < i; ++j) {
			if (c.objects[j].fd == c.objects[i].fd) {
				first[i] = first[j];
				break;
			}
		}
		if (!c.borrowFds && first[i] == i)
			owned[i].reset(c.objects[i].fd);
	}
	auto anchor = anchorOf(c.anchor, kType);
	if (!anchor)
		return std::move(anchor).error();
	if (auto e = checkBorrowAnchor(kType, "borrowFds", c.borrowFds, *anchor))
		return std::move(*e);

	DmaBufDesc d;
	d.fourcc = c.fourcc;
	d.modifier = c.modifier;
	d.width = c.width;
	d.height = c.height;
	d.numObjects = c.numObjects;
	for (uint32_t i = 0; i < count; ++i) {
		if (first[i] == i)
			d.objects[i].fd =
				sharedFdOf(owned[i], c.objects[i].fd, c.borrowFds, *anchor);
		else
			d.objects[i].fd = d.objects[first[i]].fd;
		d.objects[i].size = c.objects[i].size;
	}
	d.numPlanes = c.numPlanes;
	for (uint32_t i = 0; i < std::min<uint32_t>(c.numPlanes, 4); ++i)
		d.planes[i] = { c.planes[i].objectIndex, c.planes[i].offset, c.planes[i].pitch };
	return d;
}

void cDmaBuf(const DmaBufDesc &d, gpuhandle_dmabuf_desc &c)
{
	c.fourcc = d.fourcc;
	c.modifier = d.modifier;
	c.width = d.width;
	c.height = d.height;
	c.numObjects = d.numObjects;
	for (uint32_t i = 0; i < d.numObjects; ++i) {
		bool borrowed = false;
		putFd(d.objects[i].fd, c.objects[i].fd, borrowed);
		c.borrowFds = c.borrowFds || borrowed;
		c.objects[i].size = d.objects[i].size;
	}
	for (uint32_t i = d.numObjects; i < 4; ++i)
		c.objects[i].fd = -1; // no object: not stdin
	c.numPlanes = d.numPlanes;
	for (uint32_t i = 0; i < d.numPlanes; ++i)
		c.planes[i] = { d.planes[i].objectIndex, d.planes[i].offset, d.planes[i].pitch };
}

Result<ShmFdDesc> nativeShmFd(const gpuhandle_shm_fd_desc &c)
{
	constexpr const char *kType = "ShmFd";
	UniqueFd owned(c.borrowFd ? -1 : c.fd);
	auto anchor = anchorOf(c.anchor, kType);
	if (!anchor)
		return std::move(anchor).error();
	if (auto e = checkBorrowAnchor(kType, "borrowFd", c.borrowFd, *anchor))
		return std::move(*e);
	ShmFdDesc d;
	d.fd = sharedFdOf(owned, c.fd, c.borrowFd, *anchor);
	d.offset = c.offset;
	d.size = c.size;
	return d;
}

void cShmFd(const ShmFdDesc &d, gpuhandle_shm_fd_desc &c)
{
	putFd(d.fd, c.fd, c.borrowFd);
	c.offset = d.offset;
	c.size = d.size;
	c.seals = d.seals;
}

Result<VulkanMemoryFdDesc> nativeVulkanMemoryFd(const gpuhandle_vulkan_memory_fd_desc &c)
{
	constexpr const char *kType = "VulkanMemoryFd";
	UniqueFd owned(c.borrowFd ? -1 : c.fd);
	auto anchor = anchorOf(c.anchor, kType);
	if (!anchor)
		return std::move(anchor).error();
	if (auto e = checkBorrowAnchor(kType, "borrowFd", c.borrowFd, *anchor))
		return std::move(*e);
	VulkanMemoryFdDesc d;
	d.fd = sharedFdOf(owned, c.fd, c.borrowFd, *anchor);
	const gpuhandle_vulkan_export_desc &x = c.exportDesc;
	d.exportDesc.allocationSize = x.allocationSize;
	d.exportDesc.memoryTypeIndex = x.memoryTypeIndex;
	d.exportDesc.dedicated = x.dedicated;
	d.exportDesc.format = x.format;
	d.exportDesc.width = x.width;
	d.exportDesc.height = x.height;
	d.exportDesc.depth = x.depth;
	d.exportDesc.tiling = x.tiling;
	d.exportDesc.usage = x.usage;
	d.exportDesc.acquireTimelineValue =
		optionalOf(x.hasAcquireTimelineValue, x.acquireTimelineValue);
	d.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	d.driverUuid = uuidOf(c.hasDriverUuid, c.driverUuid);
	return d;
}

void cVulkanMemoryFd(const VulkanMemoryFdDesc &d, gpuhandle_vulkan_memory_fd_desc &c)
{
	putFd(d.fd, c.fd, c.borrowFd);
	const VulkanExportDesc &x = d.exportDesc;
	gpuhandle_vulkan_export_desc &y = c.exportDesc;
	y.allocationSize = x.allocationSize;
	y.memoryTypeIndex = x.memoryTypeIndex;
	y.dedicated = x.dedicated;
	y.format = x.format;
	y.width = x.width;
	y.height = x.height;
	y.depth = x.depth;
	y.tiling = x.tiling;
	y.usage = x.usage;
	putOptional(x.acquireTimelineValue, y.hasAcquireTimelineValue, y.acquireTimelineValue);
	putUuid(d.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
	putUuid(d.driverUuid, c.hasDriverUuid, c.driverUuid);
}

} // namespace

extern "C" {

gpuhandle_resource *gpuhandle_resource_ref(gpuhandle_resource *resource) noexcept
{
	return ref(resource);
}

void gpuhandle_resource_unref(gpuhandle_resource *resource) noexcept
{
	unref(resource);
}

gpuhandle_resource_kind gpuhandle_resource_get_kind(const gpuhandle_resource *resource) noexcept
{
	return resource ? static_cast<gpuhandle_resource_kind>(resource->value.kind())
			: GPUHANDLE_RESOURCE_KIND_NONE;
}

gpuhandle_backend_kind gpuhandle_resource_get_backend(const gpuhandle_resource *resource) noexcept
{
	return resource ? static_cast<gpuhandle_backend_kind>(resource->value.backend())
			: GPUHANDLE_BACKEND_CPU;
}

uint64_t gpuhandle_resource_byte_size(const gpuhandle_resource *resource,
				      uint32_t subresource) noexcept
{
	return resource ? resource->value.byteSize(subresource) : 0;
}

uint32_t gpuhandle_resource_subresource_count(const gpuhandle_resource *resource) noexcept
{
	return resource ? resource->value.subresourceCount() : 0;
}

void gpuhandle_resource_mark_consumed(const gpuhandle_resource *resource) noexcept
{
	if (resource)
		resource->value.markConsumed();
}

gpuhandle_status gpuhandle_resource_new_dmabuf(const gpuhandle_dmabuf_desc *desc,
					       gpuhandle_resource **out,
					       gpuhandle_error **error) noexcept
{
	return createResource<DmaBuf>(__func__, desc, out, error, nativeDmaBuf);
}

gpuhandle_status gpuhandle_resource_get_dmabuf(const gpuhandle_resource *resource,
					       gpuhandle_dmabuf_desc *out) noexcept
{
	return getResource<DmaBuf>(resource, out, cDmaBuf);
}

gpuhandle_status gpuhandle_resource_new_shm_fd(const gpuhandle_shm_fd_desc *desc,
					       gpuhandle_resource **out,
					       gpuhandle_error **error) noexcept
{
	return createResource<ShmFd>(__func__, desc, out, error, nativeShmFd);
}

gpuhandle_status gpuhandle_resource_get_shm_fd(const gpuhandle_resource *resource,
					       gpuhandle_shm_fd_desc *out) noexcept
{
	return getResource<ShmFd>(resource, out, cShmFd);
}

gpuhandle_status
gpuhandle_resource_new_vulkan_memory_fd(const gpuhandle_vulkan_memory_fd_desc *desc,
					gpuhandle_resource **out, gpuhandle_error **error) noexcept
{
	return createResource<VulkanMemoryFd>(__func__, desc, out, error, nativeVulkanMemoryFd);
}

gpuhandle_status
gpuhandle_resource_get_vulkan_memory_fd(const gpuhandle_resource *resource,
					gpuhandle_vulkan_memory_fd_desc *out) noexcept
{
	return getResource<VulkanMemoryFd>(resource, out, cVulkanMemoryFd);
}

} // extern "C"
