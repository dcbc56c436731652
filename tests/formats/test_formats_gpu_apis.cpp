// Tests of the Vulkan, GL, CUDA and OpenCL format tables against the installed headers, and of
// the Vulkan YCbCr colorimetry mapping.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/pixel_format.h>

#include <GL/gl.h>
#include <GL/glext.h>
#include <vulkan/vulkan_core.h>
// clang-format off
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <ffnvcodec/dynlink_cuda.h>

#include <iterator>
#include <span>
#include <string_view>
#include <utility>

// Last: check.h's fail() macro breaks standard headers included after it.
#include "check_helpers.h"
// clang-format on

using namespace gpuhandle;

namespace {

// A header's spelling and value, with the size facts the test needs about it.
struct HeaderValue {
	const char *name;
	uint32_t value;
	uint32_t bytes;  // bytes per texel (or per block); for CUDA and OpenCL types, per channel
	uint32_t chroma; // Vulkan multi-planar: bytes per texel of planes 1..; CL/CUDA: 1 if packed
	uint32_t block;  // Vulkan: pixels per block (2 for the _422 packed formats)
};

constexpr HeaderValue headerValue(const char *name, uint32_t value, uint32_t bytes, uint32_t chroma,
				  uint32_t block)
{
	return { name, value, bytes, chroma, block };
}

// The name as written and the header's value for it.
#define HV(x, bytes) headerValue(#x, static_cast<uint32_t>(x), bytes, 0, 1)
#define HVP(x, luma, chroma) headerValue(#x, static_cast<uint32_t>(x), luma, chroma, 1)
#define HVB(x, bytes) headerValue(#x, static_cast<uint32_t>(x), bytes, 0, 2)

// Sizes from the Vulkan specification's format tables ("Compatible formats of planes").
// clang-format off
const HeaderValue kVulkanHeader[] = {
	HV(VK_FORMAT_R8_UNORM, 1), HV(VK_FORMAT_R8G8_UNORM, 2),
	HV(VK_FORMAT_R8G8B8_UNORM, 3), HV(VK_FORMAT_B8G8R8_UNORM, 3),
	HV(VK_FORMAT_R8G8B8A8_UNORM, 4), HV(VK_FORMAT_A8B8G8R8_UNORM_PACK32, 4),
	HV(VK_FORMAT_B8G8R8A8_UNORM, 4), HV(VK_FORMAT_R16_UNORM, 2),
	HV(VK_FORMAT_R16G16_UNORM, 4), HV(VK_FORMAT_R16G16B16_UNORM, 6),
	HV(VK_FORMAT_R16G16B16A16_UNORM, 8), HV(VK_FORMAT_R16G16B16A16_SFLOAT, 8),
	HV(VK_FORMAT_R32G32B32A32_SFLOAT, 16), HV(VK_FORMAT_R16_UINT, 2),
	HV(VK_FORMAT_R32_SFLOAT, 4), HV(VK_FORMAT_R16G16B16A16_UINT, 8),
	HV(VK_FORMAT_A2B10G10R10_UNORM_PACK32, 4), HV(VK_FORMAT_A2R10G10B10_UNORM_PACK32, 4),
	HV(VK_FORMAT_R5G6B5_UNORM_PACK16, 2), HV(VK_FORMAT_B5G6R5_UNORM_PACK16, 2),
	HV(VK_FORMAT_R12X4G12X4B12X4A12X4_UNORM_4PACK16, 8),
	// 2x1 blocks.
	HVB(VK_FORMAT_G8B8G8R8_422_UNORM, 4), HVB(VK_FORMAT_B8G8R8G8_422_UNORM, 4),
	HVB(VK_FORMAT_G10X6B10X6G10X6R10X6_422_UNORM_4PACK16, 8),
	HVB(VK_FORMAT_G12X4B12X4G12X4R12X4_422_UNORM_4PACK16, 8),
	HVB(VK_FORMAT_B16G16R16G16_422_UNORM, 8),
	// Multi-planar: bytes of a plane 0 texel, then of a chroma texel.
	HVP(VK_FORMAT_G8_B8R8_2PLANE_420_UNORM, 1, 2),
	HVP(VK_FORMAT_G8_B8R8_2PLANE_422_UNORM, 1, 2),
	HVP(VK_FORMAT_G8_B8R8_2PLANE_444_UNORM, 1, 2),
	HVP(VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16, 2, 4),
	HVP(VK_FORMAT_G10X6_B10X6R10X6_2PLANE_422_UNORM_3PACK16, 2, 4),
	HVP(VK_FORMAT_G10X6_B10X6R10X6_2PLANE_444_UNORM_3PACK16, 2, 4),
	HVP(VK_FORMAT_G12X4_B12X4R12X4_2PLANE_420_UNORM_3PACK16, 2, 4),
	HVP(VK_FORMAT_G16_B16R16_2PLANE_420_UNORM, 2, 4),
	HVP(VK_FORMAT_G16_B16R16_2PLANE_422_UNORM, 2, 4),
	HVP(VK_FORMAT_G16_B16R16_2PLANE_444_UNORM, 2, 4),
	HVP(VK_FORMAT_G8_B8_R8_3PLANE_420_UNORM, 1, 1),
	HVP(VK_FORMAT_G8_B8_R8_3PLANE_422_UNORM, 1, 1),
	HVP(VK_FORMAT_G8_B8_R8_3PLANE_444_UNORM, 1, 1),
	HVP(VK_FORMAT_G16_B16_R16_3PLANE_420_UNORM, 2, 2),
	HVP(VK_FORMAT_G16_B16_R16_3PLANE_422_UNORM, 2, 2),
	HVP(VK_FORMAT_G16_B16_R16_3PLANE_444_UNORM, 2, 2),
};
// clang-format on

const HeaderValue kGlHeader[] = {
	HV(GL_R8, 1),        HV(GL_RG8, 2),      HV(GL_RGB8, 3),     HV(GL_RGBA8, 4),
	HV(GL_BGRA8_EXT, 4), HV(GL_R16, 2),      HV(GL_RG16, 4),     HV(GL_RGB16, 6),
	HV(GL_RGBA16, 8),    HV(GL_RGBA16F, 8),  HV(GL_RGBA32F, 16), HV(GL_R16UI, 2),
	HV(GL_R32F, 4),      HV(GL_RGBA16UI, 8), HV(GL_RGB10_A2, 4), HV(GL_RGB565, 2),
};

// Bytes per channel.
const HeaderValue kCudaHeader[] = {
	HV(CU_AD_FORMAT_UNSIGNED_INT8, 1),
	HV(CU_AD_FORMAT_UNSIGNED_INT16, 2),
	HV(CU_AD_FORMAT_HALF, 2),
	HV(CU_AD_FORMAT_FLOAT, 4),
};

// Orders: channel count (0 for CL_RGB, which takes packed types only).
const HeaderValue kClOrderHeader[] = {
	HV(CL_R, 1), HV(CL_RG, 2), HV(CL_RGB, 0), HV(CL_RGBA, 4), HV(CL_BGRA, 4),
};
// Types: bytes per channel, or per element when packed (chroma = 1).
const HeaderValue kClTypeHeader[] = {
	HV(CL_UNORM_INT8, 1), HV(CL_UNORM_INT16, 2),    HV(CL_HALF_FLOAT, 2),
	HV(CL_FLOAT, 4),      HV(CL_UNSIGNED_INT16, 2), HVP(CL_UNORM_SHORT_565, 2, 1),
};

const HeaderValue &mustFind(std::span<const HeaderValue> header, std::string_view name)
{
	for (const HeaderValue &h : header) {
		if (name == h.name)
			return h;
	}
	ck_abort_msg("%.*s is not in the test's header list", static_cast<int>(name.size()),
		     name.data());
	return header[0];
}

const HeaderValue &vulkanByValue(uint32_t value)
{
	for (const HeaderValue &h : kVulkanHeader) {
		if (h.value == value)
			return h;
	}
	ck_abort_msg("VkFormat %u is not in the test's header list", value);
	return kVulkanHeader[0];
}

const PixelFormatInfo &info(PixelFormat format)
{
	auto result = pixelFormatInfo(format);
	ck_assert_ok(result);
	return **result;
}

bool inTable(std::span<const PlaneMapping> table, PlaneFormat plane)
{
	for (const PlaneMapping &m : table) {
		if (m.plane == plane)
			return true;
	}
	return false;
}

// Bytes of one texel of `m` in its API, from the header lists above.
uint32_t apiBytes(PlaneApi api, const PlaneMapping &m)
{
	std::string_view name = m.name;
	switch (api) {
	case PlaneApi::VkFormat: return mustFind(kVulkanHeader, name).bytes;
	case PlaneApi::GlInternal: return mustFind(kGlHeader, name).bytes;
	case PlaneApi::CudaArray: return mustFind(kCudaHeader, name).bytes * m.extra;
	case PlaneApi::OpenClImage: {
		size_t slash = name.find('/');
		const HeaderValue &order = mustFind(kClOrderHeader, name.substr(0, slash));
		const HeaderValue &type = mustFind(kClTypeHeader, name.substr(slash + 1));
		return type.chroma ? type.bytes : type.bytes * order.bytes;
	}
	}
	return 0;
}

// The round trip rules every whole-format table keeps (see format_mappings.h).
void checkFormatTable(FormatApi api)
{
	std::span<const FormatMapping> table = formatMappings(api);
	ck_assert_uint_gt(table.size(), 0);
	for (size_t i = 0; i < table.size(); ++i) {
		const FormatMapping &m = table[i];
		ck_assert_ok(pixelFormatInfo(m.format));
		size_t canonicalWithValue = 0;
		for (const FormatMapping &other : table)
			canonicalWithValue += other.value == m.value && other.canonical;
		ck_assert_msg(canonicalWithValue == 1, "%s (%u) has %zu canonical entries", m.name,
			      m.value, canonicalWithValue);
		if (m.canonical) {
			auto back = fromApiFormat(api, m.value);
			ck_assert_ok(back);
			ck_assert_msg(*back == m.format, "%s maps back to %s, not %s", m.name,
				      pixelFormatName(*back), pixelFormatName(m.format));
		}
		// A format's first entry is canonical whenever it has a canonical one.
		bool first = true, anyCanonical = false;
		for (size_t j = 0; j < table.size(); ++j) {
			if (table[j].format != m.format)
				continue;
			first = first && j >= i;
			anyCanonical = anyCanonical || table[j].canonical;
		}
		if (first && anyCanonical)
			ck_assert_msg(m.canonical, "the first entry of %s is an alias",
				      pixelFormatName(m.format));
	}
	for (const PixelFormatInfo &f : allPixelFormats()) {
		auto value = toApiFormat(api, f.format);
		if (!canRepresent(api, f.format)) {
			ck_assert_error(value, ErrorCode::NotSupported, "format");
			continue;
		}
		ck_assert_ok(value);
		auto back = fromApiFormat(api, *value);
		ck_assert_ok(back);
		bool aliasOnly = true;
		for (const FormatMapping &m : table)
			aliasOnly = aliasOnly && !(m.format == f.format && m.canonical);
		if (!aliasOnly)
			ck_assert_msg(*back == f.format, "%s -> %u -> %s", f.name, *value,
				      pixelFormatName(*back));
		else
			ck_assert_msg(info(*back).numPlanes == f.numPlanes, "%s aliases %s", f.name,
				      pixelFormatName(*back));
	}
	ck_assert_error(fromApiFormat(api, 0x7fffffffu), ErrorCode::NotSupported, "value");
}

} // namespace

