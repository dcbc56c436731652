/* C API from C99: cross-thread wakes, release gates, async waits and cancel, frames with sync. */
#define _GNU_SOURCE

#include "capi_sync_helpers.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* Signals a CPU fence from a second thread after a delay. */
typedef struct late_signal {
	gpuhandle_cpu_fence *fence;
	long delay_ms;
} late_signal;

static void *signal_later(void *data)
{
	late_signal *s = data;
	sleep_ms(s->delay_ms);
	gpuhandle_cpu_fence_signal(s->fence);
	return NULL;
}

START_TEST(signal_from_another_thread_wakes_a_blocked_wait)
{
	int before = open_fd_count();
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_sync_point *p = NULL;
	gpuhandle_error *e = NULL;
	late_signal s;
	pthread_t thread;
	bool done = true;
	double start, elapsed;
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &p, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(p, &done, &e), GPUHANDLE_OK);
	ck_assert(!done);

	/* never signalled: Timeout, recoverable, not before its timeout */
	start = now_ms();
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, 50000000, &e), GPUHANDLE_ERROR_TIMEOUT);
	elapsed = now_ms() - start;
	ck_assert_int_eq(gpuhandle_error_get_code(e), GPUHANDLE_ERROR_TIMEOUT);
	ck_assert_int_eq(gpuhandle_error_get_kind(e), GPUHANDLE_ERROR_KIND_RECOVERABLE);
	ck_assert_str_eq(gpuhandle_error_get_field(e), "timeout");
	gpuhandle_error_unref(e);
	e = NULL;
	ck_assert_msg(elapsed >= 50.0, "timed out after %.1f ms", elapsed);

	s.fence = f;
	s.delay_ms = 100;
	start = now_ms();
	ck_assert_int_eq(pthread_create(&thread, NULL, signal_later, &s), 0);
	ck_assert_int_eq(gpuhandle_sync_point_wait(p, GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS, &e),
			 GPUHANDLE_OK);
	elapsed = now_ms() - start;
	ck_assert_ptr_null(e);
	pthread_join(thread, NULL);
	/* it really blocked until the signal, and woke (OK, not the 10 s default's Timeout) */
	ck_assert_msg(elapsed >= 99.0, "woke after %.1f ms", elapsed);
	gpuhandle_sync_point_unref(p);
	gpuhandle_cpu_fence_unref(f);
	ck_assert_int_eq(open_fd_count(), before);
}
END_TEST

START_TEST(release_gate)
{
	int before = open_fd_count();
	gpuhandle_release_gate *g = NULL;
	gpuhandle_sync_point *released = NULL;
	gpuhandle_sync_point *consumer = NULL;
	gpuhandle_sync_point *out = SENTINEL;
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_error *e = NULL;
	bool done = true;
	ck_assert_int_eq(gpuhandle_release_gate_new(&g, &e), GPUHANDLE_OK);
	ck_assert(!gpuhandle_release_gate_is_signaled(g));
	ck_assert_int_eq(gpuhandle_release_gate_get_released(g, &released, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(released), GPUHANDLE_SYNC_KIND_CPU);
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(released, &done, NULL), GPUHANDLE_OK);
	ck_assert(!done);
	ck_assert_int_eq(gpuhandle_sync_point_wait(released, 20000000, &e),
			 GPUHANDLE_ERROR_TIMEOUT);
	gpuhandle_error_unref(e);
	e = NULL;

	/* the consumer is done once its own GPU work (here a CPU fence) is */
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &consumer, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_release_gate_signal(g, consumer, &e), GPUHANDLE_OK);
	gpuhandle_sync_point_unref(consumer); /* the gate holds its own reference */
	ck_assert(gpuhandle_release_gate_is_signaled(g));
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(released, &done, NULL), GPUHANDLE_OK);
	ck_assert(!done);
	ck_assert_int_eq(gpuhandle_release_gate_signal(g, NULL, &e), GPUHANDLE_OK); /* ignored */
	ck_assert_int_eq(gpuhandle_sync_point_is_signaled(released, &done, NULL), GPUHANDLE_OK);
	ck_assert(!done);
	gpuhandle_cpu_fence_signal(f);
	ck_assert_int_eq(gpuhandle_sync_point_wait(released, GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS, &e),
			 GPUHANDLE_OK);
	gpuhandle_sync_point_unref(released);
	gpuhandle_cpu_fence_unref(f);
	ck_assert_ptr_eq(gpuhandle_release_gate_ref(g), g);
	gpuhandle_release_gate_unref(g);
	gpuhandle_release_gate_unref(g);
	ck_assert_int_eq(open_fd_count(), before);

	ck_assert_status_failed(gpuhandle_release_gate_signal(NULL, NULL, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "gate");
	ck_assert_failed(gpuhandle_release_gate_get_released(NULL, &out, &e), out, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "gate");
	ck_assert(!gpuhandle_release_gate_is_signaled(NULL));
	ck_assert_status_failed(gpuhandle_release_gate_new(NULL, &e), e,
				GPUHANDLE_ERROR_NULL_HANDLE, "out");
}
END_TEST

