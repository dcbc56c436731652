// CudaPitched2D, CudaBuffer and CudaSurface factories: pointers, pitches, plane offsets, sizes.
#include <gpuhandle/cuda_resources.h>

#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;

namespace {
// NVDEC-like NV12 1920x1080: pitch 2048, luma padded to 1088 rows before the chroma plane.
CudaPitched2DDesc nvdecNv12()
{
	CudaPitched2DDesc d;
	d.pointer = 0x7f0000000000;
	d.pitch = 2048;
	d.numPlanes = 2;
	d.planeOffsets = { 0, 2048ull * 1088, 0, 0 };
	d.size = 2048ull * 1088 * 3 / 2;
	return d;
}
} // namespace

START_TEST(pitched_valid)
{
	auto r = CudaPitched2D::create(nvdecNv12());
	ck_assert_ok(r);
	ck_assert_uint_eq(r->desc().planeOffsets[1], 2048ull * 1088);
	CudaPitched2DDesc three = nvdecNv12();
	three.numPlanes = 3;
	three.planeOffsets = { 0, 2048ull * 1088, 2048ull * 1088 + 1024ull * 544, 0 };
	ck_assert_ok(CudaPitched2D::create(three));
}
END_TEST

START_TEST(pitched_refusals)
{
	CudaPitched2DDesc d = nvdecNv12();
	d.pointer = 0;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::NullHandle, "pointer");
	d = nvdecNv12();
	d.pitch = 0;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::ZeroSize, "pitch");
	d = nvdecNv12();
	d.size = 0;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::ZeroSize, "size");
	d = nvdecNv12();
	d.size = 1024;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::OutOfRange, "pitch");
	d = nvdecNv12();
	d.numPlanes = 0;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::OutOfRange, "numPlanes");
	d.numPlanes = 5;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::OutOfRange, "numPlanes");
	d = nvdecNv12();
	d.planeOffsets[1] = d.size;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::OutOfRange, "planeOffsets[1]");
	d = nvdecNv12();
	d.planeOffsets[0] = 4096;
	d.planeOffsets[1] = 4096;
	ck_assert_error(CudaPitched2D::create(d), ErrorCode::InvalidArgument, "planeOffsets[1]");
}
END_TEST

START_TEST(buffer_and_surface)
{
	ck_assert_ok(CudaBuffer::create({ .pointer = 0x1000, .size = 64 }));
	ck_assert_error(CudaBuffer::create({ .pointer = 0, .size = 64 }), ErrorCode::NullHandle,
			"pointer");
	ck_assert_error(CudaBuffer::create({ .pointer = 0x1000, .size = 0 }), ErrorCode::ZeroSize,
			"size");
	ck_assert_ok(CudaSurface::create({ .surface = 1, .width = 64, .height = 32 }));
	ck_assert_error(CudaSurface::create({ .surface = 0, .width = 64, .height = 32 }),
			ErrorCode::NullHandle, "surface");
	ck_assert_error(CudaSurface::create({ .surface = 1, .width = 0, .height = 32 }),
			ErrorCode::ZeroSize, "width");
	ck_assert_error(CudaSurface::create({ .surface = 1, .width = 64, .height = 0 }),
			ErrorCode::ZeroSize, "height");
}
END_TEST

START_TEST(factories_touch_no_fd)
{
	int before = gpuhandle::test::openFdCount();
	for (int i = 0; i < 20; ++i) {
		ck_assert(CudaPitched2D::create(nvdecNv12()).ok());
		ck_assert(!CudaPitched2D::create({}).ok());
		ck_assert(!CudaSurface::create({}).ok());
	}
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-cuda");
	TCase *tc = tcase_create("cuda");
	tcase_add_test(tc, pitched_valid);
	tcase_add_test(tc, pitched_refusals);
	tcase_add_test(tc, buffer_and_surface);
	tcase_add_test(tc, factories_touch_no_fd);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
