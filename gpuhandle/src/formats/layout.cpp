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
		if (__builtin_mul_overflow(uint64_t(plane.stride), uint64_t(plane.height),
					   &plane.size) ||
		    __builtin_add_overflow(offset, plane.size, &offset))
			return Error::format(ErrorCode::OutOfRange, "height",
					     "A %ux%u %s frame does not fit in 64-bit sizes.",
					     layout.width, layout.height,
					     pixelFormatName(layout.format));
	}
	layout.size = offset;
	return std::nullopt;
}

} // namespace detail

namespace {

std::optional<Error> checkSize(const char *type, uint32_t width, uint32_t height)
{
	if (!width)
		return Error::format(ErrorCode::ZeroSize, "width",
				     "%s: width is 0; it must be at least 1.", type);
	if (!height)
		return Error::format(ErrorCode::ZeroSize, "height",
				     "%s: height is 0; it must be at least 1.", type);
	return std::nullopt;
}

// Layouts are queried per frame, so each format's plane geometry is distilled once into a
// recipe of shifts and byte counts: computing a layout is then a few shifts and multiplies per
// plane, with no table walks, calls or divisions (v210's 6-pixel blocks aside).
struct PlaneRecipe {
	uint8_t hshift = 0;      // log2 of the horizontal subsampling
	uint8_t vshift = 0;      // log2 of the vertical subsampling
	uint8_t blockPixels = 1; // samples per block (2 for YUYV, 6 for v210)
	uint32_t blockBytes = 0; // bytes per block
};

struct LayoutRecipe {
	uint32_t numPlanes = 0;
	uint32_t gstreamerAlign = 4;      // GStreamer's row alignment
	bool gstreamerEvenHeight = false; // GStreamer counts rows of an even height
	std::array<PlaneRecipe, 4> planes{};
};

using RecipeTable = std::array<LayoutRecipe, kPixelFormatCount - 1>;

RecipeTable buildRecipes()
{
	RecipeTable table{};
	const auto formats = allPixelFormats();
	for (size_t f = 0; f < formats.size(); ++f) {
		const PixelFormatInfo &info = formats[f];
		LayoutRecipe &r = table[f];
		r.numPlanes = info.numPlanes;
		r.gstreamerAlign = detail::gstreamerStrideAlignment(info);
		r.gstreamerEvenHeight = detail::gstreamerCountsEvenHeight(info);
		for (uint32_t i = 0; i < info.numPlanes; ++i) {
			const PlaneInfo &p = info.planes[i];
			r.planes[i] = { static_cast<uint8_t>(std::countr_zero(p.hsub)),
					static_cast<uint8_t>(std::countr_zero(p.vsub)),
					p.pixelsPerBlock,
					uint32_t(p.texelsPerBlock) * bytesPerTexel(p.format) };
		}
	}
	return table;
}

// Built on first use (not at load time: other libraries' constructors may ask for layouts).
const RecipeTable &recipes()
{
	static const RecipeTable table = buildRecipes();
	return table;
}

// Why a layout could not be computed (the cold path of fillLayout, which found one of these).
[[gnu::cold, gnu::noinline]] Error layoutError(const FrameLayout &layout, uint64_t align)
{
	const PixelFormatInfo &info = allPixelFormats()[static_cast<size_t>(layout.format) - 1];
	for (uint32_t i = 0; i < info.numPlanes; ++i) {
		uint64_t rounded =
			detail::roundUp(detail::planeRowBytes(info.planes[i], layout.width), align);
		if (rounded > std::numeric_limits<uint32_t>::max())
			return Error::format(ErrorCode::OutOfRange, "width",
					     "A row of a %u pixel wide %s frame (%" PRIu64
					     " bytes) does not fit in a 32-bit stride.",
					     layout.width, info.name, rounded);
	}
	return Error::format(ErrorCode::OutOfRange, "height",
			     "A %ux%u %s frame does not fit in 64-bit sizes.", layout.width,
			     layout.height, info.name);
}

// Strides rounded up to `align` (a power of two), planes packed in order, each spanning
// `countedHeight` rows before subsampling (the height itself, or GStreamer's even height).
// Returns false when a stride or the total does not fit (layoutError says which).
inline bool fillLayout(const LayoutRecipe &r, FrameLayout &layout, uint64_t align,
		       uint64_t countedHeight)
{
	uint64_t offset = 0;
	bool overflow = false;
	for (uint32_t i = 0; i < r.numPlanes; ++i) {
		const PlaneRecipe &p = r.planes[i];
		PlaneLayout &plane = layout.planes[i];
		const uint64_t hround = (uint64_t(1) << p.hshift) - 1;
		const uint64_t vround = (uint64_t(1) << p.vshift) - 1;
		uint64_t samples = (layout.width + hround) >> p.hshift;
		plane.width = static_cast<uint32_t>(samples);
		plane.height = static_cast<uint32_t>((layout.height + vround) >> p.vshift);
		if (p.blockPixels != 1) [[unlikely]]
			samples = (samples + p.blockPixels - 1) / p.blockPixels;
		const uint64_t stride = (samples * p.blockBytes + align - 1) & ~(align - 1);
		overflow |= stride > std::numeric_limits<uint32_t>::max();
		plane.stride = static_cast<uint32_t>(stride);
		plane.offset = offset;
		// stride < 2^32 and rows < 2^32 (when the stride fits): the product fits in 64
		// bits.
		plane.size = stride * ((countedHeight + vround) >> p.vshift);
		overflow |= __builtin_add_overflow(offset, plane.size, &offset);
	}
	layout.size = offset;
	return !overflow;
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

// Why computeLayout refused its arguments (cold: they are checked before any work).
[[gnu::cold, gnu::noinline]] Error argumentError(PixelFormat format, uint32_t width,
						 uint32_t height, LayoutPolicy policy,
						 uint32_t align)
{
	FrameLayout scratch;
	auto info = startLayout(format, width, height, scratch);
	if (!info.ok())
		return std::move(info).error();
	if (policy == LayoutPolicy::FFmpeg || policy == LayoutPolicy::StrideAlign)
		return Error::format(ErrorCode::InvalidArgument, "align",
				     "Layout: align %u is not a power of two between 1 and 4096.",
				     align);
	return Error::format(ErrorCode::InvalidArgument, "policy",
			     "Layout: policy %u is not a LayoutPolicy.",
			     static_cast<unsigned>(policy));
}

} // namespace

Result<FrameLayout> computeLayout(PixelFormat format, uint32_t width, uint32_t height,
				  LayoutPolicy policy, uint32_t align)
{
	// One Result, filled in place and returned by every path (no copy of the layout). Started
	// as a copy of an empty layout: GCC clears a fresh one with `rep stos`, whose start-up
	// cost was a third of the whole query.
	static constexpr FrameLayout kEmpty{};
	Result<FrameLayout> out{ kEmpty };
	FrameLayout &layout = *out;
	const auto index = static_cast<size_t>(format) - 1; // Unknown (0) wraps past the end
	uint64_t rowAlign = 1;
	bool valid = index < kPixelFormatCount - 1 && width && height;
	switch (policy) {
	case LayoutPolicy::Tight: break;
	case LayoutPolicy::FFmpeg:
	case LayoutPolicy::StrideAlign:
		valid &= detail::isPowerOfTwo(align) && align <= 4096;
		rowAlign = align;
		break;
	case LayoutPolicy::GStreamer: break;
	default: valid = false;
	}
	if (!valid) [[unlikely]] {
		out = argumentError(format, width, height, policy, align);
		return out;
	}
	const LayoutRecipe &recipe = recipes()[index];
	layout.format = format;
	layout.width = width;
	layout.height = height;
	layout.numPlanes = recipe.numPlanes;
	uint64_t countedHeight = height;
	if (policy == LayoutPolicy::GStreamer) {
		rowAlign = recipe.gstreamerAlign;
		// 64-bit: a height of 0xffffffff rounds up past 32 bits.
		if (recipe.gstreamerEvenHeight)
			countedHeight = detail::roundUp(height, 2);
	}
	if (!fillLayout(recipe, layout, rowAlign, countedHeight)) [[unlikely]]
		out = layoutError(layout, rowAlign);
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
				     "Layout: %zu strides given but %s has %u planes.",
				     strides.size(), info->name, info->numPlanes);
	for (uint32_t i = 0; i < info->numPlanes; ++i) {
		const PlaneInfo &p = info->planes[i];
		uint64_t row = p.rowBytes(width);
		if (strides[i] < row)
			return Error::format(
				ErrorCode::OutOfRange, "strides",
				"Layout: stride %u of plane %u is smaller than a row of %s at width %u (%" PRIu64
				" bytes).",
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
		return Error(ErrorCode::ZeroSize, "layers",
			     "Texture estimate: layers is 0; it must be at least 1.");
	uint32_t maxLevels = std::bit_width(std::max(width, height));
	if (!mipLevels || mipLevels > maxLevels)
		return Error::format(
			ErrorCode::OutOfRange, "mipLevels",
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
			overflow |= __builtin_mul_overflow(info.planes[i].rowBytes(w),
							   uint64_t(info.planes[i].rows(h)),
							   &plane);
			overflow |= __builtin_add_overflow(total, plane, &total);
		}
	}
	uint64_t bytes;
	overflow |= __builtin_mul_overflow(total, uint64_t(layers), &bytes);
	if (overflow)
		return Error::format(
			ErrorCode::OutOfRange, "layers",
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
