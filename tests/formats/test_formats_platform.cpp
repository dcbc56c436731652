// DXGI, Metal, CoreVideo and WebGPU tables against the numbers their published headers give.
//
// These APIs have no header on Linux, so each table is compared, entry by entry and in order,
// with a copy of its numbers written here independently of the library (as plain numbers, with
// the header named). Then the round trip X -> PixelFormat -> X is checked for every table.
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/pixel_format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <span>
#include <vector>

// Last: check.h defines a fail() macro that breaks later standard headers.
#include "check_helpers.h"

using namespace gpuhandle;

namespace {

using F = PixelFormat;

// One expected entry: the API's number and spelling, whether it is the value's canonical
// entry, and how many planes the API's own description gives the format.
struct Expected {
	PixelFormat format;
	uint32_t value;
	const char *name;
	bool canonical;
	uint32_t planes;
};

// DXGI_FORMAT, from dxgiformat.h (microsoft/DirectX-Headers include/directx/dxgiformat.h;
// mingw-w64 has the same numbers in hex). Plane counts from the DXGI_FORMAT reference and
// d3dx12_property_format_table.cpp (NV12, P010, P016 and P208 are two-plane).
constexpr Expected kDxgi[] = {
	{ F::RGBA, 28, "DXGI_FORMAT_R8G8B8A8_UNORM", true, 1 },
	{ F::RGBX, 28, "DXGI_FORMAT_R8G8B8A8_UNORM", false, 1 },
	{ F::BGRA, 87, "DXGI_FORMAT_B8G8R8A8_UNORM", true, 1 },
	{ F::BGRX, 88, "DXGI_FORMAT_B8G8R8X8_UNORM", true, 1 },
	{ F::RGB10A2, 24, "DXGI_FORMAT_R10G10B10A2_UNORM", true, 1 },
	{ F::X2BGR10LE, 24, "DXGI_FORMAT_R10G10B10A2_UNORM", false, 1 },
	{ F::RGBA64LE, 11, "DXGI_FORMAT_R16G16B16A16_UNORM", true, 1 },
	{ F::RGBA16U, 12, "DXGI_FORMAT_R16G16B16A16_UINT", true, 1 },
	{ F::RGBAF16, 10, "DXGI_FORMAT_R16G16B16A16_FLOAT", true, 1 },
	{ F::RGBAF32, 2, "DXGI_FORMAT_R32G32B32A32_FLOAT", true, 1 },
	{ F::RGB565LE, 85, "DXGI_FORMAT_B5G6R5_UNORM", true, 1 },
	{ F::GRAY8, 61, "DXGI_FORMAT_R8_UNORM", true, 1 },
	{ F::GRAY16LE, 56, "DXGI_FORMAT_R16_UNORM", true, 1 },
	{ F::R16U, 57, "DXGI_FORMAT_R16_UINT", true, 1 },
	{ F::R32F, 41, "DXGI_FORMAT_R32_FLOAT", true, 1 },
	{ F::NV12, 103, "DXGI_FORMAT_NV12", true, 2 },
	{ F::P010LE, 104, "DXGI_FORMAT_P010", true, 2 },
	{ F::P016LE, 105, "DXGI_FORMAT_P016", true, 2 },
	{ F::P012LE, 105, "DXGI_FORMAT_P016", false, 2 },
	{ F::NV16, 130, "DXGI_FORMAT_P208", true, 2 },
	{ F::YUYV422, 107, "DXGI_FORMAT_YUY2", true, 1 },
	{ F::Y210LE, 108, "DXGI_FORMAT_Y210", true, 1 },
	{ F::Y212LE, 109, "DXGI_FORMAT_Y216", true, 1 },
	{ F::VUYA, 100, "DXGI_FORMAT_AYUV", true, 1 },
	{ F::VUYX, 100, "DXGI_FORMAT_AYUV", false, 1 },
	{ F::Y410, 101, "DXGI_FORMAT_Y410", true, 1 },
	{ F::XV30, 101, "DXGI_FORMAT_Y410", false, 1 },
	{ F::Y412LE, 102, "DXGI_FORMAT_Y416", true, 1 },
	{ F::XV36, 102, "DXGI_FORMAT_Y416", false, 1 },
};

// MTLPixelFormat, from Metal/MTLPixelFormat.hpp (Apple's metal-cpp) = MTLPixelFormat.h.
constexpr Expected kMetal[] = {
	{ F::RGBA, 70, "MTLPixelFormatRGBA8Unorm", true, 1 },
	{ F::RGBX, 70, "MTLPixelFormatRGBA8Unorm", false, 1 },
	{ F::BGRA, 80, "MTLPixelFormatBGRA8Unorm", true, 1 },
	{ F::BGRX, 80, "MTLPixelFormatBGRA8Unorm", false, 1 },
	{ F::RGB10A2, 90, "MTLPixelFormatRGB10A2Unorm", true, 1 },
	{ F::X2BGR10LE, 90, "MTLPixelFormatRGB10A2Unorm", false, 1 },
	{ F::RGBA64LE, 110, "MTLPixelFormatRGBA16Unorm", true, 1 },
	{ F::RGBA16U, 113, "MTLPixelFormatRGBA16Uint", true, 1 },
	{ F::RGBAF16, 115, "MTLPixelFormatRGBA16Float", true, 1 },
	{ F::RGBAF32, 125, "MTLPixelFormatRGBA32Float", true, 1 },
	{ F::RGB565LE, 40, "MTLPixelFormatB5G6R5Unorm", true, 1 },
	{ F::GRAY8, 10, "MTLPixelFormatR8Unorm", true, 1 },
	{ F::GRAY16LE, 20, "MTLPixelFormatR16Unorm", true, 1 },
	{ F::R16U, 23, "MTLPixelFormatR16Uint", true, 1 },
	{ F::R32F, 55, "MTLPixelFormatR32Float", true, 1 },
	{ F::YUYV422, 240, "MTLPixelFormatGBGR422", true, 1 },
	{ F::UYVY422, 241, "MTLPixelFormatBGRG422", true, 1 },
};

// kCVPixelFormatType_*, from CoreVideo/CVPixelBuffer.h (macOS 11.3 SDK). The header writes most
// as four-character constants ('420v'); here they are the numbers those make, with the
// characters kept alongside (fourcc) so that one check can recompute them. Planes: BiPlanar 2,
// Planar and TriPlanar 3, the rest 1.
struct ExpectedCv {
	Expected entry;
	const char *fourcc; // nullptr where the header writes a plain number
};
constexpr ExpectedCv kCoreVideo[] = {
	{ { F::NV12, 0x34323076, "kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange", true, 2 },
	  "420v" },
	{ { F::NV12, 0x34323066, "kCVPixelFormatType_420YpCbCr8BiPlanarFullRange", true, 2 },
	  "420f" },
	{ { F::NV16, 0x34323276, "kCVPixelFormatType_422YpCbCr8BiPlanarVideoRange", true, 2 },
	  "422v" },
	{ { F::NV16, 0x34323266, "kCVPixelFormatType_422YpCbCr8BiPlanarFullRange", true, 2 },
	  "422f" },
	{ { F::NV24, 0x34343476, "kCVPixelFormatType_444YpCbCr8BiPlanarVideoRange", true, 2 },
	  "444v" },
	{ { F::NV24, 0x34343466, "kCVPixelFormatType_444YpCbCr8BiPlanarFullRange", true, 2 },
	  "444f" },
	{ { F::P010LE, 0x78343230, "kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange", true, 2 },
	  "x420" },
	{ { F::P010LE, 0x78663230, "kCVPixelFormatType_420YpCbCr10BiPlanarFullRange", true, 2 },
	  "xf20" },
	{ { F::P210LE, 0x78343232, "kCVPixelFormatType_422YpCbCr10BiPlanarVideoRange", true, 2 },
	  "x422" },
	{ { F::P210LE, 0x78663232, "kCVPixelFormatType_422YpCbCr10BiPlanarFullRange", true, 2 },
	  "xf22" },
	{ { F::P410LE, 0x78343434, "kCVPixelFormatType_444YpCbCr10BiPlanarVideoRange", true, 2 },
	  "x444" },
	{ { F::P410LE, 0x78663434, "kCVPixelFormatType_444YpCbCr10BiPlanarFullRange", true, 2 },
	  "xf44" },
	{ { F::NV12A, 0x76306138, "kCVPixelFormatType_420YpCbCr8VideoRange_8A_TriPlanar", true, 3 },
	  "v0a8" },
	{ { F::YUV420P, 0x79343230, "kCVPixelFormatType_420YpCbCr8Planar", true, 3 }, "y420" },
	{ { F::YUV420P, 0x66343230, "kCVPixelFormatType_420YpCbCr8PlanarFullRange", true, 3 },
	  "f420" },
	{ { F::UYVY422, 0x32767579, "kCVPixelFormatType_422YpCbCr8", true, 1 }, "2vuy" },
	{ { F::YUYV422, 0x79757673, "kCVPixelFormatType_422YpCbCr8_yuvs", true, 1 }, "yuvs" },
	{ { F::YUYV422, 0x79757666, "kCVPixelFormatType_422YpCbCr8FullRange", true, 1 }, "yuvf" },
	{ { F::V210, 0x76323130, "kCVPixelFormatType_422YpCbCr10", true, 1 }, "v210" },
	{ { F::AYUV64LE, 0x79343136, "kCVPixelFormatType_4444AYpCbCr16", true, 1 }, "y416" },
	{ { F::BGRA, 0x42475241, "kCVPixelFormatType_32BGRA", true, 1 }, "BGRA" },
	{ { F::BGRX, 0x42475241, "kCVPixelFormatType_32BGRA", false, 1 }, "BGRA" },
	{ { F::RGBA, 0x52474241, "kCVPixelFormatType_32RGBA", true, 1 }, "RGBA" },
	{ { F::RGBX, 0x52474241, "kCVPixelFormatType_32RGBA", false, 1 }, "RGBA" },
	{ { F::ARGB, 0x00000020, "kCVPixelFormatType_32ARGB", true, 1 }, nullptr },
	{ { F::XRGB, 0x00000020, "kCVPixelFormatType_32ARGB", false, 1 }, nullptr },
	{ { F::ABGR, 0x41424752, "kCVPixelFormatType_32ABGR", true, 1 }, "ABGR" },
	{ { F::XBGR, 0x41424752, "kCVPixelFormatType_32ABGR", false, 1 }, "ABGR" },
	{ { F::RGB24, 0x00000018, "kCVPixelFormatType_24RGB", true, 1 }, nullptr },
	{ { F::BGR24, 0x32344247, "kCVPixelFormatType_24BGR", true, 1 }, "24BG" },
	{ { F::RGB565LE, 0x4C353635, "kCVPixelFormatType_16LE565", true, 1 }, "L565" },
	{ { F::RGBA64LE, 0x6C363472, "kCVPixelFormatType_64RGBALE", true, 1 }, "l64r" },
	{ { F::RGBAF16, 0x52476841, "kCVPixelFormatType_64RGBAHalf", true, 1 }, "RGhA" },
	{ { F::RGBAF32, 0x52476641, "kCVPixelFormatType_128RGBAFloat", true, 1 }, "RGfA" },
	{ { F::GRAY8, 0x4C303038, "kCVPixelFormatType_OneComponent8", true, 1 }, "L008" },
	{ { F::GRAY16LE, 0x4C303136, "kCVPixelFormatType_OneComponent16", true, 1 }, "L016" },
	{ { F::R32F, 0x4C303066, "kCVPixelFormatType_OneComponent32Float", true, 1 }, "L00f" },
};

// WGPUTextureFormat, from webgpu.h of webgpu-native/webgpu-headers at b3f67b8 (numbering of
// 5a6c263, 2025-07-08).
constexpr Expected kWebGpu[] = {
	{ F::RGBA, 0x00000016, "WGPUTextureFormat_RGBA8Unorm", true, 1 },
	{ F::RGBX, 0x00000016, "WGPUTextureFormat_RGBA8Unorm", false, 1 },
	{ F::BGRA, 0x0000001B, "WGPUTextureFormat_BGRA8Unorm", true, 1 },
	{ F::BGRX, 0x0000001B, "WGPUTextureFormat_BGRA8Unorm", false, 1 },
	{ F::RGB10A2, 0x0000001E, "WGPUTextureFormat_RGB10A2Unorm", true, 1 },
	{ F::X2BGR10LE, 0x0000001E, "WGPUTextureFormat_RGB10A2Unorm", false, 1 },
	{ F::RGBA64LE, 0x00000024, "WGPUTextureFormat_RGBA16Unorm", true, 1 },
	{ F::RGBA16U, 0x00000026, "WGPUTextureFormat_RGBA16Uint", true, 1 },
	{ F::RGBAF16, 0x00000028, "WGPUTextureFormat_RGBA16Float", true, 1 },
	{ F::RGBAF32, 0x00000029, "WGPUTextureFormat_RGBA32Float", true, 1 },
	{ F::GRAY8, 0x00000001, "WGPUTextureFormat_R8Unorm", true, 1 },
	{ F::GRAY16LE, 0x00000005, "WGPUTextureFormat_R16Unorm", true, 1 },
	{ F::R16U, 0x00000007, "WGPUTextureFormat_R16Uint", true, 1 },
	{ F::R32F, 0x0000000E, "WGPUTextureFormat_R32Float", true, 1 },
};

constexpr FormatApi kApis[] = { FormatApi::Dxgi, FormatApi::Metal, FormatApi::CoreVideo,
				FormatApi::WebGpu };

std::vector<Expected> expectedFor(FormatApi api)
{
	switch (api) {
	case FormatApi::Dxgi: return { std::begin(kDxgi), std::end(kDxgi) };
	case FormatApi::Metal: return { std::begin(kMetal), std::end(kMetal) };
	case FormatApi::WebGpu: return { std::begin(kWebGpu), std::end(kWebGpu) };
	case FormatApi::CoreVideo: {
		std::vector<Expected> out;
		for (const ExpectedCv &cv : kCoreVideo)
			out.push_back(cv.entry);
		return out;
	}
	default: return {};
	}
}

const PixelFormatInfo &infoOf(PixelFormat format)
{
	auto info = pixelFormatInfo(format);
	ck_assert_msg(info.ok(), "format %u has no info", static_cast<unsigned>(format));
	return **info;
}

// The table of `api` equals the expected list: same entries, same order (order decides which
// entry toApiFormat returns), and the format has as many planes as the API describes.
void checkAgainstSpec(FormatApi api)
{
	std::span<const FormatMapping> table = formatMappings(api);
	std::vector<Expected> expected = expectedFor(api);
	ck_assert_msg(table.size() == expected.size(), "%s: %zu entries, the spec list has %zu",
		      formatApiName(api), table.size(), expected.size());
	for (size_t i = 0; i < table.size(); ++i) {
		const FormatMapping &m = table[i];
		const Expected &e = expected[i];
		ck_assert_msg(
			m.format == e.format && m.value == e.value && m.canonical == e.canonical,
			"%s entry %zu: got %s = %u (canonical %d), expected %s = %u (canonical %d)",
			formatApiName(api), i, pixelFormatName(m.format), m.value, m.canonical,
			pixelFormatName(e.format), e.value, e.canonical);
		ck_assert_str_eq(m.name, e.name);
		ck_assert_msg(infoOf(m.format).numPlanes == e.planes,
			      "%s: %s has %u planes, %s has %u", formatApiName(api),
			      pixelFormatName(m.format), infoOf(m.format).numPlanes, e.name,
			      e.planes);
	}
}

bool samePlanes(const PixelFormatInfo &a, const PixelFormatInfo &b)
{
	if (a.numPlanes != b.numPlanes)
		return false;
	for (uint32_t i = 0; i < a.numPlanes; ++i) {
		const PlaneInfo &p = a.planes[i];
		const PlaneInfo &q = b.planes[i];
		if (p.format != q.format || p.hsub != q.hsub || p.vsub != q.vsub ||
		    p.pixelsPerBlock != q.pixelsPerBlock || p.texelsPerBlock != q.texelsPerBlock)
			return false;
	}
	return true;
}

const FormatMapping *firstEntryOf(std::span<const FormatMapping> table, PixelFormat format)
{
	for (const FormatMapping &m : table) {
		if (m.format == format)
			return &m;
	}
	return nullptr;
}

// X -> PixelFormat -> X, and the rules a table keeps so that it holds.
void checkRoundTrip(FormatApi api)
{
	std::span<const FormatMapping> table = formatMappings(api);
	ck_assert_msg(!table.empty(), "%s has an empty table", formatApiName(api));
	const char *apiName = formatApiName(api);

	for (size_t i = 0; i < table.size(); ++i) {
		const FormatMapping &m = table[i];
		size_t canonicalWithValue = 0;
		for (const FormatMapping &other : table)
			canonicalWithValue += other.value == m.value && other.canonical ? 1 : 0;
		// Each value has exactly one canonical entry, so non-canonical ones share it.
		ck_assert_msg(canonicalWithValue == 1, "%s value %u (%s) has %zu canonical entries",
			      apiName, m.value, m.name, canonicalWithValue);

		auto back = fromApiFormat(api, m.value);
		ck_assert_ok(back);
		if (m.canonical) {
			ck_assert_msg(*back == m.format, "%s: %s maps back to %s, not %s", apiName,
				      m.name, pixelFormatName(*back), pixelFormatName(m.format));
		} else {
			// A padded twin: the format it maps back to stores the same planes.
			ck_assert_msg(samePlanes(infoOf(*back), infoOf(m.format)),
				      "%s: %s and %s share %s but not their planes", apiName,
				      pixelFormatName(m.format), pixelFormatName(*back), m.name);
		}
		// The value the format that this value maps to is written with maps to it again.
		auto again = toApiFormat(api, *back);
		ck_assert_ok(again);
		ck_assert_msg(*fromApiFormat(api, *again) == *back, "%s: %s does not round-trip",
			      apiName, pixelFormatName(*back));
	}

	for (const PixelFormatInfo &info : allPixelFormats()) {
		const FormatMapping *first = firstEntryOf(table, info.format);
		if (!first)
			continue;
		bool anyCanonical = false;
		for (const FormatMapping &m : table)
			anyCanonical |= m.format == info.format && m.canonical;
		// A format with an own value lists it first, so toApiFormat returns that value.
		ck_assert_msg(first->canonical == anyCanonical,
			      "%s: the first entry of %s is not its canonical one", apiName,
			      info.name);

		auto value = toApiFormat(api, info.format);
		ck_assert_ok(value);
		ck_assert_uint_eq(*value, first->value);
		auto back = fromApiFormat(api, *value);
		ck_assert_ok(back);
		if (first->canonical) {
			ck_assert_msg(*back == info.format, "%s: %s -> %u -> %s", apiName,
				      info.name, *value, pixelFormatName(*back));
		} else {
			ck_assert_uint_eq(*toApiFormat(api, *back), *value);
		}
	}
}

void checkCanRepresent(FormatApi api)
{
	std::vector<Expected> expected = expectedFor(api);
	for (const PixelFormatInfo &info : allPixelFormats()) {
		bool listed = false;
		for (const Expected &e : expected)
			listed |= e.format == info.format;
		ck_assert_msg(canRepresent(api, info.format) == listed,
			      "%s: canRepresent(%s) disagrees with the table", formatApiName(api),
			      info.name);
		ck_assert_msg(toApiFormat(api, info.format).ok() == listed,
			      "%s: toApiFormat(%s) disagrees with the table", formatApiName(api),
			      info.name);
		if (!listed)
			ck_assert_error(toApiFormat(api, info.format), ErrorCode::NotSupported,
					"format");
	}
	ck_assert(!canRepresent(api, PixelFormat::Unknown));
}

} // namespace

