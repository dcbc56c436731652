// Factories of the CUDA resources: CudaPitched2D (plane offsets), CudaBuffer, CudaSurface.
#include <gpuhandle/cuda_resources.h>

#include "validation.h"

#include <cinttypes>

namespace gpuhandle {

Result<CudaPitched2D> CudaPitched2D::create(Desc desc)
{
	constexpr const char *kType = "CudaPitched2D";
	if (auto e = detail::requireHandle(kType, "pointer", desc.pointer))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "pitch", desc.pitch))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "size", desc.size))
		return std::move(*e);
	if (desc.pitch > desc.size)
		return Error::format(
			ErrorCode::OutOfRange, "pitch",
			"CudaPitched2D: pitch (%u) is larger than the allocation (%" PRIu64
			" bytes).",
			desc.pitch, desc.size);
	if (auto e = detail::requireCount(kType, "numPlanes", desc.numPlanes, 4))
		return std::move(*e);
	for (uint32_t i = 0; i < desc.numPlanes; ++i) {
		uint64_t offset = desc.planeOffsets[i];
		if (offset >= desc.size)
			return Error::format(ErrorCode::OutOfRange,
					     detail::indexed("planeOffsets", i, ""),
					     "CudaPitched2D: planeOffsets[%u] (%" PRIu64
					     ") is not inside the allocation (%" PRIu64 " bytes).",
					     i, offset, desc.size);
		if (i > 0 && offset <= desc.planeOffsets[i - 1])
			return Error::format(ErrorCode::InvalidArgument,
					     detail::indexed("planeOffsets", i, ""),
					     "CudaPitched2D: planeOffsets[%u] (%" PRIu64
					     ") does not come after planeOffsets[%u] (%" PRIu64
					     ").",
					     i, offset, i - 1, desc.planeOffsets[i - 1]);
	}
	return CudaPitched2D(std::move(desc));
}

Result<CudaBuffer> CudaBuffer::create(Desc desc)
{
	if (auto e = detail::requireHandle("CudaBuffer", "pointer", desc.pointer))
		return std::move(*e);
	if (auto e = detail::requireNonZero("CudaBuffer", "size", desc.size))
		return std::move(*e);
	return CudaBuffer(std::move(desc));
}

Result<CudaSurface> CudaSurface::create(Desc desc)
{
	if (auto e = detail::requireHandle("CudaSurface", "surface", desc.surface))
		return std::move(*e);
	if (auto e = detail::requireNonZero("CudaSurface", "width", desc.width))
		return std::move(*e);
	if (auto e = detail::requireNonZero("CudaSurface", "height", desc.height))
		return std::move(*e);
	return CudaSurface(std::move(desc));
}

} // namespace gpuhandle
