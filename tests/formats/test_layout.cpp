// Layouts under the tight and stride-aligned policies, custom strides, texture estimates, errors.
#include <gpuhandle/layout.h>

#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;

START_TEST(tight_nv12_odd_size)
{
	auto r = computeLayout(PixelFormat::NV12, 17, 9);
	ck_assert_ok(r);
	const FrameLayout &l = *r;
	ck_assert_uint_eq(l.numPlanes, 2);
	ck_assert_uint_eq(l.planes[0].stride, 17);
	ck_assert_uint_eq(l.planes[0].height, 9);
	ck_assert_uint_eq(l.planes[1].width, 9);   // ceil(17 / 2) chroma pairs
	ck_assert_uint_eq(l.planes[1].stride, 18); // two bytes per pair
	ck_assert_uint_eq(l.planes[1].height, 5);  // ceil(9 / 2) rows
	ck_assert_uint_eq(l.planes[1].offset, 17 * 9);
	ck_assert_uint_eq(l.size, 17 * 9 + 18 * 5);
}
END_TEST

START_TEST(tight_layout_is_contiguous_for_every_format)
{
	const uint32_t sizes[][2] = { { 1, 1 }, { 2, 2 }, { 17, 9 }, { 33, 17 }, { 1920, 1080 } };
	for (const PixelFormatInfo &info : allPixelFormats()) {
		for (const auto &size : sizes) {
			auto r = computeLayout(info.format, size[0], size[1]);
			ck_assert_ok(r);
			uint64_t offset = 0;
			for (uint32_t i = 0; i < r->numPlanes; ++i) {
				const PlaneLayout &p = r->planes[i];
				ck_assert_msg(p.offset == offset, "%s plane %u", info.name, i);
				ck_assert_uint_eq(p.stride, info.planes[i].rowBytes(size[0]));
				ck_assert_uint_eq(p.size, uint64_t(p.stride) * p.height);
				offset += p.size;
			}
			ck_assert_uint_eq(r->size, offset);
		}
	}
}
END_TEST

START_TEST(stride_align_rounds_every_plane)
{
	auto r = computeLayout(PixelFormat::YUV420P, 1918, 1078, LayoutPolicy::StrideAlign, 64);
	ck_assert_ok(r);
	ck_assert_uint_eq(r->planes[0].stride, 1920);
	ck_assert_uint_eq(r->planes[1].stride, 960);
	ck_assert_uint_eq(r->planes[2].offset, 1920ull * 1078 + 960ull * 539);
	auto v210 = computeLayout(PixelFormat::V210, 1920, 1080, LayoutPolicy::StrideAlign, 128);
	ck_assert_ok(v210);
	// 320 blocks of 16 bytes, a multiple of 128.
	ck_assert_uint_eq(v210->planes[0].stride, 5120);
}
END_TEST

START_TEST(custom_strides)
{
	const uint32_t good[] = { 2048, 2048 };
	auto r = layoutWithStrides(PixelFormat::NV12, 1920, 1080, good);
	ck_assert_ok(r);
	ck_assert_uint_eq(r->planes[1].offset, 2048ull * 1080);
	ck_assert_uint_eq(r->size, 2048ull * 1080 * 3 / 2);
	const uint32_t small[] = { 1919, 2048 };
	ck_assert_error(layoutWithStrides(PixelFormat::NV12, 1920, 1080, small),
			ErrorCode::OutOfRange, "strides");
	const uint32_t three[] = { 2048, 2048, 2048 };
	ck_assert_error(layoutWithStrides(PixelFormat::NV12, 1920, 1080, three),
			ErrorCode::InvalidArgument, "strides");
}
END_TEST

