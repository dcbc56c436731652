// The Vulkan backend's queue and the work on it: submissions bounded by a timeout, CPU mapping
// (optimal images and the host's own memory through a staging buffer) and device copies between
// buffers and images, the backend's or the host's.
#include "vulkan_backend_internal.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>

namespace gpuhandle {

using namespace vulkan;

namespace vulkan {

static uint64_t remainingNs(const Deadline &deadline)
{
	return deadline.isNever() ? UINT64_MAX
				  : static_cast<uint64_t>(deadline.remaining().count());
}

std::vector<KeepAliveRef> VulkanDevice::reclaimLocked(const Deadline *deadline)
{
	const auto ended = [this](PendingSubmit &p, const Deadline *until) {
		VkResult r = api.GetFenceStatus(device, p.fence);
		// A driver may wake before the deadline with VK_TIMEOUT: wait out the whole budget.
		while (r == VK_NOT_READY && until && !until->expired())
			if ((r = api.WaitForFences(device, 1, &p.fence, VK_TRUE,
						   remainingNs(*until))) == VK_TIMEOUT)
				r = VK_NOT_READY;
		// Signalled, or the device is lost (its commands then never run).
		return r != VK_NOT_READY;
	};
	const auto release = [this](PendingSubmit &p) {
		api.FreeCommandBuffers(device, pool, 1, &p.commands);
		api.DestroyFence(device, p.fence, nullptr);
	};
	return pending_.reclaim(ended, release, deadline);
}

bool VulkanDevice::drain(WaitDuration budget)
{
	const Deadline deadline = Deadline::after(budget);
	std::vector<KeepAliveRef> released; // destroyed after the lock is let go
	size_t left = 0;
	{
		std::lock_guard lock(queueMutex);
		if (!pool)
			return true;
		released = reclaimLocked(&deadline);
		left = pending_.size();
	}
	if (left)
		std::fprintf(
			stderr,
			"gpuhandle: vulkan: %zu submission(s) did not finish within %lld ms; "
			"their command buffers, the memory they use and the device are leaked on "
			"purpose rather than waited on without end.\n",
			left,
			static_cast<long long>(
				std::chrono::duration_cast<std::chrono::milliseconds>(budget)
					.count()));
	return left == 0;
}

Status VulkanDevice::submit(const char *name, const std::function<void(VkCommandBuffer)> &record,
			    const std::function<void()> &submitted, WaitDuration timeout,
			    std::vector<KeepAliveRef> keep)
{
	VkCommandBuffer commands = VK_NULL_HANDLE;
	VkFence fence = VK_NULL_HANDLE;
	std::vector<KeepAliveRef> released; // what finished submissions kept, let go unlocked
	{
		std::lock_guard lock(queueMutex);
		released = reclaimLocked(nullptr);
		VkCommandBufferAllocateInfo info{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
						  nullptr, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY,
						  1 };
		if (VkResult r = api.AllocateCommandBuffers(device, &info, &commands);
		    r != VK_SUCCESS)
			return detail::vulkanError(name, "vkAllocateCommandBuffers", r);
		VkCommandBufferBeginInfo begin{ VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
						nullptr,
						VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
						nullptr };
		VkResult r = api.BeginCommandBuffer(commands, &begin);
		if (r == VK_SUCCESS) {
			record(commands);
			// What the copies wrote is for the host to read once the fence signals.
			VkMemoryBarrier toHost{ VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
						VK_ACCESS_TRANSFER_WRITE_BIT,
						VK_ACCESS_HOST_READ_BIT };
			api.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
					       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0,
					       nullptr, 0, nullptr);
			r = api.EndCommandBuffer(commands);
		}
		VkFenceCreateInfo fenceInfo{ VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0 };
		if (r == VK_SUCCESS)
			r = api.CreateFence(device, &fenceInfo, nullptr, &fence);
		VkSubmitInfo submit{};
		submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submit.commandBufferCount = 1;
		submit.pCommandBuffers = &commands;
		if (r == VK_SUCCESS) {
			if (queueLock)
				queueLock(true);
			r = api.QueueSubmit(queue, 1, &submit, fence);
			if (queueLock)
				queueLock(false);
		}
		if (r != VK_SUCCESS) {
			if (fence)
				api.DestroyFence(device, fence, nullptr);
			api.FreeCommandBuffers(device, pool, 1, &commands);
			return detail::vulkanError(name, "recording or submitting the copy", r);
		}
		if (submitted)
			submitted();
	}
	// A driver may wake before the deadline with VK_TIMEOUT: wait out the whole budget.
	Deadline deadline = Deadline::after(timeout);
	VkResult r = VK_TIMEOUT;
	while (r == VK_TIMEOUT && !deadline.expired())
		r = api.WaitForFences(device, 1, &fence, VK_TRUE, remainingNs(deadline));
	std::lock_guard lock(queueMutex);
	if (r == VK_SUCCESS) {
		api.FreeCommandBuffers(device, pool, 1, &commands);
		api.DestroyFence(device, fence, nullptr);
		return {};
	}
	// Still running (or lost): what it uses lives until its fence signals.
	pending_.park({ commands, fence }, std::move(keep));
	if (r == VK_TIMEOUT)
		return waitTimeoutError(BackendKind::Vulkan, timeout);
	return detail::vulkanError(name, "vkWaitForFences", r);
}

VkImageMemoryBarrier generalBarrier(const VulkanAllocation &a, VkImageLayout from,
				    uint32_t srcFamily, uint32_t dstFamily, VkAccessFlags srcAccess,
				    VkAccessFlags dstAccess)
{
	VkImageMemoryBarrier barrier{};
	barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
	barrier.srcAccessMask = srcAccess;
	barrier.dstAccessMask = dstAccess;
	barrier.oldLayout = from;
	barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
	barrier.srcQueueFamilyIndex = srcFamily;
	barrier.dstQueueFamilyIndex = dstFamily;
	barrier.image = a.image;
	barrier.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
	return barrier;
}

} // namespace vulkan

