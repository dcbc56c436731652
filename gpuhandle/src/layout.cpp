// computeLayout and friends: tight, FFmpeg and stride-aligned layouts, and texture byte estimates.
#include <gpuhandle/layout.h>

#include "layout_internal.h"

#include <bit>
#include <cinttypes>
#include <limits>

namespace gpuhandle {

namespace detail {

std::optional<Error> packPlanes(FrameLayout &layout)
{
	uint64_t offset = 0;
	for (uint32_t i = 0; i < layout.numPlanes; ++i) {
		PlaneLayout &plane = layout.planes[i];
		plane.offset = offset;
		if (__builtin_mul_overflow(uint64_t(plane.stride), uint64_t(plane.height), &plane.size) ||
		    __builtin_add_overflow(offset, plane.size, &offset))
			return Error::format(ErrorCode::OutOfRange, "height",
					     "A %ux%u %s frame does not fit in 64-bit sizes.", layout.width,
					     layout.height, pixelFormatName(layout.format));
	}
	layout.size = offset;
	return std::nullopt;
}

} // namespace detail

namespace {

std::optional<Error> checkSize(const char *type, uint32_t width, uint32_t height)
{
	if (!width)
		return Error::format(ErrorCode::ZeroSize, "width", "%s: width is 0; it must be at least 1.", type);
	if (!height)
		return Error::format(ErrorCode::ZeroSize, "height", "%s: height is 0; it must be at least 1.", type);
	return std::nullopt;
}

// A row that does not fit in a 32-bit stride (the cold path of linearLayout).
[[gnu::cold]] Error strideError(const FrameLayout &layout, uint64_t rounded)
{
	return Error::format(ErrorCode::OutOfRange, "width",
			     "A row of a %u pixel wide %s frame (%" PRIu64 " bytes) does not fit in a 32-bit stride.",
			     layout.width, pixelFormatName(layout.format), rounded);
}

// FFmpeg's av_image_fill_linesizes: a plane's row is computed from the width shifted by the
// chroma shift with rounding up (-((-w) >> s)), which equals our rowBytes for every format.
// Fills `layout` in place (callers query layouts per frame: no copies of it).
std::optional<Error> linearLayout(const PixelFormatInfo &info, FrameLayout &layout, uint32_t align)
{
	for (uint32_t i = 0; i < info.numPlanes; ++i) {
		const PlaneInfo &p = info.planes[i];
		PlaneLayout &plane = layout.planes[i];
		plane.width = detail::planeWidth(p, layout.width);
		plane.height = detail::planeRows(p, layout.height);
		uint64_t stride = detail::roundUp(detail::planeRowBytes(p, layout.width), align);
		if (stride > std::numeric_limits<uint32_t>::max()) [[unlikely]]
			return strideError(layout, stride);
		plane.stride = static_cast<uint32_t>(stride);
	}
	return detail::packPlanes(layout);
}

// The format's row of the table, or the error saying why there is none.
Result<const PixelFormatInfo *> startLayout(PixelFormat format, uint32_t width, uint32_t height,
					    FrameLayout &layout)
{
	auto found = pixelFormatInfo(format);
	if (!found.ok())
		return std::move(found).error();
	if (auto e = checkSize("Layout", width, height))
		return std::move(*e);
	layout.format = format;
	layout.width = width;
	layout.height = height;
	layout.numPlanes = (*found)->numPlanes;
	return *found;
}

} // namespace

Result<FrameLayout> computeLayout(PixelFormat format, uint32_t width, uint32_t height,
				  LayoutPolicy policy, uint32_t align)
{
	// One Result, filled in place and returned by every path (no copy of the layout).
	Result<FrameLayout> out{ FrameLayout{} };
	FrameLayout &layout = *out;
	const auto formats = allPixelFormats();
	const auto index = static_cast<size_t>(format) - 1; // Unknown (0) wraps past the end
	if (index >= formats.size() || !width || !height) {
		auto info = startLayout(format, width, height, layout); // says why
		if (!info.ok())
			out = std::move(info).error();
		return out;
	}
	const PixelFormatInfo &info = formats[index];
	layout.format = format;
	layout.width = width;
	layout.height = height;
	layout.numPlanes = info.numPlanes;
	std::optional<Error> e;
	switch (policy) {
	case LayoutPolicy::Tight:
		e = linearLayout(info, layout, 1);
		break;
	case LayoutPolicy::FFmpeg:
	case LayoutPolicy::StrideAlign:
		if (detail::isPowerOfTwo(align) && align <= 4096)
			e = linearLayout(info, layout, align);
		else
			e = Error::format(ErrorCode::InvalidArgument, "align",
					  "Layout: align %u is not a power of two between 1 and 4096.",
					  align);
		break;
	case LayoutPolicy::GStreamer:
		e = detail::gstreamerLayout(info, layout);
		break;
	default:
		e = Error::format(ErrorCode::InvalidArgument, "policy",
				  "Layout: policy %u is not a LayoutPolicy.",
				  static_cast<unsigned>(policy));
	}
	if (e)
		out = std::move(*e);
	return out;
}

Result<FrameLayout> layoutWithStrides(PixelFormat format, uint32_t width, uint32_t height,
				      std::span<const uint32_t> strides)
{
	FrameLayout layout;
	auto found = startLayout(format, width, height, layout);
	if (!found.ok())
		return std::move(found).error();
	const PixelFormatInfo *info = *found;
	if (strides.size() != info->numPlanes)
		return Error::format(ErrorCode::InvalidArgument, "strides",
				     "Layout: %zu strides given but %s has %u planes.", strides.size(),
				     info->name, info->numPlanes);
	for (uint32_t i = 0; i < info->numPlanes; ++i) {
		const PlaneInfo &p = info->planes[i];
		uint64_t row = p.rowBytes(width);
		if (strides[i] < row)
			return Error::format(ErrorCode::OutOfRange, "strides",
					     "Layout: stride %u of plane %u is smaller than a row of %s at width %u (%" PRIu64 " bytes).",
					     strides[i], i, info->name, width, row);
		layout.planes[i] = { static_cast<uint32_t>((uint64_t(width) + p.hsub - 1) / p.hsub),
				     p.rows(height), strides[i], 0, 0 };
	}
	if (auto e = detail::packPlanes(layout))
		return std::move(*e);
	return layout;
}

Result<uint64_t> estimateTextureBytes(PixelFormat format, uint32_t width, uint32_t height,
				      uint32_t layers, uint32_t mipLevels)
{
	auto found = pixelFormatInfo(format);
	if (!found.ok())
		return std::move(found).error();
	if (auto e = checkSize("Texture estimate", width, height))
		return std::move(*e);
	if (!layers)
		return Error(ErrorCode::ZeroSize, "layers", "Texture estimate: layers is 0; it must be at least 1.");
	uint32_t maxLevels = std::bit_width(std::max(width, height));
	if (!mipLevels || mipLevels > maxLevels)
		return Error::format(ErrorCode::OutOfRange, "mipLevels",
				     "Texture estimate: mipLevels is %u; a %ux%u texture has 1 to %u levels.",
				     mipLevels, width, height, maxLevels);
	const PixelFormatInfo &info = **found;
	uint64_t total = 0;
	bool overflow = false;
	for (uint32_t level = 0; level < mipLevels; ++level) {
		uint32_t w = std::max(1u, width >> level);
		uint32_t h = std::max(1u, height >> level);
		for (uint32_t i = 0; i < info.numPlanes; ++i) {
			uint64_t plane;
			overflow |= __builtin_mul_overflow(info.planes[i].rowBytes(w), uint64_t(info.planes[i].rows(h)), &plane);
			overflow |= __builtin_add_overflow(total, plane, &total);
		}
	}
	uint64_t bytes;
	overflow |= __builtin_mul_overflow(total, uint64_t(layers), &bytes);
	if (overflow)
		return Error::format(ErrorCode::OutOfRange, "layers",
				     "Texture estimate: %u layers of a %ux%u %s texture do not fit in 64-bit sizes.",
				     layers, width, height, info.name);
	return bytes;
}

const char *layoutPolicyName(LayoutPolicy policy) noexcept
{
	switch (policy) {
	case LayoutPolicy::Tight: return "tight";
	case LayoutPolicy::GStreamer: return "gstreamer";
	case LayoutPolicy::FFmpeg: return "ffmpeg";
	case LayoutPolicy::StrideAlign: return "stride-align";
	}
	return "unknown";
}

} // namespace gpuhandle
