// The Vulkan backend's exports and imports: the host's own images and buffers of its device
// (foreign views, the Direct route), opaque fds (between devices of one driver) and host
// pointers (VK_EXT_external_memory_host); DMA-BUFs are in vulkan_backend_dmabuf.cpp.
#include <gpuhandle/format_mappings.h>

#include "vulkan_backend_internal.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <optional>
#include <string>

namespace gpuhandle {

using namespace vulkan;

namespace vulkan {

bool isForeign(const Resource &resource, VkDevice device)
{
	const void *owner = nullptr;
	if (const VulkanImage *image = resource.get<VulkanImage>())
		owner = image->desc().device;
	else if (const VulkanBuffer *buffer = resource.get<VulkanBuffer>())
		owner = buffer->desc().device;
	return owner && owner == static_cast<const void *>(device) && !allocationOf(resource);
}

Result<std::shared_ptr<VulkanAllocation>> foreignView(const std::shared_ptr<VulkanDevice> &state,
						      const Frame &frame, uint32_t index)
{
	const Resource &resource = frame.resource(index);
	auto a = std::make_shared<VulkanAllocation>(state);
	a->foreign = true;
	a->source = resource;
	if (const VulkanBuffer *buffer = resource.get<VulkanBuffer>()) {
		a->buffer = reinterpret_cast<VkBuffer>(buffer->desc().buffer);
		a->bufferSize = buffer->desc().size;
		return a;
	}
	const VulkanImageDesc &image = resource.get<VulkanImage>()->desc();
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info)
		return std::move(info).error();
	// A single-plane image is one plane, made with that plane's VkFormat and size; a
	// multi-planar one holds its planes as aspects (each plane at offset 0 of its aspect).
	std::optional<uint32_t> plane;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		if (view.resource != index)
			continue;
		if ((plane && image.planes == 1) || view.offset != 0)
			return Error::format(
				ErrorCode::NotSupported, "planes",
				"vulkan: resource %u, a Vulkan image the backend did not "
				"allocate, holds %s; only one plane per single-plane image (or "
				"per aspect of a multi-planar one), at offset 0, is read.",
				index, plane ? "several planes" : "a plane at an offset");
		if (!plane)
			plane = p;
	}
	if (!plane)
		return Error::format(ErrorCode::InvalidArgument, "planes",
				     "vulkan: no plane of the frame lives in resource %u.", index);
	const PlaneInfo &format = (*info)->planes[*plane];
	a->image = reinterpret_cast<VkImage>(image.image);
	a->imagePlanes = image.planes;
	a->optimal = image.rowPitch == 0;
	a->rowPitch = image.rowPitch;
	a->planeFormat = format.format;
	a->width = format.rowTexels(frame.width());
	a->height = format.rows(frame.height());
	// Where a host leaves the images it shares (frameFromVulkanBuffer moves GStreamer's there),
	// owned by no other queue family: every use starts and ends with a barrier (submitCopies).
	a->layout = VK_IMAGE_LAYOUT_GENERAL;
	return a;
}

void FrameAllocations::keep(uint32_t numResources, std::vector<KeepAliveRef> &out) const
{
	for (uint32_t i = 0; i < numResources; i++)
		out.push_back(held[i]);
}

} // namespace vulkan

Result<FrameAllocations> VulkanBackend::accessOf(const Frame &frame, const char *operation) const
{
	FrameAllocations out;
	for (uint32_t i = 0; i < frame.numResources(); i++) {
		const Resource &resource = frame.resource(i);
		if (isForeign(resource, state_->device)) {
			auto view = foreignView(state_, frame, i);
			if (!view)
				return std::move(view).error();
			out.held[i] = std::move(*view);
		} else {
			out.held[i] = allocationOf(resource);
			if (!out.held[i] || out.held[i]->state != state_)
				return notThisBackendsFrame(kName, operation);
		}
		out.at[i] = out.held[i].get();
	}
	return out;
}

bool VulkanBackend::holds(const Frame &frame) const
{
	if (frame.numResources() == 0)
		return false;
	for (uint32_t i = 0; i < frame.numResources(); i++) {
		const Resource &resource = frame.resource(i);
		const std::shared_ptr<VulkanAllocation> ours = allocationOf(resource);
		if (ours ? ours->state != state_ : !isForeign(resource, state_->device))
			return false;
	}
	return true;
}