namespace {

constexpr VkAccessFlags kTransferAccess = VK_ACCESS_TRANSFER_READ_BIT |
					  VK_ACCESS_TRANSFER_WRITE_BIT;

// The images one command buffer uses, all in GENERAL (transfers and host access both allow it).
// The first use in the buffer moves an image there from its recorded layout (a linear image is
// in GENERAL from its allocation on, so host-written bytes stay), or acquires a shared image from
// its external family; the end releases shared images back. Recorded layouts change only once the
// commands were submitted. Used under queueMutex only.
class ImageUses
{
public:
	explicit ImageUses(const VulkanDevice &s) : s_(s) {}

	void use(VkCommandBuffer commands, VulkanAllocation &a)
	{
		if (std::find(images_.begin(), images_.end(), &a) != images_.end())
			return;
		images_.push_back(&a);
		if (a.externalFamily != VK_QUEUE_FAMILY_IGNORED) {
			// The other side leaves a shared image in GENERAL; acquiring it keeps its
			// bytes.
			VkImageMemoryBarrier acquire =
				generalBarrier(a, VK_IMAGE_LAYOUT_GENERAL, a.externalFamily,
					       s_.queueFamily, 0, kTransferAccess);
			s_.api.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
						  VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
						  nullptr, 1, &acquire);
		} else if (a.layout != VK_IMAGE_LAYOUT_GENERAL) {
			VkImageMemoryBarrier barrier = generalBarrier(
				a, a.layout, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED,
				VK_ACCESS_HOST_WRITE_BIT, kTransferAccess);
			s_.api.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_HOST_BIT,
						  VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
						  nullptr, 1, &barrier);
		}
	}

	void finish(VkCommandBuffer commands) const
	{
		std::vector<VkImageMemoryBarrier> releases;
		for (const VulkanAllocation *a : images_)
			if (a->externalFamily != VK_QUEUE_FAMILY_IGNORED)
				releases.push_back(generalBarrier(*a, VK_IMAGE_LAYOUT_GENERAL,
								  s_.queueFamily, a->externalFamily,
								  kTransferAccess, 0));
		if (!releases.empty())
			s_.api.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT,
						  VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0,
						  nullptr, 0, nullptr,
						  static_cast<uint32_t>(releases.size()),
						  releases.data());
	}

	void submitted() const
	{
		for (VulkanAllocation *a : images_)
			a->layout = VK_IMAGE_LAYOUT_GENERAL;
	}

private:
	const VulkanDevice &s_;
	std::vector<VulkanAllocation *> images_;
};

// One plane's copy between two buffers, images, or a buffer and an image.
struct PlaneCopy {
	VulkanAllocation *src = nullptr;
	VulkanAllocation *dst = nullptr;
	PlaneView srcView{};
	PlaneView dstView{};
	uint32_t texels = 0; // per row
	uint32_t rows = 0;
	uint32_t texelBytes = 0;
};

