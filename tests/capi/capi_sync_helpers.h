/* Helpers shared by the C sync API tests: a monotonic clock, sleeps, status-only failures. */
#ifndef GPUHANDLE_TESTS_CAPI_SYNC_HELPERS_H
#define GPUHANDLE_TESTS_CAPI_SYNC_HELPERS_H

#include <errno.h>
#include <time.h>

#include "capi_helpers.h"

/* Milliseconds on the monotonic clock. */
static inline double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Expects `status` to be a failure `code` whose error (in `e`) names `field`; releases e. For
 * calls with no output object (ck_assert_failed checks one). */
#define ck_assert_status_failed(status, e, code, field)                                            \
	do {                                                                                       \
		ck_assert_int_eq((status), (code));                                                \
		ck_assert_ptr_nonnull(e);                                                          \
		ck_assert_int_eq(gpuhandle_error_get_code(e), (code));                             \
		ck_assert_str_eq(gpuhandle_error_get_field(e), (field));                           \
		ck_assert_uint_gt(strlen(gpuhandle_error_get_message(e)), 0);                      \
		gpuhandle_error_unref(e);                                                          \
		(e) = NULL;                                                                        \
	} while (0)

/* Runs sync point constructor `fn` on `desc`, expecting success; stores the point in `out`. */
#define ck_assert_sync_ok(fn, desc, out)                                                           \
	do {                                                                                       \
		gpuhandle_error *e_ = NULL;                                                        \
		gpuhandle_status s_ = fn(&(desc), &(out), &e_);                                    \
		ck_assert_msg(s_ == GPUHANDLE_OK, "%s failed: %s", #fn,                            \
			      gpuhandle_error_get_message(e_));                                    \
		ck_assert_ptr_null(e_);                                                            \
		ck_assert_ptr_nonnull(out);                                                        \
	} while (0)

/* Runs sync point constructor `fn` on `desc`, expecting `code` on `field` and a NULL point. */
#define ck_assert_sync_fails(fn, desc, code, field)                                                \
	do {                                                                                       \
		gpuhandle_sync_point *p_ = SENTINEL;                                               \
		gpuhandle_error *e_ = NULL;                                                        \
		gpuhandle_status s_ = fn(&(desc), &p_, &e_);                                       \
		ck_assert_failed(s_, p_, e_, code, field);                                         \
	} while (0)

#endif
