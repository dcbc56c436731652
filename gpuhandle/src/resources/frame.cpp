// Frame::create and Frame::wrap: validate plane views against the resources they name.
#include <gpuhandle/frame.h>
#include <gpuhandle/layout.h>

#include "validation.h"

#include <cinttypes>
#include <string>

namespace gpuhandle {

namespace {

constexpr const char *kType = "Frame";

std::optional<Error> checkResources(const FrameDesc &d)
{
	if (auto e = detail::requireCount(kType, "numResources", d.numResources, 4))
		return e;
	for (uint32_t i = 0; i < 4; ++i) {
		bool empty = d.resources[i].empty();
		if (i < d.numResources && empty)
			return Error::format(ErrorCode::NullHandle,
					     detail::indexed("resources", i, ""),
					     "Frame: resources[%u] is empty; numResources is %u.",
					     i, d.numResources);
		if (i >= d.numResources && !empty)
			return Error::format(
				ErrorCode::InvalidArgument, detail::indexed("resources", i, ""),
				"Frame: resources[%u] holds a %s but numResources is %u.", i,
				resourceKindName(d.resources[i].kind()), d.numResources);
	}
	return std::nullopt;
}

// With a known format, each plane's stride must hold a row and its rows must fit the resource.
std::optional<Error> checkPlaneGeometry(const FrameDesc &d, const PixelFormatInfo &info, uint32_t i,
					uint64_t size)
{
	const PlaneView &plane = d.planes[i];
	if (!plane.stride)
		return std::nullopt; // opaque (tiled) memory: the importer checks
	const PlaneInfo &p = info.planes[i];
	uint64_t row = p.rowBytes(d.width);
	if (plane.stride < row)
		return Error::format(
			ErrorCode::OutOfRange, detail::indexed("planes", i, "stride"),
			"Frame: planes[%u].stride (%u) is smaller than a row of %s at width %u (%" PRIu64
			" bytes).",
			i, plane.stride, info.name, d.width, row);
	if (!size)
		return std::nullopt;
	const std::optional<uint64_t> end =
		planeEnd(plane.offset, plane.stride, p.rows(d.height), row);
	if (!end || *end > size)
		return Error::format(
			ErrorCode::OutOfRange, detail::indexed("planes", i, "offset"),
			"Frame: planes[%u] of a %ux%u %s frame ends at byte %s (offset %" PRIu64
			", stride %u, %u rows), past the end of its %s (%" PRIu64 " bytes).",
			i, d.width, d.height, info.name,
			end ? std::to_string(*end).c_str() : "2^64 or later", plane.offset,
			plane.stride, p.rows(d.height),
			resourceKindName(d.resources[plane.resource].kind()), size);
	return std::nullopt;
}

std::optional<Error> checkPlane(const FrameDesc &d, uint32_t i, const PixelFormatInfo *info)
{
	const PlaneView &plane = d.planes[i];
	if (plane.resource >= d.numResources)
		return Error::format(
			ErrorCode::OutOfRange, detail::indexed("planes", i, "resource"),
			"Frame: planes[%u].resource is %u but the frame has %u resources.", i,
			plane.resource, d.numResources);
	const Resource &resource = d.resources[plane.resource];
	uint32_t parts = resource.subresourceCount();
	if (plane.subresource >= parts)
		return Error::format(ErrorCode::OutOfRange,
				     detail::indexed("planes", i, "subresource"),
				     "Frame: planes[%u].subresource is %u but its %s has %u.", i,
				     plane.subresource, resourceKindName(resource.kind()), parts);
	uint64_t size = resource.byteSize(plane.subresource);
	if (info) {
		if (auto e = checkPlaneGeometry(d, *info, i, size))
			return e;
	}
	if (!size)
		return std::nullopt; // images and textures: the offset is the importer's to check
	if (plane.offset >= size)
		return Error::format(ErrorCode::OutOfRange, detail::indexed("planes", i, "offset"),
				     "Frame: planes[%u].offset (%" PRIu64
				     ") is not inside its %s (%" PRIu64 " bytes).",
				     i, plane.offset, resourceKindName(resource.kind()), size);
	if (plane.stride > size - plane.offset)
		return Error::format(ErrorCode::OutOfRange, detail::indexed("planes", i, "stride"),
				     "Frame: planes[%u] has no room for one row: offset %" PRIu64
				     " + stride %u is past the end of its %s (%" PRIu64 " bytes).",
				     i, plane.offset, plane.stride,
				     resourceKindName(resource.kind()), size);
	return std::nullopt;
}

// Plane views a single resource describes by itself.
void derivePlanes(const Resource &resource, FrameDesc &d)
{
	d.numPlanes = 1;
	d.planes[0] = {};
	if (const DmaBuf *dmabuf = resource.get<DmaBuf>()) {
		const DmaBufDesc &x = dmabuf->desc();
		d.numPlanes = x.numPlanes;
		for (uint32_t i = 0; i < x.numPlanes; ++i)
			d.planes[i] = { 0, x.planes[i].objectIndex, x.planes[i].offset,
					x.planes[i].pitch };
	} else if (const CpuPlanes *cpu = resource.get<CpuPlanes>()) {
		const CpuPlanesDesc &x = cpu->desc();
		d.numPlanes = x.numPlanes;
		for (uint32_t i = 0; i < x.numPlanes; ++i)
			d.planes[i] = { 0, i, 0, x.planes[i].stride };
	} else if (const CudaPitched2D *cuda = resource.get<CudaPitched2D>()) {
		const CudaPitched2DDesc &x = cuda->desc();
		d.numPlanes = x.numPlanes;
		for (uint32_t i = 0; i < x.numPlanes; ++i)
			d.planes[i] = { 0, 0, x.planeOffsets[i], x.pitch };
	} else if (const VulkanImage *image = resource.get<VulkanImage>()) {
		d.numPlanes = image->desc().planes;
		for (uint32_t i = 0; i < d.numPlanes; ++i)
			d.planes[i] = { 0, i, 0, 0 };
		d.planes[0].stride = image->desc().rowPitch;
	} else if (const D3D11Texture *texture = resource.get<D3D11Texture>()) {
		d.planes[0].stride = texture->desc().rowPitch;
	} else if (const CpuSharedSlot *slot = resource.get<CpuSharedSlot>()) {
		d.planes[0].stride = slot->desc().rowPitch;
	}
}

} // namespace

Result<Frame> Frame::create(FrameDesc desc)
{
	if (auto e = detail::requireNonZero(kType, "width", desc.width))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "height", desc.height))
		return std::move(*e);
	if (!desc.colorimetry.isValid())
		return Error::format(
			ErrorCode::InvalidArgument, "colorimetry",
			"Frame: colorimetry (range %u, matrix %u, primaries %u, transfer %u) uses a value "
			"ITU-T H.273 reserves.",
			static_cast<unsigned>(desc.colorimetry.range),
			static_cast<unsigned>(desc.colorimetry.matrix),
			static_cast<unsigned>(desc.colorimetry.primaries),
			static_cast<unsigned>(desc.colorimetry.transfer));
	if (auto e = checkResources(desc))
		return std::move(*e);
	if (auto e = detail::requireCount(kType, "numPlanes", desc.numPlanes, 4))
		return std::move(*e);
	// Unknown means "described elsewhere"; any other value must be a format gpuhandle knows.
	const PixelFormatInfo *info = nullptr;
	if (desc.format != PixelFormat::Unknown) {
		auto found = pixelFormatInfo(desc.format);
		if (!found.ok())
			return Error(ErrorCode::InvalidArgument, "format",
				     "Frame: " + found.error().message());
		info = *found;
		if (desc.numPlanes != info->numPlanes)
			return Error::format(ErrorCode::InvalidArgument, "numPlanes",
					     "Frame: numPlanes is %u but %s has %u planes.",
					     desc.numPlanes, info->name, info->numPlanes);
	}
	for (uint32_t i = 0; i < desc.numPlanes; ++i) {
		if (auto e = checkPlane(desc, i, info))
			return std::move(*e);
	}
	return Frame(std::move(desc));
}

Result<Frame> Frame::wrap(PixelFormat format, uint32_t width, uint32_t height,
			  Colorimetry colorimetry, Resource resource)
{
	FrameDesc desc;
	desc.format = format;
	desc.width = width;
	desc.height = height;
	desc.colorimetry = colorimetry;
	desc.numResources = 1;
	derivePlanes(resource, desc);
	desc.resources[0] = std::move(resource);
	return create(std::move(desc));
}

} // namespace gpuhandle