// NotSupported when a buffer side's stride or offset is not in whole texels (a copy between a
// buffer and an image counts rows in texels).
Status checkTexelAligned(const PlaneCopy &c, uint32_t plane)
{
	for (const auto &[a, view] :
	     { std::pair{ c.src, c.srcView }, std::pair{ c.dst, c.dstView } })
		if (a->buffer && (c.src->image || c.dst->image) &&
		    (view.stride % c.texelBytes || view.offset % c.texelBytes))
			return Error::format(
				ErrorCode::NotSupported, "planes",
				"vulkan: plane %u's stride (%u) or offset (%" PRIu64
				") is not a multiple of its %u-byte texel, which a copy "
				"between a buffer and an image needs.",
				plane, view.stride, view.offset, c.texelBytes);
	return {};
}

// The subresource of `a` that `view` names: the whole colour aspect of a single-plane image,
// VK_IMAGE_ASPECT_PLANE_i_BIT of a multi-planar one.
VkImageSubresourceLayers imageLayers(const VulkanAllocation &a, const PlaneView &view)
{
	return { vulkanPlaneAspect(a.imagePlanes, view.subresource), 0, 0, 1 };
}

void recordCopy(const VulkanDevice &s, VkCommandBuffer commands, const PlaneCopy &c,
		ImageUses &uses)
{
	const VkExtent3D extent{ c.texels, c.rows, 1 };
	const uint64_t rowBytes = uint64_t{ c.texels } * c.texelBytes;
	if (c.src->buffer && c.dst->buffer) {
		std::vector<VkBufferCopy> regions;
		if (c.srcView.stride == c.dstView.stride)
			regions.push_back(
				{ c.srcView.offset, c.dstView.offset,
				  uint64_t{ c.srcView.stride } * (c.rows - 1) + rowBytes });
		else
			for (uint32_t y = 0; y < c.rows; y++)
				regions.push_back(
					{ c.srcView.offset + uint64_t{ c.srcView.stride } * y,
					  c.dstView.offset + uint64_t{ c.dstView.stride } * y,
					  rowBytes });
		s.api.CmdCopyBuffer(commands, c.src->buffer, c.dst->buffer,
				    static_cast<uint32_t>(regions.size()), regions.data());
		return;
	}
	if (c.src->image)
		uses.use(commands, *c.src);
	if (c.dst->image)
		uses.use(commands, *c.dst);
	if (c.src->image && c.dst->image) {
		VkImageCopy region{ imageLayers(*c.src, c.srcView),
				    { 0, 0, 0 },
				    imageLayers(*c.dst, c.dstView),
				    { 0, 0, 0 },
				    extent };
		s.api.CmdCopyImage(commands, c.src->image, VK_IMAGE_LAYOUT_GENERAL, c.dst->image,
				   VK_IMAGE_LAYOUT_GENERAL, 1, &region);
		return;
	}
	const PlaneView &view = c.src->buffer ? c.srcView : c.dstView;
	const VkImageSubresourceLayers layers = c.src->buffer ? imageLayers(*c.dst, c.dstView)
							      : imageLayers(*c.src, c.srcView);
	VkBufferImageCopy region{ view.offset, view.stride / c.texelBytes, 0, layers, { 0, 0, 0 },
				  extent };
	if (c.src->buffer)
		s.api.CmdCopyBufferToImage(commands, c.src->buffer, c.dst->image,
					   VK_IMAGE_LAYOUT_GENERAL, 1, &region);
	else
		s.api.CmdCopyImageToBuffer(commands, c.src->image, VK_IMAGE_LAYOUT_GENERAL,
					   c.dst->buffer, 1, &region);
}

// Around copies of a host's own images and buffers, which carry no semaphore: what the host
// submitted before (on this queue) has finished and is visible to the copies, and what they
// wrote is visible to whatever the host submits after. Its images stay in GENERAL.
void hostBarrier(const VulkanDevice &s, VkCommandBuffer commands, bool before)
{
	const VkMemoryBarrier barrier{
		VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
		before ? VK_ACCESS_MEMORY_WRITE_BIT : VK_ACCESS_TRANSFER_WRITE_BIT,
		before ? kTransferAccess : VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT
	};
	s.api.CmdPipelineBarrier(
		commands,
		before ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT : VK_PIPELINE_STAGE_TRANSFER_BIT,
		before ? VK_PIPELINE_STAGE_TRANSFER_BIT : VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1,
		&barrier, 0, nullptr, 0, nullptr);
}

