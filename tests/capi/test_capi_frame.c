/* C API from C99: frames over resources, refusals, wrap, and the references a frame holds. */
#define _GNU_SOURCE

#include <stdlib.h>
#include <unistd.h>

#include "capi_helpers.h"

START_TEST(frame_over_two_resources)
{
	static uint8_t y[W * H], uv[W * H / 2];
	gpuhandle_cpu_bytes_desc b;
	gpuhandle_frame_desc fd_;
	gpuhandle_frame_desc back;
	gpuhandle_plane_view plane;
	gpuhandle_colorimetry c;
	gpuhandle_resource *ry = NULL;
	gpuhandle_resource *ruv = NULL;
	gpuhandle_frame *f = SENTINEL;
	gpuhandle_error *e = NULL;
	probe pr = { 0, 0 };
	memset(&b, 0, sizeof(b));
	b.data = y;
	b.size = sizeof(y);
	b.anchor = anchor_of(&pr);
	ck_assert_new_ok(gpuhandle_resource_new_cpu_bytes, b, GPUHANDLE_RESOURCE_KIND_CPU_BYTES,
			 ry);
	b.data = uv;
	b.size = sizeof(uv);
	ck_assert_new_ok(gpuhandle_resource_new_cpu_bytes, b, GPUHANDLE_RESOURCE_KIND_CPU_BYTES,
			 ruv);

	memset(&fd_, 0, sizeof(fd_));
	fd_.format = 1; /* NV12: the planes are checked against its layout */
	fd_.width = W;
	fd_.height = H;
	fd_.colorimetry = bt709;
	fd_.numResources = 2;
	fd_.resources[0] = ry;
	fd_.resources[1] = ruv;
	fd_.numPlanes = 2;
	fd_.planes[0].stride = W;
	fd_.planes[1].resource = 1;
	fd_.planes[1].stride = W;
	ck_assert_int_eq(gpuhandle_frame_new(&fd_, &f, &e), GPUHANDLE_OK);
	ck_assert_ptr_null(e);
	/* the frame holds its own references: the caller's can go */
	gpuhandle_resource_unref(ry);
	gpuhandle_resource_unref(ruv);
	ck_assert_int_eq(pr.destroyed, 0);

	ck_assert_uint_eq(gpuhandle_frame_get_format(f), 1);
	ck_assert_uint_eq(gpuhandle_frame_get_width(f), W);
	ck_assert_uint_eq(gpuhandle_frame_get_height(f), H);
	c = gpuhandle_frame_get_colorimetry(f);
	ck_assert_uint_eq(c.matrix, 1);
	ck_assert_uint_eq(gpuhandle_frame_get_num_resources(f), 2);
	ck_assert_ptr_eq(gpuhandle_frame_get_resource(f, 1), ruv); /* borrowed, the same object */
	ck_assert_ptr_null(gpuhandle_frame_get_resource(f, 2));
	ck_assert_uint_eq(gpuhandle_frame_get_num_planes(f), 2);
	ck_assert_int_eq(gpuhandle_frame_get_plane(f, 1, &plane), GPUHANDLE_OK);
	ck_assert_uint_eq(plane.resource, 1);
	ck_assert_uint_eq(plane.stride, W);
	ck_assert_int_eq(gpuhandle_frame_get_plane(f, 2, &plane), GPUHANDLE_ERROR_OUT_OF_RANGE);
	ck_assert_uint_eq(plane.stride, 0);
	ck_assert_int_eq(gpuhandle_frame_get_desc(f, &back), GPUHANDLE_OK);
	ck_assert_ptr_eq(back.resources[0], ry);
	ck_assert_uint_eq(back.planes[1].resource, 1);

	ck_assert_ptr_eq(gpuhandle_frame_ref(f), f);
	gpuhandle_frame_unref(f);
	ck_assert_int_eq(pr.destroyed, 0);
	gpuhandle_frame_unref(f);
	ck_assert_int_eq(pr.destroyed, 2); /* after the last unref, once per resource */
}
END_TEST