Result<Frame> VulkanBackend::exportFrame(const Frame &frame, ResourceKind kind)
{
	for (uint32_t i = 0; i < frame.numResources(); i++)
		if (isForeign(frame.resource(i), state_->device))
			return Error::format(
				ErrorCode::NotSupported, "frame",
				"vulkan: resource %u is the host's own %s, whose memory "
				"was not made exportable; it is exported after a copy "
				"into exportable memory.",
				i, resourceKindName(frame.resource(i).kind()));
	auto allocations = allocationsOf(frame, "exportFrame()");
	if (!allocations)
		return std::move(allocations).error();
	if (kind == ResourceKind::DmaBuf)
		return exportDmaBuf(frame, *allocations);
	if (kind != ResourceKind::VulkanMemoryFd)
		return Error::format(
			ErrorCode::NotSupported, "kind",
			"vulkan: exportFrame() gives VulkanMemoryFd resources, not %s.",
			resourceKindName(kind));
	for (uint32_t i = 0; i < frame.numResources(); i++)
		if (!(*allocations)[i]->exported)
			return Error::format(
				ErrorCode::NotSupported, "frame",
				"vulkan: resource %u has no opaque fd: it was allocated "
				"with exportable false, imported, or made on a device "
				"without VK_KHR_external_memory_fd.",
				i);
	if (Status shared = shareImages(frame, *allocations, VK_QUEUE_FAMILY_EXTERNAL); !shared)
		return std::move(shared).error();
	// The allocation's own export, the same SharedFd for every frame of it: importers key
	// their caches on its owner (GL imports each allocation once), and a consumer that gives
	// the fd to an API dups it first.
	std::array<Resource, 4> out{};
	for (uint32_t i = 0; i < frame.numResources(); i++)
		out[i] = *(*allocations)[i]->exported;
	return frameLike(frame, std::span(out.data(), frame.numResources()));
}

Result<Frame> VulkanBackend::importFrame(const Frame &frame, ImportRoute route)
{
	switch (route) {
	case ImportRoute::Direct:
		if (holds(frame))
			return frame;
		return routeNotSupported(
			kName, route, "the frame's resources are not this device's Vulkan memory.");
	case ImportRoute::OpaqueFd: return importOpaqueFd(frame);
	case ImportRoute::HostPointer: return importHostPointer(frame);
	case ImportRoute::DmaBuf: return importDmaBuf(frame);
	default: break;
	}
	return routeNotSupported(
		kName, route, "the backend imports without copies only; the planner makes copies.");
}

Result<Frame> VulkanBackend::importOpaqueFd(const Frame &frame)
{
	const VulkanDevice &s = *state_;
	if (!s.ext.memoryFd)
		return routeNotSupported(
			kName, ImportRoute::OpaqueFd,
			"the device was opened without VK_KHR_external_memory_fd.");
	std::array<Resource, 4> out{};
	std::vector<VulkanAllocation *> acquired;
	std::vector<KeepAliveRef> keep;
	for (uint32_t i = 0; i < frame.numResources(); i++) {
		const VulkanMemoryFd *memoryFd = frame.resource(i).get<VulkanMemoryFd>();
		if (!memoryFd) {
			std::string why = std::string("resource ") + std::to_string(i) + " is a " +
					  resourceKindName(frame.resource(i).kind()) +
					  ", not a VulkanMemoryFd.";
			return routeNotSupported(kName, ImportRoute::OpaqueFd, why.c_str());
		}
		const VulkanMemoryFdDesc &d = memoryFd->desc();
		for (const auto &[field, theirs, ours] :
		     { std::tuple{ "deviceUuid", d.deviceUuid, s.deviceUuid },
		       std::tuple{ "driverUuid", d.driverUuid, s.driverUuid } })
			if (theirs && *theirs != ours)
				return Error::format(
					ErrorCode::DeviceMismatch, field,
					"vulkan: the memory was exported with %s %s, but "
					"this device's is %s; an opaque fd imports only on "
					"the device and driver that made it.",
					field, formatUuid(*theirs).c_str(),
					formatUuid(ours).c_str());
		auto bound = detail::importMemoryFd(s.api, *memoryFd, state_);
		if (!bound)
			return std::move(bound).error();
		auto allocation = adoptBound(state_, std::move(*bound));
		if (!allocation)
			return std::move(allocation).error();
		VulkanAllocation &a = **allocation;
		a.source = frame.resource(i);
		if (a.image) {
			const VulkanExportDesc &x = d.exportDesc;
			Result<PlaneFormat> format =
				fromPlaneApiFormat(PlaneApi::VkFormat, x.format);
			if (!format)
				return std::move(format).error();
			a.planeFormat = *format;
			a.width = x.width;
			a.height = x.height;
			a.optimal = x.tiling == VK_IMAGE_TILING_OPTIMAL;
			// Shared with the exporter, which leaves its images in GENERAL (this
			// backend moves them there when it exports them): acquired from outside
			// before the frame is returned (acquireImported), which keeps what the
			// exporter wrote.
			a.layout = VK_IMAGE_LAYOUT_GENERAL;
			a.externalFamily = VK_QUEUE_FAMILY_EXTERNAL;
			for (uint32_t p = 0; p < frame.numPlanes(); p++)
				if (frame.plane(p).resource == i && !a.optimal &&
				    frame.plane(p).stride != a.rowPitch)
					return Error::format(
						ErrorCode::FormatMismatch, "planes",
						"vulkan: plane %u has a stride of %u bytes but the "
						"imported image's rows are %u bytes apart.",
						p, frame.plane(p).stride, a.rowPitch);
		}
		if (a.image) {
			acquired.push_back(&a);
			keep.push_back(*allocation);
		}
		auto resource = anchoredResource(user_, std::move(*allocation));
		if (!resource)
			return std::move(resource).error();
		out[i] = std::move(*resource);
	}
	if (Status taken = acquireImported(acquired, std::move(keep)); !taken)
		return std::move(taken).error();
	return frameLike(frame, std::span(out.data(), frame.numResources()));
}

