// Factory of VaSurface: any id but VA_INVALID_SURFACE, on a non-null display.
#include <gpuhandle/vaapi_resources.h>

#include "validation.h"

namespace gpuhandle {

Result<VaSurface> VaSurface::create(Desc desc)
{
	constexpr uint32_t kInvalidSurface = 0xffffffff; // VA_INVALID_SURFACE / VA_INVALID_ID
	if (desc.surface == kInvalidSurface)
		return Error(ErrorCode::InvalidArgument, "surface",
			     "VaSurface: surface is VA_INVALID_SURFACE (0xffffffff).");
	if (auto e = detail::requireHandle("VaSurface", "display", desc.display))
		return std::move(*e);
	return VaSurface(std::move(desc));
}

} // namespace gpuhandle
