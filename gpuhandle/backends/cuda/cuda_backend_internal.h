// Private to the CUDA backend: its device state, the anchor of its allocations, the backend class.
#pragma once

#include <gpuhandle/uuid.h>

#include "common/backend_internal.h"
#include "common/pending_work.h"
#include "cuda/cuda_driver.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuhandle::cuda {

// How long the backend's and the device state's ends wait for pending work before giving up
// on it (see drain()).
inline constexpr WaitDuration kPendingDrainBound = kDefaultWaitTimeout;

// The EGLDisplay on a CUDA device through which DMA-BUFs import (cuda_backend_egl.cpp).
struct EglInterop;

// The opened device: shared by the backend and by every allocation, so that frames may outlive
// the BackendRef (the anchor of the backend's own Context too). Releases what it made (the
// stream, the primary context) exactly once, after the pending work.
struct CudaDevice final : KeepAlive {
	CUdevice device = 0;
	CUcontext context = nullptr;
	CUstream stream = nullptr; // the host's stream, or one of ours (ownStream)
	bool ownStream = false;
	bool retainedPrimary = false;  // cuDevicePrimaryCtxRetain succeeded: release it at the end
	bool canMapHostMemory = false; // CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY
	std::optional<Uuid> uuid{};
	ContextRef hostContext{}; // the host's Context, kept alive as long as its memory is used
	// DMA-BUF imports: the EGL interop of this device, or why there is none (a sentence).
	std::shared_ptr<const EglInterop> egl{};
	std::string eglUnavailable{};

	CudaDevice() = default;
	CudaDevice(const CudaDevice &) = delete;
	CudaDevice &operator=(const CudaDevice &) = delete;
	~CudaDevice() override;

	// Keeps `keep` (what stream work whose wait timed out reads or writes: allocations, staging
	// copies) alive until `event`, recorded after that work, completes; takes over the event.
	void park(CUevent event, std::vector<KeepAliveRef> keep);
	// Frees the pending work whose event completed (or failed); never blocks on the device.
	void reclaim();
	// Reclaims until nothing is pending or `bound` has passed; false when work is left. Left
	// work stays pending: its anchors hold this state (a cycle), which is leaked rather than
	// freed under work the device may still run (stream work that never completes, such as a
	// wait on a semaphore nobody signals, would make cuMemFree block forever).
	bool drain(WaitDuration bound);

private:
	PendingWork<CUevent> pending_{};
};

// The anchor of every CudaBuffer the backend hands out: owns the device memory (or the
// registration, the external memory) and holds the device state. How the backend recognises
// its frames (dynamic_cast on the resource's anchor, then the device state).
struct CudaAllocation final : KeepAlive {
	enum class Origin : uint8_t {
		Owned = 0,          // cuMemAlloc
		External = 1,       // cuImportExternalMemory + cuExternalMemoryGetMappedBuffer
		HostRegistered = 2, // cuMemHostRegister + cuMemHostGetDevicePointer
		Borrowed = 3,       // CUDA memory of the host on this context (the Direct route)
	};

	std::shared_ptr<CudaDevice> device{};
	BudgetReservation charge{}; // an allocation's charge (Owned)
	Origin origin = Origin::Owned;
	CUdeviceptr pointer = 0;
	uint64_t size = 0;
	CUexternalMemory external = nullptr; // External
	void *host = nullptr;                // HostRegistered: the CPU address, mapped in place
	std::optional<Frame> source{};       // imports: the frame whose memory this is
	// Borrowed memory of a registration (an EGLImage registered with CUDA) that this anchor
	// keeps alive; released after the allocation, by the owner's own destructor.
	KeepAliveRef owner{};

	CudaAllocation() = default;
	CudaAllocation(const CudaAllocation &) = delete;
	CudaAllocation &operator=(const CudaAllocation &) = delete;
	~CudaAllocation() override;
};

// A CudaBuffer resource over `allocation` (its pointer and size), anchored by it.
Result<Resource> bufferResource(const std::shared_ptr<CudaAllocation> &allocation);

// Opens (once per process and device) the EGL interop of `state.device` into `state.egl`, or
// says in `state.eglUnavailable` why DMA-BUFs cannot import. Never fails the backend's open.
void attachEglInterop(CudaDevice &state);

class CudaBackend final : public Backend
{
public:
	CudaBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context,
		    std::shared_ptr<CudaDevice> state)
		: Backend(std::move(info), std::move(caps), std::move(context)),
		  state_(std::move(state))
	{
	}
	// Waits (bounded) for the work left pending by timed-out waits, so that its anchors, which
	// hold the device state, go.
	~CudaBackend() override;

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Result<Frame> allocate(const AllocateRequest &request) override;
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override;
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override;
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;
	bool holds(const Frame &frame) const override;

private:
	// The allocation behind a resource of this backend, or null.
	const CudaAllocation *allocationOf(const Resource &resource) const;
	// The allocation of every plane's resource, or WrongKind for `operation`.
	Result<std::vector<const CudaAllocation *>> planeAllocations(const Frame &frame,
								     const char *operation) const;
	Result<Frame> importDirect(const Frame &frame);
	Result<Frame> importOpaqueFd(const Frame &frame);
	Result<Frame> importHostPointer(const Frame &frame);
	// cuda_backend_egl.cpp: an EGLImage over the DMA-BUF, registered with CUDA.
	Result<Frame> importDmaBuf(const Frame &frame);
	// Makes this backend's stream wait for `point`: on the device for CUDA events and
	// external semaphores, on the CPU (bounded by `timeout`) for every other kind.
	Status streamWait(const SyncPoint &point, WaitDuration timeout);

	std::shared_ptr<CudaDevice> state_;
};

} // namespace gpuhandle::cuda
