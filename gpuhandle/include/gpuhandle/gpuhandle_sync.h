/* C API: sync points of every fence kind, CPU fences, release gates, async waits, frame sync. */
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/gpuhandle_error.h>
#include <gpuhandle/gpuhandle_frame.h>
#include <gpuhandle/gpuhandle_resource.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A sync point is one "this work is done" value: a fence of some API plus whatever waits on it.
 * Points made here from raw fields (gpuhandle_sync_point_new_<kind>) are raw carriers: the
 * handles crossed an API or process boundary, so a CPU wait answers NOT_SUPPORTED until a backend
 * imports them. Fence fds, CPU fences, release gates and composites of those are waited on by the
 * core itself. Every wait is bounded: timeouts are nanoseconds, GPUHANDLE_WAIT_FOREVER is the one
 * way to wait without limit, a negative timeout is refused (INVALID_ARGUMENT) so that a -1 meant
 * as "forever" is caught. A wait that runs out gives GPUHANDLE_ERROR_TIMEOUT (kind RECOVERABLE);
 * a driver failure gives its own error, never a timeout and never "not signalled".
 * Conventions (outputs, errors, NULL) are gpuhandle_error.h's.
 */

/* The only timeout that waits without limit. */
#define GPUHANDLE_WAIT_FOREVER INT64_MAX
/* The budget to use when a caller has none of its own: 10 s, as the C++ kDefaultWaitTimeout. */
#define GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS 10000000000LL