START_TEST(vulkan_values_match_header)
{
	for (const FormatMapping &m : formatMappings(FormatApi::VkFormat)) {
		const HeaderValue &h = mustFind(kVulkanHeader, m.name);
		ck_assert_msg(m.value == h.value, "%s is %u in the table, %u in vulkan_core.h",
			      m.name, m.value, h.value);
	}
	for (const PlaneMapping &m : planeMappings(PlaneApi::VkFormat)) {
		const HeaderValue &h = mustFind(kVulkanHeader, m.name);
		ck_assert_msg(m.value == h.value, "%s: %u != %u", m.name, m.value, h.value);
		ck_assert_uint_eq(m.extra, 0);
	}
}
END_TEST

START_TEST(gl_values_match_header)
{
	for (const PlaneMapping &m : planeMappings(PlaneApi::GlInternal)) {
		const HeaderValue &h = mustFind(kGlHeader, m.name);
		ck_assert_msg(m.value == h.value, "%s is 0x%x in the table, 0x%x in glext.h",
			      m.name, m.value, h.value);
		ck_assert_uint_eq(m.extra, 0);
	}
}
END_TEST

START_TEST(cuda_values_match_header)
{
	for (const PlaneMapping &m : planeMappings(PlaneApi::CudaArray)) {
		const HeaderValue &h = mustFind(kCudaHeader, m.name);
		ck_assert_msg(m.value == h.value, "%s is 0x%x in the table, 0x%x in dynlink_cuda.h",
			      m.name, m.value, h.value);
		ck_assert_msg(m.extra == 1 || m.extra == 2 || m.extra == 4, "%s x%u", m.name,
			      m.extra);
	}
}
END_TEST

