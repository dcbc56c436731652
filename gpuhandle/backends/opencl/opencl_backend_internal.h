// Private to the OpenCL backend: its device state, the anchor marking its cl_mems, the class.
#pragma once

// clCreateCommandQueue is the one queue constructor every platform version has.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif

#include "common/backend_internal.h"
#include "common/pending_work.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <CL/cl.h>

namespace gpuhandle::opencl {

// How long the ends of the backend and of the device wait for pending commands.
inline constexpr WaitDuration kOpenClDrainBound = kDefaultWaitTimeout;

// The device a backend works on: the context, in-order queue and device it
// holds a reference to (retained from the host's context or made here). Shared
// by the backend, its Context's anchor and every resource it makes, so frames
// may outlive the BackendRef. OpenCL calls are thread safe; the pending list
// has its own lock. Its work: a marker enqueued after the commands whose wait timed out,
// which keep what they use (cl_mems, the host memory behind them) alive until it ends.
struct OpenClDevice final : KeepAlive {
	cl_context context = nullptr;
	cl_command_queue queue = nullptr;
	cl_device_id device = nullptr;
	std::string name{};
	bool imageSupport = false;
	size_t maxImageWidth = 0;
	size_t maxImageHeight = 0;
	uint64_t maxAllocBytes = 0;
	std::vector<cl_image_format> imageFormats{}; // read-write 2D formats the context offers

	OpenClDevice() = default;
	OpenClDevice(const OpenClDevice &) = delete;
	OpenClDevice &operator=(const OpenClDevice &) = delete;
	// Waits (bounded) for the queue, then releases it and the context (each
	// once).
	~OpenClDevice() override;

	bool takesImageFormat(uint32_t order, uint32_t type) const noexcept;

	// Waits until `deadline` for every command enqueued so far (a marker after
	// them, the queue flushed). On Timeout they are left to complete with `keep`
	// (what they use) alive until then; the sentence names them (`what`) and the
	// caller's `budget`. A failed command is Backend with its status.
	Status finishQueued(const Deadline &deadline, WaitDuration budget,
			    std::span<const KeepAliveRef> keep, const char *what);
	// Releases the pending commands that ended; never blocks on the device.
	void reclaim();
	// Reclaims until nothing is pending or `bound` passed; false when commands
	// are left. Their anchors hold this device (a cycle), which is then leaked
	// rather than freed under commands that may still run.
	bool drain(WaitDuration bound);

private:
	PendingWork<cl_event> pending_{};
};

// The anchor of every OpenClMem the backend makes; finding it on a resource
// (and the same device) is what makes a frame "of this backend". Members go
// after the destructor body, device last, so the cl_mem is gone before the
// context that made it.
struct OpenClAllocation final : KeepAlive {
	std::shared_ptr<OpenClDevice> device{};
	BudgetReservation charge{}; // an allocation's charge (a frame's first plane)
	cl_mem mem = nullptr;
	bool ownsMem = false;         // allocated or retained here: released in the destructor
	bool image = false;           // a 2D image (mapped with clEnqueueMapImage) not a buffer
	size_t width = 0, height = 0; // an image's size in texels
	Resource inner{};             // a host-pointer import, which owns its cl_mem
	Resource source{};            // the resource an import uses in place

	~OpenClAllocation() override
	{
		if (ownsMem)
			clReleaseMemObject(mem);
	}
};

// A cl_mem as a CPU mapping sees it (borrowed: whoever made it keeps it alive).
struct OpenClMapTarget {
	cl_mem mem = nullptr;
	bool image = false;           // a 2D image (mapped with clEnqueueMapImage) not a buffer
	size_t width = 0, height = 0; // an image's size in texels
};

// CL_DEVICE_NAME of `device` ("" when the query fails).
std::string openClDeviceName(cl_device_id device);

// An OpenClMem over `backing` (its mem, the device's queue, `size` bytes; 0 for
// images).
Result<Resource> openClResource(std::shared_ptr<OpenClAllocation> backing, uint64_t size);

class OpenClBackend final : public Backend
{
public:
	OpenClBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context,
		      std::shared_ptr<OpenClDevice> device)
		: Backend(std::move(info), std::move(caps), std::move(context)),
		  device_(std::move(device))
	{
	}
	// Waits (bounded) for the commands left pending by timed-out waits, so that
	// their anchors, which hold the device, go.
	~OpenClBackend() override;

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Result<Frame> allocate(const AllocateRequest &request) override;
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override;
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override;
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;
	bool holds(const Frame &frame) const override;

	// The backing of a resource this backend made, or null.
	const OpenClAllocation *backingOf(const Resource &resource) const noexcept;
	// What map() needs of a resource: its backing's cl_mem and shape when this backend made
	// it; else, for a cl_mem another API made in this backend's context (FFmpeg's OpenCL
	// frames, on the context the backend wraps), what OpenCL says of it; or nothing.
	std::optional<OpenClMapTarget> mapTargetOf(const Resource &resource) const;

private:
	Result<Frame> allocateImages(const AllocateRequest &request);
	Result<Frame> importDirect(const Frame &frame);
	Result<Frame> importHostPointer(const Frame &frame);

	std::shared_ptr<OpenClDevice> device_;
};

} // namespace gpuhandle::opencl
