// The OpenCL backend's data paths: cl_mems imported in place, CPU mappings, device copies.
#include <gpuhandle/backends/opencl_memory.h>

#include "opencl/opencl_backend_internal.h"
#include "thread_block_cache.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace gpuhandle::opencl {

namespace {

constexpr const char *kName = "opencl";

// The CPU memory of one plane of a CpuPlanes, kept alive by the planes' anchor.
Result<CpuBytes> planeBytes(const CpuPlanes &planes, uint32_t sub)
{
	const CpuPlane &plane = planes.desc().planes[sub];
	return CpuBytes::create(
		{ plane.data, uint64_t(plane.stride) * plane.rows, planes.desc().anchor });
}

// The device of a context: its only one, or the first of several (contexts over
// several devices are not this backend's).
cl_device_id contextDevice(cl_context context)
{
	size_t size = 0;
	if (clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size) != CL_SUCCESS || !size)
		return nullptr;
	std::vector<cl_device_id> devices(size / sizeof(cl_device_id));
	if (clGetContextInfo(context, CL_CONTEXT_DEVICES, size, devices.data(), nullptr) !=
	    CL_SUCCESS)
		return nullptr;
	return devices[0];
}

// The anchors of up to two frames' resources: what commands on them keep alive. In place, so
// that a map or a copy per frame allocates nothing for them.
struct Anchors {
	std::array<KeepAliveRef, 8> refs{};
	uint32_t count = 0;

	explicit Anchors(const Frame &frame) { add(frame); }
	void add(const Frame &frame)
	{
		for (uint32_t i = 0; i < frame.numResources(); ++i)
			if (const OpenClMem *mem = frame.resource(i).get<OpenClMem>())
				refs[count++] = mem->desc().anchor;
	}
	std::span<const KeepAliveRef> all() const { return { refs.data(), count }; }
};

// CL_EVENT_COMMAND_EXECUTION_STATUS of `event`, polled (backing off from 20 us
// to 1 ms) until the command ends or `deadline` passes: CL_COMPLETE, a negative
// status (the command or the query failed), or a positive one (time ran out).
cl_int pollEvent(cl_event event, const Deadline &deadline)
{
	WaitDuration slice = std::chrono::microseconds(20);
	for (;;) {
		cl_int status = CL_QUEUED;
		cl_int error = clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS,
					      sizeof(status), &status, nullptr);
		if (error != CL_SUCCESS)
			return error;
		if (status <= CL_COMPLETE || deadline.expired())
			return status;
		std::this_thread::sleep_for(std::min(slice, deadline.remaining()));
		slice = std::min<WaitDuration>(slice * 2, std::chrono::milliseconds(1));
	}
}

struct MappedMem {
	cl_mem mem = nullptr;
	uint8_t *data = nullptr;
	size_t pitch = 0; // an image's row pitch as mapped
};

// Unmaps every mapped cl_mem, then waits (bounded) for the queue: after this
// the device sees what the CPU wrote. Reports the first failure.
Status unmapAll(OpenClDevice &device, const std::array<MappedMem, 4> &mapped, uint32_t count,
		WaitDuration timeout, std::span<const KeepAliveRef> keep)
{
	cl_int first = CL_SUCCESS;
	for (uint32_t i = 0; i < count; ++i) {
		cl_int error = clEnqueueUnmapMemObject(device.queue, mapped[i].mem, mapped[i].data,
						       0, nullptr, nullptr);
		if (first == CL_SUCCESS)
			first = error;
	}
	Status finished = device.finishQueued(Deadline::after(timeout), timeout, keep,
					      "ending the CPU mapping");
	if (first != CL_SUCCESS)
		return Error::format(ErrorCode::Backend, "frame",
				     "opencl: ending the CPU mapping of %u cl_mems failed with %d.",
				     count, first);
	return finished;
}