Result<Frame> VulkanBackend::importHostPointer(const Frame &frame)
{
	const VulkanDevice &s = *state_;
	if (!s.ext.memoryHost || !s.hostPointerAlignment)
		return routeNotSupported(
			kName, ImportRoute::HostPointer,
			"the device was opened without VK_EXT_external_memory_host.");
	if (Status checked = checkPlaneStrides(frame, kName); !checked)
		return std::move(checked).error();
	const uint64_t align = s.hostPointerAlignment;
	// Misaligned memory is NotSupported (not InvalidArgument): the planner then copies.
	auto importBytes = [&](const CpuBytes &bytes, const Resource &source) -> Result<Resource> {
		const CpuBytesDesc &d = bytes.desc();
		if (reinterpret_cast<uintptr_t>(d.data) % align || d.size % align)
			return Error::format(
				ErrorCode::NotSupported, "alignment",
				"vulkan: no host-pointer import of %" PRIu64
				" bytes at %p: address and size must be multiples of the "
				"device's minImportedHostPointerAlignment (%" PRIu64 " bytes).",
				d.size, d.data, align);
		auto bound = detail::importHostMemory(s.api, bytes, kBufferUsage, state_);
		if (!bound)
			return std::move(bound).error();
		auto allocation = adoptBound(state_, std::move(*bound));
		if (!allocation)
			return std::move(allocation).error();
		(*allocation)->source = source;
		return anchoredResource(user_, std::move(*allocation));
	};
	std::array<Resource, 4> out{};
	if (frame.numResources() == 1 && frame.resource(0).get<CpuPlanes>()) {
		// Each plane of its own memory becomes a buffer of its own.
		const CpuPlanesDesc &planes = frame.resource(0).get<CpuPlanes>()->desc();
		FrameDesc desc = frame.desc();
		desc.numResources = planes.numPlanes;
		for (uint32_t i = 0; i < planes.numPlanes; i++) {
			const CpuPlane &plane = planes.planes[i];
			auto bytes = CpuBytes::create(
				{ plane.data, uint64_t{ plane.stride } * plane.rows, {} });
			if (!bytes)
				return std::move(bytes).error();
			auto resource = importBytes(*bytes, frame.resource(0));
			if (!resource)
				return std::move(resource).error();
			desc.resources[i] = std::move(*resource);
		}
		for (uint32_t p = 0; p < desc.numPlanes; p++)
			desc.planes[p] = PlaneView{ frame.plane(p).subresource, 0,
						    frame.plane(p).offset, frame.plane(p).stride };
		return Frame::create(std::move(desc));
	}
	for (uint32_t i = 0; i < frame.numResources(); i++) {
		const CpuBytes *bytes = frame.resource(i).get<CpuBytes>();
		if (!bytes) {
			std::string why =
				std::string("it takes CpuBytes or one CpuPlanes resource; "
					    "resource ") +
				std::to_string(i) + " is a " +
				resourceKindName(frame.resource(i).kind()) + ".";
			return routeNotSupported(kName, ImportRoute::HostPointer, why.c_str());
		}
		auto resource = importBytes(*bytes, frame.resource(i));
		if (!resource)
			return std::move(resource).error();
		out[i] = std::move(*resource);
	}
	return frameLike(frame, std::span(out.data(), frame.numResources()));
}

