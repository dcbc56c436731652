// Frame: a picture as 1..4 plane views over 1..4 resources, with format, size, colour and sync.
#pragma once

#include <gpuhandle/colorimetry.h>
#include <gpuhandle/export.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/resource.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <array>
#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// Where plane i lives: resource `resource` of the frame, its subresource `subresource` (the
// DMA-BUF object, the CpuPlanes plane; 0 for single-part handles), `offset` bytes in, `stride`
// bytes per row (0 when the handle is opaque, as an optimal-tiled image is).
struct PlaneView {
	uint32_t resource = 0;
	uint32_t subresource = 0;
	uint64_t offset = 0;
	uint32_t stride = 0;
	friend constexpr bool operator==(const PlaneView &, const PlaneView &) = default;
};

struct FrameDesc {
	PixelFormat format = PixelFormat::Unknown;
	uint32_t width = 0;
	uint32_t height = 0;
	Colorimetry colorimetry{};
	uint32_t numResources = 0;
	std::array<Resource, 4> resources{};
	uint32_t numPlanes = 0;
	std::array<PlaneView, 4> planes{};
	SyncPoint acquire{};   // wait for this before reading
	ReleaseGate release{}; // signal this when done reading
};

// A validated frame. Copying allocates nothing and costs one atomic per fd or anchor held by its
// resources. Thread safety: copies may be used from different threads; one Frame object is not
// written from two threads at once (setAcquire / setRelease).
class Frame
{
public:
	// Checks: size non-zero; 1..4 resources, none empty; 1..4 planes, each naming an existing
	// resource and subresource; offsets inside resources whose size is known; valid
	// colorimetry.
	static Result<Frame> create(FrameDesc desc);
	// A frame over one resource, with plane views taken from the resource's own layout:
	// DmaBuf planes, CpuPlanes planes, CudaPitched2D plane offsets; one plane otherwise.
	static Result<Frame> wrap(PixelFormat format, uint32_t width, uint32_t height,
				  Colorimetry colorimetry, Resource resource);

	PixelFormat format() const noexcept { return d_.format; }
	uint32_t width() const noexcept { return d_.width; }
	uint32_t height() const noexcept { return d_.height; }
	const Colorimetry &colorimetry() const noexcept { return d_.colorimetry; }
	uint32_t numResources() const noexcept { return d_.numResources; }
	// Valid for index < numResources().
	const Resource &resource(uint32_t index) const noexcept { return d_.resources[index]; }
	uint32_t numPlanes() const noexcept { return d_.numPlanes; }
	// Valid for index < numPlanes().
	const PlaneView &plane(uint32_t index) const noexcept { return d_.planes[index]; }
	const SyncPoint &acquire() const noexcept { return d_.acquire; }
	const ReleaseGate &release() const noexcept { return d_.release; }
	const FrameDesc &desc() const noexcept { return d_; }

	void setAcquire(SyncPoint point) noexcept { d_.acquire = std::move(point); }
	void setRelease(ReleaseGate gate) noexcept { d_.release = std::move(gate); }

private:
	explicit Frame(FrameDesc d) : d_(std::move(d)) {}
	FrameDesc d_;
};

} // namespace gpuhandle
