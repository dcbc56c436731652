// OpenCL, VA-API, D3D11/12, Metal and WebGPU factories: plain values checked on every platform.
#include <gpuhandle/d3d_resources.h>
#include <gpuhandle/metal_resources.h>
#include <gpuhandle/opencl_resources.h>
#include <gpuhandle/vaapi_resources.h>
#include <gpuhandle/webgpu_resources.h>

#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;

namespace {
int g_a, g_b;
void *const kA = &g_a;
void *const kB = &g_b;
} // namespace

START_TEST(opencl_mem)
{
	auto r = OpenClMem::create({ .mem = kA, .queue = kB, .size = 4096 });
	ck_assert_ok(r);
	ck_assert_ptr_eq(r->desc().queue, kB);
	ck_assert_error(OpenClMem::create({ .mem = nullptr, .queue = kB }), ErrorCode::NullHandle,
			"mem");
	ck_assert_error(OpenClMem::create({ .mem = kA, .queue = nullptr }), ErrorCode::NullHandle,
			"queue");
}
END_TEST

START_TEST(va_surface_id_zero_is_legal)
{
	auto zero = VaSurface::create({ .surface = 0, .display = kA });
	ck_assert_ok(zero);
	ck_assert_uint_eq(zero->desc().surface, 0);
	ck_assert_error(VaSurface::create({ .surface = 0xffffffff, .display = kA }),
			ErrorCode::InvalidArgument, "surface");
	ck_assert_error(VaSurface::create({ .surface = 3, .display = nullptr }),
			ErrorCode::NullHandle, "display");
}
END_TEST

START_TEST(d3d_values)
{
	Luid luid{ 0x1234, 1 };
	auto t = D3D11Texture::create({ .texture = kA, .arraySlice = 3, .adapterLuid = luid });
	ck_assert_ok(t);
	ck_assert(t->desc().adapterLuid == luid);
	ck_assert_error(D3D11Texture::create({ .texture = nullptr }), ErrorCode::NullHandle,
			"texture");
	ck_assert_ok(D3D12Resource::create({ .resource = kA, .subresource = 1 }));
	ck_assert_error(D3D12Resource::create({ .resource = nullptr }), ErrorCode::NullHandle,
			"resource");
	ck_assert_ok(D3D12Buffer::create({ .resource = kA, .size = 64, .adapterLuid = luid }));
	ck_assert_error(D3D12Buffer::create({ .resource = nullptr, .size = 64 }),
			ErrorCode::NullHandle, "resource");
	ck_assert_error(D3D12Buffer::create({ .resource = kA, .size = 0 }), ErrorCode::ZeroSize,
			"size");
}
END_TEST

START_TEST(metal_values)
{
	auto t = MetalTexture::create({ .texture = kA, .registryId = 0x100000abcull });
	ck_assert_ok(t);
	ck_assert(t->desc().registryId == 0x100000abcull);
	ck_assert_error(MetalTexture::create({ .texture = nullptr }), ErrorCode::NullHandle,
			"texture");
	ck_assert_ok(MetalBuffer::create({ .buffer = kA, .size = 16 }));
	ck_assert_error(MetalBuffer::create({ .buffer = nullptr, .size = 16 }),
			ErrorCode::NullHandle, "buffer");
	ck_assert_error(MetalBuffer::create({ .buffer = kA, .size = 0 }), ErrorCode::ZeroSize,
			"size");
}
END_TEST

START_TEST(webgpu_texture)
{
	WebGpuTextureDesc d = {
		.texture = kA, .device = kB, .format = 0x12, .width = 64, .height = 64
	};
	ck_assert_ok(WebGpuTexture::create(d));
	WebGpuTextureDesc bad = d;
	bad.texture = nullptr;
	ck_assert_error(WebGpuTexture::create(bad), ErrorCode::NullHandle, "texture");
	bad = d;
	bad.device = nullptr;
	ck_assert_error(WebGpuTexture::create(bad), ErrorCode::NullHandle, "device");
	bad = d;
	bad.width = 0;
	ck_assert_error(WebGpuTexture::create(bad), ErrorCode::ZeroSize, "width");
	bad = d;
	bad.height = 0;
	ck_assert_error(WebGpuTexture::create(bad), ErrorCode::ZeroSize, "height");
}
END_TEST

START_TEST(factories_touch_no_fd)
{
	int before = gpuhandle::test::openFdCount();
	for (int i = 0; i < 20; ++i) {
		ck_assert(VaSurface::create({ .surface = 0, .display = kA }).ok());
		ck_assert(!VaSurface::create({}).ok());
		ck_assert(!OpenClMem::create({}).ok());
		ck_assert(!WebGpuTexture::create({}).ok());
	}
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-platform");
	TCase *tc = tcase_create("platform");
	tcase_add_test(tc, opencl_mem);
	tcase_add_test(tc, va_surface_id_zero_is_legal);
	tcase_add_test(tc, d3d_values);
	tcase_add_test(tc, metal_values);
	tcase_add_test(tc, webgpu_texture);
	tcase_add_test(tc, factories_touch_no_fd);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