Status VulkanBackend::shareImages(const Frame &frame,
				  const std::array<VulkanAllocation *, 4> &allocations,
				  uint32_t family)
{
	bool any = false;
	{
		std::lock_guard lock(state_->queueMutex);
		for (uint32_t i = 0; i < frame.numResources(); i++)
			any |= allocations[i]->image &&
			       allocations[i]->externalFamily == VK_QUEUE_FAMILY_IGNORED;
	}
	if (!any)
		return {};
	std::vector<VulkanAllocation *> released;
	std::vector<KeepAliveRef> keep; // the allocations: never a DeviceUser (see Pending)
	for (uint32_t i = 0; i < frame.numResources(); i++)
		keep.push_back(allocationOf(frame.resource(i)));
	const VulkanDevice &s = *state_;
	return state_->submit(
		"vulkan: exportFrame()",
		[&](VkCommandBuffer commands) {
			std::vector<VkImageMemoryBarrier> barriers;
			for (uint32_t i = 0; i < frame.numResources(); i++) {
				VulkanAllocation *a = allocations[i];
				if (!a->image || a->externalFamily != VK_QUEUE_FAMILY_IGNORED)
					continue;
				released.push_back(a);
				barriers.push_back(generalBarrier(*a, a->layout, s.queueFamily,
								  family,
								  VK_ACCESS_TRANSFER_WRITE_BIT, 0));
			}
			if (!barriers.empty())
				s.api.CmdPipelineBarrier(commands,
							 VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
							 VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0,
							 nullptr, 0, nullptr,
							 static_cast<uint32_t>(barriers.size()),
							 barriers.data());
		},
		[&] {
			for (VulkanAllocation *a : released) {
				a->layout = VK_IMAGE_LAYOUT_GENERAL;
				a->externalFamily = family;
			}
		},
		kDefaultWaitTimeout, std::move(keep));
}

Status VulkanBackend::acquireImported(const std::vector<VulkanAllocation *> &images,
				      std::vector<KeepAliveRef> keep)
{
	if (images.empty())
		return {};
	const VulkanDevice &s = *state_;
	return state_->submit(
		"vulkan: importFrame()",
		[&](VkCommandBuffer commands) {
			std::vector<VkImageMemoryBarrier> barriers;
			for (const VulkanAllocation *a : images)
				barriers.push_back(generalBarrier(
					*a, VK_IMAGE_LAYOUT_GENERAL, a->externalFamily,
					s.queueFamily, 0,
					VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT));
			s.api.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
						 VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr,
						 0, nullptr, static_cast<uint32_t>(barriers.size()),
						 barriers.data());
		},
		[&] {
			for (VulkanAllocation *a : images) {
				a->layout = VK_IMAGE_LAYOUT_GENERAL;
				a->externalFamily = VK_QUEUE_FAMILY_IGNORED; // this family's now
			}
		},
		kDefaultWaitTimeout, std::move(keep));
}

// A binary semaphore of this device, not yet waited on (a raw carrier: an imported point's
// waiter has consumed the signal already), as a SYNC_FD any API can wait on. Exporting a
// SYNC_FD takes the pending signal out of the semaphore, so the fd replaces the point.
Result<SyncPoint> VulkanBackend::exportFence(const SyncPoint &point)
{
	const VulkanSemaphoreSync *raw = point.raw<VulkanSemaphoreSync>();
	if (!raw || raw->device != state_->device)
		return Error::format(
			ErrorCode::NotSupported, "point",
			"vulkan: only semaphores of this device export as fence fds; this is a %s point.",
			syncKindName(point.kind()));
	if (raw->kind != VulkanSemaphoreKind::Binary)
		return Error(
			ErrorCode::NotSupported, "point",
			"vulkan: a timeline semaphore has no SYNC_FD export (Vulkan allows it for binary "
			"semaphores only); it is waited on the CPU instead.");
	if (!point.isRawCarrier())
		return Error(
			ErrorCode::NotSupported, "point",
			"vulkan: the binary semaphore was imported already, and its waiter consumed the "
			"signal; export it before importing it.");
	auto fd = exportVulkanSemaphoreFd(*raw, state_->dispatch, state_->physicalDispatch,
					  VulkanSemaphoreFdType::SyncFd);
	if (!fd)
		return std::move(fd).error();
	return SyncPoint::fromFenceFd(std::move(*fd));
}

} // namespace gpuhandle
