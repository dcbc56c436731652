/* C API: status codes, the refcounted error object, and the enums shared by the C headers. */
#pragma once

#include <gpuhandle/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define GPUHANDLE_NOEXCEPT noexcept
extern "C" {
#else
#define GPUHANDLE_NOEXCEPT
#endif

/*
 * Conventions of every gpuhandle_* call (VMA style):
 * - Fallible calls return a gpuhandle_status; GPUHANDLE_OK (0) is success.
 * - Outputs are set to NULL (or zeroed) on entry, so they are NULL after any failure.
 * - `gpuhandle_error **error` is nullable; when non-null, *error receives a new reference on
 *   failure (release it with gpuhandle_error_unref) and NULL on success. *error is overwritten,
 *   never released: pass the address of a NULL pointer.
 * - A NULL object or required pointer argument gives GPUHANDLE_ERROR_NULL_HANDLE; nothing crashes.
 * - No call throws or aborts; an allocation failure gives GPUHANDLE_ERROR_OUT_OF_MEMORY.
 * - Objects are immutable once made: every object may be read, ref'd and unref'd from any thread.
 */

/* Result of a call; the numbers are stable and equal gpuhandle::ErrorCode's. */
typedef enum gpuhandle_status {
	GPUHANDLE_OK = 0,                     /* success */
	GPUHANDLE_ERROR_INVALID_ARGUMENT = 1, /* a value is out of its allowed set */
	GPUHANDLE_ERROR_NULL_HANDLE = 2,      /* a required handle or pointer is NULL / zero */
	GPUHANDLE_ERROR_ZERO_SIZE = 3,        /* a required size, extent or count is zero */
	GPUHANDLE_ERROR_OUT_OF_RANGE = 4, /* an index, offset or count lies outside its container */
	GPUHANDLE_ERROR_BAD_FD = 5,       /* a file descriptor is negative or not open */
	GPUHANDLE_ERROR_WRONG_KIND = 6,   /* an accessor was used on a value of another kind */
	GPUHANDLE_ERROR_NOT_SUPPORTED = 7,     /* the operation or format is not available here */
	GPUHANDLE_ERROR_INVALID_STATE = 8,     /* a call in the wrong lifecycle position */
	GPUHANDLE_ERROR_OUT_OF_MEMORY = 9,     /* a budget or allocation could not be satisfied */
	GPUHANDLE_ERROR_TIMEOUT = 10,          /* a bounded wait ran out */
	GPUHANDLE_ERROR_WOULD_BLOCK = 11,      /* a non-blocking call could not finish now */
	GPUHANDLE_ERROR_CANCELLED = 12,        /* the operation was cancelled; not a failure */
	GPUHANDLE_ERROR_DEVICE_LOST = 13,      /* the device went away; the pipeline must restart */
	GPUHANDLE_ERROR_DEVICE_MISMATCH = 14,  /* two values name different physical devices */
	GPUHANDLE_ERROR_FORMAT_MISMATCH = 15,  /* formats or layouts of two sides disagree */
	GPUHANDLE_ERROR_IO = 16,               /* a system call failed (errno in the message) */
	GPUHANDLE_ERROR_BACKEND = 17,          /* a backend library reported an error */
	GPUHANDLE_ERROR_FATAL = 18,            /* an internal invariant broke */
	GPUHANDLE_STATUS_MAX_ENUM = 0x7fffffff /* not a value: makes any int32 >= 0 representable */
} gpuhandle_status;

/* What a caller should do about an error; numbers equal gpuhandle::ErrorKind's. */
typedef enum gpuhandle_error_kind {
	GPUHANDLE_ERROR_KIND_CANCELLED = 0,     /* not a failure: no retry, no error log */
	GPUHANDLE_ERROR_KIND_RECOVERABLE = 1,   /* transient: retry or skip this frame */
	GPUHANDLE_ERROR_KIND_CONFIGURATION = 2, /* the same input fails the same way: reconfigure */
	GPUHANDLE_ERROR_KIND_FATAL = 3,         /* abort the pipeline */
	GPUHANDLE_ERROR_KIND_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_error_kind;

/* The GPU or host API that owns a resource or context; numbers equal gpuhandle::BackendKind's. */
typedef enum gpuhandle_backend_kind {
	GPUHANDLE_BACKEND_CPU = 0,
	GPUHANDLE_BACKEND_VULKAN = 1,
	GPUHANDLE_BACKEND_OPENGL = 2,
	GPUHANDLE_BACKEND_CUDA = 3,
	GPUHANDLE_BACKEND_OPENCL = 4,
	GPUHANDLE_BACKEND_VAAPI = 5,
	GPUHANDLE_BACKEND_FD = 6,
	GPUHANDLE_BACKEND_D3D11 = 7,
	GPUHANDLE_BACKEND_D3D12 = 8,
	GPUHANDLE_BACKEND_METAL = 9,
	GPUHANDLE_BACKEND_WEBGPU = 10,
	GPUHANDLE_BACKEND_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_backend_kind;

/* The handle type a resource holds; numbers equal gpuhandle::ResourceKind's (new ones appended). */
typedef enum gpuhandle_resource_kind {
	GPUHANDLE_RESOURCE_KIND_NONE = 0,
	GPUHANDLE_RESOURCE_KIND_VULKAN_IMAGE = 1,
	GPUHANDLE_RESOURCE_KIND_VULKAN_BUFFER = 2,
	GPUHANDLE_RESOURCE_KIND_VULKAN_MEMORY_FD = 3,
	GPUHANDLE_RESOURCE_KIND_GL_TEXTURE = 4,
	GPUHANDLE_RESOURCE_KIND_GL_BUFFER = 5,
	GPUHANDLE_RESOURCE_KIND_CUDA_PITCHED_2D = 6,
	GPUHANDLE_RESOURCE_KIND_CUDA_BUFFER = 7,
	GPUHANDLE_RESOURCE_KIND_CUDA_SURFACE = 8,
	GPUHANDLE_RESOURCE_KIND_OPENCL_MEM = 9,
	GPUHANDLE_RESOURCE_KIND_DMABUF = 10,
	GPUHANDLE_RESOURCE_KIND_SHM_FD = 11,
	GPUHANDLE_RESOURCE_KIND_VA_SURFACE = 12,
	GPUHANDLE_RESOURCE_KIND_D3D11_TEXTURE = 13,
	GPUHANDLE_RESOURCE_KIND_D3D12_RESOURCE = 14,
	GPUHANDLE_RESOURCE_KIND_D3D12_BUFFER = 15,
	GPUHANDLE_RESOURCE_KIND_METAL_TEXTURE = 16,
	GPUHANDLE_RESOURCE_KIND_METAL_BUFFER = 17,
	GPUHANDLE_RESOURCE_KIND_WEBGPU_TEXTURE = 18,
	GPUHANDLE_RESOURCE_KIND_CPU_BYTES = 19,
	GPUHANDLE_RESOURCE_KIND_CPU_PLANES = 20,
	GPUHANDLE_RESOURCE_KIND_CPU_SHARED_SLOT = 21,
	GPUHANDLE_RESOURCE_KIND_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_resource_kind;

/* How a frame moved; numbers equal gpuhandle::ExecutionPath::Kind's. */
typedef enum gpuhandle_execution_path_kind {
	GPUHANDLE_EXECUTION_PATH_NOT_RUN = 0,   /* nothing moved yet */
	GPUHANDLE_EXECUTION_PATH_ZERO_COPY = 1, /* the consumer aliases the producer's memory */
	GPUHANDLE_EXECUTION_PATH_GPU_COPY = 2,  /* a copy on the device */
	GPUHANDLE_EXECUTION_PATH_CPU_COPY = 3,  /* bytes went through system memory */
	GPUHANDLE_EXECUTION_PATH_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_execution_path_kind;

/* An error value: code, field at fault, sentence. Opaque, refcounted, immutable, thread-safe. */
typedef struct gpuhandle_error gpuhandle_error;

/* "ok", "invalid-argument", ...; "unknown" outside the enum. Static string, never NULL. */
GPUHANDLE_API const char *gpuhandle_status_name(gpuhandle_status status) GPUHANDLE_NOEXCEPT;
/* "cancelled", "recoverable", "configuration", "fatal"; "unknown" otherwise. Static, never NULL. */
GPUHANDLE_API const char *gpuhandle_error_kind_name(gpuhandle_error_kind kind) GPUHANDLE_NOEXCEPT;
/* "cpu", "vulkan", ...; "unknown" outside the enum. Static string, never NULL. */
GPUHANDLE_API const char *
gpuhandle_backend_kind_name(gpuhandle_backend_kind kind) GPUHANDLE_NOEXCEPT;
/* "dmabuf", "vulkan-image", ...; "unknown" outside the enum. Static string, never NULL. */
GPUHANDLE_API const char *
gpuhandle_resource_kind_name(gpuhandle_resource_kind kind) GPUHANDLE_NOEXCEPT;
/* The API a resource kind belongs to (DMABUF, SHM_FD: FD; NONE and CPU_*: CPU). */
GPUHANDLE_API gpuhandle_backend_kind gpuhandle_resource_kind_backend(gpuhandle_resource_kind kind)
	GPUHANDLE_NOEXCEPT;
/* "not-run", "zero-copy", "gpu-copy", "cpu-copy"; "unknown" otherwise. Static, never NULL. */
GPUHANDLE_API const char *
gpuhandle_execution_path_kind_name(gpuhandle_execution_path_kind kind) GPUHANDLE_NOEXCEPT;

/* Adds a reference. error: nullable (then a no-op). Returns error. */
GPUHANDLE_API gpuhandle_error *gpuhandle_error_ref(gpuhandle_error *error) GPUHANDLE_NOEXCEPT;
/* Drops a reference; the last one frees it. error: nullable (then a no-op). */
GPUHANDLE_API void gpuhandle_error_unref(gpuhandle_error *error) GPUHANDLE_NOEXCEPT;
/* The failure's status (never GPUHANDLE_OK). error: nullable; NULL gives GPUHANDLE_OK. */
GPUHANDLE_API gpuhandle_status gpuhandle_error_get_code(const gpuhandle_error *error)
	GPUHANDLE_NOEXCEPT;
/* What to do about it. error: nullable; NULL gives GPUHANDLE_ERROR_KIND_FATAL. */
GPUHANDLE_API gpuhandle_error_kind gpuhandle_error_get_kind(const gpuhandle_error *error)
	GPUHANDLE_NOEXCEPT;
/* The offending desc field ("planes[1].pitch") or ""; borrowed, lives with error; "" for NULL. */
GPUHANDLE_API const char *
gpuhandle_error_get_field(const gpuhandle_error *error) GPUHANDLE_NOEXCEPT;
/* A whole sentence with the values in it; borrowed, lives with error; "" for NULL. */
GPUHANDLE_API const char *
gpuhandle_error_get_message(const gpuhandle_error *error) GPUHANDLE_NOEXCEPT;

#ifdef __cplusplus
}
#endif
