// Vulkan, OpenGL, CUDA and OpenCL format tables: whole VkFormats and the format of each plane.
#include "format_tables.h"

namespace gpuhandle::detail {

namespace {

using F = PixelFormat;
using P = PlaneFormat;

// The numbers are written out so that the core links nothing; tests/formats/
// test_formats_gpu_apis.cpp checks each one against vulkan_core.h, glext.h, cl.h and
// ffnvcodec's dynlink_cuda.h by the name stored beside it.

// Whole formats. Vulkan names multi-planar YCbCr with G = Y, B = Cb, R = Cr, plane 0 first.
// Left out, because no VkFormat has the same bits in the same place:
// - LSB-aligned 10/12/14-bit formats (YUV420P10LE, GRAY10LE, GBRP10LE ...): Vulkan's X6/X4
//   formats keep the bits at the top of each 16-bit word; R16_UNORM would scale them wrongly.
// - Cr-before-Cb orders (NV21, NV61, YV12, YVYU422, VYUY422): no VkFormat has them.
// - BGR-ordered 16-bit and float (BGRA64LE, BGRAF16, BGRAF32), ARGB, ABGR, XRGB, XBGR.
// - Formats with an alpha plane (NV12A, YUVA*, GBRAP*), 4:1:1 and 4:1:0, and v210.
// - AYUV64LE: its alpha sits in the first word, which a VkFormat reads as R.
// Packed 4:4:4 YUV (VUYA, XV30, Y410, XV36, Y412) has no YCbCr VkFormat: those rows name the
// colour format with the same bits, which shaders read raw (as FFmpeg's hwcontext_vulkan
// does). XV30 and Y410 land on A2R10G10B10, where B = Cb, G = Y, R = Cr as a
// VkSamplerYcbcrConversion expects; the others need its component swizzle.
constexpr FormatMapping kVulkan[] = {
	{ F::NV12, 1000156003, "VK_FORMAT_G8_B8R8_2PLANE_420_UNORM" },
	{ F::NV16, 1000156005, "VK_FORMAT_G8_B8R8_2PLANE_422_UNORM" },
	{ F::NV24, 1000330000, "VK_FORMAT_G8_B8R8_2PLANE_444_UNORM" },
	{ F::P010LE, 1000156013, "VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16" },
	{ F::P210LE, 1000156015, "VK_FORMAT_G10X6_B10X6R10X6_2PLANE_422_UNORM_3PACK16" },
	{ F::P410LE, 1000330001, "VK_FORMAT_G10X6_B10X6R10X6_2PLANE_444_UNORM_3PACK16" },
	{ F::P012LE, 1000156023, "VK_FORMAT_G12X4_B12X4R12X4_2PLANE_420_UNORM_3PACK16" },
	{ F::P016LE, 1000156030, "VK_FORMAT_G16_B16R16_2PLANE_420_UNORM" },
	{ F::P216LE, 1000156032, "VK_FORMAT_G16_B16R16_2PLANE_422_UNORM" },
	{ F::P416LE, 1000330003, "VK_FORMAT_G16_B16R16_2PLANE_444_UNORM" },
	{ F::YUV420P, 1000156002, "VK_FORMAT_G8_B8_R8_3PLANE_420_UNORM" },
	{ F::YUV422P, 1000156004, "VK_FORMAT_G8_B8_R8_3PLANE_422_UNORM" },
	{ F::YUV444P, 1000156006, "VK_FORMAT_G8_B8_R8_3PLANE_444_UNORM" },
	// Vulkan's literal meaning: G in plane 0, B in plane 1, R in plane 2 (sampled with
	// RGB_IDENTITY); the value maps back to the video format.
	{ F::GBRP, 1000156006, "VK_FORMAT_G8_B8_R8_3PLANE_444_UNORM", false },
	{ F::YUV420P16LE, 1000156029, "VK_FORMAT_G16_B16_R16_3PLANE_420_UNORM" },
	{ F::YUV422P16LE, 1000156031, "VK_FORMAT_G16_B16_R16_3PLANE_422_UNORM" },
	{ F::YUV444P16LE, 1000156033, "VK_FORMAT_G16_B16_R16_3PLANE_444_UNORM" },
	// Packed 4:2:2: one 2x1 block per texel, G0 B G1 R = Y0 Cb Y1 Cr.
	{ F::YUYV422, 1000156000, "VK_FORMAT_G8B8G8R8_422_UNORM" },
	{ F::UYVY422, 1000156001, "VK_FORMAT_B8G8R8G8_422_UNORM" },
	{ F::Y210LE, 1000156010, "VK_FORMAT_G10X6B10X6G10X6R10X6_422_UNORM_4PACK16" },
	{ F::Y212LE, 1000156020, "VK_FORMAT_G12X4B12X4G12X4R12X4_422_UNORM_4PACK16" },
	{ F::V216, 1000156028, "VK_FORMAT_B16G16R16G16_422_UNORM" }, // GStreamer v216 is U Y V Y
	{ F::RGBA, 37, "VK_FORMAT_R8G8B8A8_UNORM" },
	// The same bytes as a little-endian 32-bit word; kept so that images made with it map back.
	{ F::RGBA, 51, "VK_FORMAT_A8B8G8R8_UNORM_PACK32" },
	{ F::RGBX, 37, "VK_FORMAT_R8G8B8A8_UNORM", false },
	{ F::VUYA, 37, "VK_FORMAT_R8G8B8A8_UNORM", false },
	{ F::VUYX, 37, "VK_FORMAT_R8G8B8A8_UNORM", false },
	{ F::BGRA, 44, "VK_FORMAT_B8G8R8A8_UNORM" },
	{ F::BGRX, 44, "VK_FORMAT_B8G8R8A8_UNORM", false },
	{ F::RGB24, 23, "VK_FORMAT_R8G8B8_UNORM" },
	{ F::BGR24, 30, "VK_FORMAT_B8G8R8_UNORM" },
	{ F::RGB48LE, 84, "VK_FORMAT_R16G16B16_UNORM" },
	{ F::RGBA64LE, 91, "VK_FORMAT_R16G16B16A16_UNORM" },
	{ F::RGBA16U, 95, "VK_FORMAT_R16G16B16A16_UINT" },
	{ F::RGBAF16, 97, "VK_FORMAT_R16G16B16A16_SFLOAT" },
	{ F::RGBAF32, 109, "VK_FORMAT_R32G32B32A32_SFLOAT" },
	// R in bits 0..9, A in 30..31.
	{ F::RGB10A2, 64, "VK_FORMAT_A2B10G10R10_UNORM_PACK32" },
	{ F::X2BGR10LE, 64, "VK_FORMAT_A2B10G10R10_UNORM_PACK32", false },
	// B in bits 0..9, R in 20..29; XV30/Y410 hold Cb, Y, Cr there.
	{ F::X2RGB10LE, 58, "VK_FORMAT_A2R10G10B10_UNORM_PACK32" },
	{ F::XV30, 58, "VK_FORMAT_A2R10G10B10_UNORM_PACK32", false },
	{ F::Y410, 58, "VK_FORMAT_A2R10G10B10_UNORM_PACK32", false },
	// Four MSB-aligned 12-bit words, U Y V A: Y412 is the one with a real alpha.
	{ F::Y412LE, 1000156019, "VK_FORMAT_R12X4G12X4B12X4A12X4_UNORM_4PACK16" },
	{ F::XV36, 1000156019, "VK_FORMAT_R12X4G12X4B12X4A12X4_UNORM_4PACK16", false },
	{ F::RGB565LE, 4, "VK_FORMAT_R5G6B5_UNORM_PACK16" }, // R in bits 11..15
	{ F::BGR565LE, 5, "VK_FORMAT_B5G6R5_UNORM_PACK16" },
	{ F::GRAY8, 9, "VK_FORMAT_R8_UNORM" },
	{ F::GRAY16LE, 70, "VK_FORMAT_R16_UNORM" },
	{ F::R16U, 74, "VK_FORMAT_R16_UINT" },
	{ F::R32F, 100, "VK_FORMAT_R32_SFLOAT" },
};

// One plane as its own VkImage (or a view of one plane of a multi-planar image: R16_UNORM is
// size-compatible with the R10X6/R12X4 plane formats Vulkan names for P010 and P012).
constexpr PlaneMapping kVulkanPlanes[] = {
	{ P::R8, 9, 0, "VK_FORMAT_R8_UNORM" },
	{ P::RG8, 16, 0, "VK_FORMAT_R8G8_UNORM" },
	{ P::RGB8, 23, 0, "VK_FORMAT_R8G8B8_UNORM" },
	{ P::RGBA8, 37, 0, "VK_FORMAT_R8G8B8A8_UNORM" },
	{ P::BGRA8, 44, 0, "VK_FORMAT_B8G8R8A8_UNORM" },
	{ P::R16, 70, 0, "VK_FORMAT_R16_UNORM" },
	{ P::RG16, 77, 0, "VK_FORMAT_R16G16_UNORM" },
	{ P::RGB16, 84, 0, "VK_FORMAT_R16G16B16_UNORM" },
	{ P::RGBA16, 91, 0, "VK_FORMAT_R16G16B16A16_UNORM" },
	{ P::RGBA16F, 97, 0, "VK_FORMAT_R16G16B16A16_SFLOAT" },
	{ P::RGBA32F, 109, 0, "VK_FORMAT_R32G32B32A32_SFLOAT" },
	{ P::R16Uint, 74, 0, "VK_FORMAT_R16_UINT" },
	{ P::R32Float, 100, 0, "VK_FORMAT_R32_SFLOAT" },
	{ P::RGBA16Uint, 95, 0, "VK_FORMAT_R16G16B16A16_UINT" },
	{ P::RGB10A2, 64, 0, "VK_FORMAT_A2B10G10R10_UNORM_PACK32" },
	{ P::RGB565, 4, 0, "VK_FORMAT_R5G6B5_UNORM_PACK16" },
};

// GL sized internal formats. Desktop GL has no BGRA internal format (it allocates GL_RGBA8 and
// swaps on upload with GL_BGRA); GL_BGRA8_EXT (EXT_texture_format_BGRA8888, GLES) keeps the
// byte order in the format so that the value maps back to BGRA8.
constexpr PlaneMapping kGlPlanes[] = {
	{ P::R8, 0x8229, 0, "GL_R8" },
	{ P::RG8, 0x822B, 0, "GL_RG8" },
	{ P::RGB8, 0x8051, 0, "GL_RGB8" },
	{ P::RGBA8, 0x8058, 0, "GL_RGBA8" },
	{ P::BGRA8, 0x93A1, 0, "GL_BGRA8_EXT" },
	{ P::R16, 0x822A, 0, "GL_R16" },
	{ P::RG16, 0x822C, 0, "GL_RG16" },
	{ P::RGB16, 0x8054, 0, "GL_RGB16" },
	{ P::RGBA16, 0x805B, 0, "GL_RGBA16" },
	{ P::RGBA16F, 0x881A, 0, "GL_RGBA16F" },
	{ P::RGBA32F, 0x8814, 0, "GL_RGBA32F" },
	{ P::R16Uint, 0x8234, 0, "GL_R16UI" },
	{ P::R32Float, 0x822E, 0, "GL_R32F" },
	{ P::RGBA16Uint, 0x8D76, 0, "GL_RGBA16UI" },
	{ P::RGB10A2, 0x8059, 0, "GL_RGB10_A2" }, // with GL_UNSIGNED_INT_2_10_10_10_REV: R in 0..9
	{ P::RGB565, 0x8D62, 0, "GL_RGB565" },    // with GL_UNSIGNED_SHORT_5_6_5: R in 11..15
};

// CUarray_format and channel count. A CUDA array knows only the element type and how many
// there are: channel order and normalised-or-integer reads are chosen by the texture
// descriptor. So BGRA8, R16Uint and RGBA16Uint share their numbers with RGBA8, R16 and RGBA16,
// listed first, and map back to those. CUDA arrays have 1, 2 or 4 channels (no RGB8, RGB16)
// and no packed formats (no RGB10A2, RGB565).
constexpr PlaneMapping kCudaPlanes[] = {
	{ P::R8, 0x01, 1, "CU_AD_FORMAT_UNSIGNED_INT8" },
	{ P::RG8, 0x01, 2, "CU_AD_FORMAT_UNSIGNED_INT8" },
	{ P::RGBA8, 0x01, 4, "CU_AD_FORMAT_UNSIGNED_INT8" },
	{ P::R16, 0x02, 1, "CU_AD_FORMAT_UNSIGNED_INT16" },
	{ P::RG16, 0x02, 2, "CU_AD_FORMAT_UNSIGNED_INT16" },
	{ P::RGBA16, 0x02, 4, "CU_AD_FORMAT_UNSIGNED_INT16" },
	{ P::RGBA16F, 0x10, 4, "CU_AD_FORMAT_HALF" },
	{ P::RGBA32F, 0x20, 4, "CU_AD_FORMAT_FLOAT" },
	{ P::R32Float, 0x20, 1, "CU_AD_FORMAT_FLOAT" },
	{ P::BGRA8, 0x01, 4, "CU_AD_FORMAT_UNSIGNED_INT8" },
	{ P::R16Uint, 0x02, 1, "CU_AD_FORMAT_UNSIGNED_INT16" },
	{ P::RGBA16Uint, 0x02, 4, "CU_AD_FORMAT_UNSIGNED_INT16" },
};

// cl_channel_order and cl_channel_type, named "order/type". CL_RGB takes only packed types, so
// RGB8 and RGB16 have no image format. RGB10A2 has none either: CL_UNORM_INT_101010_2 puts R in
// bits 31..22 and A in 1..0, the reverse of ours.
constexpr PlaneMapping kOpenClPlanes[] = {
	{ P::R8, 0x10B0, 0x10D2, "CL_R/CL_UNORM_INT8" },
	{ P::RG8, 0x10B2, 0x10D2, "CL_RG/CL_UNORM_INT8" },
	{ P::RGBA8, 0x10B5, 0x10D2, "CL_RGBA/CL_UNORM_INT8" },
	{ P::BGRA8, 0x10B6, 0x10D2, "CL_BGRA/CL_UNORM_INT8" },
	{ P::R16, 0x10B0, 0x10D3, "CL_R/CL_UNORM_INT16" },
	{ P::RG16, 0x10B2, 0x10D3, "CL_RG/CL_UNORM_INT16" },
	{ P::RGBA16, 0x10B5, 0x10D3, "CL_RGBA/CL_UNORM_INT16" },
	{ P::RGBA16F, 0x10B5, 0x10DD, "CL_RGBA/CL_HALF_FLOAT" },
	{ P::RGBA32F, 0x10B5, 0x10DE, "CL_RGBA/CL_FLOAT" },
	{ P::R16Uint, 0x10B0, 0x10DB, "CL_R/CL_UNSIGNED_INT16" },
	{ P::R32Float, 0x10B0, 0x10DE, "CL_R/CL_FLOAT" },
	{ P::RGBA16Uint, 0x10B5, 0x10DB, "CL_RGBA/CL_UNSIGNED_INT16" },
	{ P::RGB565, 0x10B4, 0x10D4, "CL_RGB/CL_UNORM_SHORT_565" }, // R in bits 15..11
};

} // namespace

std::span<const FormatMapping> vulkanFormats() noexcept
{
	return kVulkan;
}

std::span<const PlaneMapping> vulkanPlaneFormats() noexcept
{
	return kVulkanPlanes;
}

std::span<const PlaneMapping> glPlaneFormats() noexcept
{
	return kGlPlanes;
}

std::span<const PlaneMapping> cudaPlaneFormats() noexcept
{
	return kCudaPlanes;
}

std::span<const PlaneMapping> openclPlaneFormats() noexcept
{
	return kOpenClPlanes;
}

} // namespace gpuhandle::detail
