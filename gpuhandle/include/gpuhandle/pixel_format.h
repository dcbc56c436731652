// PixelFormat: every layout gpuhandle knows, with planes, storage formats, depth, packing, alpha.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/result.h>

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace GPUHANDLE_API gpuhandle {

// Stable numbers (C API, wire format): value = shader ordinal + 1, Unknown = 0. New formats are
// appended; a test pins every (format, ordinal) pair. Names follow FFmpeg's spelling.
enum class PixelFormat : uint32_t {
	Unknown = 0,
	// The 15 formats whose shader ordinals gpu-handle-types fixes (0..14).
	NV12,
	NV21,
	P010LE,
	P016LE,
	P210LE,
	P216LE,
	P410LE,
	P416LE,
	YUV420P,
	YUV422P,
	YUV444P,
	YUV420P10LE,
	YUV420P12LE,
	YUV420P14LE,
	YUV420P16LE,
	// The rest of gpu-handle-types' 48 formats (ordinals 15..47).
	YUV422P10LE,
	YUV422P12LE,
	YUV422P14LE,
	YUV422P16LE,
	YUV444P10LE,
	YUV444P12LE,
	YUV444P14LE,
	YUV444P16LE,
	NV16,
	NV24,
	NV12A,
	YUVA444P10LE,
	YUVA444P12LE,
	UYVY422,
	YUYV422,
	AYUV64LE,
	V216,
	Y210LE,
	RGBA,
	BGRA,
	RGBX,
	BGRX,
	RGBA64LE,
	BGRA64LE,
	RGBAF16,
	BGRAF16,
	RGBAF32,
	BGRAF32,
	RGB10A2,
	RGB48LE,
	R16U,
	R32F,
	RGBA16U,
	// What hardware decoders and broadcast gear emit (48..62).
	P012LE,
	Y212LE,
	XV30,
	XV36,
	VUYA,
	VUYX,
	V210,
	GRAY8,
	GRAY10LE,
	GRAY16LE,
	YUVA420P,
	X2RGB10LE,
	X2BGR10LE,
	RGB24,
	BGR24,
	// Common layouts GStreamer, FFmpeg, DRM and V4L2 share (63..).
	ARGB,
	ABGR,
	XRGB,
	XBGR,
	YVYU422,
	VYUY422,
	YV12,
	YUV411P,
	YUV410P,
	GBRP,
	GBRP10LE,
	GBRP12LE,
	GBRAP,
	GBRAP10LE,
	GBRAP12LE,
	RGB565LE,
	BGR565LE,
	YUVA420P10LE,
	YUVA422P10LE,
	Y410,
	Y412LE,
	NV61,
	GRAY12LE,
};
// One past the largest PixelFormat value: known formats are 1 .. kPixelFormatCount - 1.
inline constexpr uint32_t kPixelFormatCount = static_cast<uint32_t>(PixelFormat::GRAY12LE) + 1;

// The smallest texture format a plane uploads as; shaders reinterpret its channels (AYUV64 is
// stored as RGBA16, YUYV as RGBA8 at half width). RGB10A2 is bit-exact: R in bits 0..9, G 10..19,
// B 20..29, A 30..31 (DXGI R10G10B10A2_UNORM, Vulkan A2B10G10R10_UNORM_PACK32).
enum class PlaneFormat : uint8_t {
	R8,
	RG8,
	RGB8,
	RGBA8,
	BGRA8,
	R16,
	RG16,
	RGB16,
	RGBA16,
	RGBA16F,
	RGBA32F,
	R16Uint,
	R32Float,
	RGBA16Uint,
	RGB10A2,
	RGB565,
};
// How many PlaneFormat values there are: they run from 0 to kPlaneFormatCount - 1.
inline constexpr uint32_t kPlaneFormatCount = static_cast<uint32_t>(PlaneFormat::RGB565) + 1;
// Bytes of one texel of `format` (3 for RGB8, 4 for RGB10A2); 0 for a value outside the enum.
GPUHANDLE_API uint32_t bytesPerTexel(PlaneFormat format) noexcept;
// "r8", "rgba16f", "rgb10a2"; "unknown" for a value outside the enum.
GPUHANDLE_API const char *planeFormatName(PlaneFormat format) noexcept;

// What a format's samples carry: Yuv is luma and chroma, Rgb is red, green and blue (planar GBRP
// included), Gray is one channel (luma, or plain data such as R16U and R32F).
enum class ColorFamily : uint8_t { Yuv, Rgb, Gray };

// Where the significant bits of a sample sit.
enum class SamplePacking : uint8_t {
	ByteAligned, // 8 bits per byte, or 16 bits per 16-bit word
	MsbAligned,  // fewer bits in the high end of a 16-bit word (P010, Y210)
	LsbAligned,  // fewer bits in the low end of a 16-bit word (YUV420P10LE)
	Packed,      // several samples share one word (v210, RGB10A2, Y410)
	Float,       // IEEE half or single floats
};

// What a format's alpha channel slot, if it has one, carries.
enum class AlphaMode : uint8_t {
	None,          // no alpha channel
	Straight,      // alpha not multiplied into colour
	Premultiplied, // colour already multiplied by alpha
	Padding,       // a channel slot that carries nothing (RGBX, X2RGB10, XV30)
};

// One plane: its storage format, subsampling, and how many pixels one block of texels holds.
struct PlaneInfo {
	PlaneFormat format = PlaneFormat::R8; // the storage format of this plane's texels
	uint8_t hsub = 1; // horizontal subsampling: 2 for 4:2:0 and 4:2:2 chroma
	uint8_t vsub = 1; // vertical subsampling: 2 for 4:2:0 chroma
	// Pixels (after subsampling) in one block: 2 for YUYV, 6 for v210.
	uint8_t pixelsPerBlock = 1;
	uint8_t texelsPerBlock = 1; // storage texels in one block: 1 for YUYV, 4 for v210

	// Texels in a row of `width` frame pixels, rounding up as the libraries do.
	uint32_t rowTexels(uint32_t width) const noexcept;
	// Bytes in that row: rowTexels(width) x bytesPerTexel(format), without padding.
	uint64_t rowBytes(uint32_t width) const noexcept;
	// Rows of this plane in a frame `height` pixels tall: height / vsub, rounded up.
	uint32_t rows(uint32_t height) const noexcept;
};

// One row of the format table: everything gpuhandle knows about one PixelFormat. Rows are
// static: pointers to them stay valid for the life of the program.
struct PixelFormatInfo {
	PixelFormat format = PixelFormat::Unknown; // the format this row describes
	// "nv12", "p010le", "rgba" (FFmpeg's names where FFmpeg has one)
	const char *name = "unknown";
	uint32_t shaderOrdinal = 0;            // what shaders switch on: the enum value - 1
	ColorFamily family = ColorFamily::Yuv; // what the samples carry
	uint8_t depth = 0;                     // significant bits per sample
	SamplePacking packing = SamplePacking::ByteAligned; // where a sample's bits sit
	AlphaMode alpha = AlphaMode::None;                  // what the alpha slot carries
	uint8_t numPlanes = 0;                              // 1..4
	// In the format's plane order; the first numPlanes are set.
	std::array<PlaneInfo, 4> planes{};

	// True for a real alpha channel (Straight or Premultiplied); Padding carries none.
	bool hasAlpha() const noexcept
	{
		return alpha == AlphaMode::Straight || alpha == AlphaMode::Premultiplied;
	}
	// More than 8 bits per sample, or float: can carry PQ/HLG without banding.
	bool isHdrCapable() const noexcept { return depth > 8 || packing == SamplePacking::Float; }
	// log2 of the horizontal chroma subsampling (FFmpeg's log2_chroma_w): 1 for 4:2:0 and
	// 4:2:2, packed 4:2:2 (YUYV, Y210, v210) included.
	uint8_t chromaShiftX() const noexcept;
	// log2 of the vertical chroma subsampling (FFmpeg's log2_chroma_h): 1 for 4:2:0; 0 for
	// every single-plane format.
	uint8_t chromaShiftY() const noexcept;
};

// The description of `format`; NotSupported for Unknown or a number outside the enum.
GPUHANDLE_API Result<const PixelFormatInfo *> pixelFormatInfo(PixelFormat format);
// The same row, or nullptr for a value that is not a PixelFormat: the per-frame lookup (as
// gst_video_format_get_info and av_pix_fmt_desc_get), with no Result or Error to build.
GPUHANDLE_API const PixelFormatInfo *findPixelFormatInfo(PixelFormat format) noexcept;
// Every format gpuhandle knows, in enum order (Unknown excluded).
GPUHANDLE_API std::span<const PixelFormatInfo> allPixelFormats() noexcept;
// "nv12"; "unknown" for Unknown or a value outside the enum.
GPUHANDLE_API const char *pixelFormatName(PixelFormat format) noexcept;
// The format named `name` (case-sensitive, as pixelFormatName spells it).
GPUHANDLE_API Result<PixelFormat> pixelFormatFromName(std::string_view name);

} // namespace gpuhandle
