/* Shared helpers of the C API tests (see capi_helpers.h). */
#define _GNU_SOURCE

#include "capi_helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int sentinel_storage;
const gpuhandle_colorimetry bt709 = { 1, 1, 1, 1 };

int open_fd_count(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *entry;
	int count = 0;
	if (!dir)
		return -1;
	while ((entry = readdir(dir)) != NULL) {
		if (entry->d_name[0] != '.')
			++count;
	}
	closedir(dir);
	return count - 1; /* the directory's own fd */
}

int make_memfd(uint64_t size)
{
	int fd = memfd_create("gpuhandle-capi", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int fd_is_open(int fd)
{
	return fd >= 0 && fcntl(fd, F_GETFD) != -1;
}

static void probe_destroy(void *data)
{
	((probe *)data)->destroyed++;
}

static void probe_consumed(void *data)
{
	((probe *)data)->consumed++;
}

gpuhandle_anchor anchor_of(probe *p)
{
	gpuhandle_anchor anchor;
	anchor.destroy = probe_destroy;
	anchor.data = p;
	anchor.consumed = probe_consumed;
	return anchor;
}

gpuhandle_dmabuf_desc nv12_dmabuf(int fd)
{
	gpuhandle_dmabuf_desc d;
	memset(&d, 0, sizeof(d));
	d.fourcc = NV12;
	d.modifier = GPUHANDLE_DRM_FORMAT_MOD_LINEAR;
	d.width = W;
	d.height = H;
	d.numObjects = 1;
	d.objects[0].fd = fd;
	d.objects[0].size = NV12_SIZE;
	d.numPlanes = 2;
	d.planes[0].pitch = W;
	d.planes[1].offset = W * H;
	d.planes[1].pitch = W;
	return d;
}

int run_one_case(const char *name, TCase *tc)
{
	Suite *suite = suite_create(name);
	SRunner *runner;
	int failed;
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