START_TEST(opencl_values_match_header)
{
	for (const PlaneMapping &m : planeMappings(PlaneApi::OpenClImage)) {
		std::string_view name = m.name;
		size_t slash = name.find('/');
		ck_assert_msg(slash != std::string_view::npos, "%s is not order/type", m.name);
		const HeaderValue &order = mustFind(kClOrderHeader, name.substr(0, slash));
		const HeaderValue &type = mustFind(kClTypeHeader, name.substr(slash + 1));
		ck_assert_msg(m.value == order.value, "%s: order 0x%x != 0x%x", m.name, m.value,
			      order.value);
		ck_assert_msg(m.extra == type.value, "%s: type 0x%x != 0x%x", m.name, m.extra,
			      type.value);
		// CL_RGB takes packed types only.
		ck_assert_int_eq(order.bytes == 0, type.chroma == 1);
	}
}
END_TEST

START_TEST(vulkan_round_trip)
{
	checkFormatTable(FormatApi::VkFormat);
	ck_assert_error(fromApiFormat(FormatApi::VkFormat, VK_FORMAT_UNDEFINED),
			ErrorCode::NotSupported, "value");
	// The layouts the table must keep (one per kind of row).
	const std::pair<PixelFormat, VkFormat> expected[] = {
		{ PixelFormat::NV12, VK_FORMAT_G8_B8R8_2PLANE_420_UNORM },
		{ PixelFormat::P010LE, VK_FORMAT_G10X6_B10X6R10X6_2PLANE_420_UNORM_3PACK16 },
		{ PixelFormat::P016LE, VK_FORMAT_G16_B16R16_2PLANE_420_UNORM },
		{ PixelFormat::YUV420P, VK_FORMAT_G8_B8_R8_3PLANE_420_UNORM },
		{ PixelFormat::YUYV422, VK_FORMAT_G8B8G8R8_422_UNORM },
		{ PixelFormat::UYVY422, VK_FORMAT_B8G8R8G8_422_UNORM },
		{ PixelFormat::RGBA, VK_FORMAT_R8G8B8A8_UNORM },
		{ PixelFormat::RGBX, VK_FORMAT_R8G8B8A8_UNORM },
		{ PixelFormat::BGRA, VK_FORMAT_B8G8R8A8_UNORM },
		{ PixelFormat::RGB10A2, VK_FORMAT_A2B10G10R10_UNORM_PACK32 },
		{ PixelFormat::X2RGB10LE, VK_FORMAT_A2R10G10B10_UNORM_PACK32 },
		{ PixelFormat::RGBAF16, VK_FORMAT_R16G16B16A16_SFLOAT },
	};
	for (auto [format, vk] : expected) {
		auto value = toApiFormat(FormatApi::VkFormat, format);
		ck_assert_ok(value);
		ck_assert_uint_eq(*value, static_cast<uint32_t>(vk));
	}
	ck_assert(*fromApiFormat(FormatApi::VkFormat, VK_FORMAT_A8B8G8R8_UNORM_PACK32) ==
		  PixelFormat::RGBA);
	// LSB-aligned samples are not Vulkan's MSB-aligned X6 formats; Cr-first orders do not
	// exist.
	const PixelFormat absent[] = { PixelFormat::YUV420P10LE, PixelFormat::GRAY10LE,
				       PixelFormat::NV21,        PixelFormat::YV12,
				       PixelFormat::BGRA64LE,    PixelFormat::AYUV64LE,
				       PixelFormat::V210,        PixelFormat::NV12A };
	for (PixelFormat format : absent)
		ck_assert_error(toApiFormat(FormatApi::VkFormat, format), ErrorCode::NotSupported,
				"format");
}
END_TEST