// Enqueues the map without waiting (the caller waits with its budget); the
// pointer and an image's pitch are known at once.
Result<MappedMem> mapOne(cl_command_queue queue, const OpenClMapTarget &backing, cl_map_flags flags)
{
	MappedMem mapped;
	mapped.mem = backing.mem;
	cl_int error = CL_SUCCESS;
	if (backing.image) {
		size_t origin[3] = { 0, 0, 0 };
		size_t region[3] = { backing.width, backing.height, 1 };
		mapped.data = static_cast<uint8_t *>(
			clEnqueueMapImage(queue, backing.mem, CL_FALSE, flags, origin, region,
					  &mapped.pitch, nullptr, 0, nullptr, nullptr, &error));
	} else {
		size_t size = 0;
		error = clGetMemObjectInfo(backing.mem, CL_MEM_SIZE, sizeof(size), &size, nullptr);
		if (error == CL_SUCCESS)
			mapped.data = static_cast<uint8_t *>(
				clEnqueueMapBuffer(queue, backing.mem, CL_FALSE, flags, 0, size, 0,
						   nullptr, nullptr, &error));
	}
	if (!mapped.data)
		return Error::format(ErrorCode::Backend, "frame",
				     "opencl: mapping %s %p for the CPU failed with %d.",
				     backing.image ? "image" : "buffer",
				     static_cast<void *>(backing.mem), error);
	return mapped;
}

} // namespace

Status OpenClDevice::finishQueued(const Deadline &deadline, WaitDuration budget,
				  std::span<const KeepAliveRef> keep, const char *what)
{
	cl_event marker = nullptr;
	cl_int error = clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker);
	if (error != CL_SUCCESS) {
		// A queue that takes no marker is failing: clFinish, which then returns
		// its error, is the one wait left that keeps `keep` alive long enough.
		cl_int finished = clFinish(queue);
		return Error::format(ErrorCode::Backend, "frame",
				     "opencl: %s: clEnqueueMarkerWithWaitList failed with "
				     "%d (clFinish returned %d).",
				     what, error, finished);
	}
	// A marker waits for every command enqueued before it; polling it does not
	// submit it, a flush does.
	clFlush(queue);
	cl_int status = pollEvent(marker, deadline);
	if (status > CL_COMPLETE) {
		pending_.park(marker, std::vector<KeepAliveRef>(keep.begin(), keep.end()));
		return Error::format(
			ErrorCode::Timeout, "timeout",
			"opencl: %s did not finish within %lld ms; it is left to complete, "
			"with the memory it uses kept alive until it does.",
			what,
			static_cast<long long>(
				std::chrono::duration_cast<std::chrono::milliseconds>(budget)
					.count()));
	}
	clReleaseEvent(marker);
	if (status < 0)
		return Error::format(ErrorCode::Backend, "frame",
				     "opencl: %s failed: the queue's commands ended with "
				     "status %d.",
				     what, status);
	return {};
}

namespace {

// Whether a marker's commands ended: completed, or failed (a status below CL_COMPLETE, or a
// query that fails with the queue). Never blocks.
bool markerEnded(cl_event &marker, const Deadline *)
{
	cl_int status = CL_QUEUED;
	cl_int error = clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
				      &status, nullptr);
	return error != CL_SUCCESS || status <= CL_COMPLETE;
}

void releaseMarker(cl_event &marker)
{
	clReleaseEvent(marker);
}

} // namespace

void OpenClDevice::reclaim()
{
	// What the ended commands kept goes after their markers, outside the list's lock.
	static_cast<void>(pending_.reclaim(markerEnded, releaseMarker));
}

bool OpenClDevice::drain(WaitDuration bound)
{
	return pending_.drain(bound, markerEnded, releaseMarker);
}

OpenClDevice::~OpenClDevice()
{
	// No clFinish: every command this backend enqueued has ended or is pending
	// with anchors that hold this device, so none of ours is left by now, and
	// releasing a queue with others' commands in flight is allowed (the release
	// flushes it, and it goes once they end). A final bounded drain is a guard.
	drain(kOpenClDrainBound);
	pending_.releaseAll(releaseMarker);
	if (queue)
		clReleaseCommandQueue(queue);
	if (context)
		clReleaseContext(context);
}

OpenClBackend::~OpenClBackend()
{
	device_->drain(kOpenClDrainBound);
}

