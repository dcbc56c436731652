// CPU-side frame helpers of the planner: plane-by-plane copies and frames over live mappings.
#include <gpuhandle/backends/planner.h>

#include "common/backend_internal.h"

#include <cstring>

namespace gpuhandle {

namespace {

// Owns a mapping for as long as a frame made over it lives.
struct MappingAnchor final : KeepAlive {
	CpuMapping mapping;
	explicit MappingAnchor(CpuMapping m) : mapping(std::move(m)) {}
};

} // namespace

Status copyMappedPlanes(const CpuMapping &dst, const CpuMapping &src, PixelFormat format,
			uint32_t width, uint32_t height)
{
	Result<const PixelFormatInfo *> info = pixelFormatInfo(format);
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "copyMappedPlanes: %s",
				     info.error().message().c_str());
	const uint32_t planes = (*info)->numPlanes;
	if (dst.numPlanes() != planes || src.numPlanes() != planes)
		return Error::format(
			ErrorCode::FormatMismatch, "planes",
			"copyMappedPlanes: a %s frame has %u planes; the mappings have %u and %u.",
			pixelFormatName(format), planes, dst.numPlanes(), src.numPlanes());
	if (!(static_cast<int>(dst.access()) & static_cast<int>(MapAccess::Write)))
		return Error(ErrorCode::InvalidArgument, "dst",
			     "copyMappedPlanes: the destination is mapped read-only.");
	for (uint32_t p = 0; p < planes; ++p) {
		const PlaneInfo &plane = (*info)->planes[p];
		const uint64_t rowBytes = plane.rowBytes(width);
		const uint32_t rows = plane.rows(height);
		if (dst.stride(p) < rowBytes || src.stride(p) < rowBytes)
			return Error::format(
				ErrorCode::FormatMismatch, "planes",
				"copyMappedPlanes: plane %u rows are %llu bytes; the strides are %u and %u.",
				p, static_cast<unsigned long long>(rowBytes), dst.stride(p),
				src.stride(p));
		if (dst.stride(p) == src.stride(p) && dst.stride(p) == rowBytes) {
			std::memcpy(dst.data(p), src.data(p), rowBytes * rows);
			continue;
		}
		for (uint32_t row = 0; row < rows; ++row)
			std::memcpy(dst.data(p) + static_cast<uint64_t>(row) * dst.stride(p),
				    src.data(p) + static_cast<uint64_t>(row) * src.stride(p),
				    rowBytes);
	}
	return {};
}

Result<Frame> mapAsCpuFrame(const Frame &frame, MapAccess access, const BackendRef &source,
			    WaitDuration timeout)
{
	Result<CpuMapping> mapped = source ? source->map(frame, access, timeout)
					   : mapFrame(frame, access, timeout);
	if (!mapped.ok())
		return std::move(mapped).error();
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "mapAsCpuFrame: %s",
				     info.error().message().c_str());
	auto anchor = std::make_shared<MappingAnchor>(std::move(*mapped));
	const CpuMapping &mapping = anchor->mapping;
	// One mapped range (a memfd, a one-object DMA-BUF): keep it whole, as CpuBytes with the
	// frame's own plane offsets, so that an importer sees one page-aligned allocation rather
	// than planes that start mid-page (VK_EXT_external_memory_host and cuMemHostRegister take
	// whole pages only).
	if (frame.numResources() == 1 && frame.resource(0).subresourceCount() == 1 &&
	    frame.resource(0).byteSize() && frame.plane(0).resource == 0 && !source) {
		uint8_t *base = mapping.data(0) - frame.plane(0).offset;
		Result<CpuBytes> bytes =
			CpuBytes::create({ base, frame.resource(0).byteSize(), anchor });
		if (!bytes.ok())
			return std::move(bytes).error();
		FrameDesc desc = frame.desc();
		desc.resources = {};
		desc.resources[0] = std::move(*bytes);
		desc.acquire = SyncPoint::noop(); // the mapping waited for it
		return Frame::create(std::move(desc));
	}
	CpuPlanesDesc planes;
	planes.numPlanes = mapping.numPlanes();
	for (uint32_t i = 0; i < mapping.numPlanes(); ++i)
		planes.planes[i] = CpuPlane{ mapping.data(i), mapping.stride(i),
					     i < (*info)->numPlanes
						     ? (*info)->planes[i].rows(frame.height())
						     : 1 };
	planes.anchor = anchor;
	Result<CpuPlanes> resource = CpuPlanes::create(std::move(planes));
	if (!resource.ok())
		return std::move(resource).error();
	FrameDesc desc;
	desc.format = frame.format();
	desc.width = frame.width();
	desc.height = frame.height();
	desc.colorimetry = frame.colorimetry();
	desc.numResources = 1;
	desc.resources[0] = std::move(*resource);
	desc.numPlanes = mapping.numPlanes();
	for (uint32_t i = 0; i < mapping.numPlanes(); ++i)
		desc.planes[i] = PlaneView{ 0, i, 0, mapping.stride(i) };
	// The mapping waited for the acquire point; the consumer's release still goes to the
	// producer.
	desc.release = frame.release();
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle
