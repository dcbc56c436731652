/* Shared helpers of the C API tests: assertion macros, fd counting, memfds, probe anchors. */
#ifndef GPUHANDLE_TESTS_CAPI_HELPERS_H
#define GPUHANDLE_TESTS_CAPI_HELPERS_H

#include <gpuhandle/gpuhandle.h>

#include <stdint.h>
#include <string.h>

#include <check.h>

#define NV12 0x3231564eu /* DRM_FORMAT_NV12 */
#define W 64u
#define H 48u
#define NV12_SIZE (W * H * 3u / 2u)

/* A non-NULL pointer that no constructor returns: proves that outputs are nulled on failure. */
extern int sentinel_storage;
#define SENTINEL ((void *)&sentinel_storage)

extern const gpuhandle_colorimetry bt709;

/* Asserts a failed call: its status, *out NULL, and an error naming `field` with a sentence. */
#define ck_assert_failed(status, out, error, code, field)                                          \
	do {                                                                                       \
		ck_assert_int_eq((status), (code));                                                \
		ck_assert_ptr_null(out);                                                           \
		ck_assert_ptr_nonnull(error);                                                      \
		ck_assert_msg(gpuhandle_error_get_code(error) == (code), "got %s: %s",             \
			      gpuhandle_status_name(gpuhandle_error_get_code(error)),              \
			      gpuhandle_error_get_message(error));                                 \
		ck_assert_str_eq(gpuhandle_error_get_field(error), (field));                       \
		ck_assert_uint_gt(strlen(gpuhandle_error_get_message(error)), 0);                  \
		gpuhandle_error_unref(error);                                                      \
	} while (0)

/* Runs resource constructor `fn` on `desc`, expecting `code` on `field`. */
#define ck_assert_new_fails(fn, desc, code, field)                                                 \
	do {                                                                                       \
		gpuhandle_resource *r_ = SENTINEL;                                                 \
		gpuhandle_error *e_ = NULL;                                                        \
		gpuhandle_status s_ = fn(&(desc), &r_, &e_);                                       \
		ck_assert_failed(s_, r_, e_, code, field);                                         \
	} while (0)

/* Runs resource constructor `fn` on `desc`, expecting success and `kind`; stores it in `out`. */
#define ck_assert_new_ok(fn, desc, kind, out)                                                      \
	do {                                                                                       \
		gpuhandle_error *e_ = NULL;                                                        \
		gpuhandle_status s_ = fn(&(desc), &(out), &e_);                                    \
		ck_assert_msg(s_ == GPUHANDLE_OK, "%s failed: %s", #fn,                            \
			      gpuhandle_error_get_message(e_));                                    \
		ck_assert_ptr_null(e_);                                                            \
		ck_assert_ptr_nonnull(out);                                                        \
		ck_assert_int_eq(gpuhandle_resource_get_kind(out), (kind));                        \
	} while (0)

/* Runs context constructor `fn` on `desc`, expecting `code` on `field`. */
#define ck_assert_context_fails(fn, desc, code, field)                                             \
	do {                                                                                       \
		gpuhandle_context *c_ = SENTINEL;                                                  \
		gpuhandle_error *e_ = NULL;                                                        \
		gpuhandle_status s_ = fn(&(desc), &c_, &e_);                                       \
		ck_assert_failed(s_, c_, e_, code, field);                                         \
	} while (0)

/* Counts a probe anchor's callbacks. */
typedef struct probe {
	int destroyed;
	int consumed;
} probe;

int open_fd_count(void);
int make_memfd(uint64_t size);
int fd_is_open(int fd);
gpuhandle_anchor anchor_of(probe *p);
/* An NV12 DMA-BUF over one memfd: two planes in one object. */
gpuhandle_dmabuf_desc nv12_dmabuf(int fd);
/* Runs a suite named `name` with one test case `tc`; returns the process exit status. */
int run_one_case(const char *name, TCase *tc);

#endif