START_TEST(dxgi_values_match_dxgiformat_h)
{
	checkAgainstSpec(FormatApi::Dxgi);
	ck_assert_uint_eq(toApiFormat(FormatApi::Dxgi, PixelFormat::NV12).value(),
			  103); // DXGI_FORMAT_NV12
}
END_TEST

START_TEST(metal_values_match_mtlpixelformat_h)
{
	checkAgainstSpec(FormatApi::Metal);
	// Metal's table holds single-plane formats only.
	for (const FormatMapping &m : formatMappings(FormatApi::Metal))
		ck_assert_uint_eq(infoOf(m.format).numPlanes, 1);
}
END_TEST

START_TEST(corevideo_values_match_cvpixelbuffer_h)
{
	checkAgainstSpec(FormatApi::CoreVideo);
	// An OSType is its four characters, the first in the most significant byte.
	for (const ExpectedCv &cv : kCoreVideo) {
		if (!cv.fourcc)
			continue;
		ck_assert_uint_eq(std::strlen(cv.fourcc), 4);
		uint32_t packed = 0;
		for (size_t i = 0; i < 4; ++i)
			packed = packed << 8 | static_cast<unsigned char>(cv.fourcc[i]);
		ck_assert_msg(packed == cv.entry.value, "'%s' is 0x%08x, the list says 0x%08x",
			      cv.fourcc, packed, cv.entry.value);
	}
}
END_TEST