Result<CpuMapping> OpenClBackend::map(const Frame &frame, MapAccess access, WaitDuration timeout)
{
	// Frames of this backend, and cl_mems others made in its context (FFmpeg's frames on the
	// context the backend wraps): both map through its queue.
	std::array<OpenClMapTarget, 4> targets{};
	const uint32_t count = frame.numResources();
	if (count == 0 || count > targets.size())
		return notThisBackendsFrame(kName, "map");
	for (uint32_t r = 0; r < count; ++r) {
		std::optional<OpenClMapTarget> target = mapTargetOf(frame.resource(r));
		if (!target)
			return notThisBackendsFrame(kName, "map");
		targets[r] = *target;
	}
	if (access != MapAccess::Read && access != MapAccess::Write &&
	    access != MapAccess::ReadWrite)
		return Error::format(
			ErrorCode::InvalidArgument, "access",
			"opencl: MapAccess %u is not Read (1), Write (2) or ReadWrite (3).",
			static_cast<unsigned>(access));
	device_->reclaim();
	Deadline deadline = Deadline::after(timeout);
	Status waited = frame.acquire().wait(timeout);
	if (!waited.ok())
		return std::move(waited).error();

	// CL_MAP_WRITE, not _INVALIDATE_REGION: a writer may leave row padding as it
	// was.
	cl_map_flags flags = 0;
	if (static_cast<int>(access) & static_cast<int>(MapAccess::Read))
		flags |= CL_MAP_READ;
	if (static_cast<int>(access) & static_cast<int>(MapAccess::Write))
		flags |= CL_MAP_WRITE;
	const Anchors anchors(frame);
	std::array<MappedMem, 4> mapped{};
	for (uint32_t r = 0; r < count; ++r) {
		Result<MappedMem> one = mapOne(device_->queue, targets[r], flags);
		if (!one.ok()) {
			(void)unmapAll(*device_, mapped, r, deadline.remaining(), anchors.all());
			return std::move(one).error();
		}
		mapped[r] = *one;
	}
	// Waited for with what is left of the budget. On failure or Timeout the
	// unmaps queue behind the maps (without a wait), so nothing stays mapped,
	// and the memory lives until they have run.
	Status ready = device_->finishQueued(deadline, timeout, anchors.all(),
					     "mapping the frame for the CPU");
	if (!ready.ok()) {
		(void)unmapAll(*device_, mapped, count, WaitDuration::zero(), anchors.all());
		return std::move(ready).error();
	}
	std::array<uint8_t *, 4> planes{};
	std::array<uint32_t, 4> strides{};
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const PlaneView &view = frame.plane(p);
		planes[p] = mapped[view.resource].data + view.offset;
		strides[p] = mapped[view.resource].pitch
				     ? static_cast<uint32_t>(mapped[view.resource].pitch)
				     : view.stride;
	}
	// The end runs once (CpuMapping's contract): its state in a block of this thread's lists.
	return CpuMapping::adopt(
		frame, access, frame.numPlanes(), planes, strides,
		detail::onceFromBlocks<Status>([device = device_, mapped, count, anchors]() {
			device->reclaim();
			return unmapAll(*device, mapped, count, kDefaultWaitTimeout, anchors.all());
		}));
}

namespace {

// Copies one plane of `rows` rows of `rowBytes` bytes (`texels` texels) between
// two cl_mems.
cl_int copyPlane(cl_command_queue queue, const OpenClAllocation &src, const PlaneView &srcView,
		 const OpenClAllocation &dst, const PlaneView &dstView, size_t texels, size_t rows,
		 size_t rowBytes)
{
	size_t zero[3] = { 0, 0, 0 };
	size_t region[3] = { texels, rows, 1 };
	if (src.image && dst.image)
		return clEnqueueCopyImage(queue, src.mem, dst.mem, zero, zero, region, 0, nullptr,
					  nullptr);
	if (!src.image && !dst.image) {
		size_t srcOrigin[3] = { srcView.offset, 0, 0 };
		size_t dstOrigin[3] = { dstView.offset, 0, 0 };
		size_t bytes[3] = { rowBytes, rows, 1 };
		return clEnqueueCopyBufferRect(queue, src.mem, dst.mem, srcOrigin, dstOrigin, bytes,
					       srcView.stride, 0, dstView.stride, 0, 0, nullptr,
					       nullptr);
	}
	// Buffer <-> image copies take tightly packed rows: one command for the plane
	// when the buffer's stride is the row, else one per row.
	const PlaneView &bufferView = src.image ? dstView : srcView;
	bool tight = bufferView.stride == rowBytes;
	size_t each[3] = { texels, tight ? rows : 1, 1 };
	for (size_t y = 0; y < (tight ? 1 : rows); ++y) {
		size_t origin[3] = { 0, y, 0 };
		size_t offset = bufferView.offset + y * bufferView.stride;
		cl_int error =
			src.image ? clEnqueueCopyImageToBuffer(queue, src.mem, dst.mem, origin,
							       each, offset, 0, nullptr, nullptr)
				  : clEnqueueCopyBufferToImage(queue, src.mem, dst.mem, offset,
							       origin, each, 0, nullptr, nullptr);
		if (error != CL_SUCCESS)
			return error;
	}
	return CL_SUCCESS;
}

} // namespace

