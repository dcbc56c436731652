// Lookups over the per-API format tables: both directions, whole formats and single planes.
#include <gpuhandle/format_mappings.h>

#include "format_tables.h"

namespace gpuhandle {

namespace {

constexpr const char *kApiNames[kFormatApiCount] = {
	"GStreamer", "FFmpeg", "DRM",   "V4L2",      "VA-API",
	"Vulkan",    "DXGI",   "Metal", "CoreVideo", "WebGPU",
};
constexpr const char *kPlaneApiNames[kPlaneApiCount] = {
	"Vulkan (per plane)",
	"OpenGL",
	"CUDA",
	"OpenCL",
};

Error unknownApi(const char *what, uint32_t api)
{
	return Error::format(ErrorCode::InvalidArgument, "api", "%s %u is not one gpuhandle knows.",
			     what, api);
}

} // namespace

const char *formatApiName(FormatApi api) noexcept
{
	auto index = static_cast<uint32_t>(api);
	return index < kFormatApiCount ? kApiNames[index] : "unknown";
}

const char *planeApiName(PlaneApi api) noexcept
{
	auto index = static_cast<uint32_t>(api);
	return index < kPlaneApiCount ? kPlaneApiNames[index] : "unknown";
}

std::span<const FormatMapping> formatMappings(FormatApi api) noexcept
{
	switch (api) {
	case FormatApi::GStreamer: return detail::gstreamerFormats();
	case FormatApi::FFmpeg: return detail::ffmpegFormats();
	case FormatApi::DrmFourcc: return detail::drmFormats();
	case FormatApi::V4l2Fourcc: return detail::v4l2Formats();
	case FormatApi::VaFourcc: return detail::vaFormats();
	case FormatApi::VkFormat: return detail::vulkanFormats();
	case FormatApi::Dxgi: return detail::dxgiFormats();
	case FormatApi::Metal: return detail::metalFormats();
	case FormatApi::CoreVideo: return detail::coreVideoFormats();
	case FormatApi::WebGpu: return detail::webgpuFormats();
	}
	return {};
}

std::span<const PlaneMapping> planeMappings(PlaneApi api) noexcept
{
	switch (api) {
	case PlaneApi::VkFormat: return detail::vulkanPlaneFormats();
	case PlaneApi::GlInternal: return detail::glPlaneFormats();
	case PlaneApi::CudaArray: return detail::cudaPlaneFormats();
	case PlaneApi::OpenClImage: return detail::openclPlaneFormats();
	}
	return {};
}

Result<uint32_t> toApiFormat(FormatApi api, PixelFormat format)
{
	if (static_cast<uint32_t>(api) >= kFormatApiCount)
		return unknownApi("Format API", static_cast<uint32_t>(api));
	for (const FormatMapping &m : formatMappings(api)) {
		if (m.format == format)
			return m.value;
	}
	return Error::format(ErrorCode::NotSupported, "format", "%s has no format for %s (%u).",
			     formatApiName(api), pixelFormatName(format),
			     static_cast<uint32_t>(format));
}

Result<PixelFormat> fromApiFormat(FormatApi api, uint32_t value)
{
	if (static_cast<uint32_t>(api) >= kFormatApiCount)
		return unknownApi("Format API", static_cast<uint32_t>(api));
	for (const FormatMapping &m : formatMappings(api)) {
		if (m.value == value && m.canonical)
			return m.format;
	}
	return Error::format(ErrorCode::NotSupported, "value",
			     "%s format %u (0x%08x) has no gpuhandle pixel format.",
			     formatApiName(api), value, value);
}

bool canRepresent(FormatApi api, PixelFormat format) noexcept
{
	for (const FormatMapping &m : formatMappings(api)) {
		if (m.format == format)
			return true;
	}
	return false;
}

Result<PlaneMapping> toPlaneApiFormat(PlaneApi api, PlaneFormat plane)
{
	if (static_cast<uint32_t>(api) >= kPlaneApiCount)
		return unknownApi("Plane API", static_cast<uint32_t>(api));
	for (const PlaneMapping &m : planeMappings(api)) {
		if (m.plane == plane)
			return m;
	}
	return Error::format(ErrorCode::NotSupported, "plane", "%s has no format for a %s plane.",
			     planeApiName(api), planeFormatName(plane));
}

Result<PlaneFormat> fromPlaneApiFormat(PlaneApi api, uint32_t value, uint32_t extra)
{
	if (static_cast<uint32_t>(api) >= kPlaneApiCount)
		return unknownApi("Plane API", static_cast<uint32_t>(api));
	bool usesExtra = api == PlaneApi::CudaArray || api == PlaneApi::OpenClImage;
	for (const PlaneMapping &m : planeMappings(api)) {
		if (m.value == value && (!usesExtra || m.extra == extra))
			return m.plane;
	}
	return Error::format(ErrorCode::NotSupported, "value",
			     "%s format %u (extra %u) has no gpuhandle plane format.",
			     planeApiName(api), value, extra);
}

Result<PlaneMappings> planeApiFormats(PlaneApi api, PixelFormat format)
{
	auto info = pixelFormatInfo(format);
	if (!info.ok())
		return std::move(info).error();
	PlaneMappings result;
	result.count = (*info)->numPlanes;
	for (uint32_t i = 0; i < result.count; ++i) {
		auto plane = toPlaneApiFormat(api, (*info)->planes[i].format);
		if (!plane.ok())
			return std::move(plane).error();
		result.planes[i] = *plane;
	}
	return result;
}

Result<uint32_t> vaRtFormat(PixelFormat format)
{
	uint32_t rt = detail::vaRtFormatOf(format);
	if (!rt)
		return Error::format(ErrorCode::NotSupported, "format",
				     "VA-API has no render-target format for %s.",
				     pixelFormatName(format));
	return rt;
}

} // namespace gpuhandle
