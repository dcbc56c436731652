/* C API from C99: fd ownership of Vulkan memory, DMA-BUF and shm fds, borrowed fds and anchors; no
 * leak. */
#define _GNU_SOURCE

#include <stdlib.h>
#include <unistd.h>

#include "capi_helpers.h"

START_TEST(vulkan_memory_fd_owns_its_fd)
{
	gpuhandle_vulkan_memory_fd_desc d;
	gpuhandle_vulkan_memory_fd_desc back;
	gpuhandle_resource *r = NULL;
	int before = open_fd_count();
	memset(&d, 0, sizeof(d));
	d.fd = make_memfd(65536);
	d.exportDesc.allocationSize = 65536;
	d.exportDesc.usage = 0x1;
	d.exportDesc.hasAcquireTimelineValue = true;
	d.exportDesc.acquireTimelineValue = 42;
	ck_assert_new_ok(gpuhandle_resource_new_vulkan_memory_fd, d,
			 GPUHANDLE_RESOURCE_KIND_VULKAN_MEMORY_FD, r);
	ck_assert_int_eq(gpuhandle_resource_get_vulkan_memory_fd(r, &back), GPUHANDLE_OK);
	ck_assert_int_eq(back.fd, d.fd);
	ck_assert(!back.borrowFd);
	ck_assert(back.exportDesc.hasAcquireTimelineValue);
	ck_assert_uint_eq(back.exportDesc.acquireTimelineValue, 42);
	ck_assert_int_eq(open_fd_count(), before + 1);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(open_fd_count(), before);

	d.fd = make_memfd(65536);
	d.exportDesc.usage = 0;
	ck_assert_new_fails(gpuhandle_resource_new_vulkan_memory_fd, d,
			    GPUHANDLE_ERROR_INVALID_ARGUMENT, "exportDesc.usage");
	ck_assert_int_eq(open_fd_count(), before);
}
END_TEST

