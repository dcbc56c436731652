// DXGI, Metal, CoreVideo and WebGPU format tables: numbers written out, as no header is available.
//
// None of these APIs has a header on Linux, so the values are literals taken from the published
// headers named above each table; tests/formats/test_formats_platform.cpp pins every entry against
// a second, separately written copy of those numbers. Only layouts that are bit-for-bit the same
// are mapped: same planes and plane order, same byte order, same bit positions. Where a format of
// ours only pads what the API's format calls alpha (RGBX in RGBA8), the entry is not canonical so
// that the API value still maps back to the format that has the alpha.
#include "format_tables.h"

namespace gpuhandle::detail {

namespace {

using F = PixelFormat;

// A CoreVideo OSType: four characters, the first in the most significant byte ('420v').
constexpr uint32_t osType(const char (&code)[5])
{
	return static_cast<uint32_t>(static_cast<unsigned char>(code[0])) << 24 |
	       static_cast<uint32_t>(static_cast<unsigned char>(code[1])) << 16 |
	       static_cast<uint32_t>(static_cast<unsigned char>(code[2])) << 8 |
	       static_cast<uint32_t>(static_cast<unsigned char>(code[3]));
}

// DXGI_FORMAT (dxgiformat.h, microsoft/DirectX-Headers; same numbers in mingw-w64). Channel
// orders of the video formats are from the DXGI_FORMAT reference ("the mapping to the view
// channel is ..."); P208's planes from d3dx12_property_format_table.cpp. DXGI has no 12-bit
// formats: 12-bit video travels in the 16-bit ones (P016, Y216, Y416; "from the runtime's point
// of view, P010 is no different than P016"), which is how FFmpeg and GStreamer map them too.
constexpr FormatMapping kDxgi[] = {
	{ F::RGBA, 28, "DXGI_FORMAT_R8G8B8A8_UNORM" },
	{ F::RGBX, 28, "DXGI_FORMAT_R8G8B8A8_UNORM", false },
	{ F::BGRA, 87, "DXGI_FORMAT_B8G8R8A8_UNORM" },
	{ F::BGRX, 88, "DXGI_FORMAT_B8G8R8X8_UNORM" },
	// R in bits 0..9, A in 30..31: the first named component is the least significant.
	{ F::RGB10A2, 24, "DXGI_FORMAT_R10G10B10A2_UNORM" },
	{ F::X2BGR10LE, 24, "DXGI_FORMAT_R10G10B10A2_UNORM", false },
	{ F::RGBA64LE, 11, "DXGI_FORMAT_R16G16B16A16_UNORM" },
	{ F::RGBA16U, 12, "DXGI_FORMAT_R16G16B16A16_UINT" },
	{ F::RGBAF16, 10, "DXGI_FORMAT_R16G16B16A16_FLOAT" },
	{ F::RGBAF32, 2, "DXGI_FORMAT_R32G32B32A32_FLOAT" },
	// B in bits 0..4, R in 11..15: FFmpeg's rgb565le.
	{ F::RGB565LE, 85, "DXGI_FORMAT_B5G6R5_UNORM" },
	{ F::GRAY8, 61, "DXGI_FORMAT_R8_UNORM" },
	{ F::GRAY16LE, 56, "DXGI_FORMAT_R16_UNORM" },
	{ F::R16U, 57, "DXGI_FORMAT_R16_UINT" },
	{ F::R32F, 41, "DXGI_FORMAT_R32_FLOAT" },
	{ F::NV12, 103, "DXGI_FORMAT_NV12" },
	{ F::P010LE, 104, "DXGI_FORMAT_P010" },
	{ F::P016LE, 105, "DXGI_FORMAT_P016" },
	{ F::P012LE, 105, "DXGI_FORMAT_P016", false },
	// Y plane, then a half-width, full-height interleaved CbCr plane: NV16.
	{ F::NV16, 130, "DXGI_FORMAT_P208" },
	// Y0 U Y1 V bytes.
	{ F::YUYV422, 107, "DXGI_FORMAT_YUY2" },
	{ F::Y210LE, 108, "DXGI_FORMAT_Y210" },
	// The only 16-bit Y0 U Y1 V format we have is the 12-bit one.
	{ F::Y212LE, 109, "DXGI_FORMAT_Y216" },
	// V U Y A bytes (V->R8, U->G8, Y->B8, A->A8).
	{ F::VUYA, 100, "DXGI_FORMAT_AYUV" },
	{ F::VUYX, 100, "DXGI_FORMAT_AYUV", false },
	// U in bits 0..9, Y 10..19, V 20..29, A 30..31.
	{ F::Y410, 101, "DXGI_FORMAT_Y410" },
	{ F::XV30, 101, "DXGI_FORMAT_Y410", false },
	// U Y V A 16-bit words; ours carry 12 bits in the high end of each.
	{ F::Y412LE, 102, "DXGI_FORMAT_Y416" },
	{ F::XV36, 102, "DXGI_FORMAT_Y416", false },
};

// MTLPixelFormat (Metal/MTLPixelFormat.hpp of Apple's metal-cpp; the same numbers as
// MTLPixelFormat.h). Single-plane formats only: a multi-plane frame is one texture per plane.
// Packed formats name their components from the least significant bit (MoltenVK maps
// VK_FORMAT_A2B10G10R10_UNORM_PACK32 to RGB10A2Unorm and R5G6B5_UNORM_PACK16 to B5G6R5Unorm).
// BGR10A2Unorm (94) has X2RGB10LE's bits but real alpha, and no format of ours with that alpha
// to map back to, so it is left out rather than read back as padding.
constexpr FormatMapping kMetal[] = {
	{ F::RGBA, 70, "MTLPixelFormatRGBA8Unorm" },
	{ F::RGBX, 70, "MTLPixelFormatRGBA8Unorm", false },
	{ F::BGRA, 80, "MTLPixelFormatBGRA8Unorm" },
	{ F::BGRX, 80, "MTLPixelFormatBGRA8Unorm", false },
	{ F::RGB10A2, 90, "MTLPixelFormatRGB10A2Unorm" },
	{ F::X2BGR10LE, 90, "MTLPixelFormatRGB10A2Unorm", false },
	{ F::RGBA64LE, 110, "MTLPixelFormatRGBA16Unorm" },
	{ F::RGBA16U, 113, "MTLPixelFormatRGBA16Uint" },
	{ F::RGBAF16, 115, "MTLPixelFormatRGBA16Float" },
	{ F::RGBAF32, 125, "MTLPixelFormatRGBA32Float" },
	{ F::RGB565LE, 40, "MTLPixelFormatB5G6R5Unorm" },
	{ F::GRAY8, 10, "MTLPixelFormatR8Unorm" },
	{ F::GRAY16LE, 20, "MTLPixelFormatR16Unorm" },
	{ F::R16U, 23, "MTLPixelFormatR16Uint" },
	{ F::R32F, 55, "MTLPixelFormatR32Float" },
	// 4:2:2 with G as luma (Vulkan G8B8G8R8_422_UNORM / B8G8R8G8_422_UNORM): Y0 Cb Y1 Cr and
	// Cb Y0 Cr Y1 bytes, what CVMetalTextureCache gives for 'yuvs' and '2vuy'.
	{ F::YUYV422, 240, "MTLPixelFormatGBGR422" },
	{ F::UYVY422, 241, "MTLPixelFormatBGRG422" },
};

// kCVPixelFormatType_* (CoreVideo/CVPixelBuffer.h, macOS 11.3 SDK). Video and full range are
// separate OSTypes of one layout: the video-range one comes first (what toApiFormat returns),
// the full-range one is another canonical spelling. Planar plane order is Y, Cb, Cr
// (CVPlanarPixelBufferInfo_YCbCrPlanar); bi-planar chroma is interleaved Cb Cr.
constexpr FormatMapping kCoreVideo[] = {
	{ F::NV12, osType("420v"), "kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange" },
	{ F::NV12, osType("420f"), "kCVPixelFormatType_420YpCbCr8BiPlanarFullRange" },
	{ F::NV16, osType("422v"), "kCVPixelFormatType_422YpCbCr8BiPlanarVideoRange" },
	{ F::NV16, osType("422f"), "kCVPixelFormatType_422YpCbCr8BiPlanarFullRange" },
	{ F::NV24, osType("444v"), "kCVPixelFormatType_444YpCbCr8BiPlanarVideoRange" },
	{ F::NV24, osType("444f"), "kCVPixelFormatType_444YpCbCr8BiPlanarFullRange" },
	// "each 10 bits in the MSBs of 16bits", little-endian: P010, P210, P410.
	{ F::P010LE, osType("x420"), "kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange" },
	{ F::P010LE, osType("xf20"), "kCVPixelFormatType_420YpCbCr10BiPlanarFullRange" },
	{ F::P210LE, osType("x422"), "kCVPixelFormatType_422YpCbCr10BiPlanarVideoRange" },
	{ F::P210LE, osType("xf22"), "kCVPixelFormatType_422YpCbCr10BiPlanarFullRange" },
	{ F::P410LE, osType("x444"), "kCVPixelFormatType_444YpCbCr10BiPlanarVideoRange" },
	{ F::P410LE, osType("xf44"), "kCVPixelFormatType_444YpCbCr10BiPlanarFullRange" },
	// 420v's two planes plus a full-resolution alpha plane: GStreamer's AV12.
	{ F::NV12A, osType("v0a8"), "kCVPixelFormatType_420YpCbCr8VideoRange_8A_TriPlanar" },
	{ F::YUV420P, osType("y420"), "kCVPixelFormatType_420YpCbCr8Planar" },
	{ F::YUV420P, osType("f420"), "kCVPixelFormatType_420YpCbCr8PlanarFullRange" },
	{ F::UYVY422, osType("2vuy"), "kCVPixelFormatType_422YpCbCr8" },
	{ F::YUYV422, osType("yuvs"), "kCVPixelFormatType_422YpCbCr8_yuvs" },
	{ F::YUYV422, osType("yuvf"), "kCVPixelFormatType_422YpCbCr8FullRange" },
	// Apple's own v210, the layout GStreamer and FFmpeg call v210.
	{ F::V210, osType("v210"), "kCVPixelFormatType_422YpCbCr10" },
	// A Y' Cb Cr, 16-bit little-endian samples: FFmpeg's ayuv64le.
	{ F::AYUV64LE, osType("y416"), "kCVPixelFormatType_4444AYpCbCr16" },
	// Byte orders as named: 32ARGB is A R G B in memory.
	{ F::BGRA, osType("BGRA"), "kCVPixelFormatType_32BGRA" },
	{ F::BGRX, osType("BGRA"), "kCVPixelFormatType_32BGRA", false },
	{ F::RGBA, osType("RGBA"), "kCVPixelFormatType_32RGBA" },
	{ F::RGBX, osType("RGBA"), "kCVPixelFormatType_32RGBA", false },
	{ F::ARGB, 0x00000020, "kCVPixelFormatType_32ARGB" },
	{ F::XRGB, 0x00000020, "kCVPixelFormatType_32ARGB", false },
	{ F::ABGR, osType("ABGR"), "kCVPixelFormatType_32ABGR" },
	{ F::XBGR, osType("ABGR"), "kCVPixelFormatType_32ABGR", false },
	{ F::RGB24, 0x00000018, "kCVPixelFormatType_24RGB" },
	{ F::BGR24, osType("24BG"), "kCVPixelFormatType_24BGR" },
	{ F::RGB565LE, osType("L565"), "kCVPixelFormatType_16LE565" },
	{ F::RGBA64LE, osType("l64r"), "kCVPixelFormatType_64RGBALE" },
	{ F::RGBAF16, osType("RGhA"), "kCVPixelFormatType_64RGBAHalf" },
	{ F::RGBAF32, osType("RGfA"), "kCVPixelFormatType_128RGBAFloat" },
	{ F::GRAY8, osType("L008"), "kCVPixelFormatType_OneComponent8" },
	{ F::GRAY16LE, osType("L016"), "kCVPixelFormatType_OneComponent16" },
	{ F::R32F, osType("L00f"), "kCVPixelFormatType_OneComponent32Float" },
};

// WGPUTextureFormat (webgpu.h of webgpu-native/webgpu-headers). The enum was renumbered twice;
// these are the numbers since 5a6c263 (2025-07-08, "Add new texture formats from
// texture-formats-tier1", which made R16Unorm and RGBA16Unorm core), unchanged through b3f67b8.
// Upstream has no multi-planar (NV12) format: that is a Dawn extension.
constexpr FormatMapping kWebGpu[] = {
	{ F::RGBA, 0x16, "WGPUTextureFormat_RGBA8Unorm" },
	{ F::RGBX, 0x16, "WGPUTextureFormat_RGBA8Unorm", false },
	{ F::BGRA, 0x1B, "WGPUTextureFormat_BGRA8Unorm" },
	{ F::BGRX, 0x1B, "WGPUTextureFormat_BGRA8Unorm", false },
	{ F::RGB10A2, 0x1E, "WGPUTextureFormat_RGB10A2Unorm" },
	{ F::X2BGR10LE, 0x1E, "WGPUTextureFormat_RGB10A2Unorm", false },
	{ F::RGBA64LE, 0x24, "WGPUTextureFormat_RGBA16Unorm" },
	{ F::RGBA16U, 0x26, "WGPUTextureFormat_RGBA16Uint" },
	{ F::RGBAF16, 0x28, "WGPUTextureFormat_RGBA16Float" },
	{ F::RGBAF32, 0x29, "WGPUTextureFormat_RGBA32Float" },
	{ F::GRAY8, 0x01, "WGPUTextureFormat_R8Unorm" },
	{ F::GRAY16LE, 0x05, "WGPUTextureFormat_R16Unorm" },
	{ F::R16U, 0x07, "WGPUTextureFormat_R16Uint" },
	{ F::R32F, 0x0E, "WGPUTextureFormat_R32Float" },
};

} // namespace

std::span<const FormatMapping> dxgiFormats() noexcept
{
	return kDxgi;
}

std::span<const FormatMapping> metalFormats() noexcept
{
	return kMetal;
}

std::span<const FormatMapping> coreVideoFormats() noexcept
{
	return kCoreVideo;
}

std::span<const FormatMapping> webgpuFormats() noexcept
{
	return kWebGpu;
}

} // namespace gpuhandle::detail
