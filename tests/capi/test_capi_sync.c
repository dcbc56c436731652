/* C API from C99: sync point constructors, fence fd ownership, raw carriers, waits, composites. */
#define _GNU_SOURCE

#include "capi_sync_helpers.h"

#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

static gpuhandle_sync_point *new_noop(void)
{
	gpuhandle_sync_point *p = NULL;
	ck_assert_int_eq(gpuhandle_sync_point_new_noop(&p, NULL), GPUHANDLE_OK);
	return p;
}

START_TEST(noop_point)
{
	gpuhandle_sync_point *p = new_noop();
	gpuhandle_error *e = NULL;
	bool done = false;
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(p), GPUHANDLE_SYNC_KIND_NOOP);
	ck_assert_int_eq(gpuhandle_sync_point_get_backend(p), GPUHANDLE_BACKEND_CPU);
	ck_assert(!gpuhandle_sync_point_is_raw_carrier(p));
	ck_assert_int_eq(gpuhandle_sync_point_get_poll_fd(p), -1);
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, 0, &e), GPUHANDLE_OK);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, GPUHANDLE_WAIT_FOREVER, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(p, &done, &e), GPUHANDLE_OK);
	ck_assert(done);
	ck_assert_ptr_eq(gpuhandle_sync_point_ref(p), p);
	gpuhandle_sync_point_unref(p);
	gpuhandle_sync_point_unref(p);

	/* NULL everywhere: statuses, never a crash */
	ck_assert_status_failed(gpuhandle_sync_point_new_noop(NULL, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "out");
	ck_assert_status_failed(gpuhandle_sync_point_wait(NULL, 0, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "point");
	ck_assert_status_failed(gpuhandle_sync_point_is_signaled(NULL, &done, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "point");
	ck_assert(!done);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(NULL), GPUHANDLE_SYNC_KIND_NOOP);
	ck_assert_int_eq(gpuhandle_sync_point_get_poll_fd(NULL), -1);
	ck_assert(!gpuhandle_sync_point_is_raw_carrier(NULL));
	ck_assert_ptr_null(gpuhandle_sync_point_ref(NULL));
	gpuhandle_sync_point_unref(NULL);
	ck_assert_str_eq(gpuhandle_sync_kind_name(GPUHANDLE_SYNC_KIND_GL_SYNC), "gl-sync");
	ck_assert_str_eq(gpuhandle_sync_kind_name((gpuhandle_sync_kind)99), "unknown");
	ck_assert_int_eq(gpuhandle_sync_kind_backend(GPUHANDLE_SYNC_KIND_FENCE_FD),
			 GPUHANDLE_BACKEND_FD);
	ck_assert_int_eq(gpuhandle_sync_kind_backend(GPUHANDLE_SYNC_KIND_CUDA_EVENT),
			 GPUHANDLE_BACKEND_CUDA);
}
END_TEST

START_TEST(fence_fd_takes_ownership)
{
	int before = open_fd_count();
	int fd = eventfd(0, EFD_CLOEXEC);
	int got = 0;
	uint64_t one = 1;
	bool done = true;
	double start, elapsed;
	gpuhandle_sync_point *p = NULL;
	gpuhandle_error *e = NULL;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(gpuhandle_sync_point_new_fence_fd(fd, &p, &e), GPUHANDLE_OK);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(p), GPUHANDLE_SYNC_KIND_FENCE_FD);
	ck_assert_int_eq(gpuhandle_sync_point_get_backend(p), GPUHANDLE_BACKEND_FD);
	ck_assert(!gpuhandle_sync_point_is_raw_carrier(p));
	ck_assert_int_eq(gpuhandle_sync_point_get_fence_fd(p, &got), GPUHANDLE_OK);
	ck_assert_int_eq(got, fd); /* borrowed: the point's own */
	ck_assert_int_eq(gpuhandle_sync_point_get_poll_fd(p), fd);

	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(p, &done, NULL), GPUHANDLE_OK);
	ck_assert(!done);
	start = now_ms();
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, 50000000, &e), GPUHANDLE_ERROR_TIMEOUT);
	elapsed = now_ms() - start;
	ck_assert_int_eq(gpuhandle_error_get_kind(e), GPUHANDLE_ERROR_KIND_RECOVERABLE);
	gpuhandle_error_unref(e);
	e = NULL;
	ck_assert_msg(elapsed >= 50.0, "timed out after %.1f ms", elapsed);

	ck_assert_int_eq(write(fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS, &e),
			 GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(p, &done, NULL), GPUHANDLE_OK);
	ck_assert(done);
	gpuhandle_sync_point_unref(p);
	ck_assert(!fd_is_open(fd)); /* closed with the point */
	ck_assert_int_eq(open_fd_count(), before);
}
END_TEST

