// PixelFormat queries: plane geometry, texel sizes, names and lookups over the format table.
#include <gpuhandle/pixel_format.h>

#include <bit>

namespace gpuhandle {

namespace {

constexpr uint64_t divUp(uint64_t value, uint64_t divisor)
{
	return (value + divisor - 1) / divisor;
}

constexpr struct {
	uint32_t bytes;
	const char *name;
} kPlaneFormats[kPlaneFormatCount] = {
	{ 1, "r8" },       { 2, "rg8" },        { 3, "rgb8" },     { 4, "rgba8" },
	{ 4, "bgra8" },    { 2, "r16" },        { 4, "rg16" },     { 6, "rgb16" },
	{ 8, "rgba16" },   { 8, "rgba16f" },    { 16, "rgba32f" }, { 2, "r16uint" },
	{ 4, "r32float" }, { 8, "rgba16uint" }, { 4, "rgb10a2" },  { 2, "rgb565" },
};

} // namespace

uint32_t bytesPerTexel(PlaneFormat format) noexcept
{
	auto index = static_cast<uint32_t>(format);
	return index < kPlaneFormatCount ? kPlaneFormats[index].bytes : 0;
}

const char *planeFormatName(PlaneFormat format) noexcept
{
	auto index = static_cast<uint32_t>(format);
	return index < kPlaneFormatCount ? kPlaneFormats[index].name : "unknown";
}

uint32_t PlaneInfo::rowTexels(uint32_t width) const noexcept
{
	uint64_t samples = divUp(width, hsub);
	return static_cast<uint32_t>(divUp(samples, pixelsPerBlock) * texelsPerBlock);
}

uint64_t PlaneInfo::rowBytes(uint32_t width) const noexcept
{
	return uint64_t(rowTexels(width)) * bytesPerTexel(format);
}

uint32_t PlaneInfo::rows(uint32_t height) const noexcept
{
	return static_cast<uint32_t>(divUp(height, vsub));
}

uint8_t PixelFormatInfo::chromaShiftX() const noexcept
{
	if (numPlanes > 1)
		return static_cast<uint8_t>(std::countr_zero(planes[1].hsub));
	// Packed 4:2:2 (YUYV, Y210, v210) keeps its chroma in blocks of several pixels.
	return family == ColorFamily::Yuv && planes[0].pixelsPerBlock > 1 ? 1 : 0;
}

uint8_t PixelFormatInfo::chromaShiftY() const noexcept
{
	return numPlanes > 1 ? static_cast<uint8_t>(std::countr_zero(planes[1].vsub)) : 0;
}

const char *pixelFormatName(PixelFormat format) noexcept
{
	auto value = static_cast<uint32_t>(format);
	if (value == 0 || value >= kPixelFormatCount)
		return "unknown";
	return allPixelFormats()[value - 1].name;
}

Result<PixelFormat> pixelFormatFromName(std::string_view name)
{
	for (const PixelFormatInfo &info : allPixelFormats()) {
		if (name == info.name)
			return info.format;
	}
	return Error::format(ErrorCode::NotSupported, "name", "No pixel format is named \"%.*s\".",
			     static_cast<int>(name.size() > 64 ? 64 : name.size()), name.data());
}

} // namespace gpuhandle