// The whole-format VkFormat describes the same planes as the per-plane tables: as many planes,
// the same subsampling, the same bytes per texel (or per 2x1 block for the _422 formats).
START_TEST(vulkan_whole_agrees_with_planes)
{
	for (const FormatMapping &m : formatMappings(FormatApi::VkFormat)) {
		const PixelFormatInfo &f = info(m.format);
		const HeaderValue &vk = vulkanByValue(m.value);
		std::string_view name = vk.name;
		uint32_t planes = name.find("_3PLANE_") != std::string_view::npos   ? 3
				  : name.find("_2PLANE_") != std::string_view::npos ? 2
										    : 1;
		ck_assert_msg(f.numPlanes == planes, "%s has %u planes, %s has %u", f.name,
			      f.numPlanes, vk.name, planes);
		const PlaneInfo &luma = f.planes[0];
		ck_assert_msg(bytesPerTexel(luma.format) * luma.texelsPerBlock == vk.bytes,
			      "%s plane 0 block is not the %u bytes of %s", f.name, vk.bytes,
			      vk.name);
		ck_assert_msg(luma.pixelsPerBlock == vk.block, "%s: %u pixels per block, %s has %u",
			      f.name, luma.pixelsPerBlock, vk.name, vk.block);
		uint32_t hsub = 1, vsub = 1;
		if (name.find("_420_") != std::string_view::npos)
			hsub = vsub = 2;
		else if (name.find("_422_") != std::string_view::npos && planes > 1)
			hsub = 2;
		for (uint32_t i = 1; i < f.numPlanes; ++i) {
			ck_assert_uint_eq(bytesPerTexel(f.planes[i].format), vk.chroma);
			ck_assert_uint_eq(f.planes[i].hsub, hsub);
			ck_assert_uint_eq(f.planes[i].vsub, vsub);
		}
		// Each plane's own VkFormat has the size of the plane Vulkan names.
		auto perPlane = planeApiFormats(PlaneApi::VkFormat, m.format);
		ck_assert_ok(perPlane);
		ck_assert_uint_eq(perPlane->count, planes);
		for (uint32_t i = 0; i < perPlane->count; ++i) {
			uint32_t expected = i == 0 ? vk.bytes : vk.chroma;
			ck_assert_uint_eq(apiBytes(PlaneApi::VkFormat, perPlane->planes[i]) *
						  f.planes[i].texelsPerBlock,
					  expected);
		}
	}
}
END_TEST

