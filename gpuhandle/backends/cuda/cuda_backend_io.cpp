// The CUDA backend: memory lifetimes, CPU mappings (staging copies), device copies, stream waits.
#include <gpuhandle/layout.h>

#include "cuda/cuda_backend_stream.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

namespace gpuhandle::cuda {

namespace {

constexpr const char *kName = "cuda";

bool reads(MapAccess access)
{
	return (static_cast<uint8_t>(access) & static_cast<uint8_t>(MapAccess::Read)) != 0;
}

bool writes(MapAccess access)
{
	return (static_cast<uint8_t>(access) & static_cast<uint8_t>(MapAccess::Write)) != 0;
}

// The planes of a frame of this backend (the allocations come from planeAllocations()).
Result<std::array<PlaneSpan, 4>> planeSpans(const Frame &frame,
					    const std::vector<const CudaAllocation *> &allocations)
{
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "%s: %s", kName,
				     info.error().message().c_str());
	if (frame.numPlanes() != (*info)->numPlanes)
		return Error::format(ErrorCode::FormatMismatch, "planes",
				     "%s: a %s frame has %u planes, not %u.", kName,
				     pixelFormatName(frame.format()), (*info)->numPlanes,
				     frame.numPlanes());
	std::array<PlaneSpan, 4> spans{};
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const PlaneView &view = frame.plane(p);
		PlaneSpan &span = spans[p];
		span.stride = view.stride;
		span.rowBytes = (*info)->planes[p].rowBytes(frame.width());
		span.rows = (*info)->planes[p].rows(frame.height());
		if (span.stride < span.rowBytes)
			return Error::format(
				ErrorCode::FormatMismatch, "planes",
				"%s: plane %u has a stride of %u bytes, less than a row of %llu "
				"bytes.",
				kName, p, span.stride,
				static_cast<unsigned long long>(span.rowBytes));
		const std::optional<uint64_t> end =
			planeEnd(view.offset, span.stride, span.rows, span.rowBytes);
		if (!end || *end > allocations[p]->size)
			return Error::format(
				ErrorCode::OutOfRange, "planes",
				"%s: plane %u ends %s bytes into a buffer of %llu bytes.", kName, p,
				end ? std::to_string(*end).c_str() : "2^64 or more",
				static_cast<unsigned long long>(allocations[p]->size));
		span.device = allocations[p]->pointer + view.offset;
	}
	return spans;
}

} // namespace

CudaDevice::~CudaDevice()
{
	const Driver &d = driver();
	// Every parked anchor holds this state, so nothing is pending by now; whatever is (none of
	// this backend's making) is waited for, bounded, before its stream and context go.
	if (!drain(kPendingDrainBound)) {
		ContextScope scope(d, context);
		pending_.releaseAll([&](CUevent &event) { d.eventDestroy(event); });
	}
	if (ownStream && stream) {
		ContextScope scope(d, context);
		d.streamDestroy(stream);
	}
	if (retainedPrimary)
		d.primaryCtxRelease(device);
}

CudaAllocation::~CudaAllocation()
{
	const Driver &d = driver();
	ContextScope scope(d, device ? device->context : nullptr);
	switch (origin) {
	case Origin::Owned:
		if (pointer)
			d.memFree(pointer);
		break;
	case Origin::External:
		// The mapped buffer is freed with cuMemFree before its external memory goes.
		if (pointer)
			d.memFree(pointer);
		if (external)
			d.destroyExternalMemory(external);
		break;
	case Origin::HostRegistered:
		if (host)
			d.memHostUnregister(host);
		break;
	case Origin::Borrowed: break;
	}
}

CudaBackend::~CudaBackend()
{
	state_->drain(kPendingDrainBound);
}

Result<Resource> bufferResource(const std::shared_ptr<CudaAllocation> &allocation)
{
	CudaBufferDesc desc;
	desc.pointer = allocation->pointer;
	desc.size = allocation->size;
	desc.context = allocation->device->context;
	desc.deviceUuid = allocation->device->uuid;
	desc.anchor = allocation;
	Result<CudaBuffer> buffer = CudaBuffer::create(std::move(desc));
	if (!buffer.ok())
		return buffer.error();
	return Resource(std::move(*buffer));
}

