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
#include <atomic>
#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// Where plane i lives: resource `resource` of the frame, its subresource `subresource` (the
// DMA-BUF object, the CpuPlanes plane; 0 for single-part handles), `offset` bytes in, `stride`
// bytes per row (0 when the handle is opaque, as an optimal-tiled image is).
struct PlaneView {
	uint32_t resource = 0;    // index into the frame's resources
	uint32_t subresource = 0; // part of that resource
	uint64_t offset = 0;      // bytes from the start of that part
	uint32_t stride = 0;      // bytes per row; 0 when opaque
	// member-wise
	friend constexpr bool operator==(const PlaneView &, const PlaneView &) = default;
};

// What Frame::create() checks and a Frame holds: format, size and colour, the resources that
// hold the bytes, where each plane lies in them, and the fences.
struct FrameDesc {
	// Unknown when the layout is described elsewhere (planes are then not checked against a
	// format); otherwise numPlanes must be the format's plane count.
	PixelFormat format = PixelFormat::Unknown;
	uint32_t width = 0;        // pixels, non-zero
	uint32_t height = 0;       // pixels, non-zero
	Colorimetry colorimetry{}; // must pass Colorimetry::isValid()
	uint32_t numResources = 0; // 1..4
	// The first numResources are non-empty; the rest must stay empty.
	std::array<Resource, 4> resources{};
	uint32_t numPlanes = 0; // 1..4
	// Plane i of the format, in the format's plane order; the first numPlanes are used.
	std::array<PlaneView, 4> planes{};
	SyncPoint acquire{};   // wait for this before reading
	ReleaseGate release{}; // signal this when done reading
};

// A validated frame. Copies share one immutable body: copying allocates nothing and costs one
// atomic increment whatever the frame holds (a copy crossing threads moves one cache line, not
// one per fd, anchor and fence). setAcquire / setRelease on a frame whose body is shared give it
// its own body first (one allocation); on a frame that holds its body alone they write in place.
// Thread safety: copies may be used from different threads; one Frame object is not written from
// two threads at once (setAcquire / setRelease).
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

	// Shares other's body: one atomic increment, no allocation.
	Frame(const Frame &other) noexcept : body_(other.body_) { Body::addRef(body_); }
	// A frame moved from holds nothing: it reads as an empty frame (format Unknown, no
	// resources, no fences) and may be assigned to or destroyed.
	Frame(Frame &&other) noexcept : body_(other.body_) { other.body_ = &empty_; }
	// Shares other's body and lets go of this frame's.
	Frame &operator=(const Frame &other) noexcept
	{
		Body::addRef(other.body_);
		Body::release(body_);
		body_ = other.body_;
		return *this;
	}
	// Takes other's body and lets go of this frame's; other is left empty, as after a move.
	Frame &operator=(Frame &&other) noexcept
	{
		if (this != &other) {
			Body *old = body_;
			body_ = other.body_;
			other.body_ = &empty_;
			Body::release(old);
		}
		return *this;
	}
	~Frame();

	// Unknown for an empty frame, or for one whose layout is described elsewhere.
	PixelFormat format() const noexcept { return body_->d.format; }
	// Width in pixels.
	uint32_t width() const noexcept { return body_->d.width; }
	// Height in pixels.
	uint32_t height() const noexcept { return body_->d.height; }
	// All fields Unknown for an empty frame. Valid while this Frame lives and is not written.
	const Colorimetry &colorimetry() const noexcept { return body_->d.colorimetry; }
	// 1..4; 0 for an empty frame.
	uint32_t numResources() const noexcept { return body_->d.numResources; }
	// Valid for index < numResources().
	const Resource &resource(uint32_t index) const noexcept
	{
		return body_->d.resources[index];
	}
	// 1..4; 0 for an empty frame.
	uint32_t numPlanes() const noexcept { return body_->d.numPlanes; }
	// Valid for index < numPlanes().
	const PlaneView &plane(uint32_t index) const noexcept { return body_->d.planes[index]; }
	// Wait for this before reading. Valid while this Frame lives and is not written.
	const SyncPoint &acquire() const noexcept { return body_->d.acquire; }
	// Signal this when done reading. Valid while this Frame lives and is not written.
	const ReleaseGate &release() const noexcept { return body_->d.release; }
	// Valid while this Frame lives and is not written (setAcquire / setRelease).
	const FrameDesc &desc() const noexcept { return body_->d; }

	// Replaces the acquire point of this frame only; other copies keep theirs.
	void setAcquire(SyncPoint point) noexcept { ownDesc().acquire = std::move(point); }
	// Replaces the release gate of this frame only; other copies keep theirs.
	void setRelease(ReleaseGate gate) noexcept { ownDesc().release = std::move(gate); }

private:
	struct Body {
		std::atomic<uint32_t> refs{ 1 };
		FrameDesc d;
		static void addRef(Body *body) noexcept
		{
			if (body != &empty_)
				body->refs.fetch_add(1, std::memory_order_relaxed);
		}
		static void release(Body *body) noexcept
		{
			if (body != &empty_ &&
			    body->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
				destroy(body);
		}
		// Out of line (frame_body.cpp): bodies are recycled per thread.
		static Body *make(FrameDesc d);
		static void destroy(Body *body) noexcept;
	};
	// What frames moved from share; never counted, never freed (its count reads as shared,
	// so that a write gives such a frame a body of its own).
	static Body empty_;
	explicit Frame(FrameDesc d);
	// The body, made this frame's own first if another copy shares it.
	FrameDesc &ownDesc() noexcept;
	Body *body_;
};

} // namespace gpuhandle
