/* GstGpuHandleMemory: a GstMemory carrying one gpuhandle resource (caps feature memory:GpuHandle).
 */
#pragma once

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GST_CAPS_FEATURE_MEMORY_GPU_HANDLE:
 *
 * The caps feature of buffers whose memories are #GstGpuHandleMemory: one memory per gpuhandle
 * resource of a frame, the plane layout in the buffer's #GstVideoMeta.
 *
 * Since: 0.1
 */
#define GST_CAPS_FEATURE_MEMORY_GPU_HANDLE "memory:GpuHandle"

/**
 * GST_GPU_HANDLE_MEMORY_TYPE:
 *
 * The memory type (and allocator name) of #GstGpuHandleMemory.
 *
 * Since: 0.1
 */
#define GST_GPU_HANDLE_MEMORY_TYPE "GpuHandleMemory"

/**
 * GstGpuHandleAllocator:
 *
 * The #GstAllocator of #GstGpuHandleMemory: an opaque type, got with
 * gst_gpu_handle_allocator_get(). It allocates nothing itself; memories wrap gpuhandle frames.
 *
 * Since: 0.1
 */

/**
 * GST_TYPE_GPU_HANDLE_ALLOCATOR:
 *
 * The #GType of #GstGpuHandleAllocator.
 *
 * Since: 0.1
 */
#define GST_TYPE_GPU_HANDLE_ALLOCATOR (gst_gpu_handle_allocator_get_type())

/**
 * gst_gpu_handle_allocator_get_type:
 *
 * Returns: the #GType of the allocator of #GstGpuHandleMemory.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API GType gst_gpu_handle_allocator_get_type(void);

/**
 * gst_gpu_handle_init:
 *
 * Registers the allocator (under #GST_GPU_HANDLE_MEMORY_TYPE) and the debug category
 * "gpuhandle". Safe to call many times and from any thread, after gst_init(); the other calls
 * make it themselves.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API void gst_gpu_handle_init(void);

/**
 * gst_gpu_handle_allocator_get:
 *
 * Gets the allocator of gpuhandle memories, registering it first when needed.
 *
 * Returns: (transfer full): the allocator of #GstGpuHandleMemory. It allocates nothing itself
 * (gst_allocator_alloc() returns %NULL): memories are made by wrapping gpuhandle frames.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API GstAllocator *gst_gpu_handle_allocator_get(void);

/**
 * gst_is_gpu_handle_memory:
 * @mem: a #GstMemory
 *
 * Tells gpuhandle memories from others.
 *
 * Returns: whether @mem is a #GstGpuHandleMemory.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API gboolean gst_is_gpu_handle_memory(GstMemory *mem);

/**
 * gst_gpu_handle_memory_get_resource_kind:
 * @mem: a #GstGpuHandleMemory
 *
 * Says which kind of resource (CPU planes, memfd, DMA-BUF, GL texture...) @mem holds.
 *
 * Returns: the gpuhandle resource kind @mem carries (the stable numbers of gpuhandle_resource_kind
 * in gpuhandle_resource.h), or 0 when @mem is not a #GstGpuHandleMemory.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API guint gst_gpu_handle_memory_get_resource_kind(GstMemory *mem);

/**
 * gst_gpu_handle_memory_get_backend:
 * @mem: a #GstGpuHandleMemory
 *
 * Says which API's device holds @mem's resource.
 *
 * Returns: the gpuhandle backend kind (stable numbers of gpuhandle_backend_kind) of the device
 * that holds @mem's resource, or -1 when @mem is not a #GstGpuHandleMemory.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API gint gst_gpu_handle_memory_get_backend(GstMemory *mem);

G_END_DECLS