const CudaAllocation *CudaBackend::allocationOf(const Resource &resource) const
{
	const CudaBuffer *buffer = resource.get<CudaBuffer>();
	if (!buffer)
		return nullptr;
	const auto *allocation = dynamic_cast<const CudaAllocation *>(buffer->desc().anchor.get());
	if (!allocation || allocation->device != state_)
		return nullptr;
	return allocation;
}

bool CudaBackend::holds(const Frame &frame) const
{
	for (uint32_t i = 0; i < frame.numResources(); ++i)
		if (!allocationOf(frame.resource(i)))
			return false;
	return frame.numResources() > 0;
}

Result<std::vector<const CudaAllocation *>>
CudaBackend::planeAllocations(const Frame &frame, const char *operation) const
{
	if (!holds(frame))
		return notThisBackendsFrame(kName, operation);
	std::vector<const CudaAllocation *> allocations;
	for (uint32_t p = 0; p < frame.numPlanes(); ++p)
		allocations.push_back(allocationOf(frame.resource(frame.plane(p).resource)));
	return allocations;
}

Status CudaBackend::streamWait(const SyncPoint &point, WaitDuration timeout)
{
	if (point.isNoop())
		return {};
	const Driver &d = driver();
	if (const CudaEventSync *event = point.raw<CudaEventSync>()) {
		// The event may belong to another context or device: the stream waits all the same.
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		if (CUresult r = d.streamWaitEvent(state_->stream,
						   static_cast<CUevent>(event->event), 0);
		    r != CUDA_SUCCESS)
			return error(d, "acquire", "cuStreamWaitEvent", r);
		return {};
	}
	const CudaExternalSemaphoreSync *semaphore = point.raw<CudaExternalSemaphoreSync>();
	if (semaphore && d.waitExternalSemaphoresAsync) {
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		auto handle = static_cast<CUexternalSemaphore>(semaphore->semaphore);
		CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS params{};
		params.params.fence.value = semaphore->value.value_or(0);
		if (CUresult r = d.waitExternalSemaphoresAsync(&handle, &params, 1, state_->stream);
		    r != CUDA_SUCCESS)
			return error(d, "acquire", "cuWaitExternalSemaphoresAsync", r);
		return {};
	}
	return point.wait(timeout);
}

Result<CpuMapping> CudaBackend::map(const Frame &frame, MapAccess access, WaitDuration timeout)
{
	Result<std::vector<const CudaAllocation *>> allocations = planeAllocations(frame, "map");
	if (!allocations.ok())
		return allocations.error();
	if (access != MapAccess::Read && access != MapAccess::Write &&
	    access != MapAccess::ReadWrite)
		return Error::format(ErrorCode::InvalidArgument, "access",
				     "%s: map access %u is not Read, Write or ReadWrite.", kName,
				     static_cast<unsigned>(access));
	state_->reclaim();
	Deadline deadline = Deadline::after(timeout);
	if (Status waited = frame.acquire().wait(timeout); !waited.ok())
		return waited.error();
	Result<std::array<PlaneSpan, 4>> spans = planeSpans(frame, *allocations);
	if (!spans.ok())
		return spans.error();
	std::array<uint8_t *, 4> pointers{};
	std::array<uint32_t, 4> strides{};
	const uint32_t numPlanes = frame.numPlanes();

	// Registered host memory is the frame's own memory: mapped in place once our queued work
	// on it (a copyFrame that timed out, say) is done.
	bool inPlace =
		std::all_of(allocations->begin(), allocations->end(), [](const CudaAllocation *a) {
			return a->origin == CudaAllocation::Origin::HostRegistered;
		});
	if (inPlace) {
		if (Status done = finishStream(*state_, deadline.remaining()); !done.ok())
			return done.error();
		for (uint32_t p = 0; p < numPlanes; ++p) {
			pointers[p] = static_cast<uint8_t *>((*allocations)[p]->host) +
				      frame.plane(p).offset;
			strides[p] = frame.plane(p).stride;
		}
		return CpuMapping::adopt(frame, access, numPlanes, pointers, strides,
					 [] { return Status{}; });
	}

	const Driver &d = driver();
	auto staging = std::make_shared<Staging>(state_);
	{
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		for (uint32_t p = 0; p < numPlanes; ++p) {
			const PlaneSpan &span = (*spans)[p];
			uint64_t bytes = uint64_t(span.stride) * (span.rows - 1) + span.rowBytes;
			void *host = nullptr;
			if (CUresult r = d.memAllocHost(&host, bytes); r != CUDA_SUCCESS) {
				Error failed = error(d, "frame", "cuMemAllocHost", r);
				return Error::format(
					failed.code(), "frame",
					"%s: no page-locked host memory for a %llu-byte staging "
					"copy of plane %u: %s",
					kName, static_cast<unsigned long long>(bytes), p,
					failed.message().c_str());
			}
			staging->planes[p] = static_cast<uint8_t *>(host);
			// A write-only mapping uploads rows the caller may not fill: zeros, not
			// stale host memory.
			if (!reads(access))
				std::memset(host, 0, bytes);
			pointers[p] = staging->planes[p];
			strides[p] = span.stride;
		}
	}
	std::vector<KeepAliveRef> anchors;
	anchorsOf(frame, anchors);
	if (reads(access))
		if (Status done = stageCopies(state_, *spans, numPlanes, staging, true,
					      deadline.remaining(), anchors);
		    !done.ok())
			return done.error();
	if (!writes(access))
		return CpuMapping::adopt(frame, access, numPlanes, pointers, strides,
					 [staging] { return Status{}; });
	// The end function uploads the staged rows and waits for the upload, so that the frame's
	// next user sees them; the backend's state stays alive through the mapping.
	std::shared_ptr<CudaDevice> state = state_;
	std::array<PlaneSpan, 4> planes = *spans;
	auto end = [staging, planes, numPlanes, state, anchors]() -> Status {
		state->reclaim();
		return stageCopies(state, planes, numPlanes, staging, false, kDefaultWaitTimeout,
				   anchors);
	};
	return CpuMapping::adopt(frame, access, numPlanes, pointers, strides, std::move(end));
}