/* Records an async wait's callbacks. */
typedef struct recorder {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	int calls;
	gpuhandle_status status;
	gpuhandle_status error_code; /* of the error object, GPUHANDLE_OK when none came */
	gpuhandle_error_kind error_kind;
	pthread_t thread;
} recorder;

static void recorder_init(recorder *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mutex, NULL);
	pthread_cond_init(&r->cond, NULL);
}

static void recorder_clear(recorder *r)
{
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->mutex);
}

static void record(gpuhandle_status status, const gpuhandle_error *error, void *user_data)
{
	recorder *r = user_data;
	pthread_mutex_lock(&r->mutex);
	r->calls++;
	r->status = status;
	r->error_code = gpuhandle_error_get_code(error);
	r->error_kind = gpuhandle_error_get_kind(error);
	r->thread = pthread_self();
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->mutex);
}

/* The number of calls once there is at least one, or 0 after 5 s. */
static int wait_for_call(recorder *r)
{
	struct timespec until;
	int calls;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&r->mutex);
	while (r->calls == 0) {
		if (pthread_cond_timedwait(&r->cond, &r->mutex, &until) == ETIMEDOUT)
			break;
	}
	calls = r->calls;
	pthread_mutex_unlock(&r->mutex);
	return calls;
}

static int calls_of(recorder *r)
{
	int calls;
	pthread_mutex_lock(&r->mutex);
	calls = r->calls;
	pthread_mutex_unlock(&r->mutex);
	return calls;
}

START_TEST(async_wait_runs_once)
{
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_sync_point *p = NULL;
	gpuhandle_wait_ticket *t = NULL;
	gpuhandle_error *e = NULL;
	recorder r;
	recorder_init(&r);
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &p, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_wait_async(p, GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS,
							 record, &r, &t, &e),
			 GPUHANDLE_OK);
	ck_assert_ptr_null(e);
	ck_assert_ptr_nonnull(t);
	gpuhandle_sync_point_unref(p); /* the wait holds its own reference */
	ck_assert_int_eq(calls_of(&r), 0);
	gpuhandle_cpu_fence_signal(f);
	ck_assert_int_eq(wait_for_call(&r), 1);
	ck_assert_int_eq(r.status, GPUHANDLE_OK);
	ck_assert_int_eq(r.error_code, GPUHANDLE_OK);        /* no error object on success */
	ck_assert(!pthread_equal(r.thread, pthread_self())); /* on the waiter thread */
	ck_assert(!gpuhandle_wait_ticket_cancel(t));         /* already resolved */
	sleep_ms(50);
	ck_assert_int_eq(calls_of(&r), 1);
	gpuhandle_wait_ticket_unref(t);
	gpuhandle_cpu_fence_unref(f);
	recorder_clear(&r);
}
END_TEST

