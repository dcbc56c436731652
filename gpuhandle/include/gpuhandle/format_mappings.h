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
// How many FormatApi values there are: they run from 0 to kFormatApiCount - 1.
inline constexpr uint32_t kFormatApiCount = 10;
// "GStreamer", "FFmpeg", "DRM", "VA-API" ...; "unknown" for a value outside the enum.
GPUHANDLE_API const char *formatApiName(FormatApi api) noexcept;

// One row of a table. Several formats may share an API value (RGBA and RGBX are both
// VK_FORMAT_R8G8B8A8_UNORM); `canonical` marks the one that value maps back to.
struct FormatMapping {
	PixelFormat format = PixelFormat::Unknown; // the gpuhandle format
	uint32_t value = 0; // the API's number for `format` (a fourcc for DRM, V4L2, VA, CoreVideo)
	// The API's own spelling: "NV12", "p010le", "VK_FORMAT_R8_UNORM".
	const char *name = "";
	bool canonical = true; // the row fromApiFormat() returns for `value`
};

// NotSupported (naming the format and the API) when the API has no such format.
GPUHANDLE_API Result<uint32_t> toApiFormat(FormatApi api, PixelFormat format);
// NotSupported when the value is not one gpuhandle maps; InvalidArgument for an unknown api.
GPUHANDLE_API Result<PixelFormat> fromApiFormat(FormatApi api, uint32_t value);
// The whole table: also answers "which formats can API X represent". Empty for an unknown api.
// The rows are static: the span stays valid for the life of the program.
GPUHANDLE_API std::span<const FormatMapping> formatMappings(FormatApi api) noexcept;
// True when the api's table has a row for `format` (false for an unknown api).
GPUHANDLE_API bool canRepresent(FormatApi api, PixelFormat format) noexcept;

// APIs that describe each plane separately (a multi-plane frame is a set of textures).
enum class PlaneApi : uint32_t {
	VkFormat = 0,    // VkFormat of one plane (VK_FORMAT_R8_UNORM, VK_FORMAT_R8G8_UNORM ...)
	GlInternal = 1,  // GL sized internal format (GL_R8, GL_RG16 ...)
	CudaArray = 2,   // CUarray_format in value, channel count in extra
	OpenClImage = 3, // cl_channel_order in value, cl_channel_type in extra
};
// How many PlaneApi values there are: they run from 0 to kPlaneApiCount - 1.
inline constexpr uint32_t kPlaneApiCount = 4;
// "Vulkan (per plane)", "OpenGL", "CUDA", "OpenCL"; "unknown" for a value outside the enum.
GPUHANDLE_API const char *planeApiName(PlaneApi api) noexcept;

// One row of a per-plane table: a plane's storage format and the API's numbers for it.
struct PlaneMapping {
	PlaneFormat plane = PlaneFormat::R8; // the gpuhandle plane format
	uint32_t value = 0;                  // the API's number (see PlaneApi for which)
	uint32_t extra = 0; // CUDA's channel count or OpenCL's cl_channel_type; 0 for Vulkan and GL
	// The API's spelling: "VK_FORMAT_R8_UNORM", "GL_R8", "CL_R/CL_UNORM_INT8" (order/type).
	const char *name = "";
};

// The api's row for a plane format. NotSupported when the api has no such format (CUDA arrays
// have no 3-channel or packed formats); InvalidArgument for an unknown api.
GPUHANDLE_API Result<PlaneMapping> toPlaneApiFormat(PlaneApi api, PlaneFormat plane);
// The plane format of an api's numbers; `extra` counts only for CudaArray and OpenClImage. Where
// several plane formats share numbers (CUDA's BGRA8 and RGBA8) the table's first row wins.
// NotSupported when no row matches; InvalidArgument for an unknown api.
GPUHANDLE_API Result<PlaneFormat> fromPlaneApiFormat(PlaneApi api, uint32_t value,
						     uint32_t extra = 0);
// The whole per-plane table (static rows); empty for an unknown api.
GPUHANDLE_API std::span<const PlaneMapping> planeMappings(PlaneApi api) noexcept;

// The per-plane API formats of every plane of `format` (count = the format's plane count).
struct PlaneMappings {
	uint32_t count = 0;                   // 1..4
	std::array<PlaneMapping, 4> planes{}; // plane i of the format; entries from count on unused
};
// NotSupported for an Unknown format or when the api has no format for one of its planes (the
// first such plane is named); InvalidArgument for an unknown api.
GPUHANDLE_API Result<PlaneMappings> planeApiFormats(PlaneApi api, PixelFormat format);

// VA_RT_FORMAT_* of a format (the render-target class vaCreateSurfaces needs).
GPUHANDLE_API Result<uint32_t> vaRtFormat(PixelFormat format);

} // namespace gpuhandle
