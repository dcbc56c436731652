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

// Row stride in bytes, or an error when it does not fit in 32 bits.
Result<uint32_t> stride(const FrameLayout &layout, uint64_t bytes, uint64_t align)
{
	uint64_t rounded = detail::roundUp(bytes, align);
	if (rounded > std::numeric_limits<uint32_t>::max())
		return Error::format(ErrorCode::OutOfRange, "width",
				     "A row of a %u pixel wide %s frame (%" PRIu64 " bytes) does not fit in a 32-bit stride.",
				     layout.width, pixelFormatName(layout.format), rounded);
	return static_cast<uint32_t>(rounded);
}

// FFmpeg's av_image_fill_linesizes: a plane's row is computed from the width shifted by the
// chroma shift with rounding up (-((-w) >> s)), which equals our rowBytes for every format.
Result<FrameLayout> linearLayout(const PixelFormatInfo &info, FrameLayout layout, uint32_t align)
{
	for (uint32_t i = 0; i < info.numPlanes; ++i) {
		const PlaneInfo &p = info.planes[i];
		PlaneLayout &plane = layout.planes[i];
		plane.width = static_cast<uint32_t>((uint64_t(layout.width) + p.hsub - 1) / p.hsub);
		plane.height = p.rows(layout.height);
		auto s = stride(layout, p.rowBytes(layout.width), align);
		if (!s.ok())
			return std::move(s).error();
		plane.stride = *s;
	}
	if (auto e = detail::packPlanes(layout))
		return std::move(*e);
	return layout;
}

Result<FrameLayout> startLayout(PixelFormat format, uint32_t width, uint32_t height,
				const PixelFormatInfo *&info)
{
	auto found = pixelFormatInfo(format);
	if (!found.ok())
		return std::move(found).error();
	if (auto e = checkSize("Layout", width, height))
		return std::move(*e);
	info = *found;
	FrameLayout layout;
	layout.format = format;
	layout.width = width;
	layout.height = height;
	layout.numPlanes = info->numPlanes;
	return layout;
}

} // namespace

Result<FrameLayout> computeLayout(PixelFormat format, uint32_t width, uint32_t height,
				  LayoutPolicy policy, uint32_t align)
{
	const PixelFormatInfo *info = nullptr;
	auto start = startLayout(format, width, height, info);
	if (!start.ok())
		return start;
	switch (policy) {
	case LayoutPolicy::Tight:
		return linearLayout(*info, *start, 1);
	case LayoutPolicy::FFmpeg:
	case LayoutPolicy::StrideAlign:
		if (!align || !std::has_single_bit(align) || align > 4096)
			return Error::format(ErrorCode::InvalidArgument, "align",
					     "Layout: align %u is not a power of two between 1 and 4096.", align);
		return linearLayout(*info, *start, align);
	case LayoutPolicy::GStreamer: {
		FrameLayout layout = *start;
		if (auto e = detail::gstreamerLayout(*info, layout))
			return std::move(*e);
		return layout;
	}
	}
	return Error::format(ErrorCode::InvalidArgument, "policy", "Layout: policy %u is not a LayoutPolicy.",
			     static_cast<unsigned>(policy));
}

Result<FrameLayout> layoutWithStrides(PixelFormat format, uint32_t width, uint32_t height,
				      std::span<const uint32_t> strides)
{
	const PixelFormatInfo *info = nullptr;
	auto start = startLayout(format, width, height, info);
	if (!start.ok())
		return start;
	FrameLayout layout = *start;
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