START_TEST(webgpu_values_match_webgpu_h)
{
	checkAgainstSpec(FormatApi::WebGpu);
	for (const FormatMapping &m : formatMappings(FormatApi::WebGpu))
		ck_assert_uint_eq(infoOf(m.format).numPlanes, 1);
}
END_TEST

START_TEST(every_table_round_trips)
{
	for (FormatApi api : kApis)
		checkRoundTrip(api);
	// Spot checks of the direction each API is usually met from.
	ck_assert_uint_eq(*toApiFormat(FormatApi::Dxgi, PixelFormat::P010LE), 104);
	ck_assert(*fromApiFormat(FormatApi::Dxgi, 105) == PixelFormat::P016LE);
	ck_assert(*fromApiFormat(FormatApi::Dxgi, 100) == PixelFormat::VUYA);
	ck_assert(*fromApiFormat(FormatApi::CoreVideo, 0x34323066) == PixelFormat::NV12);
	ck_assert_uint_eq(*toApiFormat(FormatApi::CoreVideo, PixelFormat::NV12), 0x34323076);
	ck_assert_uint_eq(*toApiFormat(FormatApi::Metal, PixelFormat::BGRX), 80);
	ck_assert(*fromApiFormat(FormatApi::WebGpu, 0x16) == PixelFormat::RGBA);
}
END_TEST