// Per plane: every plane format maps back to itself (CUDA's storage-only aliases map back to
// the plane with the same storage that is listed first), and each has the API's size.
START_TEST(plane_round_trip)
{
	for (uint32_t a = 0; a < kPlaneApiCount; ++a) {
		auto api = static_cast<PlaneApi>(a);
		std::span<const PlaneMapping> table = planeMappings(api);
		ck_assert_uint_gt(table.size(), 0);
		for (size_t i = 0; i < table.size(); ++i) {
			const PlaneMapping &m = table[i];
			for (size_t j = 0; j < i; ++j)
				ck_assert_msg(table[j].plane != m.plane, "%s lists %s twice",
					      planeApiName(api), planeFormatName(m.plane));
			ck_assert_msg(apiBytes(api, m) == bytesPerTexel(m.plane),
				      "%s: %s is not %u bytes", planeApiName(api), m.name,
				      bytesPerTexel(m.plane));
			auto there = toPlaneApiFormat(api, m.plane);
			ck_assert_ok(there);
			ck_assert_uint_eq(there->value, m.value);
			ck_assert_uint_eq(there->extra, m.extra);
			auto back = fromPlaneApiFormat(api, m.value, m.extra);
			ck_assert_ok(back);
			bool alias = api == PlaneApi::CudaArray &&
				     (m.plane == PlaneFormat::BGRA8 ||
				      m.plane == PlaneFormat::R16Uint ||
				      m.plane == PlaneFormat::RGBA16Uint);
			if (!alias) {
				ck_assert_msg(*back == m.plane, "%s: %s -> %s -> %s",
					      planeApiName(api), planeFormatName(m.plane), m.name,
					      planeFormatName(*back));
			} else {
				ck_assert(*back != m.plane);
				ck_assert_uint_eq(bytesPerTexel(*back), bytesPerTexel(m.plane));
			}
		}
		ck_assert_error(fromPlaneApiFormat(api, 0x7fffffffu, 3), ErrorCode::NotSupported,
				"value");
	}
	// Every plane format where the API has one; these are the ones it has not.
	const PlaneFormat cudaAbsent[] = { PlaneFormat::RGB8, PlaneFormat::RGB16,
					   PlaneFormat::RGB10A2, PlaneFormat::RGB565 };
	const PlaneFormat openclAbsent[] = { PlaneFormat::RGB8, PlaneFormat::RGB16,
					     PlaneFormat::RGB10A2 };
	ck_assert_uint_eq(planeMappings(PlaneApi::VkFormat).size(), kPlaneFormatCount);
	ck_assert_uint_eq(planeMappings(PlaneApi::GlInternal).size(), kPlaneFormatCount);
	ck_assert_uint_eq(planeMappings(PlaneApi::CudaArray).size(),
			  kPlaneFormatCount - std::size(cudaAbsent));
	ck_assert_uint_eq(planeMappings(PlaneApi::OpenClImage).size(),
			  kPlaneFormatCount - std::size(openclAbsent));
	for (PlaneFormat p : cudaAbsent)
		ck_assert_error(toPlaneApiFormat(PlaneApi::CudaArray, p), ErrorCode::NotSupported,
				"plane");
	for (PlaneFormat p : openclAbsent)
		ck_assert_error(toPlaneApiFormat(PlaneApi::OpenClImage, p), ErrorCode::NotSupported,
				"plane");
	// The cases the tables exist for.
	auto nv12Chroma = toPlaneApiFormat(PlaneApi::GlInternal, PlaneFormat::RG8);
	ck_assert_ok(nv12Chroma);
	ck_assert_uint_eq(nv12Chroma->value, GL_RG8);
	auto bgra = toPlaneApiFormat(PlaneApi::OpenClImage, PlaneFormat::BGRA8);
	ck_assert_ok(bgra);
	ck_assert_uint_eq(bgra->value, CL_BGRA);
	ck_assert_uint_eq(bgra->extra, CL_UNORM_INT8);
	auto p010Chroma = toPlaneApiFormat(PlaneApi::CudaArray, PlaneFormat::RG16);
	ck_assert_ok(p010Chroma);
	ck_assert_uint_eq(p010Chroma->value, CU_AD_FORMAT_UNSIGNED_INT16);
	ck_assert_uint_eq(p010Chroma->extra, 2);
}
END_TEST

