/* C API from C99: status numbers, names, NULL arguments, errors, every non-fd resource constructor.
 */
#define _GNU_SOURCE

#include <stdlib.h>
#include <unistd.h>

#include "capi_helpers.h"

START_TEST(status_numbers_are_stable)
{
	ck_assert_int_eq(GPUHANDLE_OK, 0);
	ck_assert_int_eq(GPUHANDLE_ERROR_INVALID_ARGUMENT, 1);
	ck_assert_int_eq(GPUHANDLE_ERROR_NULL_HANDLE, 2);
	ck_assert_int_eq(GPUHANDLE_ERROR_ZERO_SIZE, 3);
	ck_assert_int_eq(GPUHANDLE_ERROR_OUT_OF_RANGE, 4);
	ck_assert_int_eq(GPUHANDLE_ERROR_BAD_FD, 5);
	ck_assert_int_eq(GPUHANDLE_ERROR_WRONG_KIND, 6);
	ck_assert_int_eq(GPUHANDLE_ERROR_NOT_SUPPORTED, 7);
	ck_assert_int_eq(GPUHANDLE_ERROR_INVALID_STATE, 8);
	ck_assert_int_eq(GPUHANDLE_ERROR_OUT_OF_MEMORY, 9);
	ck_assert_int_eq(GPUHANDLE_ERROR_TIMEOUT, 10);
	ck_assert_int_eq(GPUHANDLE_ERROR_WOULD_BLOCK, 11);
	ck_assert_int_eq(GPUHANDLE_ERROR_CANCELLED, 12);
	ck_assert_int_eq(GPUHANDLE_ERROR_DEVICE_LOST, 13);
	ck_assert_int_eq(GPUHANDLE_ERROR_DEVICE_MISMATCH, 14);
	ck_assert_int_eq(GPUHANDLE_ERROR_FORMAT_MISMATCH, 15);
	ck_assert_int_eq(GPUHANDLE_ERROR_IO, 16);
	ck_assert_int_eq(GPUHANDLE_ERROR_BACKEND, 17);
	ck_assert_int_eq(GPUHANDLE_ERROR_FATAL, 18);
	ck_assert_int_eq(GPUHANDLE_ERROR_KIND_CONFIGURATION, 2);
	ck_assert_int_eq(GPUHANDLE_BACKEND_FD, 6);
	ck_assert_int_eq(GPUHANDLE_BACKEND_WEBGPU, 10);
	ck_assert_int_eq(GPUHANDLE_RESOURCE_KIND_DMABUF, 10);
	ck_assert_int_eq(GPUHANDLE_RESOURCE_KIND_CPU_SHARED_SLOT, 21);
	ck_assert_int_eq(GPUHANDLE_EXECUTION_PATH_CPU_COPY, 3);
	ck_assert_int_eq(GPUHANDLE_DEVICE_MATCH_UNKNOWN, 2);
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(gpuhandle_status_name(GPUHANDLE_OK), "ok");
	ck_assert_str_eq(gpuhandle_status_name(GPUHANDLE_ERROR_BAD_FD), "bad-fd");
	ck_assert_str_eq(gpuhandle_status_name((gpuhandle_status)99), "unknown");
	ck_assert_str_eq(gpuhandle_error_kind_name(GPUHANDLE_ERROR_KIND_RECOVERABLE),
			 "recoverable");
	ck_assert_str_eq(gpuhandle_backend_kind_name(GPUHANDLE_BACKEND_VULKAN), "vulkan");
	ck_assert_str_eq(gpuhandle_resource_kind_name(GPUHANDLE_RESOURCE_KIND_DMABUF), "dmabuf");
	ck_assert_str_eq(gpuhandle_resource_kind_name((gpuhandle_resource_kind)77), "unknown");
	ck_assert_int_eq(gpuhandle_resource_kind_backend(GPUHANDLE_RESOURCE_KIND_SHM_FD),
			 GPUHANDLE_BACKEND_FD);
	ck_assert_int_eq(gpuhandle_resource_kind_backend(GPUHANDLE_RESOURCE_KIND_CPU_BYTES),
			 GPUHANDLE_BACKEND_CPU);
	ck_assert_str_eq(gpuhandle_execution_path_kind_name(GPUHANDLE_EXECUTION_PATH_ZERO_COPY),
			 "zero-copy");
	ck_assert_str_eq(gpuhandle_device_match_name(GPUHANDLE_DEVICE_MATCH_SAME), "same");
}
END_TEST