START_TEST(async_wait_already_done_runs_inline)
{
	gpuhandle_sync_point *p = NULL;
	recorder r;
	recorder_init(&r);
	ck_assert_int_eq(gpuhandle_sync_point_new_noop(&p, NULL), GPUHANDLE_OK);
	/* the ticket is optional */
	ck_assert_int_eq(gpuhandle_sync_point_wait_async(p, 0, record, &r, NULL, NULL),
			 GPUHANDLE_OK);
	ck_assert_int_eq(calls_of(&r), 1); /* before the call returned */
	ck_assert(pthread_equal(r.thread, pthread_self()));
	ck_assert_int_eq(r.status, GPUHANDLE_OK);
	gpuhandle_sync_point_unref(p);
	recorder_clear(&r);
}
END_TEST

START_TEST(async_wait_on_a_fence_fd)
{
	int fd = eventfd(0, EFD_CLOEXEC);
	/* Signalled through a second descriptor of the same eventfd, made before `fd` belongs to
	 * the point: its waiter thread closes `fd`, and ThreadSanitizer sees no order between that
	 * close and any later use of `fd` here (a write, a dup), which only the kernel orders. */
	int signal_fd = dup(fd);
	int with_fd;
	uint64_t one = 1;
	gpuhandle_sync_point *p = NULL;
	recorder r;
	ck_assert_int_ge(signal_fd, 0);
	recorder_init(&r);
	ck_assert_int_eq(gpuhandle_sync_point_new_fence_fd(fd, &p, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_wait_async(p, GPUHANDLE_WAIT_FOREVER, record, &r,
							 NULL, NULL),
			 GPUHANDLE_OK);
	gpuhandle_sync_point_unref(p); /* the pending wait keeps the fd open */
	ck_assert(fd_is_open(fd));
	/* counted once the waiter thread runs: its own epoll and wake fds stay for the process */
	with_fd = open_fd_count();
	ck_assert_int_eq(write(signal_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	ck_assert_int_eq(wait_for_call(&r), 1);
	ck_assert_int_eq(r.status, GPUHANDLE_OK);
	sleep_ms(50); /* the waiter thread lets go of the point after the callback */
	ck_assert_int_eq(calls_of(&r), 1);
	ck_assert(!fd_is_open(fd));
	ck_assert_int_eq(open_fd_count(), with_fd - 1);
	close(signal_fd);
	recorder_clear(&r);
}
END_TEST

START_TEST(async_wait_times_out)
{
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_sync_point *p = NULL;
	double start, elapsed;
	recorder r;
	recorder_init(&r);
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &p, NULL), GPUHANDLE_OK);
	start = now_ms();
	ck_assert_int_eq(gpuhandle_sync_point_wait_async(p, 50000000, record, &r, NULL, NULL),
			 GPUHANDLE_OK);
	ck_assert_int_eq(wait_for_call(&r), 1);
	elapsed = now_ms() - start;
	ck_assert_int_eq(r.status, GPUHANDLE_ERROR_TIMEOUT);
	ck_assert_int_eq(r.error_code, GPUHANDLE_ERROR_TIMEOUT);
	ck_assert_int_eq(r.error_kind, GPUHANDLE_ERROR_KIND_RECOVERABLE);
	ck_assert_msg(elapsed >= 50.0, "timed out after %.1f ms", elapsed);
	gpuhandle_cpu_fence_signal(f);
	sleep_ms(50);
	ck_assert_int_eq(calls_of(&r), 1);
	gpuhandle_sync_point_unref(p);
	gpuhandle_cpu_fence_unref(f);
	recorder_clear(&r);
}
END_TEST

START_TEST(async_wait_cancel)
{
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_sync_point *p = NULL;
	gpuhandle_wait_ticket *t = NULL;
	recorder r;
	recorder_init(&r);
	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &p, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_wait_async(p, GPUHANDLE_WAIT_FOREVER, record, &r, &t,
							 NULL),
			 GPUHANDLE_OK);
	ck_assert(gpuhandle_wait_ticket_cancel(t));
	ck_assert(!gpuhandle_wait_ticket_cancel(t)); /* only once */
	ck_assert_int_eq(wait_for_call(&r), 1);
	ck_assert_int_eq(r.status, GPUHANDLE_ERROR_CANCELLED);
	ck_assert_int_eq(r.error_kind, GPUHANDLE_ERROR_KIND_CANCELLED);
	gpuhandle_cpu_fence_signal(f); /* a cancelled wait stays resolved */
	sleep_ms(50);
	ck_assert_int_eq(calls_of(&r), 1);
	ck_assert(!gpuhandle_wait_ticket_cancel(NULL));
	ck_assert_ptr_eq(gpuhandle_wait_ticket_ref(t), t);
	gpuhandle_wait_ticket_unref(t);
	gpuhandle_wait_ticket_unref(t);
	gpuhandle_wait_ticket_unref(NULL);
	gpuhandle_sync_point_unref(p);
	gpuhandle_cpu_fence_unref(f);
	recorder_clear(&r);
}
END_TEST

