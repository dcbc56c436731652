// Private to the VA-API backend: its display state, the anchor of its surfaces, the backend class.
#pragma once

#include <gpuhandle/fd.h>

#include "common/backend_internal.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <va/va.h>

namespace gpuhandle::vaapi {

inline constexpr const char *kName = "vaapi";

// The opened display: shared by the backend and every surface, so that frames may outlive the
// BackendRef (and the anchor of the backend's own Context). Terminates what it opened, once.
struct VaApiDevice final : KeepAlive {
	VADisplay display = nullptr;
	UniqueFd renderNode{};    // our own display's DRM render node (closed after vaTerminate)
	bool ownDisplay = false;  // vaInitialize succeeded on our display: vaTerminate it
	ContextRef hostContext{}; // the host's Context, kept alive while its display is used
	std::vector<uint32_t> fourccs{}; // surface formats the driver lists (empty: not told)
	bool canCopy = false;            // vaCopy is built and the driver offers it

	// The last error libva reported on our own display (its error callback), for messages.
	std::mutex messageMutex{};
	std::string lastMessage{};

	VaApiDevice() = default;
	VaApiDevice(const VaApiDevice &) = delete;
	VaApiDevice &operator=(const VaApiDevice &) = delete;
	~VaApiDevice() override;
};

// The anchor of every VaSurface the backend hands out: destroys the surfaces it created (not
// the host's, which it borrows) and holds the display state and, for imports, the source frame.
struct VaApiAllocation final : KeepAlive {
	std::shared_ptr<VaApiDevice> display{};
	BudgetReservation charge{}; // an allocation's charge
	VASurfaceID id = VA_INVALID_SURFACE;
	bool owned = true; // created by vaCreateSurfaces here: destroyed with the anchor
	std::optional<Frame> source{}; // imports: the frame (DMA-BUF, host surface) it came from

	VaApiAllocation() = default;
	VaApiAllocation(const VaApiAllocation &) = delete;
	VaApiAllocation &operator=(const VaApiAllocation &) = delete;
	~VaApiAllocation() override;
};

// Waits for the surface's pending work, bounded by `timeout`: vaSyncSurface2 (VA-API 1.9) where
// the driver has it, else vaQuerySurfaceStatus polled. Only a driver with neither leaves the
// unbounded vaSyncSurface. Timeout on expiry.
Status syncSurface(VADisplay display, VASurfaceID surface, WaitDuration timeout);

// "<call> failed: <vaErrorStr> (status)." as a Backend error naming `field`.
Error vaError(const char *field, const char *call, VAStatus status);

// A frame of `like`'s format, size, colour and sync over one VA surface: every plane is in
// resource 0 with no CPU stride (a surface is opaque until mapped or exported).
Result<Frame> frameOverSurface(const FrameDesc &like,
			       const std::shared_ptr<VaApiAllocation> &surface);

class VaApiBackend final : public Backend
{
public:
	VaApiBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context,
		     std::shared_ptr<VaApiDevice> state)
		: Backend(std::move(info), std::move(caps), std::move(context)),
		  state_(std::move(state))
	{
	}

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Result<Frame> allocate(const AllocateRequest &request) override;
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override;
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override;
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;
	bool holds(const Frame &frame) const override;

private:
	// The surface of a frame of this backend, or null.
	const VaApiAllocation *surfaceOf(const Frame &frame) const;
	Result<Frame> importDirect(const Frame &frame);
	Result<Frame> importDmaBuf(const Frame &frame);

	std::shared_ptr<VaApiDevice> state_;
};

} // namespace gpuhandle::vaapi
