// Format tables: PixelFormat to and from each API's format numbers, whole-format and per plane.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/result.h>

#include <array>
#include <cstdint>
#include <span>

namespace GPUHANDLE_API gpuhandle {

// APIs whose format numbers name a whole (possibly multi-plane) format.
enum class FormatApi : uint32_t {
	GStreamer = 0,  // GstVideoFormat
	FFmpeg = 1,     // AVPixelFormat (libavutil 57 numbering; newer values noted in the table)
	DrmFourcc = 2,  // DRM_FORMAT_* (drm_fourcc.h)
	V4l2Fourcc = 3, // V4L2_PIX_FMT_* (videodev2.h), single-buffer and multi-planar (_M) forms
	VaFourcc = 4,   // VA_FOURCC_* (va.h)
	VkFormat = 5,   // VkFormat, multi-planar where a format has several planes
	Dxgi = 6,       // DXGI_FORMAT
	Metal = 7,      // MTLPixelFormat (single-plane formats only)
	CoreVideo = 8,  // kCVPixelFormatType_* (an OSType fourcc)
	WebGpu = 9,     // WGPUTextureFormat (webgpu.h)
};
inline constexpr uint32_t kFormatApiCount = 10;
GPUHANDLE_API const char *formatApiName(FormatApi api) noexcept;

// One row of a table. Several formats may share an API value (RGBA and RGBX are both
// VK_FORMAT_R8G8B8A8_UNORM); `canonical` marks the one that value maps back to.
struct FormatMapping {
	PixelFormat format = PixelFormat::Unknown;
	uint32_t value = 0;
	const char *name = ""; // the API's own spelling: "NV12", "p010le", "VK_FORMAT_R8_UNORM"
	bool canonical = true;
};

// NotSupported (naming the format and the API) when the API has no such format.
GPUHANDLE_API Result<uint32_t> toApiFormat(FormatApi api, PixelFormat format);
// NotSupported when the value is not one gpuhandle maps; InvalidArgument for an unknown api.
GPUHANDLE_API Result<PixelFormat> fromApiFormat(FormatApi api, uint32_t value);
// The whole table: also answers "which formats can API X represent".
GPUHANDLE_API std::span<const FormatMapping> formatMappings(FormatApi api) noexcept;
GPUHANDLE_API bool canRepresent(FormatApi api, PixelFormat format) noexcept;

// APIs that describe each plane separately (a multi-plane frame is a set of textures).
enum class PlaneApi : uint32_t {
	VkFormat = 0,    // VkFormat of one plane (VK_FORMAT_R8_UNORM, VK_FORMAT_R8G8_UNORM ...)
	GlInternal = 1,  // GL sized internal format (GL_R8, GL_RG16 ...)
	CudaArray = 2,   // CUarray_format in value, channel count in extra
	OpenClImage = 3, // cl_channel_order in value, cl_channel_type in extra
};
inline constexpr uint32_t kPlaneApiCount = 4;
GPUHANDLE_API const char *planeApiName(PlaneApi api) noexcept;

struct PlaneMapping {
	PlaneFormat plane = PlaneFormat::R8;
	uint32_t value = 0;
	uint32_t extra = 0;
	const char *name = "";
};

GPUHANDLE_API Result<PlaneMapping> toPlaneApiFormat(PlaneApi api, PlaneFormat plane);
GPUHANDLE_API Result<PlaneFormat> fromPlaneApiFormat(PlaneApi api, uint32_t value,
						     uint32_t extra = 0);
GPUHANDLE_API std::span<const PlaneMapping> planeMappings(PlaneApi api) noexcept;

// The per-plane API formats of every plane of `format` (count = the format's plane count).
struct PlaneMappings {
	uint32_t count = 0;
	std::array<PlaneMapping, 4> planes{};
};
GPUHANDLE_API Result<PlaneMappings> planeApiFormats(PlaneApi api, PixelFormat format);

// VA_RT_FORMAT_* of a format (the render-target class vaCreateSurfaces needs).
GPUHANDLE_API Result<uint32_t> vaRtFormat(PixelFormat format);

} // namespace gpuhandle
