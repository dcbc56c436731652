// Factories of the CPU resources: CpuBytes, CpuPlanes (inline, no heap), CpuSharedSlot.
#include <gpuhandle/cpu_resources.h>

#include "validation.h"

#include <cinttypes>

namespace gpuhandle {

Result<CpuBytes> CpuBytes::create(Desc desc)
{
	if (auto e = detail::requireHandle("CpuBytes", "data", desc.data))
		return std::move(*e);
	if (auto e = detail::requireNonZero("CpuBytes", "size", desc.size))
		return std::move(*e);
	return CpuBytes(std::move(desc));
}

Result<CpuPlanes> CpuPlanes::create(Desc desc)
{
	constexpr const char *kType = "CpuPlanes";
	if (auto e = detail::requireCount(kType, "numPlanes", desc.numPlanes, 4))
		return std::move(*e);
	for (uint32_t i = 0; i < desc.numPlanes; ++i) {
		const CpuPlane &plane = desc.planes[i];
		if (!plane.data)
			return detail::nullHandle(kType, detail::indexed("planes", i, "data"));
		if (!plane.stride)
			return detail::zeroSize(kType, detail::indexed("planes", i, "stride"));
		if (!plane.rows)
			return detail::zeroSize(kType, detail::indexed("planes", i, "rows"));
	}
	return CpuPlanes(std::move(desc));
}

Result<CpuSharedSlot> CpuSharedSlot::create(Desc desc)
{
	constexpr const char *kType = "CpuSharedSlot";
	if (auto e = detail::requireNonZero(kType, "size", desc.size))
		return std::move(*e);
	if (desc.rowPitch > desc.size)
		return Error::format(
			ErrorCode::OutOfRange, "rowPitch",
			"CpuSharedSlot: rowPitch (%u) is larger than the slot (%" PRIu64 " bytes).",
			desc.rowPitch, desc.size);
	// The slot's memory belongs to the producer's pool: without an anchor nothing keeps it.
	if (!desc.anchor)
		return detail::nullHandle(kType, "anchor");
	return CpuSharedSlot(std::move(desc));
}

} // namespace gpuhandle