START_TEST(can_represent_agrees_with_the_tables)
{
	for (FormatApi api : kApis)
		checkCanRepresent(api);
	// Metal formats are single-plane.
	ck_assert(!canRepresent(FormatApi::Metal, PixelFormat::NV12));
}
END_TEST

START_TEST(unknown_values_and_apis_are_errors)
{
	// 0 is DXGI_FORMAT_UNKNOWN, MTLPixelFormatInvalid and WGPUTextureFormat_Undefined.
	for (FormatApi api : kApis) {
		ck_assert_error(fromApiFormat(api, 0), ErrorCode::NotSupported, "value");
		ck_assert_error(fromApiFormat(api, 0xFFFFFFFFu), ErrorCode::NotSupported, "value");
		ck_assert_error(toApiFormat(api, PixelFormat::Unknown), ErrorCode::NotSupported,
				"format");
	}
	// Opaque or palettised DXGI formats, and Metal/WebGPU sRGB formats, are not ours.
	ck_assert_error(fromApiFormat(FormatApi::Dxgi, 106), ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::Metal, 71), ErrorCode::NotSupported, "value");
	ck_assert_error(fromApiFormat(FormatApi::WebGpu, 0x17), ErrorCode::NotSupported, "value");
	// Big-endian CoreVideo formats ('b64a') are left out.
	ck_assert_error(fromApiFormat(FormatApi::CoreVideo, 0x62363461), ErrorCode::NotSupported,
			"value");

	auto bogus = static_cast<FormatApi>(kFormatApiCount);
	ck_assert_error(toApiFormat(bogus, PixelFormat::NV12), ErrorCode::InvalidArgument, "api");
	ck_assert_error(fromApiFormat(bogus, 103), ErrorCode::InvalidArgument, "api");
	ck_assert(formatMappings(bogus).empty());
	ck_assert(!canRepresent(bogus, PixelFormat::NV12));
	ck_assert_str_eq(formatApiName(FormatApi::Dxgi), "DXGI");
	ck_assert_str_eq(formatApiName(FormatApi::CoreVideo), "CoreVideo");
}
END_TEST

int main()
{
	Suite *s = suite_create("formats_platform");
	TCase *tc = tcase_create("formats_platform");
	tcase_add_test(tc, dxgi_values_match_dxgiformat_h);
	tcase_add_test(tc, metal_values_match_mtlpixelformat_h);
	tcase_add_test(tc, corevideo_values_match_cvpixelbuffer_h);
	tcase_add_test(tc, webgpu_values_match_webgpu_h);
	tcase_add_test(tc, every_table_round_trips);
	tcase_add_test(tc, can_represent_agrees_with_the_tables);
	tcase_add_test(tc, unknown_values_and_apis_are_errors);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