Status submitCopies(VulkanDevice &s, const char *name, const std::vector<PlaneCopy> &copies,
		    WaitDuration timeout, std::vector<KeepAliveRef> keep)
{
	if (copies.empty())
		return {};
	const bool foreign = std::any_of(copies.begin(), copies.end(), [](const PlaneCopy &c) {
		return c.src->foreign || c.dst->foreign;
	});
	ImageUses uses(s);
	return s.submit(
		name,
		[&](VkCommandBuffer commands) {
			if (foreign)
				hostBarrier(s, commands, true);
			for (const PlaneCopy &c : copies)
				recordCopy(s, commands, c, uses);
			uses.finish(commands);
			if (foreign)
				hostBarrier(s, commands, false);
		},
		[&] { uses.submitted(); }, timeout, std::move(keep));
}

} // namespace

Result<CpuMapping> VulkanBackend::map(const Frame &frame, MapAccess access, WaitDuration timeout)
{
	auto allocations = accessOf(frame, "map()");
	if (!allocations)
		return std::move(allocations).error();
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info)
		return std::move(info).error();
	if (Status waited = frame.acquire().wait(timeout); !waited)
		return std::move(waited).error();
	std::array<uint8_t *, 4> planes{};
	std::array<uint32_t, 4> strides{};
	// Optimal planes and the host's (foreign) ones, through one staging buffer.
	std::vector<PlaneCopy> staged;
	uint64_t stagingSize = 0;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		VulkanAllocation *a = allocations->at[view.resource];
		if ((a->image && a->optimal) || a->foreign) {
			const PlaneInfo &plane = (*info)->planes[p];
			PlaneCopy c;
			c.src = a;
			c.srcView = a->buffer ? view : PlaneView{ 0, view.subresource, 0, 0 };
			// A single-plane image's own extent; a buffer's or an aspect's from the
			// frame.
			const bool whole = a->image && a->imagePlanes == 1;
			c.texels = whole ? a->width : plane.rowTexels(frame.width());
			c.rows = whole ? a->height : plane.rows(frame.height());
			c.texelBytes = bytesPerTexel(whole ? a->planeFormat : plane.format);
			c.dstView = PlaneView{ 0, 0, stagingSize, c.texels * c.texelBytes };
			stagingSize += (uint64_t{ c.dstView.stride } * c.rows + 15) &
				       ~uint64_t{ 15 };
			strides[p] = c.dstView.stride;
			staged.push_back(c);
			continue;
		}
		Result<uint8_t *> base = a->mapped("map()");
		if (!base)
			return std::move(base).error();
		if (!state_->hasMemoryFlags(a->memoryTypeIndex,
					    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
			VkMappedMemoryRange range{ VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, nullptr,
						   a->memory, 0, VK_WHOLE_SIZE };
			state_->api.InvalidateMappedMemoryRanges(state_->device, 1, &range);
		}
		planes[p] = *base + a->imageOffset + view.offset;
		strides[p] = view.stride;
	}

	// Flushes what the CPU wrote into non-coherent memory mapped in place.
	auto flush = [state = state_, allocations = *allocations, n = frame.numResources(),
		      access]() -> Status {
		if (access == MapAccess::Read)
			return {};
		for (uint32_t i = 0; i < n; i++)
			if (const VulkanAllocation *a = allocations.at[i];
			    !a->optimal && !a->foreign &&
			    !state->hasMemoryFlags(a->memoryTypeIndex,
						   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) {
				VkMappedMemoryRange range{ VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
							   nullptr, a->memory, 0, VK_WHOLE_SIZE };
				state->api.FlushMappedMemoryRanges(state->device, 1, &range);
			}
		return {};
	};
	if (staged.empty()) {
		// Reads, and writes into coherent memory, end with nothing to do: no callback (and
		// no heap block for one) per mapping.
		bool flushes = false;
		for (uint32_t i = 0; access != MapAccess::Read && i < frame.numResources(); i++)
			flushes = flushes ||
				  !state_->hasMemoryFlags(allocations->at[i]->memoryTypeIndex,
							  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
		return CpuMapping::adopt(frame, access, frame.numPlanes(), planes, strides,
					 flushes ? std::function<Status()>(flush) : nullptr);
	}

	VulkanExportDesc x;
	x.allocationSize = stagingSize;
	x.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	auto staging = createObject(*state_, state_, x, kHostMemory, nullptr);
	if (!staging)
		return std::move(staging).error();
	auto stagingBuffer = VulkanBuffer::create({ reinterpret_cast<uint64_t>((*staging)->buffer),
						    state_->device,
						    stagingSize,
						    {},
						    *staging });
	if (!stagingBuffer)
		return std::move(stagingBuffer).error();
	auto stagingAllocation = adoptBound(
		state_, VulkanBoundMemory{ std::move(*stagingBuffer),
					   reinterpret_cast<uint64_t>((*staging)->memory),
					   x.allocationSize, x.memoryTypeIndex });
	if (!stagingAllocation)
		return std::move(stagingAllocation).error();
	std::shared_ptr<VulkanAllocation> buffer = std::move(*stagingAllocation);
	Result<uint8_t *> base = buffer->mapped("map()");
	if (!base)
		return std::move(base).error();
	std::vector<KeepAliveRef> keep{ buffer };
	allocations->keep(frame.numResources(), keep);
	for (PlaneCopy &c : staged)
		c.dst = buffer.get();
	if (access != MapAccess::Write)
		if (Status s = submitCopies(*state_, "vulkan: map()", staged, timeout, keep); !s)
			return std::move(s).error();
	uint32_t next = 0;
	for (uint32_t p = 0; p < frame.numPlanes(); p++)
		if (!planes[p])
			planes[p] = *base + staged[next++].dstView.offset;
	if (access == MapAccess::Read)
		return CpuMapping::adopt(frame, access, frame.numPlanes(), planes, strides,
					 [buffer = std::move(buffer)]() -> Status { return {}; });
	// Writes go back to the images when the mapping ends, bounded by the same timeout.
	std::vector<PlaneCopy> back;
	for (const PlaneCopy &c : staged)
		back.push_back({ buffer.get(), c.src, c.dstView, c.srcView, c.texels, c.rows,
				 c.texelBytes });
	// The mapping is a user of the state: it may submit after the backend is gone.
	auto end = [user = user_, flush, back = std::move(back), keep = std::move(keep),
		    timeout]() -> Status {
		if (Status s = flush(); !s)
			return s;
		return submitCopies(*user->state, "vulkan: map() end", back, timeout, keep);
	};
	return CpuMapping::adopt(frame, access, frame.numPlanes(), planes, strides, std::move(end));
}

Status VulkanBackend::copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout)
{
	auto to = accessOf(dst, "copyFrame()");
	if (!to)
		return std::move(to).error();
	auto from = accessOf(src, "copyFrame()");
	if (!from)
		return std::move(from).error();
	if (dst.format() != src.format() || dst.width() != src.width() ||
	    dst.height() != src.height() || dst.numPlanes() != src.numPlanes())
		return Error::format(
			ErrorCode::FormatMismatch, "dst",
			"vulkan: copyFrame() copies between frames of one format and size, "
			"not a %ux%u %s into a %ux%u %s.",
			src.width(), src.height(), pixelFormatName(src.format()), dst.width(),
			dst.height(), pixelFormatName(dst.format()));
	Result<const PixelFormatInfo *> info = pixelFormatInfo(src.format());
	if (!info)
		return std::move(info).error();
	if ((*info)->numPlanes != src.numPlanes())
		return Error::format(ErrorCode::FormatMismatch, "src",
				     "vulkan: a %s frame has %u planes, not %u.",
				     pixelFormatName(src.format()), (*info)->numPlanes,
				     src.numPlanes());
	if (Status s = src.acquire().wait(timeout); !s)
		return s;
	if (Status s = dst.acquire().wait(timeout); !s)
		return s;
	std::vector<PlaneCopy> copies;
	for (uint32_t p = 0; p < src.numPlanes(); p++) {
		const PlaneInfo &plane = (*info)->planes[p];
		PlaneCopy c{ from->at[src.plane(p).resource],
			     to->at[dst.plane(p).resource],
			     src.plane(p),
			     dst.plane(p),
			     plane.rowTexels(src.width()),
			     plane.rows(src.height()),
			     bytesPerTexel(plane.format) };
		if (Status s = checkTexelAligned(c, p); !s)
			return s;
		copies.push_back(c);
	}
	std::vector<KeepAliveRef> keep;
	from->keep(src.numResources(), keep);
	to->keep(dst.numResources(), keep);
	return submitCopies(*state_, "vulkan: copyFrame()", copies, timeout, std::move(keep));
}

} // namespace gpuhandle