START_TEST(plane_api_formats_for_every_format)
{
	for (uint32_t a = 0; a < kPlaneApiCount; ++a) {
		auto api = static_cast<PlaneApi>(a);
		for (const PixelFormatInfo &f : allPixelFormats()) {
			bool allMap = true;
			for (uint32_t i = 0; i < f.numPlanes; ++i)
				allMap = allMap && inTable(planeMappings(api), f.planes[i].format);
			// Vulkan and GL have a texture format for every plane.
			if (api == PlaneApi::VkFormat || api == PlaneApi::GlInternal)
				ck_assert_msg(allMap, "%s has no %s plane format",
					      planeApiName(api), f.name);
			auto planes = planeApiFormats(api, f.format);
			if (!allMap) {
				ck_assert_error(planes, ErrorCode::NotSupported, "plane");
				continue;
			}
			ck_assert_ok(planes);
			ck_assert_uint_eq(planes->count, f.numPlanes);
			for (uint32_t i = 0; i < f.numPlanes; ++i)
				ck_assert(planes->planes[i].plane == f.planes[i].format);
		}
	}
	// NV12 in OpenCL: CL_R + CL_RG of UNORM_INT8.
	auto nv12 = planeApiFormats(PlaneApi::OpenClImage, PixelFormat::NV12);
	ck_assert_ok(nv12);
	ck_assert_uint_eq(nv12->planes[0].value, CL_R);
	ck_assert_uint_eq(nv12->planes[1].value, CL_RG);
	ck_assert_error(planeApiFormats(PlaneApi::CudaArray, PixelFormat::RGB24),
			ErrorCode::NotSupported, "plane");
	ck_assert_error(planeApiFormats(PlaneApi::VkFormat, PixelFormat::Unknown),
			ErrorCode::NotSupported, "format");
}
END_TEST