START_TEST(fence_fd_failures)
{
	int before = open_fd_count();
	int fd = eventfd(0, EFD_CLOEXEC);
	int got = 7;
	gpuhandle_sync_point *p = SENTINEL;
	gpuhandle_sync_point *noop = new_noop();
	gpuhandle_error *e = NULL;
	/* taken even when the call fails */
	ck_assert_status_failed(gpuhandle_sync_point_new_fence_fd(fd, NULL, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "out");
	ck_assert(!fd_is_open(fd));
	ck_assert_int_eq(open_fd_count(), before);
	ck_assert_failed(gpuhandle_sync_point_new_fence_fd(-1, &p, &e), p, e,
			 GPUHANDLE_ERROR_BAD_FD, "fd");
	p = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_new_fence_fd(fd, &p, &e), p, e,
			 GPUHANDLE_ERROR_BAD_FD, "fd"); /* closed now */
	ck_assert_int_eq(open_fd_count(), before);

	ck_assert_int_eq(gpuhandle_sync_point_get_fence_fd(noop, &got), GPUHANDLE_ERROR_WRONG_KIND);
	ck_assert_int_eq(got, -1);
	ck_assert_int_eq(gpuhandle_sync_point_get_fence_fd(NULL, &got),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_sync_point_get_fence_fd(noop, NULL),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	gpuhandle_sync_point_unref(noop);
}
END_TEST

/* What every raw carrier answers: its kind, no CPU wait, other kinds' getters refused. */
static void check_raw_carrier(gpuhandle_sync_point *p, gpuhandle_sync_kind kind,
			      gpuhandle_backend_kind backend)
{
	gpuhandle_error *e = NULL;
	gpuhandle_opencl_event_sync_desc cl;
	gpuhandle_d3d12_fence_sync_desc d3d;
	bool done = true;
	int fd = 0;
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(p), kind);
	ck_assert_int_eq(gpuhandle_sync_point_get_backend(p), backend);
	ck_assert(gpuhandle_sync_point_is_raw_carrier(p));
	ck_assert_int_eq(gpuhandle_sync_point_get_poll_fd(p), -1);
	ck_assert_status_failed(gpuhandle_sync_point_wait(p, GPUHANDLE_WAIT_FOREVER, &e), e,
				GPUHANDLE_ERROR_NOT_SUPPORTED, "waiter");
	ck_assert_status_failed(gpuhandle_sync_point_is_signaled(p, &done, &e), e,
				GPUHANDLE_ERROR_NOT_SUPPORTED, "waiter");
	ck_assert(!done);
	ck_assert_int_eq(gpuhandle_sync_point_get_fence_fd(p, &fd), GPUHANDLE_ERROR_WRONG_KIND);
	memset(&cl, 0xff, sizeof(cl));
	memset(&d3d, 0xff, sizeof(d3d));
	if (kind == GPUHANDLE_SYNC_KIND_OPENCL_EVENT) {
		ck_assert_int_eq(gpuhandle_sync_point_get_d3d12_fence(p, &d3d),
				 GPUHANDLE_ERROR_WRONG_KIND);
		ck_assert_ptr_null(d3d.fence); /* zeroed */
	} else {
		ck_assert_int_eq(gpuhandle_sync_point_get_opencl_event(p, &cl),
				 GPUHANDLE_ERROR_WRONG_KIND);
		ck_assert_ptr_null(cl.event);
	}
}