START_TEST(frame_invalid_input)
{
	static uint8_t y[W * H];
	gpuhandle_cpu_bytes_desc b;
	gpuhandle_frame_desc d;
	gpuhandle_resource *r = NULL;
	gpuhandle_frame *f;
	gpuhandle_error *e;
	gpuhandle_colorimetry zeros = { 0, 0, 0, 0 };
	gpuhandle_colorimetry unknown = GPUHANDLE_COLORIMETRY_UNKNOWN;
	memset(&b, 0, sizeof(b));
	b.data = y;
	b.size = sizeof(y);
	ck_assert_new_ok(gpuhandle_resource_new_cpu_bytes, b, GPUHANDLE_RESOURCE_KIND_CPU_BYTES, r);
	memset(&d, 0, sizeof(d));
	d.width = W;
	d.height = H;
	d.colorimetry = unknown;
	d.numResources = 1;
	d.resources[0] = r;
	d.numPlanes = 1;
	d.planes[0].stride = W;

#define FRAME_FAILS(code, field)                                                                   \
	do {                                                                                       \
		f = SENTINEL;                                                                      \
		e = NULL;                                                                          \
		ck_assert_failed(gpuhandle_frame_new(&d, &f, &e), f, e, code, field);              \
	} while (0)
	d.width = 0;
	FRAME_FAILS(GPUHANDLE_ERROR_ZERO_SIZE, "width");
	d.width = W;
	d.colorimetry = zeros;
	ck_assert(!gpuhandle_colorimetry_is_valid(zeros));
	FRAME_FAILS(GPUHANDLE_ERROR_INVALID_ARGUMENT, "colorimetry");
	d.colorimetry = unknown;
	d.resources[0] = NULL;
	FRAME_FAILS(GPUHANDLE_ERROR_NULL_HANDLE, "resources[0]");
	d.resources[0] = r;
	d.numPlanes = 0;
	FRAME_FAILS(GPUHANDLE_ERROR_OUT_OF_RANGE, "numPlanes");
	d.numPlanes = 1;
	d.planes[0].offset = sizeof(y);
	FRAME_FAILS(GPUHANDLE_ERROR_OUT_OF_RANGE, "planes[0].offset");
	d.planes[0].offset = 0;
	d.resources[1] = r;
	FRAME_FAILS(GPUHANDLE_ERROR_INVALID_ARGUMENT, "resources[1]");
#undef FRAME_FAILS
	f = SENTINEL;
	e = NULL;
	ck_assert_failed(gpuhandle_frame_new(NULL, &f, &e), f, e, GPUHANDLE_ERROR_NULL_HANDLE,
			 "desc");
	ck_assert_int_eq(gpuhandle_frame_new(&d, NULL, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_frame_get_plane(NULL, 0, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_frame_get_desc(NULL, &d), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_ptr_null(d.resources[0]);
	ck_assert_uint_eq(gpuhandle_frame_get_width(NULL), 0);
	ck_assert_uint_eq(gpuhandle_frame_get_colorimetry(NULL).primaries, 2);
	ck_assert_ptr_null(gpuhandle_frame_get_resource(NULL, 0));
	ck_assert_ptr_null(gpuhandle_frame_ref(NULL));
	gpuhandle_frame_unref(NULL);
	gpuhandle_resource_unref(r);
}
END_TEST

START_TEST(frame_wrap_takes_the_resource_layout)
{
	gpuhandle_dmabuf_desc d;
	gpuhandle_resource *r = NULL;
	gpuhandle_frame *f = SENTINEL;
	gpuhandle_error *e = NULL;
	gpuhandle_plane_view plane;
	int before = open_fd_count();
	d = nv12_dmabuf(make_memfd(NV12_SIZE));
	ck_assert_new_ok(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_RESOURCE_KIND_DMABUF, r);
	ck_assert_int_eq(gpuhandle_frame_wrap(0, W, H, bt709, r, &f, &e), GPUHANDLE_OK);
	gpuhandle_resource_unref(r);
	ck_assert_uint_eq(gpuhandle_frame_get_num_planes(f), 2);
	ck_assert_int_eq(gpuhandle_frame_get_plane(f, 1, &plane), GPUHANDLE_OK);
	ck_assert_uint_eq(plane.offset, W * H);
	ck_assert_int_eq(gpuhandle_resource_get_kind(gpuhandle_frame_get_resource(f, 0)),
			 GPUHANDLE_RESOURCE_KIND_DMABUF);
	ck_assert_int_eq(open_fd_count(), before + 1); /* the frame keeps the DMA-BUF open */
	gpuhandle_frame_unref(f);
	ck_assert_int_eq(open_fd_count(), before);

	f = SENTINEL;
	ck_assert_failed(gpuhandle_frame_wrap(0, W, H, bt709, NULL, &f, &e), f, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "resource");
}
END_TEST

START_TEST(frame_wrap_failure_releases_nothing_twice)
{
	gpuhandle_cpu_bytes_desc b;
	gpuhandle_resource *r = NULL;
	gpuhandle_frame *f = SENTINEL;
	gpuhandle_error *e = NULL;
	probe pr = { 0, 0 };
	char data[16];
	memset(&b, 0, sizeof(b));
	b.data = data;
	b.size = sizeof(data);
	b.anchor = anchor_of(&pr);
	ck_assert_new_ok(gpuhandle_resource_new_cpu_bytes, b, GPUHANDLE_RESOURCE_KIND_CPU_BYTES, r);
	ck_assert_failed(gpuhandle_frame_wrap(0, 0, H, bt709, r, &f, &e), f, e,
			 GPUHANDLE_ERROR_ZERO_SIZE, "width");
	ck_assert_int_eq(pr.destroyed, 0); /* the caller's reference is untouched */
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(pr.destroyed, 1);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("frame");
	tcase_add_test(tc, frame_over_two_resources);
	tcase_add_test(tc, frame_invalid_input);
	tcase_add_test(tc, frame_wrap_takes_the_resource_layout);
	tcase_add_test(tc, frame_wrap_failure_releases_nothing_twice);
	return run_one_case("capi-frame", tc);
}