START_TEST(dmabuf_fds_never_leak)
{
	gpuhandle_dmabuf_desc d;
	gpuhandle_dmabuf_desc back;
	gpuhandle_resource *r = NULL;
	int before = open_fd_count();
	int fd = make_memfd(NV12_SIZE);
	ck_assert_int_ge(fd, 0);
	d = nv12_dmabuf(fd);
	ck_assert_new_ok(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_RESOURCE_KIND_DMABUF, r);
	ck_assert_int_eq(gpuhandle_resource_get_backend(r), GPUHANDLE_BACKEND_FD);
	ck_assert_uint_eq(gpuhandle_resource_byte_size(r, 0), NV12_SIZE);
	ck_assert_int_eq(gpuhandle_resource_get_dmabuf(r, &back), GPUHANDLE_OK);
	ck_assert_int_eq(back.objects[0].fd, fd); /* borrowed from the resource */
	ck_assert(!back.borrowFds);
	ck_assert_uint_eq(back.planes[1].offset, W * H);
	ck_assert_int_eq(back.objects[1].fd, -1);
	ck_assert_int_eq(open_fd_count(), before + 1);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(open_fd_count(), before);

	/* failure closes the fd it was given */
	d = nv12_dmabuf(make_memfd(NV12_SIZE));
	d.planes[1].pitch = W / 2;
	ck_assert_new_fails(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_ERROR_OUT_OF_RANGE,
			    "planes[1].pitch");
	ck_assert_int_eq(open_fd_count(), before);

	/* an fd listed in two objects is closed once; five objects: the first four fds are closed
	 */
	d = nv12_dmabuf(make_memfd(NV12_SIZE));
	d.numObjects = 2;
	d.objects[1] = d.objects[0];
	d.planes[1].objectIndex = 1;
	ck_assert_new_ok(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_RESOURCE_KIND_DMABUF, r);
	ck_assert_int_eq(open_fd_count(), before + 1);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(open_fd_count(), before);
	d = nv12_dmabuf(make_memfd(NV12_SIZE));
	d.numObjects = 5;
	d.objects[1].fd = make_memfd(16);
	d.objects[2].fd = make_memfd(16);
	d.objects[3].fd = make_memfd(16);
	ck_assert_new_fails(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_ERROR_OUT_OF_RANGE,
			    "numObjects");
	ck_assert_int_eq(open_fd_count(), before);

	/* NULL out: the fd is still taken and closed */
	d = nv12_dmabuf(make_memfd(NV12_SIZE));
	ck_assert_int_eq(gpuhandle_resource_new_dmabuf(&d, NULL, NULL),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(open_fd_count(), before);
}
END_TEST

START_TEST(dmabuf_borrowed_fds_follow_the_anchor)
{
	gpuhandle_dmabuf_desc d;
	gpuhandle_dmabuf_desc back;
	gpuhandle_resource *r = NULL;
	probe pr = { 0, 0 };
	int before = open_fd_count();
	int fd = make_memfd(NV12_SIZE);
	d = nv12_dmabuf(fd);
	d.borrowFds = true;
	d.anchor = anchor_of(&pr);
	ck_assert_new_ok(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_RESOURCE_KIND_DMABUF, r);
	ck_assert_int_eq(gpuhandle_resource_get_dmabuf(r, &back), GPUHANDLE_OK);
	ck_assert(back.borrowFds);
	ck_assert(back.anchor.destroy == NULL);
	gpuhandle_resource_mark_consumed(r);
	ck_assert_int_eq(pr.consumed, 1);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(pr.destroyed, 1);
	ck_assert(fd_is_open(fd)); /* the caller's */

	/* an anchor on owned fds is refused: the fd is closed, the anchor released once */
	d.borrowFds = false;
	ck_assert_new_fails(gpuhandle_resource_new_dmabuf, d, GPUHANDLE_ERROR_INVALID_ARGUMENT,
			    "anchor");
	ck_assert_int_eq(pr.destroyed, 2);
	ck_assert(!fd_is_open(fd));
	ck_assert_int_eq(open_fd_count(), before);
}
END_TEST

START_TEST(shm_fd_never_leaks)
{
	gpuhandle_shm_fd_desc d;
	gpuhandle_shm_fd_desc back;
	gpuhandle_resource *r = NULL;
	probe pr = { 0, 0 };
	int before = open_fd_count();
	memset(&d, 0, sizeof(d));
	d.fd = make_memfd(4096);
	d.size = 4096;
	d.seals = 12345; /* ignored */
	ck_assert_new_ok(gpuhandle_resource_new_shm_fd, d, GPUHANDLE_RESOURCE_KIND_SHM_FD, r);
	ck_assert_int_eq(gpuhandle_resource_get_shm_fd(r, &back), GPUHANDLE_OK);
	ck_assert_int_eq(back.fd, d.fd);
	ck_assert_uint_eq(back.seals, 0);
	ck_assert_int_eq(gpuhandle_resource_get_dmabuf(r, NULL), GPUHANDLE_ERROR_NULL_HANDLE);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(open_fd_count(), before);

	d.fd = make_memfd(4096);
	d.size = 8192;
	ck_assert_new_fails(gpuhandle_resource_new_shm_fd, d, GPUHANDLE_ERROR_OUT_OF_RANGE, "size");
	ck_assert_int_eq(open_fd_count(), before);
	d.fd = -1;
	ck_assert_new_fails(gpuhandle_resource_new_shm_fd, d, GPUHANDLE_ERROR_BAD_FD, "fd");

	/* borrowed: the resource never closes it, and the anchor goes with the last reference */
	d.fd = make_memfd(4096);
	d.size = 4096;
	d.borrowFd = true;
	d.anchor = anchor_of(&pr);
	ck_assert_new_ok(gpuhandle_resource_new_shm_fd, d, GPUHANDLE_RESOURCE_KIND_SHM_FD, r);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(pr.destroyed, 1);
	ck_assert(fd_is_open(d.fd));
	d.size = 0; /* a failed borrow releases the anchor and leaves the fd open */
	ck_assert_new_fails(gpuhandle_resource_new_shm_fd, d, GPUHANDLE_ERROR_ZERO_SIZE, "size");
	ck_assert_int_eq(pr.destroyed, 2);
	ck_assert(fd_is_open(d.fd));
	close(d.fd);
	ck_assert_int_eq(open_fd_count(), before);
}
END_TEST

START_TEST(anchor_runs_once)
{
	gpuhandle_cpu_bytes_desc d;
	gpuhandle_resource *r = NULL;
	gpuhandle_resource *r2;
	probe pr = { 0, 0 };
	char data[64];
	memset(&d, 0, sizeof(d));
	d.data = data;
	d.size = sizeof(data);
	d.anchor = anchor_of(&pr);
	ck_assert_new_ok(gpuhandle_resource_new_cpu_bytes, d, GPUHANDLE_RESOURCE_KIND_CPU_BYTES, r);
	r2 = gpuhandle_resource_ref(r);
	ck_assert_ptr_eq(r2, r);
	gpuhandle_resource_unref(r);
	ck_assert_int_eq(pr.destroyed, 0);
	gpuhandle_resource_mark_consumed(r2);
	ck_assert_int_eq(pr.consumed, 1);
	gpuhandle_resource_unref(r2);
	ck_assert_int_eq(pr.destroyed, 1);

	/* on failure, before the constructor returns */
	d.size = 0;
	ck_assert_new_fails(gpuhandle_resource_new_cpu_bytes, d, GPUHANDLE_ERROR_ZERO_SIZE, "size");
	ck_assert_int_eq(pr.destroyed, 2);
	d.size = sizeof(data);
	ck_assert_int_eq(gpuhandle_resource_new_cpu_bytes(&d, NULL, NULL),
			 GPUHANDLE_ERROR_NULL_HANDLE);
	ck_assert_int_eq(pr.destroyed, 3);

	/* consumed without destroy would be dropped silently: refused */
	d.anchor.destroy = NULL;
	ck_assert_new_fails(gpuhandle_resource_new_cpu_bytes, d, GPUHANDLE_ERROR_INVALID_ARGUMENT,
			    "anchor.destroy");
	ck_assert_int_eq(pr.destroyed, 3);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("fd");
	tcase_add_test(tc, vulkan_memory_fd_owns_its_fd);
	tcase_add_test(tc, dmabuf_fds_never_leak);
	tcase_add_test(tc, dmabuf_borrowed_fds_follow_the_anchor);
	tcase_add_test(tc, shm_fd_never_leaks);
	tcase_add_test(tc, anchor_runs_once);
	return run_one_case("capi-fd", tc);
}