START_TEST(null_arguments_never_crash)
{
	gpuhandle_cpu_bytes_desc bytes;
	gpuhandle_cpu_bytes_desc got;
	gpuhandle_resource *r = SENTINEL;
	gpuhandle_error *e = NULL;
	char data[16];
	memset(&bytes, 0, sizeof(bytes));
	bytes.data = data;
	bytes.size = sizeof(data);

	ck_assert_failed(gpuhandle_resource_new_cpu_bytes(NULL, &r, &e), r, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "desc");
	ck_assert_failed(gpuhandle_resource_new_cpu_bytes(&bytes, NULL, &e), NULL, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "out");
	/* error may be NULL: the status alone tells */
	ck_assert_int_eq(gpuhandle_resource_new_dmabuf(NULL, NULL, NULL),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_resource_get_cpu_bytes(NULL, &got), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_ptr_null(got.data);
	ck_assert_int_eq(gpuhandle_resource_get_dmabuf(NULL, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_resource_get_kind(NULL), GPUHANDLE_RESOURCE_KIND_NONE);
	ck_assert_int_eq(gpuhandle_resource_get_backend(NULL), GPUHANDLE_BACKEND_CPU);
	ck_assert_uint_eq(gpuhandle_resource_byte_size(NULL, 0), 0);
	ck_assert_uint_eq(gpuhandle_resource_subresource_count(NULL), 0);
	gpuhandle_resource_mark_consumed(NULL);
	ck_assert_ptr_null(gpuhandle_resource_ref(NULL));
	gpuhandle_resource_unref(NULL);
	ck_assert_ptr_null(gpuhandle_error_ref(NULL));
	gpuhandle_error_unref(NULL);
	ck_assert_int_eq(gpuhandle_error_get_code(NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_error_get_kind(NULL), GPUHANDLE_ERROR_KIND_FATAL);
	ck_assert_str_eq(gpuhandle_error_get_field(NULL), "");
	ck_assert_str_eq(gpuhandle_error_get_message(NULL), "");
}
END_TEST

START_TEST(error_object)
{
	gpuhandle_cpu_bytes_desc bytes;
	gpuhandle_resource *r = NULL;
	gpuhandle_error *e = NULL;
	memset(&bytes, 0, sizeof(bytes));
	bytes.size = 8;
	ck_assert_int_eq(gpuhandle_resource_new_cpu_bytes(&bytes, &r, &e),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_error_get_kind(e), GPUHANDLE_ERROR_KIND_CONFIGURATION);
	ck_assert_ptr_eq(gpuhandle_error_ref(e), e);
	gpuhandle_error_unref(e);
	ck_assert_str_eq(gpuhandle_error_get_field(e), "data"); /* still alive: one reference left
								 */
	gpuhandle_error_unref(e);
}
END_TEST

START_TEST(vulkan_image_and_buffer)
{
	gpuhandle_vulkan_image_desc image;
	gpuhandle_vulkan_image_desc image_back;
	gpuhandle_vulkan_buffer_desc buffer;
	gpuhandle_vulkan_buffer_desc buffer_back;
	gpuhandle_resource *r = NULL;
	int device;
	memset(&image, 0, sizeof(image));
	image.image = 0x1234;
	image.device = &device;
	image.hasDeviceUuid = true;
	image.deviceUuid[15] = 7;
	ck_assert_new_ok(gpuhandle_resource_new_vulkan_image, image,
			 GPUHANDLE_RESOURCE_KIND_VULKAN_IMAGE, r);
	ck_assert_int_eq(gpuhandle_resource_get_backend(r), GPUHANDLE_BACKEND_VULKAN);
	ck_assert_int_eq(gpuhandle_resource_get_vulkan_image(r, &image_back), GPUHANDLE_OK);
	ck_assert_uint_eq(image_back.image, 0x1234);
	ck_assert_ptr_eq(image_back.device, &device);
	ck_assert(image_back.hasDeviceUuid);
	ck_assert_uint_eq(image_back.deviceUuid[15], 7);
	ck_assert_uint_eq(image_back.planes, 1); /* 0 reads as one plane */
	memset(&buffer_back, 0xff, sizeof(buffer_back));
	ck_assert_int_eq(gpuhandle_resource_get_vulkan_buffer(r, &buffer_back),
			 GPUHANDLE_ERROR_WRONG_KIND);
	ck_assert_uint_eq(buffer_back.buffer, 0); /* zeroed on failure */
	gpuhandle_resource_unref(r);
	/* A multi-planar image: one subresource per plane; a fourth plane is no Vulkan format's. */
	image.planes = 2;
	ck_assert_new_ok(gpuhandle_resource_new_vulkan_image, image,
			 GPUHANDLE_RESOURCE_KIND_VULKAN_IMAGE, r);
	ck_assert_uint_eq(gpuhandle_resource_subresource_count(r), 2);
	ck_assert_int_eq(gpuhandle_resource_get_vulkan_image(r, &image_back), GPUHANDLE_OK);
	ck_assert_uint_eq(image_back.planes, 2);
	gpuhandle_resource_unref(r);
	image.planes = 4;
	ck_assert_new_fails(gpuhandle_resource_new_vulkan_image, image,
			    GPUHANDLE_ERROR_OUT_OF_RANGE, "planes");
	image.planes = 0;
	image.image = 0;
	ck_assert_new_fails(gpuhandle_resource_new_vulkan_image, image, GPUHANDLE_ERROR_NULL_HANDLE,
			    "image");

	memset(&buffer, 0, sizeof(buffer));
	buffer.buffer = 0x99;
	buffer.device = &device;
	buffer.size = 4096;
	ck_assert_new_ok(gpuhandle_resource_new_vulkan_buffer, buffer,
			 GPUHANDLE_RESOURCE_KIND_VULKAN_BUFFER, r);
	ck_assert_uint_eq(gpuhandle_resource_byte_size(r, 0), 4096);
	ck_assert_int_eq(gpuhandle_resource_get_vulkan_buffer(r, &buffer_back), GPUHANDLE_OK);
	ck_assert(!buffer_back.hasDeviceUuid);
	gpuhandle_resource_unref(r);
	buffer.size = 0;
	ck_assert_new_fails(gpuhandle_resource_new_vulkan_buffer, buffer, GPUHANDLE_ERROR_ZERO_SIZE,
			    "size");
}
END_TEST

START_TEST(gl_resources)
{
	gpuhandle_gl_texture_desc t;
	gpuhandle_gl_texture_desc t_back;
	gpuhandle_gl_buffer_desc b;
	gpuhandle_resource *r = NULL;
	int context;
	memset(&t, 0, sizeof(t));
	t.name = 3;
	t.target = 0x0DE1;         /* GL_TEXTURE_2D */
	t.internalFormat = 0x8058; /* GL_RGBA8 */
	t.width = W;
	t.height = H;
	t.context = &context;
	t.flavour = GPUHANDLE_GL_FLAVOUR_GLX;
	ck_assert_new_ok(gpuhandle_resource_new_gl_texture, t, GPUHANDLE_RESOURCE_KIND_GL_TEXTURE,
			 r);
	ck_assert_int_eq(gpuhandle_resource_get_gl_texture(r, &t_back), GPUHANDLE_OK);
	ck_assert_int_eq(t_back.flavour, GPUHANDLE_GL_FLAVOUR_GLX);
	ck_assert_uint_eq(t_back.internalFormat, 0x8058);
	gpuhandle_resource_unref(r);
	t.target = 0x1234;
	ck_assert_new_fails(gpuhandle_resource_new_gl_texture, t, GPUHANDLE_ERROR_INVALID_ARGUMENT,
			    "target");

	memset(&b, 0, sizeof(b));
	b.name = 5;
	b.target = 0x88EC; /* GL_PIXEL_UNPACK_BUFFER */
	b.size = 1024;
	b.context = &context;
	ck_assert_new_ok(gpuhandle_resource_new_gl_buffer, b, GPUHANDLE_RESOURCE_KIND_GL_BUFFER, r);
	gpuhandle_resource_unref(r);
	b.flavour = (gpuhandle_gl_flavour)9;
	ck_assert_new_fails(gpuhandle_resource_new_gl_buffer, b, GPUHANDLE_ERROR_INVALID_ARGUMENT,
			    "flavour");
}
END_TEST

START_TEST(cuda_resources)
{
	gpuhandle_cuda_pitched_2d_desc p;
	gpuhandle_cuda_pitched_2d_desc p_back;
	gpuhandle_cuda_buffer_desc b;
	gpuhandle_cuda_surface_desc s;
	gpuhandle_resource *r = NULL;
	memset(&p, 0, sizeof(p));
	p.pointer = 0x7f0000;
	p.pitch = 256;
	p.numPlanes = 2;
	p.planeOffsets[1] = 256 * 64;
	p.size = 256 * 96;
	ck_assert_new_ok(gpuhandle_resource_new_cuda_pitched_2d, p,
			 GPUHANDLE_RESOURCE_KIND_CUDA_PITCHED_2D, r);
	ck_assert_int_eq(gpuhandle_resource_get_cuda_pitched_2d(r, &p_back), GPUHANDLE_OK);
	ck_assert_uint_eq(p_back.planeOffsets[1], 256 * 64);
	gpuhandle_resource_unref(r);
	p.planeOffsets[1] = 0;
	ck_assert_new_fails(gpuhandle_resource_new_cuda_pitched_2d, p,
			    GPUHANDLE_ERROR_INVALID_ARGUMENT, "planeOffsets[1]");

	memset(&b, 0, sizeof(b));
	b.pointer = 0x10;
	b.size = 64;
	ck_assert_new_ok(gpuhandle_resource_new_cuda_buffer, b, GPUHANDLE_RESOURCE_KIND_CUDA_BUFFER,
			 r);
	gpuhandle_resource_unref(r);
	b.pointer = 0;
	ck_assert_new_fails(gpuhandle_resource_new_cuda_buffer, b, GPUHANDLE_ERROR_NULL_HANDLE,
			    "pointer");

	memset(&s, 0, sizeof(s));
	s.surface = 9;
	s.width = W;
	s.height = H;
	ck_assert_new_ok(gpuhandle_resource_new_cuda_surface, s,
			 GPUHANDLE_RESOURCE_KIND_CUDA_SURFACE, r);
	gpuhandle_resource_unref(r);
	s.width = 0;
	ck_assert_new_fails(gpuhandle_resource_new_cuda_surface, s, GPUHANDLE_ERROR_ZERO_SIZE,
			    "width");
}
END_TEST

START_TEST(opencl_and_vaapi_resources)
{
	gpuhandle_opencl_mem_desc m;
	gpuhandle_va_surface_desc v;
	gpuhandle_va_surface_desc v_back;
	gpuhandle_resource *r = NULL;
	int handle;
	memset(&m, 0, sizeof(m));
	m.mem = &handle;
	m.queue = &handle;
	ck_assert_new_ok(gpuhandle_resource_new_opencl_mem, m, GPUHANDLE_RESOURCE_KIND_OPENCL_MEM,
			 r);
	gpuhandle_resource_unref(r);
	m.queue = NULL;
	ck_assert_new_fails(gpuhandle_resource_new_opencl_mem, m, GPUHANDLE_ERROR_NULL_HANDLE,
			    "queue");

	memset(&v, 0, sizeof(v));
	v.display = &handle; /* surface 0 is a legal VASurfaceID */
	ck_assert_new_ok(gpuhandle_resource_new_va_surface, v, GPUHANDLE_RESOURCE_KIND_VA_SURFACE,
			 r);
	ck_assert_int_eq(gpuhandle_resource_get_va_surface(r, &v_back), GPUHANDLE_OK);
	ck_assert_ptr_eq(v_back.display, &handle);
	gpuhandle_resource_unref(r);
	v.surface = 0xffffffffu;
	ck_assert_new_fails(gpuhandle_resource_new_va_surface, v, GPUHANDLE_ERROR_INVALID_ARGUMENT,
			    "surface");
}
END_TEST

START_TEST(platform_resources)
{
	gpuhandle_d3d11_texture_desc t11;
	gpuhandle_d3d11_texture_desc t11_back;
	gpuhandle_d3d12_resource_desc r12;
	gpuhandle_d3d12_buffer_desc b12;
	gpuhandle_metal_texture_desc mt;
	gpuhandle_metal_buffer_desc mb;
	gpuhandle_metal_buffer_desc mb_back;
	gpuhandle_webgpu_texture_desc wt;
	gpuhandle_resource *r = NULL;
	int handle;
	memset(&t11, 0, sizeof(t11));
	t11.texture = &handle;
	t11.hasAdapterLuid = true;
	t11.adapterLuid.low = 5;
	t11.adapterLuid.high = -1;
	ck_assert_new_ok(gpuhandle_resource_new_d3d11_texture, t11,
			 GPUHANDLE_RESOURCE_KIND_D3D11_TEXTURE, r);
	ck_assert_int_eq(gpuhandle_resource_get_d3d11_texture(r, &t11_back), GPUHANDLE_OK);
	ck_assert(t11_back.hasAdapterLuid);
	ck_assert_int_eq(t11_back.adapterLuid.high, -1);
	gpuhandle_resource_unref(r);
	t11.texture = NULL;
	ck_assert_new_fails(gpuhandle_resource_new_d3d11_texture, t11, GPUHANDLE_ERROR_NULL_HANDLE,
			    "texture");

	memset(&r12, 0, sizeof(r12));
	r12.resource = &handle;
	ck_assert_new_ok(gpuhandle_resource_new_d3d12_resource, r12,
			 GPUHANDLE_RESOURCE_KIND_D3D12_RESOURCE, r);
	gpuhandle_resource_unref(r);
	r12.resource = NULL;
	ck_assert_new_fails(gpuhandle_resource_new_d3d12_resource, r12, GPUHANDLE_ERROR_NULL_HANDLE,
			    "resource");

	memset(&b12, 0, sizeof(b12));
	b12.resource = &handle;
	b12.size = 256;
	ck_assert_new_ok(gpuhandle_resource_new_d3d12_buffer, b12,
			 GPUHANDLE_RESOURCE_KIND_D3D12_BUFFER, r);
	gpuhandle_resource_unref(r);
	b12.size = 0;
	ck_assert_new_fails(gpuhandle_resource_new_d3d12_buffer, b12, GPUHANDLE_ERROR_ZERO_SIZE,
			    "size");

	memset(&mt, 0, sizeof(mt));
	mt.texture = &handle;
	ck_assert_new_ok(gpuhandle_resource_new_metal_texture, mt,
			 GPUHANDLE_RESOURCE_KIND_METAL_TEXTURE, r);
	gpuhandle_resource_unref(r);
	mt.texture = NULL;
	ck_assert_new_fails(gpuhandle_resource_new_metal_texture, mt, GPUHANDLE_ERROR_NULL_HANDLE,
			    "texture");

	memset(&mb, 0, sizeof(mb));
	mb.buffer = &handle;
	mb.size = 128;
	mb.hasRegistryId = true;
	mb.registryId = 77;
	ck_assert_new_ok(gpuhandle_resource_new_metal_buffer, mb,
			 GPUHANDLE_RESOURCE_KIND_METAL_BUFFER, r);
	ck_assert_int_eq(gpuhandle_resource_get_metal_buffer(r, &mb_back), GPUHANDLE_OK);
	ck_assert_uint_eq(mb_back.registryId, 77);
	gpuhandle_resource_unref(r);
	mb.buffer = NULL;
	ck_assert_new_fails(gpuhandle_resource_new_metal_buffer, mb, GPUHANDLE_ERROR_NULL_HANDLE,
			    "buffer");

	memset(&wt, 0, sizeof(wt));
	wt.texture = &handle;
	wt.device = &handle;
	wt.width = W;
	wt.height = H;
	ck_assert_new_ok(gpuhandle_resource_new_webgpu_texture, wt,
			 GPUHANDLE_RESOURCE_KIND_WEBGPU_TEXTURE, r);
	gpuhandle_resource_unref(r);
	wt.height = 0;
	ck_assert_new_fails(gpuhandle_resource_new_webgpu_texture, wt, GPUHANDLE_ERROR_ZERO_SIZE,
			    "height");
}
END_TEST

START_TEST(cpu_resources)
{
	gpuhandle_cpu_planes_desc p;
	gpuhandle_cpu_planes_desc p_back;
	gpuhandle_cpu_shared_slot_desc s;
	gpuhandle_resource *r = NULL;
	probe pr = { 0, 0 };
	static uint8_t y[W * H], uv[W * H / 2];
	memset(&p, 0, sizeof(p));
	p.numPlanes = 2;
	p.planes[0].data = y;
	p.planes[0].stride = W;
	p.planes[0].rows = H;
	p.planes[1].data = uv;
	p.planes[1].stride = W;
	p.planes[1].rows = H / 2;
	ck_assert_new_ok(gpuhandle_resource_new_cpu_planes, p, GPUHANDLE_RESOURCE_KIND_CPU_PLANES,
			 r);
	ck_assert_uint_eq(gpuhandle_resource_subresource_count(r), 2);
	ck_assert_uint_eq(gpuhandle_resource_byte_size(r, 1), W * H / 2);
	ck_assert_int_eq(gpuhandle_resource_get_cpu_planes(r, &p_back), GPUHANDLE_OK);
	ck_assert_ptr_eq(p_back.planes[1].data, uv);
	gpuhandle_resource_unref(r);
	p.planes[1].stride = 0;
	ck_assert_new_fails(gpuhandle_resource_new_cpu_planes, p, GPUHANDLE_ERROR_ZERO_SIZE,
			    "planes[1].stride");

	memset(&s, 0, sizeof(s));
	s.slot = 3;
	s.size = 4096;
	s.rowPitch = 64;
	ck_assert_new_fails(gpuhandle_resource_new_cpu_shared_slot, s, GPUHANDLE_ERROR_NULL_HANDLE,
			    "anchor");
	s.anchor = anchor_of(&pr);
	ck_assert_new_ok(gpuhandle_resource_new_cpu_shared_slot, s,
			 GPUHANDLE_RESOURCE_KIND_CPU_SHARED_SLOT, r);
	ck_assert_int_eq(pr.destroyed, 0);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(pr.destroyed, 1);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("resource");
	tcase_add_test(tc, status_numbers_are_stable);
	tcase_add_test(tc, names);
	tcase_add_test(tc, null_arguments_never_crash);
	tcase_add_test(tc, error_object);
	tcase_add_test(tc, vulkan_image_and_buffer);
	tcase_add_test(tc, gl_resources);
	tcase_add_test(tc, cuda_resources);
	tcase_add_test(tc, opencl_and_vaapi_resources);
	tcase_add_test(tc, platform_resources);
	tcase_add_test(tc, cpu_resources);
	return run_one_case("capi-resource", tc);
}