START_TEST(malformed_queries_are_errors)
{
	ck_assert_error(computeLayout(PixelFormat::Unknown, 16, 16), ErrorCode::NotSupported,
			"format");
	ck_assert_error(computeLayout(static_cast<PixelFormat>(777), 16, 16),
			ErrorCode::NotSupported, "format");
	ck_assert_error(computeLayout(PixelFormat::NV12, 0, 16), ErrorCode::ZeroSize, "width");
	ck_assert_error(computeLayout(PixelFormat::NV12, 16, 0), ErrorCode::ZeroSize, "height");
	ck_assert_error(computeLayout(PixelFormat::NV12, 16, 16, LayoutPolicy::FFmpeg, 3),
			ErrorCode::InvalidArgument, "align");
	ck_assert_error(computeLayout(PixelFormat::NV12, 16, 16, LayoutPolicy::StrideAlign, 0),
			ErrorCode::InvalidArgument, "align");
	ck_assert_error(computeLayout(PixelFormat::NV12, 16, 16, static_cast<LayoutPolicy>(9)),
			ErrorCode::InvalidArgument, "policy");
	// A row wider than 4 GiB cannot have a 32-bit stride.
	ck_assert_error(computeLayout(PixelFormat::RGBAF32, UINT32_MAX, 1), ErrorCode::OutOfRange,
			"width");
	// Every policy at the largest sizes returns a value or an error, never wraps around.
	for (LayoutPolicy policy : { LayoutPolicy::Tight, LayoutPolicy::GStreamer,
				     LayoutPolicy::FFmpeg, LayoutPolicy::StrideAlign }) {
		for (const PixelFormatInfo &info : allPixelFormats()) {
			auto r = computeLayout(info.format, 65535, UINT32_MAX, policy, 64);
			if (r.ok())
				ck_assert_uint_ge(r->size, uint64_t(65535) * UINT32_MAX);
		}
	}
}
END_TEST

START_TEST(texture_estimates)
{
	// NV12 counts 1.5 bytes per pixel, not a flat 4.
	ck_assert_uint_eq(*estimateTextureBytes(PixelFormat::NV12, 1920, 1080),
			  1920ull * 1080 * 3 / 2);
	ck_assert_uint_eq(*estimateTextureBytes(PixelFormat::P010LE, 1920, 1080),
			  1920ull * 1080 * 3);
	ck_assert_uint_eq(*estimateTextureBytes(PixelFormat::RGBA, 4, 4, 1, 3), 64 + 16 + 4);
	ck_assert_uint_eq(*estimateTextureBytes(PixelFormat::RGBA, 16, 16, 6), 16 * 16 * 4 * 6);
	ck_assert_error(estimateTextureBytes(PixelFormat::RGBA, 4, 4, 1, 4), ErrorCode::OutOfRange,
			"mipLevels");
	ck_assert_error(estimateTextureBytes(PixelFormat::RGBA, 4, 4, 0), ErrorCode::ZeroSize,
			"layers");
	ck_assert_error(estimateTextureBytes(PixelFormat::RGBA, 0, 4), ErrorCode::ZeroSize,
			"width");
	ck_assert_error(estimateTextureBytes(PixelFormat::Unknown, 4, 4), ErrorCode::NotSupported,
			"format");
	ck_assert_error(estimateTextureBytes(PixelFormat::RGBAF32, UINT32_MAX, UINT32_MAX,
					     UINT32_MAX),
			ErrorCode::OutOfRange, "layers");
	ck_assert_str_eq(layoutPolicyName(LayoutPolicy::GStreamer), "gstreamer");
}
END_TEST

// planeEnd: the last row counts only its own bytes; no rows, or an end past 2^64, is no end.
START_TEST(plane_end_refuses_wrap_around)
{
	ck_assert_uint_eq(planeEnd(100, 64, 3, 48).value(), 100 + 64 * 2 + 48);
	ck_assert_uint_eq(planeEnd(0, 0, 1, 0).value(), 0);
	ck_assert(!planeEnd(0, 64, 0, 48));
	ck_assert(!planeEnd(UINT64_MAX - 100, 64, 3, 48));
	ck_assert(!planeEnd(0, UINT64_MAX, 3, 1));
	ck_assert_uint_eq(planeEnd(UINT64_MAX - 48, 0, 1, 48).value(), UINT64_MAX);
	static_assert(planeEnd(1, 2, 2, 3) == 6);
}
END_TEST

int main()
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("layout");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tight_nv12_odd_size);
	tcase_add_test(tc, tight_layout_is_contiguous_for_every_format);
	tcase_add_test(tc, stride_align_rounds_every_plane);
	tcase_add_test(tc, custom_strides);
	tcase_add_test(tc, malformed_queries_are_errors);
	tcase_add_test(tc, texture_estimates);
	tcase_add_test(tc, plane_end_refuses_wrap_around);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
