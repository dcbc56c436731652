/* C API from C99: every context constructor, wrong-backend getters, device id comparison. */
#define _GNU_SOURCE

#include <stdlib.h>
#include <unistd.h>

#include "capi_helpers.h"

START_TEST(cpu_context_and_wrong_backend_getters)
{
	gpuhandle_context *c = SENTINEL;
	gpuhandle_error *e = NULL;
	gpuhandle_device_id id;
	gpuhandle_vulkan_context_desc v;
	gpuhandle_webgpu_context_desc w;
	ck_assert_int_eq(gpuhandle_context_new_cpu(&c, &e), GPUHANDLE_OK);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(gpuhandle_context_get_backend(c), GPUHANDLE_BACKEND_CPU);
	ck_assert_int_eq(gpuhandle_context_get_device_id(c, &id), GPUHANDLE_OK);
	ck_assert(id.isCpu);
	memset(&v, 0xff, sizeof(v));
	ck_assert_int_eq(gpuhandle_context_get_vulkan(c, &v), GPUHANDLE_ERROR_WRONG_KIND);
	ck_assert_ptr_null(v.device);
	ck_assert_int_eq(gpuhandle_context_get_webgpu(c, &w), GPUHANDLE_ERROR_WRONG_KIND);
	ck_assert_ptr_eq(gpuhandle_context_ref(c), c);
	gpuhandle_context_unref(c);
	gpuhandle_context_unref(c);

	ck_assert_int_eq(gpuhandle_context_new_cpu(NULL, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_context_get_vulkan(NULL, &v), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_context_get_device_id(NULL, &id), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_context_get_backend(NULL), GPUHANDLE_BACKEND_CPU);
	ck_assert_int_eq(gpuhandle_context_new_vulkan(NULL, &c, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_ptr_null(c);
	ck_assert_ptr_null(gpuhandle_context_ref(NULL));
	gpuhandle_context_unref(NULL);
}
END_TEST

static gpuhandle_vulkan_context_desc vulkan_desc(void *handle, uint8_t uuid_byte)
{
	gpuhandle_vulkan_context_desc d;
	memset(&d, 0, sizeof(d));
	d.instance = handle;
	d.physicalDevice = handle;
	d.device = handle;
	d.queue = handle;
	d.hasDeviceUuid = true;
	d.deviceUuid[0] = uuid_byte;
	return d;
}

START_TEST(vulkan_context)
{
	static const char *const device_extensions[] = { "VK_KHR_external_memory_fd",
							 "VK_KHR_timeline_semaphore" };
	const char *bad_extensions[] = { "VK_KHR_external_memory_fd", NULL };
	gpuhandle_vulkan_context_desc d;
	gpuhandle_vulkan_context_desc back;
	gpuhandle_context *c = SENTINEL;
	gpuhandle_error *e = NULL;
	gpuhandle_device_id id;
	probe pr = { 0, 0 };
	int handle;
	d = vulkan_desc(&handle, 1);
	d.enabledDeviceExtensions = device_extensions;
	d.enabledDeviceExtensionCount = 2;
	d.hasPciBusId = true;
	d.pciBusId.bus = 3;
	d.anchor = anchor_of(&pr);
	ck_assert_int_eq(gpuhandle_context_new_vulkan(&d, &c, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_context_get_backend(c), GPUHANDLE_BACKEND_VULKAN);
	ck_assert_int_eq(gpuhandle_context_get_vulkan(c, &back), GPUHANDLE_OK);
	ck_assert_ptr_eq(back.queue, &handle);
	ck_assert_uint_eq(back.enabledDeviceExtensionCount, 2);
	ck_assert_str_eq(back.enabledDeviceExtensions[1], "VK_KHR_timeline_semaphore");
	ck_assert_ptr_ne(back.enabledDeviceExtensions[1], device_extensions[1]); /* copied */
	ck_assert_uint_eq(back.enabledInstanceExtensionCount, 0);
	ck_assert(back.hasPciBusId);
	ck_assert_uint_eq(back.pciBusId.bus, 3);
	ck_assert_int_eq(gpuhandle_context_get_device_id(c, &id), GPUHANDLE_OK);
	ck_assert(!id.isCpu);
	ck_assert(id.hasUuid);
	ck_assert_uint_eq(id.uuid[0], 1);
	ck_assert_int_eq(pr.destroyed, 0);
	gpuhandle_context_unref(c);
	ck_assert_int_eq(pr.destroyed, 1);

	d.queueFamilyIndex = 0xffffffffu;
	ck_assert_context_fails(gpuhandle_context_new_vulkan, d, GPUHANDLE_ERROR_OUT_OF_RANGE,
				"queueFamilyIndex");
	ck_assert_int_eq(pr.destroyed, 2); /* the anchor of a failed constructor runs at once */
	d.queueFamilyIndex = 0;
	d.enabledDeviceExtensions = bad_extensions;
	ck_assert_context_fails(gpuhandle_context_new_vulkan, d, GPUHANDLE_ERROR_NULL_HANDLE,
				"enabledDeviceExtensions[1]");
	d.enabledDeviceExtensions = NULL;
	ck_assert_context_fails(gpuhandle_context_new_vulkan, d, GPUHANDLE_ERROR_NULL_HANDLE,
				"enabledDeviceExtensions");
	d.enabledDeviceExtensionCount = 0;
	d.pciBusId.bus = 300;
	ck_assert_context_fails(gpuhandle_context_new_vulkan, d, GPUHANDLE_ERROR_OUT_OF_RANGE,
				"pciBusId.bus");
	d.pciBusId.bus = 3;
	memset(d.deviceUuid, 0, sizeof(d.deviceUuid));
	ck_assert_context_fails(gpuhandle_context_new_vulkan, d, GPUHANDLE_ERROR_INVALID_ARGUMENT,
				"deviceUuid");
	ck_assert_int_eq(pr.destroyed, 6);
	ck_assert_int_eq(gpuhandle_context_new_vulkan(&d, NULL, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(pr.destroyed, 7);
}
END_TEST

START_TEST(other_contexts)
{
	gpuhandle_opengl_context_desc gl;
	gpuhandle_cuda_context_desc cu;
	gpuhandle_opencl_context_desc cl;
	gpuhandle_opencl_context_desc cl_back;
	gpuhandle_vaapi_context_desc va;
	gpuhandle_d3d11_context_desc d11;
	gpuhandle_d3d12_context_desc d12;
	gpuhandle_metal_context_desc mtl;
	gpuhandle_webgpu_context_desc wgpu;
	gpuhandle_cuda_context_desc cu_back;
	gpuhandle_context *c = NULL;
	gpuhandle_error *e = NULL;
	int h;

#define CONTEXT_OK(fn, desc, backend)                                                              \
	do {                                                                                       \
		ck_assert_int_eq(fn(&(desc), &c, &e), GPUHANDLE_OK);                               \
		ck_assert_int_eq(gpuhandle_context_get_backend(c), (backend));                     \
		ck_assert_int_eq(gpuhandle_context_get_cuda(c, &cu_back),                          \
				 (backend) == GPUHANDLE_BACKEND_CUDA                               \
					 ? GPUHANDLE_OK                                            \
					 : GPUHANDLE_ERROR_WRONG_KIND);                            \
		gpuhandle_context_unref(c);                                                        \
	} while (0)
	memset(&gl, 0, sizeof(gl));
	gl.display = &h;
	gl.context = &h;
	CONTEXT_OK(gpuhandle_context_new_opengl, gl, GPUHANDLE_BACKEND_OPENGL);
	gl.display = NULL;
	ck_assert_context_fails(gpuhandle_context_new_opengl, gl, GPUHANDLE_ERROR_NULL_HANDLE,
				"display");
	gl.flavour = GPUHANDLE_GL_FLAVOUR_CGL; /* CGL has no display */
	CONTEXT_OK(gpuhandle_context_new_opengl, gl, GPUHANDLE_BACKEND_OPENGL);

	memset(&cu, 0, sizeof(cu));
	cu.context = &h;
	cu.ordinal = 1;
	CONTEXT_OK(gpuhandle_context_new_cuda, cu, GPUHANDLE_BACKEND_CUDA);
	ck_assert_int_eq(cu_back.ordinal, 1);
	cu.ordinal = -1;
	ck_assert_context_fails(gpuhandle_context_new_cuda, cu, GPUHANDLE_ERROR_OUT_OF_RANGE,
				"ordinal");

	memset(&cl, 0, sizeof(cl));
	cl.context = &h;
	cl.queue = &h;
	cl.device = &h;
	cl.hasGlSharing = true;
	cl.glSharing.glContext = &h;
	cl.glSharing.glDisplay = &h;
	ck_assert_int_eq(gpuhandle_context_new_opencl(&cl, &c, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_context_get_opencl(c, &cl_back), GPUHANDLE_OK);
	ck_assert(cl_back.hasGlSharing);
	ck_assert_ptr_eq(cl_back.glSharing.glDisplay, &h);
	gpuhandle_context_unref(c);
	cl.glSharing.glContext = NULL;
	ck_assert_context_fails(gpuhandle_context_new_opencl, cl, GPUHANDLE_ERROR_NULL_HANDLE,
				"glSharing.glContext");

	memset(&va, 0, sizeof(va));
	va.display = &h;
	CONTEXT_OK(gpuhandle_context_new_vaapi, va, GPUHANDLE_BACKEND_VAAPI);
	va.hasRenderNode = true; /* 0:0 is no device */
	ck_assert_context_fails(gpuhandle_context_new_vaapi, va, GPUHANDLE_ERROR_INVALID_ARGUMENT,
				"renderNode");

	memset(&d11, 0, sizeof(d11));
	d11.device = &h;
	d11.deviceContext = &h;
	CONTEXT_OK(gpuhandle_context_new_d3d11, d11, GPUHANDLE_BACKEND_D3D11);
	d11.hasLuid = true;
	ck_assert_context_fails(gpuhandle_context_new_d3d11, d11, GPUHANDLE_ERROR_INVALID_ARGUMENT,
				"luid");

	memset(&d12, 0, sizeof(d12));
	d12.device = &h;
	d12.queue = &h;
	CONTEXT_OK(gpuhandle_context_new_d3d12, d12, GPUHANDLE_BACKEND_D3D12);
	d12.queue = NULL;
	ck_assert_context_fails(gpuhandle_context_new_d3d12, d12, GPUHANDLE_ERROR_NULL_HANDLE,
				"queue");

	memset(&mtl, 0, sizeof(mtl));
	mtl.device = &h;
	mtl.queue = &h;
	CONTEXT_OK(gpuhandle_context_new_metal, mtl, GPUHANDLE_BACKEND_METAL);
	mtl.hasRegistryId = true;
	ck_assert_context_fails(gpuhandle_context_new_metal, mtl, GPUHANDLE_ERROR_INVALID_ARGUMENT,
				"registryId");

	memset(&wgpu, 0, sizeof(wgpu));
	wgpu.device = &h;
	wgpu.queue = &h;
	CONTEXT_OK(gpuhandle_context_new_webgpu, wgpu, GPUHANDLE_BACKEND_WEBGPU);
	wgpu.device = NULL;
	ck_assert_context_fails(gpuhandle_context_new_webgpu, wgpu, GPUHANDLE_ERROR_NULL_HANDLE,
				"device");
#undef CONTEXT_OK
}
END_TEST

START_TEST(device_id_compare)
{
	gpuhandle_vulkan_context_desc d;
	gpuhandle_context *a = NULL;
	gpuhandle_context *b = NULL;
	gpuhandle_context *cpu = NULL;
	gpuhandle_device_id ia, ib, icpu;
	int h;
	d = vulkan_desc(&h, 1);
	ck_assert_int_eq(gpuhandle_context_new_vulkan(&d, &a, NULL), GPUHANDLE_OK);
	d = vulkan_desc(&h, 2);
	ck_assert_int_eq(gpuhandle_context_new_vulkan(&d, &b, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_context_new_cpu(&cpu, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_context_get_device_id(a, &ia), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_context_get_device_id(b, &ib), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_context_get_device_id(cpu, &icpu), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_device_id_compare(&ia, &ia), GPUHANDLE_DEVICE_MATCH_SAME);
	ck_assert_int_eq(gpuhandle_device_id_compare(&ia, &ib), GPUHANDLE_DEVICE_MATCH_DIFFERENT);
	ck_assert_int_eq(gpuhandle_device_id_compare(&ia, &icpu), GPUHANDLE_DEVICE_MATCH_DIFFERENT);
	ck_assert_int_eq(gpuhandle_device_id_compare(&ia, NULL), GPUHANDLE_DEVICE_MATCH_UNKNOWN);
	/* identities built by hand: a PCI bus id on both sides decides; an invalid one is absent */
	memset(&ia, 0, sizeof(ia));
	memset(&ib, 0, sizeof(ib));
	ia.hasPciBusId = ib.hasPciBusId = true;
	ia.pciBusId.bus = ib.pciBusId.bus = 1;
	ck_assert_int_eq(gpuhandle_device_id_compare(&ia, &ib), GPUHANDLE_DEVICE_MATCH_SAME);
	ib.pciBusId.device = 99;
	ck_assert_int_eq(gpuhandle_device_id_compare(&ia, &ib), GPUHANDLE_DEVICE_MATCH_UNKNOWN);
	gpuhandle_context_unref(a);
	gpuhandle_context_unref(b);
	gpuhandle_context_unref(cpu);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("context");
	tcase_add_test(tc, cpu_context_and_wrong_backend_getters);
	tcase_add_test(tc, vulkan_context);
	tcase_add_test(tc, other_contexts);
	tcase_add_test(tc, device_id_compare);
	return run_one_case("capi-context", tc);
}