START_TEST(async_wait_refused)
{
	gpuhandle_sync_point *p = NULL;
	gpuhandle_wait_ticket *t = SENTINEL;
	gpuhandle_error *e = NULL;
	gpuhandle_opencl_event_sync_desc cl;
	static int event;
	recorder r;
	recorder_init(&r);
	memset(&cl, 0, sizeof(cl));
	cl.event = &event;
	ck_assert_int_eq(gpuhandle_sync_point_new_opencl_event(&cl, &p, NULL), GPUHANDLE_OK);
	ck_assert_failed(gpuhandle_sync_point_wait_async(p, 0, record, &r, &t, &e), t, e,
			 GPUHANDLE_ERROR_NOT_SUPPORTED, "point");
	t = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_wait_async(p, -5, record, &r, &t, &e), t, e,
			 GPUHANDLE_ERROR_INVALID_ARGUMENT, "timeout_ns");
	t = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_wait_async(p, 0, NULL, &r, &t, &e), t, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "callback");
	t = SENTINEL;
	ck_assert_failed(gpuhandle_sync_point_wait_async(NULL, 0, record, &r, &t, &e), t, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "point");
	sleep_ms(20);
	ck_assert_int_eq(calls_of(&r), 0); /* never called after a refusal */
	gpuhandle_sync_point_unref(p);
	recorder_clear(&r);
}
END_TEST