static int handle_a, handle_b; /* addresses used as fake native handles */
#define HA ((void *)&handle_a)
#define HB ((void *)&handle_b)

START_TEST(raw_carriers_round_trip)
{
	probe pr = { 0, 0 };
	gpuhandle_sync_point *p = NULL;
	gpuhandle_vulkan_semaphore_sync_desc vk, vk2;
	gpuhandle_d3d12_fence_sync_desc d12, d12b;
	gpuhandle_d3d11_keyed_mutex_sync_desc d11, d11b;
	gpuhandle_cuda_external_semaphore_sync_desc cs, cs2;
	gpuhandle_cuda_event_sync_desc ce, ce2;
	gpuhandle_opencl_event_sync_desc cl, cl2;
	gpuhandle_metal_shared_event_sync_desc mt, mt2;
	gpuhandle_gl_semaphore_sync_desc gs, gs2;
	gpuhandle_gl_sync_sync_desc gy, gy2;
	gpuhandle_webgpu_submission_sync_desc wg, wg2;

	memset(&vk, 0, sizeof(vk));
	vk.semaphore = 0x1234;
	vk.kind = GPUHANDLE_VULKAN_SEMAPHORE_TIMELINE;
	vk.value = 42;
	vk.device = HA;
	vk.anchor = anchor_of(&pr);
	ck_assert_sync_ok(gpuhandle_sync_point_new_vulkan_semaphore, vk, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_VULKAN_SEMAPHORE, GPUHANDLE_BACKEND_VULKAN);
	ck_assert_int_eq(gpuhandle_sync_point_get_vulkan_semaphore(p, &vk2), GPUHANDLE_OK);
	ck_assert(vk2.semaphore == 0x1234 && vk2.value == 42 && vk2.device == HA);
	ck_assert_int_eq(vk2.kind, GPUHANDLE_VULKAN_SEMAPHORE_TIMELINE);
	ck_assert(vk2.anchor.destroy == NULL); /* the point holds it */
	ck_assert_int_eq(pr.destroyed, 0);
	gpuhandle_sync_point_unref(p);
	ck_assert_int_eq(pr.destroyed, 1); /* the anchor lives exactly as long as the point */

	memset(&d12, 0, sizeof(d12));
	d12.fence = HA;
	d12.value = 7;
	ck_assert_sync_ok(gpuhandle_sync_point_new_d3d12_fence, d12, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_D3D12_FENCE, GPUHANDLE_BACKEND_D3D12);
	ck_assert_int_eq(gpuhandle_sync_point_get_d3d12_fence(p, &d12b), GPUHANDLE_OK);
	ck_assert(d12b.fence == HA && d12b.value == 7);
	gpuhandle_sync_point_unref(p);

	memset(&d11, 0, sizeof(d11));
	d11.keyedMutex = HB;
	d11.key = 3;
	ck_assert_sync_ok(gpuhandle_sync_point_new_d3d11_keyed_mutex, d11, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_D3D11_KEYED_MUTEX, GPUHANDLE_BACKEND_D3D11);
	ck_assert_int_eq(gpuhandle_sync_point_get_d3d11_keyed_mutex(p, &d11b), GPUHANDLE_OK);
	ck_assert(d11b.keyedMutex == HB && d11b.key == 3);
	gpuhandle_sync_point_unref(p);

	memset(&cs, 0, sizeof(cs));
	cs.semaphore = HA;
	cs.hasValue = true;
	cs.value = 0; /* zero is a value, not "unset" */
	ck_assert_sync_ok(gpuhandle_sync_point_new_cuda_external_semaphore, cs, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_CUDA_EXTERNAL_SEMAPHORE, GPUHANDLE_BACKEND_CUDA);
	ck_assert_int_eq(gpuhandle_sync_point_get_cuda_external_semaphore(p, &cs2), GPUHANDLE_OK);
	ck_assert(cs2.semaphore == HA && cs2.hasValue && cs2.value == 0);
	gpuhandle_sync_point_unref(p);

	memset(&ce, 0, sizeof(ce));
	ce.event = HA;
	ce.context = HB;
	ce.ordinal = 1;
	ck_assert_sync_ok(gpuhandle_sync_point_new_cuda_event, ce, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_CUDA_EVENT, GPUHANDLE_BACKEND_CUDA);
	ck_assert_int_eq(gpuhandle_sync_point_get_cuda_event(p, &ce2), GPUHANDLE_OK);
	ck_assert(ce2.event == HA && ce2.context == HB && ce2.ordinal == 1);
	gpuhandle_sync_point_unref(p);

	memset(&cl, 0, sizeof(cl));
	cl.event = HB;
	ck_assert_sync_ok(gpuhandle_sync_point_new_opencl_event, cl, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_OPENCL_EVENT, GPUHANDLE_BACKEND_OPENCL);
	ck_assert_int_eq(gpuhandle_sync_point_get_opencl_event(p, &cl2), GPUHANDLE_OK);
	ck_assert_ptr_eq(cl2.event, HB);
	gpuhandle_sync_point_unref(p);

	memset(&mt, 0, sizeof(mt));
	mt.event = HA;
	mt.value = 9;
	ck_assert_sync_ok(gpuhandle_sync_point_new_metal_shared_event, mt, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_METAL_SHARED_EVENT, GPUHANDLE_BACKEND_METAL);
	ck_assert_int_eq(gpuhandle_sync_point_get_metal_shared_event(p, &mt2), GPUHANDLE_OK);
	ck_assert(mt2.event == HA && mt2.value == 9);
	gpuhandle_sync_point_unref(p);

	memset(&gs, 0, sizeof(gs));
	gs.semaphore = 5;
	gs.context = HA;
	ck_assert_sync_ok(gpuhandle_sync_point_new_gl_semaphore, gs, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_GL_SEMAPHORE, GPUHANDLE_BACKEND_OPENGL);
	ck_assert_int_eq(gpuhandle_sync_point_get_gl_semaphore(p, &gs2), GPUHANDLE_OK);
	ck_assert(gs2.semaphore == 5 && gs2.context == HA);
	gpuhandle_sync_point_unref(p);

	memset(&gy, 0, sizeof(gy));
	gy.sync = HB;
	gy.context = HA;
	gy.flavour = GPUHANDLE_GL_FLAVOUR_GLX;
	ck_assert_sync_ok(gpuhandle_sync_point_new_gl_sync, gy, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_GL_SYNC, GPUHANDLE_BACKEND_OPENGL);
	ck_assert_int_eq(gpuhandle_sync_point_get_gl_sync(p, &gy2), GPUHANDLE_OK);
	ck_assert(gy2.sync == HB && gy2.context == HA);
	ck_assert_int_eq(gy2.flavour, GPUHANDLE_GL_FLAVOUR_GLX);
	gpuhandle_sync_point_unref(p);

	memset(&wg, 0, sizeof(wg));
	wg.queue = HA;
	wg.submission = 11;
	ck_assert_sync_ok(gpuhandle_sync_point_new_webgpu_submission, wg, p);
	check_raw_carrier(p, GPUHANDLE_SYNC_KIND_WEBGPU_SUBMISSION, GPUHANDLE_BACKEND_WEBGPU);
	ck_assert_int_eq(gpuhandle_sync_point_get_webgpu_submission(p, &wg2), GPUHANDLE_OK);
	ck_assert(wg2.queue == HA && wg2.submission == 11);
	ck_assert_int_eq(gpuhandle_sync_point_get_webgpu_submission(NULL, &wg2),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(gpuhandle_sync_point_get_webgpu_submission(p, NULL),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	gpuhandle_sync_point_unref(p);
}
END_TEST

START_TEST(raw_carriers_refused)
{
	probe pr = { 0, 0 };
	gpuhandle_vulkan_semaphore_sync_desc vk;
	gpuhandle_d3d12_fence_sync_desc d12;
	gpuhandle_d3d11_keyed_mutex_sync_desc d11;
	gpuhandle_cuda_external_semaphore_sync_desc cs;
	gpuhandle_cuda_event_sync_desc ce;
	gpuhandle_opencl_event_sync_desc cl;
	gpuhandle_metal_shared_event_sync_desc mt;
	gpuhandle_gl_semaphore_sync_desc gs;
	gpuhandle_gl_sync_sync_desc gy;
	gpuhandle_webgpu_submission_sync_desc wg;
	gpuhandle_sync_point *p = SENTINEL;
	gpuhandle_error *e = NULL;

	memset(&vk, 0, sizeof(vk));
	vk.device = HA;
	vk.anchor = anchor_of(&pr);
	ck_assert_sync_fails(gpuhandle_sync_point_new_vulkan_semaphore, vk,
			     GPUHANDLE_ERROR_NULL_HANDLE, "semaphore");
	ck_assert_int_eq(pr.destroyed, 1); /* consumed on failure */
	vk.semaphore = 1;
	vk.device = NULL;
	ck_assert_sync_fails(gpuhandle_sync_point_new_vulkan_semaphore, vk,
			     GPUHANDLE_ERROR_NULL_HANDLE, "device");
	vk.device = HA;
	vk.kind = (gpuhandle_vulkan_semaphore_kind)256; /* would wrap to Binary in a uint8_t */
	ck_assert_sync_fails(gpuhandle_sync_point_new_vulkan_semaphore, vk,
			     GPUHANDLE_ERROR_INVALID_ARGUMENT, "kind");
	ck_assert_int_eq(pr.destroyed, 3);
	vk.kind = GPUHANDLE_VULKAN_SEMAPHORE_BINARY;
	ck_assert_status_failed(gpuhandle_sync_point_new_vulkan_semaphore(&vk, NULL, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "out");
	ck_assert_int_eq(pr.destroyed, 4);
	ck_assert_failed(gpuhandle_sync_point_new_vulkan_semaphore(NULL, &p, &e), p, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "desc");
	vk.anchor.destroy = NULL; /* consumed without destroy */
	ck_assert_sync_fails(gpuhandle_sync_point_new_vulkan_semaphore, vk,
			     GPUHANDLE_ERROR_INVALID_ARGUMENT, "anchor.destroy");

	memset(&d12, 0, sizeof(d12));
	ck_assert_sync_fails(gpuhandle_sync_point_new_d3d12_fence, d12, GPUHANDLE_ERROR_NULL_HANDLE,
			     "fence");
	memset(&d11, 0, sizeof(d11));
	ck_assert_sync_fails(gpuhandle_sync_point_new_d3d11_keyed_mutex, d11,
			     GPUHANDLE_ERROR_NULL_HANDLE, "keyedMutex");
	memset(&cs, 0, sizeof(cs));
	ck_assert_sync_fails(gpuhandle_sync_point_new_cuda_external_semaphore, cs,
			     GPUHANDLE_ERROR_NULL_HANDLE, "semaphore");
	memset(&ce, 0, sizeof(ce));
	ck_assert_sync_fails(gpuhandle_sync_point_new_cuda_event, ce, GPUHANDLE_ERROR_NULL_HANDLE,
			     "event");
	ce.event = HA;
	ce.ordinal = -1;
	ck_assert_sync_fails(gpuhandle_sync_point_new_cuda_event, ce, GPUHANDLE_ERROR_OUT_OF_RANGE,
			     "ordinal");
	memset(&cl, 0, sizeof(cl));
	ck_assert_sync_fails(gpuhandle_sync_point_new_opencl_event, cl, GPUHANDLE_ERROR_NULL_HANDLE,
			     "event");
	memset(&mt, 0, sizeof(mt));
	ck_assert_sync_fails(gpuhandle_sync_point_new_metal_shared_event, mt,
			     GPUHANDLE_ERROR_NULL_HANDLE, "event");
	memset(&gs, 0, sizeof(gs));
	ck_assert_sync_fails(gpuhandle_sync_point_new_gl_semaphore, gs, GPUHANDLE_ERROR_NULL_HANDLE,
			     "semaphore");
	memset(&gy, 0, sizeof(gy));
	ck_assert_sync_fails(gpuhandle_sync_point_new_gl_sync, gy, GPUHANDLE_ERROR_NULL_HANDLE,
			     "sync");
	gy.sync = HA;
	gy.flavour = (gpuhandle_gl_flavour)9;
	ck_assert_sync_fails(gpuhandle_sync_point_new_gl_sync, gy, GPUHANDLE_ERROR_INVALID_ARGUMENT,
			     "flavour");
	memset(&wg, 0, sizeof(wg));
	ck_assert_sync_fails(gpuhandle_sync_point_new_webgpu_submission, wg,
			     GPUHANDLE_ERROR_NULL_HANDLE, "queue");
}
END_TEST

START_TEST(waits_refuse_negative_timeouts)
{
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_sync_point *p = NULL;
	gpuhandle_error *e = NULL;
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &p, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(p), GPUHANDLE_SYNC_KIND_CPU);
	ck_assert_int_ge(gpuhandle_sync_point_get_poll_fd(p), 0); /* the fence's eventfd */
	ck_assert_status_failed(gpuhandle_sync_point_wait(p, -1, &e), e,
				GPUHANDLE_ERROR_INVALID_ARGUMENT, "timeout_ns");
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, 0, &e), GPUHANDLE_ERROR_TIMEOUT);
	ck_assert_int_eq(gpuhandle_error_get_kind(e), GPUHANDLE_ERROR_KIND_RECOVERABLE);
	gpuhandle_error_unref(e);
	ck_assert_int_eq(gpuhandle_cpu_fence_signal(f), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_signal(f), GPUHANDLE_OK); /* later calls: nothing */
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, GPUHANDLE_WAIT_FOREVER, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, 0, NULL), GPUHANDLE_OK);
	gpuhandle_cpu_fence_unref(f); /* the point keeps the fence alive */
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, 0, NULL), GPUHANDLE_OK);
	gpuhandle_sync_point_unref(p);

	p = SENTINEL;
	ck_assert_int_eq(gpuhandle_cpu_fence_signal(NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_failed(gpuhandle_cpu_fence_get_point(NULL, &p, &e), p, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "fence");
	ck_assert_status_failed(gpuhandle_cpu_fence_new(NULL, &e), e, GPUHANDLE_ERROR_NULL_HANDLE,
				"out");
}
END_TEST

START_TEST(composites)
{
	int before = open_fd_count();
	gpuhandle_cpu_fence *fa = NULL, *fb = NULL;
	gpuhandle_sync_point *pts[3] = { NULL, NULL, NULL };
	gpuhandle_sync_point *all = NULL, *any = NULL, *chain = NULL, *out = SENTINEL;
	gpuhandle_vulkan_semaphore_sync_desc vk;
	gpuhandle_error *e = NULL;
	bool done = true;
	double start, elapsed;
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&fa, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&fb, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(fa, &pts[0], NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_new_fence_fd(eventfd(0, EFD_CLOEXEC), &pts[1], NULL),
			 GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(fb, &pts[2], NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_all(pts, 3, &all, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_any(pts, 3, &any, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_chain(pts, 3, &chain, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(all), GPUHANDLE_SYNC_KIND_COMPOSITE);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(any), GPUHANDLE_SYNC_KIND_COMPOSITE);

	start = now_ms();
	ck_assert_int_eq(gpuhandle_sync_point_wait(any, 50000000, &e), GPUHANDLE_ERROR_TIMEOUT);
	elapsed = now_ms() - start;
	ck_assert_msg(elapsed >= 50.0, "any timed out after %.1f ms", elapsed);
	gpuhandle_error_unref(e);
	e = NULL;
	gpuhandle_cpu_fence_signal(fb);
	ck_assert_int_eq(gpuhandle_sync_point_wait(any, GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS, &e),
			 GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(all, &done, NULL), GPUHANDLE_OK);
	ck_assert(!done);
	gpuhandle_cpu_fence_signal(fa);
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(chain, &done, NULL), GPUHANDLE_OK);
	ck_assert(!done); /* the fence fd is still pending */
	{
		int fd = -1;
		uint64_t one = 1;
		ck_assert_int_eq(gpuhandle_sync_point_get_fence_fd(pts[1], &fd), GPUHANDLE_OK);
		ck_assert_int_eq(write(fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	}
	ck_assert_int_eq(gpuhandle_sync_point_wait(all, 0, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_wait(chain, 0, NULL), GPUHANDLE_OK);

	/* the composites hold their own references */
	gpuhandle_sync_point_unref(pts[0]);
	gpuhandle_sync_point_unref(pts[1]);
	ck_assert_int_eq(gpuhandle_sync_point_wait(all, 0, NULL), GPUHANDLE_OK);
	gpuhandle_sync_point_unref(all);
	gpuhandle_sync_point_unref(any);
	gpuhandle_sync_point_unref(chain);

	/* no-op entries are dropped */
	pts[0] = new_noop();
	pts[1] = new_noop();
	ck_assert_int_eq(gpuhandle_sync_point_all(pts, 2, &all, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(all), GPUHANDLE_SYNC_KIND_NOOP);
	gpuhandle_sync_point_unref(all);

	/* refusals */
	ck_assert_failed(gpuhandle_sync_point_all(pts, 0, &out, &e), out, e,
			 GPUHANDLE_ERROR_ZERO_SIZE, "points");
	out = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_any(NULL, 2, &out, &e), out, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "points");
	gpuhandle_sync_point_unref(pts[1]);
	pts[1] = NULL;
	out = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_chain(pts, 2, &out, &e), out, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "points[1]");
	memset(&vk, 0, sizeof(vk));
	vk.semaphore = 1;
	vk.device = HA;
	ck_assert_sync_ok(gpuhandle_sync_point_new_vulkan_semaphore, vk, pts[1]);
	out = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_all(pts, 2, &out, &e), out, e,
			 GPUHANDLE_ERROR_NOT_SUPPORTED, "points[1]");
	ck_assert_status_failed(gpuhandle_sync_point_all(pts, 2, NULL, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "out");
	gpuhandle_sync_point_unref(pts[0]);
	gpuhandle_sync_point_unref(pts[1]);
	gpuhandle_sync_point_unref(pts[2]);
	gpuhandle_cpu_fence_unref(fa);
	gpuhandle_cpu_fence_unref(fb);
	ck_assert_int_eq(open_fd_count(), before); /* eventfds of both fences and the fence fd */
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("sync");
	tcase_add_test(tc, noop_point);
	tcase_add_test(tc, fence_fd_takes_ownership);
	tcase_add_test(tc, fence_fd_failures);
	tcase_add_test(tc, raw_carriers_round_trip);
	tcase_add_test(tc, raw_carriers_refused);
	tcase_add_test(tc, waits_refuse_negative_timeouts);
	tcase_add_test(tc, composites);
	return run_one_case("capi-sync", tc);
}
