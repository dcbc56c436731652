// VA-API resource: a VASurfaceID on its VADisplay.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// A borrowed VA surface. Surface id 0 is a legal VASurfaceID and is accepted; VA_INVALID_SURFACE
// (0xffffffff) is refused. The producer must not destroy or recycle the surface while any copy
// lives (a recycled id silently yields another frame's pixels): hold it through `anchor`.
struct VaSurfaceDesc {
	uint32_t surface = 0;    // VASurfaceID
	void *display = nullptr; // VADisplay
	KeepAliveRef anchor{};   // keeps the surface from being destroyed or recycled; may be null
};
// A checked VaSurfaceDesc.
class VaSurface : public Validated<VaSurfaceDesc>
{
public:
	// Checks desc: InvalidArgument for VA_INVALID_SURFACE, NullHandle for a null display.
	static Result<VaSurface> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