Status CudaBackend::copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout)
{
	Result<std::vector<const CudaAllocation *>> dstAllocations =
		planeAllocations(dst, "copyFrame");
	if (!dstAllocations.ok())
		return dstAllocations.error();
	Result<std::vector<const CudaAllocation *>> srcAllocations =
		planeAllocations(src, "copyFrame");
	if (!srcAllocations.ok())
		return srcAllocations.error();
	if (dst.format() != src.format() || dst.width() != src.width() ||
	    dst.height() != src.height())
		return Error::format(
			ErrorCode::FormatMismatch, "dst",
			"%s: copyFrame copies between frames of one format and size; the source "
			"is %s %ux%u, the destination %s %ux%u.",
			kName, pixelFormatName(src.format()), src.width(), src.height(),
			pixelFormatName(dst.format()), dst.width(), dst.height());
	Result<std::array<PlaneSpan, 4>> dstSpans = planeSpans(dst, *dstAllocations);
	if (!dstSpans.ok())
		return dstSpans.error();
	Result<std::array<PlaneSpan, 4>> srcSpans = planeSpans(src, *srcAllocations);
	if (!srcSpans.ok())
		return srcSpans.error();
	state_->reclaim();
	Deadline deadline = Deadline::after(timeout);
	if (Status waited = streamWait(src.acquire(), timeout); !waited.ok())
		return waited;
	if (Status waited = streamWait(dst.acquire(), deadline.remaining()); !waited.ok())
		return waited;
	const Driver &d = driver();
	CUevent event = nullptr;
	Status queued;
	{
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		Result<CUevent> made = newEvent(d);
		if (!made.ok())
			return made.error();
		event = *made;
		for (uint32_t p = 0; p < src.numPlanes() && queued.ok(); ++p) {
			CUDA_MEMCPY2D copy{};
			copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
			copy.srcDevice = (*srcSpans)[p].device;
			copy.srcPitch = (*srcSpans)[p].stride;
			copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
			copy.dstDevice = (*dstSpans)[p].device;
			copy.dstPitch = (*dstSpans)[p].stride;
			copy.WidthInBytes = (*srcSpans)[p].rowBytes;
			copy.Height = (*srcSpans)[p].rows;
			if (CUresult r = d.memcpy2DAsync(&copy, state_->stream); r != CUDA_SUCCESS)
				queued = error(d, "frame", "cuMemcpy2DAsync (device to device)", r);
		}
	}
	// Both frames' memory lives until the copy (or the stream waits before it) completes.
	std::vector<KeepAliveRef> keep;
	anchorsOf(src, keep);
	anchorsOf(dst, keep);
	Status done = awaitStream(*state_, event, deadline.remaining(), std::move(keep));
	return queued.ok() ? done : queued;
}

} // namespace gpuhandle::cuda