Status OpenClBackend::copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout)
{
	if (!holds(src) || !holds(dst))
		return notThisBackendsFrame(kName, "copyFrame");
	if (dst.format() != src.format() || dst.width() != src.width() ||
	    dst.height() != src.height() || dst.numPlanes() != src.numPlanes())
		return Error::format(ErrorCode::FormatMismatch, "dst",
				     "opencl: cannot copy a %ux%u %s frame of %u planes "
				     "into a %ux%u %s frame of %u "
				     "planes.",
				     src.width(), src.height(), pixelFormatName(src.format()),
				     src.numPlanes(), dst.width(), dst.height(),
				     pixelFormatName(dst.format()), dst.numPlanes());
	Result<const PixelFormatInfo *> info = pixelFormatInfo(src.format());
	if (!info.ok())
		return std::move(info).error();
	device_->reclaim();
	Deadline deadline = Deadline::after(timeout);
	Status waited = src.acquire().wait(timeout);
	if (waited.ok())
		waited = dst.acquire().wait(deadline.remaining());
	if (!waited.ok())
		return std::move(waited).error();
	// Both frames' memory lives until the copy has run.
	Anchors keep(src);
	keep.add(dst);
	for (uint32_t p = 0; p < src.numPlanes(); ++p) {
		const PlaneInfo &plane = (*info)->planes[p];
		const PlaneView &sv = src.plane(p);
		const PlaneView &dv = dst.plane(p);
		cl_int error = copyPlane(device_->queue, *backingOf(src.resource(sv.resource)), sv,
					 *backingOf(dst.resource(dv.resource)), dv,
					 plane.rowTexels(src.width()), plane.rows(src.height()),
					 plane.rowBytes(src.width()));
		if (error != CL_SUCCESS) {
			// The planes enqueued before still run: waited for all the same.
			(void)device_->finishQueued(deadline, timeout, keep.all(),
						    "the copy's earlier planes");
			return Error::format(ErrorCode::Backend, "src",
					     "opencl: copying plane %u of a %ux%u %s frame on "
					     "the device failed with %d.",
					     p, src.width(), src.height(),
					     pixelFormatName(src.format()), error);
		}
	}
	return device_->finishQueued(deadline, timeout, keep.all(), "the copy on the device");
}