START_TEST(vk_ycbcr_every_matrix_and_range)
{
	// Every other matrix is refused.
	const std::pair<ColorMatrix, VkSamplerYcbcrModelConversion> models[] = {
		{ ColorMatrix::Rgb, VK_SAMPLER_YCBCR_MODEL_CONVERSION_RGB_IDENTITY },
		{ ColorMatrix::Bt709, VK_SAMPLER_YCBCR_MODEL_CONVERSION_YCBCR_709 },
		{ ColorMatrix::Bt470Bg, VK_SAMPLER_YCBCR_MODEL_CONVERSION_YCBCR_601 },
		{ ColorMatrix::Smpte170M, VK_SAMPLER_YCBCR_MODEL_CONVERSION_YCBCR_601 },
		{ ColorMatrix::Bt2020Ncl, VK_SAMPLER_YCBCR_MODEL_CONVERSION_YCBCR_2020 },
	};
	const std::pair<ColorRange, VkSamplerYcbcrRange> ranges[] = {
		{ ColorRange::Unknown, VK_SAMPLER_YCBCR_RANGE_ITU_NARROW },
		{ ColorRange::Limited, VK_SAMPLER_YCBCR_RANGE_ITU_NARROW },
		{ ColorRange::Full, VK_SAMPLER_YCBCR_RANGE_ITU_FULL },
	};
	for (uint8_t matrix = 0; matrix <= static_cast<uint8_t>(ColorMatrix::ICtCp); ++matrix) {
		const VkSamplerYcbcrModelConversion *model = nullptr;
		for (const auto &[m, vk] : models)
			model = m == static_cast<ColorMatrix>(matrix) ? &vk : model;
		for (auto [range, vkRange] : ranges) {
			Colorimetry c;
			c.matrix = static_cast<ColorMatrix>(matrix);
			c.range = range;
			c.primaries = ColorPrimaries::Bt709;
			c.transfer = ColorTransfer::Bt709;
			auto result = toVkYcbcr(c);
			if (!model) {
				ck_assert_error(result, ErrorCode::NotSupported, "matrix");
				continue;
			}
			ck_assert_ok(result);
			ck_assert_uint_eq(result->model, static_cast<uint32_t>(*model));
			ck_assert_uint_eq(result->range, static_cast<uint32_t>(vkRange));
		}
	}
	Colorimetry badRange;
	badRange.matrix = ColorMatrix::Bt709;
	badRange.range = static_cast<ColorRange>(7);
	ck_assert_error(toVkYcbcr(badRange), ErrorCode::NotSupported, "range");
}
END_TEST

int main()
{
	Suite *suite = suite_create("formats_gpu_apis");
	TCase *headers = tcase_create("headers");
	tcase_add_test(headers, vulkan_values_match_header);
	tcase_add_test(headers, gl_values_match_header);
	tcase_add_test(headers, cuda_values_match_header);
	tcase_add_test(headers, opencl_values_match_header);
	suite_add_tcase(suite, headers);

	TCase *roundTrip = tcase_create("round_trip");
	tcase_add_test(roundTrip, vulkan_round_trip);
	tcase_add_test(roundTrip, vulkan_whole_agrees_with_planes);
	tcase_add_test(roundTrip, plane_round_trip);
	tcase_add_test(roundTrip, plane_api_formats_for_every_format);
	suite_add_tcase(suite, roundTrip);

	TCase *colour = tcase_create("colorimetry");
	tcase_add_test(colour, vk_ycbcr_every_matrix_and_range);
	suite_add_tcase(suite, colour);

	return gpuhandle::test::runSuite(suite);
}
