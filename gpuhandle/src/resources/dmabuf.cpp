// DmaBuf::create: the single funnel that checks a DMA-BUF descriptor before anything uses it.
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/layout.h>

#include "formats/drm_fourcc_geometry.h"
#include "validation.h"

#include <cinttypes>
#include <string>
#include <sys/stat.h>

namespace gpuhandle {

namespace {

constexpr const char *kType = "DmaBuf";

std::string fourccName(uint32_t code)
{
	std::string name;
	for (int i = 0; i < 4; ++i) {
		char c = static_cast<char>((code >> (8 * i)) & 0xff);
		name += (c >= 0x20 && c < 0x7f) ? c : '?';
	}
	return name;
}

std::optional<Error> checkObjects(const DmaBufDesc &d)
{
	if (auto e = detail::requireCount(kType, "numObjects", d.numObjects, 4))
		return e;
	for (uint32_t i = 0; i < 4; ++i) {
		const DmaBufObject &object = d.objects[i];
		if (i >= d.numObjects) {
			if (object.fd.isValid())
				return Error::format(
					ErrorCode::InvalidArgument,
					detail::indexed("objects", i, "fd"),
					"DmaBuf: objects[%u] holds fd %d but numObjects is %u.", i,
					object.fd.get(), d.numObjects);
			continue;
		}
		if (auto e = detail::requireOpenFd(kType, detail::indexed("objects", i, "fd"),
						   object.fd))
			return e;
		if (!object.size)
			return detail::zeroSize(kType, detail::indexed("objects", i, "size"));
		// The kernel reports a dma-buf's size (and a memfd's) through fstat; 0 means
		// unknown.
		struct stat st = {};
		if (fstat(object.fd.get(), &st) == 0 && st.st_size > 0 &&
		    static_cast<uint64_t>(st.st_size) < object.size)
			return Error::format(ErrorCode::OutOfRange,
					     detail::indexed("objects", i, "size"),
					     "DmaBuf: objects[%u].size (%" PRIu64
					     ") is larger than its fd %d (%" PRIu64 " bytes).",
					     i, object.size, object.fd.get(),
					     static_cast<uint64_t>(st.st_size));
	}
	return std::nullopt;
}

std::optional<Error> checkPlaneGeometry(const DmaBufDesc &d,
					const detail::DrmFormatGeometry &geometry)
{
	if (d.numPlanes != geometry.numPlanes)
		return Error::format(
			ErrorCode::InvalidArgument, "numPlanes",
			"DmaBuf: numPlanes is %u but a linear %s surface has %u planes.",
			d.numPlanes, fourccName(d.fourcc).c_str(), geometry.numPlanes);
	for (uint32_t i = 0; i < d.numPlanes; ++i) {
		const DmaBufPlane &plane = d.planes[i];
		uint64_t row = geometry.rowBytes(i, d.width);
		uint32_t rows = geometry.planeHeight(i, d.height);
		if (plane.pitch < row)
			return Error::format(
				ErrorCode::OutOfRange, detail::indexed("planes", i, "pitch"),
				"DmaBuf: planes[%u].pitch (%u) is smaller than a row of %s at width %u (%" PRIu64
				" bytes).",
				i, plane.pitch, fourccName(d.fourcc).c_str(), d.width, row);
		// The last row needs only its own bytes, not a whole pitch.
		const std::optional<uint64_t> end = planeEnd(plane.offset, plane.pitch, rows, row);
		uint64_t size = d.objects[plane.objectIndex].size;
		if (!end || *end > size)
			return Error::format(
				ErrorCode::OutOfRange, detail::indexed("planes", i, "offset"),
				"DmaBuf: planes[%u] ends at byte %s (offset %" PRIu64
				", pitch %u, %u rows) past the end of objects[%u] (%" PRIu64
				" bytes).",
				i, end ? std::to_string(*end).c_str() : "2^64 or later",
				plane.offset, plane.pitch, rows, plane.objectIndex, size);
	}
	return std::nullopt;
}

std::optional<Error> checkPlanes(const DmaBufDesc &d)
{
	if (auto e = detail::requireCount(kType, "numPlanes", d.numPlanes, 4))
		return e;
	for (uint32_t i = 0; i < d.numPlanes; ++i) {
		const DmaBufPlane &plane = d.planes[i];
		if (plane.objectIndex >= d.numObjects)
			return Error::format(
				ErrorCode::OutOfRange, detail::indexed("planes", i, "objectIndex"),
				"DmaBuf: planes[%u].objectIndex is %u but there are only %u objects.",
				i, plane.objectIndex, d.numObjects);
		if (!plane.pitch)
			return detail::zeroSize(kType, detail::indexed("planes", i, "pitch"));
		uint64_t size = d.objects[plane.objectIndex].size;
		if (plane.offset >= size)
			return Error::format(ErrorCode::OutOfRange,
					     detail::indexed("planes", i, "offset"),
					     "DmaBuf: planes[%u].offset (%" PRIu64
					     ") is not inside objects[%u] (%" PRIu64 " bytes).",
					     i, plane.offset, plane.objectIndex, size);
	}
	auto geometry = detail::drmFormatGeometry(d.fourcc);
	if (!geometry)
		return std::nullopt; // a vendor format: its layout is the importer's to check
	bool linear = d.modifier == kDrmModifierLinear || d.modifier == kDrmModifierInvalid;
	if (linear)
		return checkPlaneGeometry(d, *geometry);
	// Tiled and compressed modifiers keep the format's planes and may add auxiliary ones.
	if (d.numPlanes < geometry->numPlanes)
		return Error::format(ErrorCode::InvalidArgument, "numPlanes",
				     "DmaBuf: numPlanes is %u but %s needs at least %u planes.",
				     d.numPlanes, fourccName(d.fourcc).c_str(),
				     geometry->numPlanes);
	return std::nullopt;
}

} // namespace

Result<DmaBuf> DmaBuf::create(Desc desc)
{
	if (!desc.fourcc)
		return Error(ErrorCode::InvalidArgument, "fourcc",
			     "DmaBuf: fourcc is 0; a DRM_FORMAT_* code is required.");
	if (auto e = detail::requireNonZero(kType, "width", desc.width))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "height", desc.height))
		return std::move(*e);
	if (auto e = checkObjects(desc))
		return std::move(*e);
	if (auto e = checkPlanes(desc))
		return std::move(*e);
	return DmaBuf(std::move(desc));
}

} // namespace gpuhandle