START_TEST(frame_with_sync)
{
	static uint8_t bytes[W * H];
	probe pr = { 0, 0 };
	gpuhandle_cpu_bytes_desc b;
	gpuhandle_resource *res = NULL;
	gpuhandle_frame *plain = NULL, *synced = NULL, *cleared = NULL, *out = SENTINEL;
	gpuhandle_cpu_fence *f = NULL;
	gpuhandle_sync_point *acquire = NULL, *got = NULL;
	gpuhandle_release_gate *gate = NULL, *got_gate = SENTINEL;
	gpuhandle_error *e = NULL;
	memset(&b, 0, sizeof(b));
	b.data = bytes;
	b.size = sizeof(bytes);
	b.anchor = anchor_of(&pr);
	ck_assert_int_eq(gpuhandle_resource_new_cpu_bytes(&b, &res, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_frame_wrap(0, W, H, bt709, res, &plain, NULL), GPUHANDLE_OK);
	gpuhandle_resource_unref(res);

	/* a plain frame: nothing to wait for, no gate */
	ck_assert_int_eq(gpuhandle_frame_get_acquire(plain, &got, &e), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(got), GPUHANDLE_SYNC_KIND_NOOP);
	gpuhandle_sync_point_unref(got);
	ck_assert_int_eq(gpuhandle_frame_get_release(plain, &got_gate, &e), GPUHANDLE_OK);
	ck_assert_ptr_null(got_gate);

	ck_assert_int_eq(gpuhandle_cpu_fence_new(&f, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_cpu_fence_get_point(f, &acquire, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_release_gate_new(&gate, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_frame_with_sync(plain, acquire, gate, &synced, &e),
			 GPUHANDLE_OK);
	ck_assert_ptr_null(e);
	ck_assert_ptr_ne(synced, plain);
	/* the same resource object, and the source frame unchanged */
	ck_assert_ptr_eq(gpuhandle_frame_get_resource(synced, 0),
			 gpuhandle_frame_get_resource(plain, 0));
	ck_assert_uint_eq(gpuhandle_frame_get_width(synced), W);
	ck_assert_int_eq(gpuhandle_frame_get_acquire(plain, &got, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(got), GPUHANDLE_SYNC_KIND_NOOP);
	gpuhandle_sync_point_unref(got);

	ck_assert_int_eq(gpuhandle_frame_get_acquire(synced, &got, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(got), GPUHANDLE_SYNC_KIND_CPU);
	ck_assert_int_eq(gpuhandle_sync_point_wait(got, 0, &e), GPUHANDLE_ERROR_TIMEOUT);
	gpuhandle_error_unref(e);
	gpuhandle_cpu_fence_signal(f);
	ck_assert_int_eq(gpuhandle_sync_point_wait(got, 0, NULL), GPUHANDLE_OK); /* the same fence
										  */
	gpuhandle_sync_point_unref(got);

	/* the frame's gate is the caller's gate: signalling one is seen through the other */
	ck_assert_int_eq(gpuhandle_frame_get_release(synced, &got_gate, NULL), GPUHANDLE_OK);
	ck_assert_ptr_nonnull(got_gate);
	ck_assert(!gpuhandle_release_gate_is_signaled(gate));
	ck_assert_int_eq(gpuhandle_release_gate_signal(got_gate, NULL, NULL), GPUHANDLE_OK);
	ck_assert(gpuhandle_release_gate_is_signaled(gate));
	gpuhandle_release_gate_unref(got_gate);

	/* NULL sync clears: a no-op point and no gate */
	ck_assert_int_eq(gpuhandle_frame_with_sync(synced, NULL, NULL, &cleared, NULL),
			 GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_frame_get_acquire(cleared, &got, NULL), GPUHANDLE_OK);
	ck_assert_int_eq(gpuhandle_sync_point_get_kind(got), GPUHANDLE_SYNC_KIND_NOOP);
	gpuhandle_sync_point_unref(got);
	got_gate = SENTINEL;
	ck_assert_int_eq(gpuhandle_frame_get_release(cleared, &got_gate, NULL), GPUHANDLE_OK);
	ck_assert_ptr_null(got_gate);

	ck_assert_failed(gpuhandle_frame_with_sync(NULL, acquire, gate, &out, &e), out, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "frame");
	got = SENTINEL;
	ck_assert_failed(gpuhandle_frame_get_acquire(NULL, &got, &e), got, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "frame");
	got_gate = SENTINEL;
	ck_assert_failed(gpuhandle_frame_get_release(NULL, &got_gate, &e), got_gate, e,
			 GPUHANDLE_ERROR_NULL_HANDLE, "frame");

	gpuhandle_sync_point_unref(acquire);
	gpuhandle_release_gate_unref(gate);
	gpuhandle_cpu_fence_unref(f);
	gpuhandle_frame_unref(plain);
	gpuhandle_frame_unref(synced);
	ck_assert_int_eq(pr.destroyed, 0); /* `cleared` still holds the resource */
	gpuhandle_frame_unref(cleared);
	ck_assert_int_eq(pr.destroyed, 1);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("sync-async");
	tcase_add_test(tc, signal_from_another_thread_wakes_a_blocked_wait);
	tcase_add_test(tc, release_gate);
	tcase_add_test(tc, async_wait_runs_once);
	tcase_add_test(tc, async_wait_already_done_runs_inline);
	tcase_add_test(tc, async_wait_on_a_fence_fd);
	tcase_add_test(tc, async_wait_times_out);
	tcase_add_test(tc, async_wait_cancel);
	tcase_add_test(tc, async_wait_refused);
	tcase_add_test(tc, frame_with_sync);
	return run_one_case("capi-sync-async", tc);
}