Result<Frame> OpenClBackend::importDirect(const Frame &frame)
{
	if (holds(frame))
		return frame;
	std::array<Resource, 4> resources{};
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const OpenClMem *mem = frame.resource(i).get<OpenClMem>();
		if (!mem) {
			std::string why = "resource " + std::to_string(i) + " of the frame is a " +
					  resourceKindName(frame.resource(i).kind()) +
					  ", not an OpenClMem.";
			return routeNotSupported(kName, ImportRoute::Direct, why.c_str());
		}
		auto clMem = static_cast<cl_mem>(mem->desc().mem);
		cl_context memContext = nullptr;
		cl_mem_object_type type = 0;
		cl_int error = clGetMemObjectInfo(clMem, CL_MEM_CONTEXT, sizeof(memContext),
						  &memContext, nullptr);
		if (error == CL_SUCCESS)
			error = clGetMemObjectInfo(clMem, CL_MEM_TYPE, sizeof(type), &type,
						   nullptr);
		if (error != CL_SUCCESS)
			return Error::format(
				ErrorCode::Backend, "frame",
				"opencl: resource %u's cl_mem %p is not a valid cl_mem "
				"(clGetMemObjectInfo returned %d).",
				i, mem->desc().mem, error);
		if (memContext != device_->context) {
			cl_device_id memDevice = contextDevice(memContext);
			if (memDevice != device_->device)
				return Error::format(
					ErrorCode::DeviceMismatch, "frame",
					"opencl: resource %u's cl_mem %p lives on device %p (%s), not on "
					"this backend's device %p (%s).",
					i, mem->desc().mem, static_cast<void *>(memDevice),
					openClDeviceName(memDevice).c_str(),
					static_cast<void *>(device_->device),
					device_->name.c_str());
			std::string why =
				"resource " + std::to_string(i) +
				"'s cl_mem belongs to another cl_context of the same device, and "
				"OpenCL does not share memory objects between contexts.";
			return routeNotSupported(kName, ImportRoute::Direct, why.c_str());
		}
		auto backing = std::make_shared<OpenClAllocation>();
		backing->device = device_;
		backing->mem = clMem;
		backing->source = frame.resource(i);
		backing->image = type != CL_MEM_OBJECT_BUFFER;
		if (backing->image) {
			clGetImageInfo(clMem, CL_IMAGE_WIDTH, sizeof(backing->width),
				       &backing->width, nullptr);
			clGetImageInfo(clMem, CL_IMAGE_HEIGHT, sizeof(backing->height),
				       &backing->height, nullptr);
		}
		if ((error = clRetainMemObject(clMem)) != CL_SUCCESS)
			return Error::format(ErrorCode::Backend, "frame",
					     "opencl: clRetainMemObject(%p) failed with %d.",
					     mem->desc().mem, error);
		backing->ownsMem = true;
		Result<Resource> resource = openClResource(std::move(backing), mem->desc().size);
		if (!resource.ok())
			return std::move(resource).error();
		resources[i] = std::move(*resource);
	}
	return frameLike(frame, std::span<const Resource>(resources.data(), frame.numResources()));
}

Result<Frame> OpenClBackend::importHostPointer(const Frame &frame)
{
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		ResourceKind kind = frame.resource(i).kind();
		if (kind != ResourceKind::CpuBytes && kind != ResourceKind::CpuPlanes) {
			std::string why = "resource " + std::to_string(i) + " of the frame is a " +
					  resourceKindName(kind) +
					  "; a host-pointer import takes CpuBytes or CpuPlanes.";
			return routeNotSupported(kName, ImportRoute::HostPointer, why.c_str());
		}
	}
	Status strides = checkPlaneStrides(frame, kName);
	if (!strides.ok())
		return std::move(strides).error();
	// One cl_mem per CPU memory block: a CpuBytes resource, or one plane of a
	// CpuPlanes.
	FrameDesc desc = frame.desc();
	desc.resources = {};
	desc.numResources = 0;
	// (resource, subresource) of each new one.
	std::array<std::pair<uint32_t, uint32_t>, 4> made{};
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const PlaneView &view = frame.plane(p);
		const Resource &resource = frame.resource(view.resource);
		uint32_t sub = resource.kind() == ResourceKind::CpuBytes ? 0 : view.subresource;
		auto key = std::make_pair(view.resource, sub);
		auto found = std::find(made.begin(), made.begin() + desc.numResources, key);
		uint32_t index = static_cast<uint32_t>(found - made.begin());
		desc.planes[p].resource = index;
		desc.planes[p].subresource = 0;
		if (index < desc.numResources)
			continue;
		Result<CpuBytes> bytes = resource.get<CpuBytes>()
						 ? Result<CpuBytes>(*resource.get<CpuBytes>())
						 : planeBytes(*resource.get<CpuPlanes>(), sub);
		if (!bytes.ok())
			return std::move(bytes).error();
		Result<Resource> inner = importHostMemoryIntoOpenCl(
			*bytes, device_->context, device_->queue, MapAccess::ReadWrite);
		if (!inner.ok())
			return std::move(inner).error();
		auto backing = std::make_shared<OpenClAllocation>();
		backing->device = device_;
		backing->mem = static_cast<cl_mem>(inner->get<OpenClMem>()->desc().mem);
		backing->inner = std::move(*inner);
		backing->source = resource;
		Result<Resource> wrapped = openClResource(std::move(backing), bytes->desc().size);
		if (!wrapped.ok())
			return std::move(wrapped).error();
		made[index] = key;
		desc.resources[index] = std::move(*wrapped);
		desc.numResources = index + 1;
	}
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle::opencl