/* The fence kind of a sync point; numbers equal gpuhandle::SyncKind's (stable). */
typedef enum gpuhandle_sync_kind {
	GPUHANDLE_SYNC_KIND_NOOP = 0,     /* nothing to wait for */
	GPUHANDLE_SYNC_KIND_CPU = 1,      /* a gpuhandle_cpu_fence or a release gate */
	GPUHANDLE_SYNC_KIND_FENCE_FD = 2, /* a sync_file, eventfd or any fd readable when done */
	GPUHANDLE_SYNC_KIND_VULKAN_SEMAPHORE = 3,
	GPUHANDLE_SYNC_KIND_D3D12_FENCE = 4,
	GPUHANDLE_SYNC_KIND_D3D11_KEYED_MUTEX = 5,
	GPUHANDLE_SYNC_KIND_CUDA_EXTERNAL_SEMAPHORE = 6,
	GPUHANDLE_SYNC_KIND_CUDA_EVENT = 7,
	GPUHANDLE_SYNC_KIND_OPENCL_EVENT = 8,
	GPUHANDLE_SYNC_KIND_METAL_SHARED_EVENT = 9,
	GPUHANDLE_SYNC_KIND_GL_SEMAPHORE = 10, /* a GL_EXT_semaphore object */
	GPUHANDLE_SYNC_KIND_GL_SYNC = 11,      /* a GLsync or EGLSync */
	GPUHANDLE_SYNC_KIND_WEBGPU_SUBMISSION = 12,
	GPUHANDLE_SYNC_KIND_COMPOSITE = 13,       /* all / any / chain of other points */
	GPUHANDLE_SYNC_KIND_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_sync_kind;

/* A VkSemaphore's type, declared by its producer; numbers equal VulkanSemaphoreKind's. */
typedef enum gpuhandle_vulkan_semaphore_kind {
	GPUHANDLE_VULKAN_SEMAPHORE_BINARY = 0,
	GPUHANDLE_VULKAN_SEMAPHORE_TIMELINE = 1,
	GPUHANDLE_VULKAN_SEMAPHORE_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_vulkan_semaphore_kind;

/* One fence value. Opaque, refcounted, immutable; thread-safe to share and to wait on. */
typedef struct gpuhandle_sync_point gpuhandle_sync_point;
/* A fence a host thread signals once. Opaque, refcounted; every call from any thread. */
typedef struct gpuhandle_cpu_fence gpuhandle_cpu_fence;
/* The consumer's "done with this memory" signal. Opaque, refcounted; any call from any thread. */
typedef struct gpuhandle_release_gate gpuhandle_release_gate;
/* A pending asynchronous wait. Opaque, refcounted; dropping it does not cancel the wait. */
typedef struct gpuhandle_wait_ticket gpuhandle_wait_ticket;

/*
 * Raw-field descs: members mirror the C++ gpuhandle::<Kind>Sync structs (an error's field names
 * the member as spelled here). Handles are borrowed; `anchor` keeps them alive as long as any
 * reference to the point lives. Getters fill the struct back with `anchor` zeroed.
 */
/* The raw fields of a VkSemaphore wait. */
typedef struct gpuhandle_vulkan_semaphore_sync_desc {
	uint64_t semaphore; /* VkSemaphore; non-zero */
	/* declared by the producer: BINARY or TIMELINE (INVALID_ARGUMENT otherwise) */
	gpuhandle_vulkan_semaphore_kind kind;
	uint64_t value; /* timeline value to reach; ignored for binary semaphores */
	void *device;   /* VkDevice; non-null */
	/* keeps the handles alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_vulkan_semaphore_sync_desc;

/* The raw fields of an ID3D12Fence wait. */
typedef struct gpuhandle_d3d12_fence_sync_desc {
	void *fence; /* ID3D12Fence*; non-null */
	/* the fence value to reach */
	uint64_t value;
	gpuhandle_anchor anchor; /* keeps the handles alive; destroy NULL: none */
} gpuhandle_d3d12_fence_sync_desc;

/* The raw fields of an IDXGIKeyedMutex hand-over. */
typedef struct gpuhandle_d3d11_keyed_mutex_sync_desc {
	void *keyedMutex; /* IDXGIKeyedMutex*; non-null */
	/* the key to acquire the mutex with */
	uint64_t key;
	gpuhandle_anchor anchor; /* keeps the handles alive; destroy NULL: none */
} gpuhandle_d3d11_keyed_mutex_sync_desc;

/* The raw fields of a CUexternalSemaphore wait. */
typedef struct gpuhandle_cuda_external_semaphore_sync_desc {
	void *semaphore; /* CUexternalSemaphore; non-null */
	/* true: value is set */
	bool hasValue;
	uint64_t value; /* timeline value, when hasValue */
	/* keeps the handles alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_cuda_external_semaphore_sync_desc;

/* The raw fields of a CUevent wait. */
typedef struct gpuhandle_cuda_event_sync_desc {
	void *event;     /* CUevent; non-null */
	void *context;   /* CUcontext that owns it; nullable */
	int32_t ordinal; /* CUDA device ordinal; >= 0 */
	/* keeps the handles alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_cuda_event_sync_desc;

/* The raw fields of a cl_event wait. */
typedef struct gpuhandle_opencl_event_sync_desc {
	void *event; /* cl_event; non-null */
	/* keeps the handles alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_opencl_event_sync_desc;

/* The raw fields of an MTLSharedEvent wait. */
typedef struct gpuhandle_metal_shared_event_sync_desc {
	void *event; /* id<MTLSharedEvent>; non-null */
	/* the event value to reach */
	uint64_t value;
	gpuhandle_anchor anchor; /* keeps the handles alive; destroy NULL: none */
} gpuhandle_metal_shared_event_sync_desc;

/* The raw fields of a GL_EXT_semaphore wait. */
typedef struct gpuhandle_gl_semaphore_sync_desc {
	uint32_t semaphore; /* GL semaphore name; non-zero */
	void *context;      /* the context it was imported into; nullable */
	/* keeps the handles alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_gl_semaphore_sync_desc;

/* The raw fields of a GLsync or EGLSync wait. */
typedef struct gpuhandle_gl_sync_sync_desc {
	void *sync;    /* GLsync or EGLSync; non-null */
	void *context; /* the context that created it; nullable */
	/* the binding of context: one of gpuhandle_gl_flavour (INVALID_ARGUMENT otherwise) */
	gpuhandle_gl_flavour flavour;
	gpuhandle_anchor anchor; /* keeps the handles alive; destroy NULL: none */
} gpuhandle_gl_sync_sync_desc;

/* The raw fields of a wait for a WebGPU queue submission. */
typedef struct gpuhandle_webgpu_submission_sync_desc {
	void *queue; /* WGPUQueue; non-null */
	/* the submission on queue to wait for, numbered by the producer */
	uint64_t submission;
	gpuhandle_anchor anchor; /* keeps the handles alive; destroy NULL: none */
} gpuhandle_webgpu_submission_sync_desc;

/* "noop", "fence-fd", "vulkan-semaphore", ...; "unknown" outside the enum. Static, never NULL. */
GPUHANDLE_API const char *gpuhandle_sync_kind_name(gpuhandle_sync_kind kind) GPUHANDLE_NOEXCEPT;
/* The API a sync kind belongs to (NOOP, CPU, COMPOSITE: CPU; FENCE_FD: FD). */
GPUHANDLE_API gpuhandle_backend_kind gpuhandle_sync_kind_backend(gpuhandle_sync_kind kind)
	GPUHANDLE_NOEXCEPT;

/* Constructors: *out gets a new reference, or NULL on failure; error is nullable. */
/* A point with nothing to wait for (already done). */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_noop(
	gpuhandle_sync_point **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A sync_file, eventfd or any fd that polls readable once signalled, waited on with poll().
 * fd: taken, closed by the point or before this returns on failure (BAD_FD when not open). */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_fence_fd(
	int fd, gpuhandle_sync_point **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Raw carriers (see above): desc borrowed for the call, non-null; its anchor is consumed, even on
 * failure (destroy runs before the call returns). There is no raw fence-fd carrier: the core
 * waits on any fd itself, so use gpuhandle_sync_point_new_fence_fd. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_vulkan_semaphore(
	const gpuhandle_vulkan_semaphore_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of an ID3D12Fence value; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_d3d12_fence(
	const gpuhandle_d3d12_fence_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of an IDXGIKeyedMutex key; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_d3d11_keyed_mutex(
	const gpuhandle_d3d11_keyed_mutex_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of a CUexternalSemaphore; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_cuda_external_semaphore(
	const gpuhandle_cuda_external_semaphore_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of a CUevent; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_cuda_event(
	const gpuhandle_cuda_event_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of a cl_event; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_opencl_event(
	const gpuhandle_opencl_event_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of an MTLSharedEvent value; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_metal_shared_event(
	const gpuhandle_metal_shared_event_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of a GL_EXT_semaphore object; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_gl_semaphore(
	const gpuhandle_gl_semaphore_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of a GLsync or EGLSync; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_gl_sync(
	const gpuhandle_gl_sync_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A raw carrier of a WebGPU queue submission; desc and anchor as for the Vulkan one above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_new_webgpu_submission(
	const gpuhandle_webgpu_submission_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/* Composites over points[0..count-1] (borrowed; the composite takes its own references): done
 * when every point is (all), when any is (any), or when each in turn is (chain: a later point is
 * not polled before the earlier one is done). count 0 gives ZERO_SIZE; a NULL entry NULL_HANDLE
 * ("points[i]"); a raw carrier NOT_SUPPORTED. No-op entries are dropped, so the result may be a
 * NOOP point or the single remaining point's kind rather than COMPOSITE. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_all(gpuhandle_sync_point *const *points,
							size_t count, gpuhandle_sync_point **out,
							gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Done when any of points[0..count-1] is (as gpuhandle_sync_point_all). */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_any(gpuhandle_sync_point *const *points,
							size_t count, gpuhandle_sync_point **out,
							gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Done when each of points[0..count-1] is, in order (as gpuhandle_sync_point_all). */
GPUHANDLE_API gpuhandle_status
gpuhandle_sync_point_chain(gpuhandle_sync_point *const *points, size_t count,
			   gpuhandle_sync_point **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/* Adds a reference. point: nullable (then a no-op). Returns point. */
GPUHANDLE_API gpuhandle_sync_point *
gpuhandle_sync_point_ref(gpuhandle_sync_point *point) GPUHANDLE_NOEXCEPT;
/* Drops a reference; the last one releases the fence (and runs a raw carrier's anchor). */
GPUHANDLE_API void gpuhandle_sync_point_unref(gpuhandle_sync_point *point) GPUHANDLE_NOEXCEPT;

/* The fence kind. point: nullable; NULL gives NOOP. */
GPUHANDLE_API gpuhandle_sync_kind gpuhandle_sync_point_get_kind(const gpuhandle_sync_point *point)
	GPUHANDLE_NOEXCEPT;
/* The API of the fence. point: nullable; NULL gives CPU. */
GPUHANDLE_API gpuhandle_backend_kind
gpuhandle_sync_point_get_backend(const gpuhandle_sync_point *point) GPUHANDLE_NOEXCEPT;
/* True when the point holds raw fields no waiter came with (a CPU wait is NOT_SUPPORTED). */
GPUHANDLE_API bool
gpuhandle_sync_point_is_raw_carrier(const gpuhandle_sync_point *point) GPUHANDLE_NOEXCEPT;
/* An fd that polls readable (POLLIN) once the point is signalled, for poll/epoll/main loops;
 * borrowed, open while the point lives. A Vulkan timeline point's fd is made at the first call
 * and written by a thread blocked in vkWaitSemaphores for it. -1 when the fence offers none (NOOP
 * points, raw carriers and composites have none, nor a timeline point under Khronos's validation
 * layer or beyond 16 watched at once: wait on them with gpuhandle_sync_point_wait_async) or
 * point is NULL. */
GPUHANDLE_API int
gpuhandle_sync_point_get_poll_fd(const gpuhandle_sync_point *point) GPUHANDLE_NOEXCEPT;

/* Raw fields back: point and out non-null; *out zeroed on failure (WRONG_KIND on another kind).
 * Handles in *out are borrowed from the point; `anchor` reads zero. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_vulkan_semaphore(
	const gpuhandle_sync_point *point,
	gpuhandle_vulkan_semaphore_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a D3D12_FENCE point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_d3d12_fence(
	const gpuhandle_sync_point *point, gpuhandle_d3d12_fence_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a D3D11_KEYED_MUTEX point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_d3d11_keyed_mutex(
	const gpuhandle_sync_point *point,
	gpuhandle_d3d11_keyed_mutex_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a CUDA_EXTERNAL_SEMAPHORE point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_cuda_external_semaphore(
	const gpuhandle_sync_point *point,
	gpuhandle_cuda_external_semaphore_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a CUDA_EVENT point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_cuda_event(
	const gpuhandle_sync_point *point, gpuhandle_cuda_event_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of an OPENCL_EVENT point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status
gpuhandle_sync_point_get_opencl_event(const gpuhandle_sync_point *point,
				      gpuhandle_opencl_event_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a METAL_SHARED_EVENT point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_metal_shared_event(
	const gpuhandle_sync_point *point,
	gpuhandle_metal_shared_event_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a GL_SEMAPHORE point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status
gpuhandle_sync_point_get_gl_semaphore(const gpuhandle_sync_point *point,
				      gpuhandle_gl_semaphore_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a GL_SYNC point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_gl_sync(
	const gpuhandle_sync_point *point, gpuhandle_gl_sync_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fields of a WEBGPU_SUBMISSION point into *out, as for the Vulkan getter above. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_webgpu_submission(
	const gpuhandle_sync_point *point,
	gpuhandle_webgpu_submission_sync_desc *out) GPUHANDLE_NOEXCEPT;
/* The fence fd: borrowed, open while the point lives, never to be closed by the caller. *out is
 * -1 on failure. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_get_fence_fd(const gpuhandle_sync_point *point,
								 int *out) GPUHANDLE_NOEXCEPT;

/* Blocks until the point is signalled or timeout_ns passes (TIMEOUT, kind RECOVERABLE). A NOOP
 * point returns at once; a raw carrier gives NOT_SUPPORTED; a negative timeout INVALID_ARGUMENT.
 * point: non-null; error: nullable. */
GPUHANDLE_API gpuhandle_status
gpuhandle_sync_point_wait(const gpuhandle_sync_point *point, int64_t timeout_ns,
			  gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* *out: whether the point is signalled now, without blocking; false on failure (a driver failure
 * is an error, never "not signalled"). point, out: non-null; error: nullable. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_is_signaled(
	const gpuhandle_sync_point *point, bool *out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/* Called exactly once with the outcome of an asynchronous wait: GPUHANDLE_OK, TIMEOUT, the
 * driver's error or CANCELLED. error: borrowed for the call; NULL on success (and, should memory
 * run out building it, on failure: status still tells). Runs on the waiter thread (cancelled
 * waits too), or on the calling thread before gpuhandle_sync_point_wait_async returns when the
 * point was already done. It must not block; it may call any gpuhandle function. */
typedef void (*gpuhandle_wait_callback)(gpuhandle_status status, const gpuhandle_error *error,
					void *user_data);

/* Waits for point without blocking the caller: checks it a few times here, then hands it to the
 * process-wide waiter thread (one thread, epoll for pollable fences, short slices otherwise).
 * point: non-null, borrowed (the wait keeps its own reference); callback: non-null; user_data:
 * passed to callback. *out: nullable; a new ticket reference for cancelling, or NULL on failure.
 * On failure (a raw carrier: NOT_SUPPORTED; a negative timeout: INVALID_ARGUMENT; no waiter
 * thread: INVALID_STATE) callback is never called; on success it is called exactly once. Pending
 * waits at process exit resolve with CANCELLED. */
GPUHANDLE_API gpuhandle_status gpuhandle_sync_point_wait_async(
	const gpuhandle_sync_point *point, int64_t timeout_ns, gpuhandle_wait_callback callback,
	void *user_data, gpuhandle_wait_ticket **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Resolves the wait with CANCELLED if it is still pending; true when this call did (the callback
 * then runs on the waiter thread, possibly after this returns). ticket: nullable (then false). */
GPUHANDLE_API bool
gpuhandle_wait_ticket_cancel(const gpuhandle_wait_ticket *ticket) GPUHANDLE_NOEXCEPT;
/* Adds a reference. ticket: nullable (then a no-op). Returns ticket. */
GPUHANDLE_API gpuhandle_wait_ticket *
gpuhandle_wait_ticket_ref(gpuhandle_wait_ticket *ticket) GPUHANDLE_NOEXCEPT;
/* Drops a reference; never cancels the wait. ticket: nullable (then a no-op). */
GPUHANDLE_API void gpuhandle_wait_ticket_unref(gpuhandle_wait_ticket *ticket) GPUHANDLE_NOEXCEPT;

/* A new unsignalled fence (IO when no eventfd can be made). *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_cpu_fence_new(gpuhandle_cpu_fence **out,
						       gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Adds a reference. fence: nullable (then a no-op). Returns fence. */
GPUHANDLE_API gpuhandle_cpu_fence *
gpuhandle_cpu_fence_ref(gpuhandle_cpu_fence *fence) GPUHANDLE_NOEXCEPT;
/* Drops a reference. Points made from the fence keep it alive. Nullable (then a no-op). */
GPUHANDLE_API void gpuhandle_cpu_fence_unref(gpuhandle_cpu_fence *fence) GPUHANDLE_NOEXCEPT;
/* Marks the fence done and wakes every waiter; later calls do nothing. fence: non-null. */
GPUHANDLE_API gpuhandle_status gpuhandle_cpu_fence_signal(gpuhandle_cpu_fence *fence)
	GPUHANDLE_NOEXCEPT;
/* A CPU-kind point that waits on the fence. fence: non-null; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_cpu_fence_get_point(gpuhandle_cpu_fence *fence, gpuhandle_sync_point **out,
			      gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/*
 * Release gates: the consumer signals one once it no longer reads a frame's memory (passing the
 * fence of its own GPU work that still reads it, if any); the producer waits on the released point
 * before it writes the memory again. Every gate object over one gate (a frame's, a copy) is the
 * same gate.
 */
/* A new unsignalled gate (IO when no eventfd can be made). *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_release_gate_new(
	gpuhandle_release_gate **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Adds a reference. gate: nullable (then a no-op). Returns gate. */
GPUHANDLE_API gpuhandle_release_gate *
gpuhandle_release_gate_ref(gpuhandle_release_gate *gate) GPUHANDLE_NOEXCEPT;
/* Drops a reference. Nullable (then a no-op). */
GPUHANDLE_API void gpuhandle_release_gate_unref(gpuhandle_release_gate *gate) GPUHANDLE_NOEXCEPT;
/* Consumer: done reading once consumer_done signals. consumer_done: nullable (done now),
 * borrowed (the gate keeps its own reference). Only the first call counts; later ones return OK
 * and change nothing. gate: non-null; error: nullable. */
GPUHANDLE_API gpuhandle_status gpuhandle_release_gate_signal(
	const gpuhandle_release_gate *gate, const gpuhandle_sync_point *consumer_done,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* True once signal() was called (consumer_done may still be pending). NULL gives false. */
GPUHANDLE_API bool
gpuhandle_release_gate_is_signaled(const gpuhandle_release_gate *gate) GPUHANDLE_NOEXCEPT;
/* Producer: a CPU-kind point done once the gate was signalled and consumer_done is done.
 * gate: non-null; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_release_gate_get_released(const gpuhandle_release_gate *gate, gpuhandle_sync_point **out,
				    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/*
 * Frames and sync. Frames are immutable C objects (shared across threads without locks), so
 * there is no setter: gpuhandle_frame_with_sync makes a new frame, sharing the same resource
 * objects, that carries the given acquire point and release gate.
 */
/* frame: non-null, borrowed. acquire: nullable (NULL: nothing to wait for, a NOOP point);
 * release: nullable (NULL: no gate). Both borrowed: the new frame takes its own references, and
 * replaces (does not combine with) frame's own. *out: new reference or NULL; error: nullable. */
GPUHANDLE_API gpuhandle_status
gpuhandle_frame_with_sync(const gpuhandle_frame *frame, const gpuhandle_sync_point *acquire,
			  const gpuhandle_release_gate *release, gpuhandle_frame **out,
			  gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* The point to wait for before reading (a NOOP point when the frame has none). frame: non-null;
 * *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_frame_get_acquire(const gpuhandle_frame *frame, gpuhandle_sync_point **out,
			    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* The gate to signal when done reading. frame: non-null; *out: a new reference, or NULL when the
 * frame has no gate (then GPUHANDLE_OK: its producer never reuses the memory). */
GPUHANDLE_API gpuhandle_status
gpuhandle_frame_get_release(const gpuhandle_frame *frame, gpuhandle_release_gate **out,
			    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

#ifdef __cplusplus
}
#endif
