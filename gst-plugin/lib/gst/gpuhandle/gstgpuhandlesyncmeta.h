/* GstGpuHandleSyncMeta: a gpuhandle sync point (acquire) and release gate on a GstBuffer. */
#pragma once

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstGpuHandleSyncMeta:
 * @meta: the parent #GstMeta
 * @priv: (skip): the sync point and release gate; use the functions below
 *
 * Explicit synchronisation for any buffer (not only #GstGpuHandleMemory ones): an *acquire*
 * point the consumer waits for before reading the buffer's memories, and an optional *release*
 * gate signalled when the last buffer holding the meta is gone (or when the consumer calls
 * gst_gpu_handle_sync_meta_release()), so that a pooled producer knows when it may reuse the
 * memory. GStreamer's only fence meta, #GstGLSyncMeta, holds GL fences only; this one holds any
 * gpuhandle sync point (fence fds, Vulkan semaphores, GLsync, CUDA events, CPU fences).
 *
 * On a buffer copy the copy shares the meta's state: both wait on the same point, and the
 * release gate is signalled once the last of them is freed.
 *
 * Since: 0.1
 */
typedef struct _GstGpuHandleSyncMeta {
	GstMeta meta;
	gpointer priv;
} GstGpuHandleSyncMeta;

/**
 * GST_GPU_HANDLE_SYNC_META_API_TYPE:
 *
 * The #GType of the #GstGpuHandleSyncMeta API.
 *
 * Since: 0.1
 */
#define GST_GPU_HANDLE_SYNC_META_API_TYPE (gst_gpu_handle_sync_meta_api_get_type())

/**
 * gst_gpu_handle_sync_meta_api_get_type:
 *
 * Gets the API type of the sync meta, registering it first when needed.
 *
 * Returns: the #GType of the meta's API (tags: none: it stays valid through any transform).
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API GType gst_gpu_handle_sync_meta_api_get_type(void);

/**
 * gst_gpu_handle_sync_meta_get_info:
 *
 * Gets the meta's implementation, registering it first when needed.
 *
 * Returns: the #GstMetaInfo of #GstGpuHandleSyncMeta.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API const GstMetaInfo *gst_gpu_handle_sync_meta_get_info(void);

/**
 * gst_buffer_get_gpu_handle_sync_meta:
 * @buffer: a #GstBuffer
 *
 * Finds the sync meta (the frame's acquire point and release gate) on @buffer.
 *
 * Returns: (transfer none) (nullable): the #GstGpuHandleSyncMeta of @buffer, or %NULL.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API GstGpuHandleSyncMeta *gst_buffer_get_gpu_handle_sync_meta(GstBuffer *buffer);

/**
 * gst_gpu_handle_sync_meta_wait:
 * @meta: a #GstGpuHandleSyncMeta
 * @timeout: the longest wait, in nanoseconds; %GST_CLOCK_TIME_NONE waits up to gpuhandle's
 *   default timeout (10 s), never forever
 * @error: (out) (optional): where the reason goes when the wait fails
 *
 * Waits on the CPU for the meta's acquire point. A meta without one returns at once.
 *
 * Returns: %TRUE once the point signalled; %FALSE on a timeout or a failed wait, with @error
 *   set (domain GST_RESOURCE_ERROR; GST_RESOURCE_ERROR_BUSY for a timeout).
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API gboolean gst_gpu_handle_sync_meta_wait(GstGpuHandleSyncMeta *meta,
							 GstClockTime timeout, GError **error);

/**
 * gst_gpu_handle_sync_meta_is_signaled:
 * @meta: a #GstGpuHandleSyncMeta
 *
 * Polls the meta's acquire point.
 *
 * Returns: whether the acquire point has signalled (a poll: never blocks).
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API gboolean gst_gpu_handle_sync_meta_is_signaled(GstGpuHandleSyncMeta *meta);

/**
 * gst_gpu_handle_sync_meta_release:
 * @meta: a #GstGpuHandleSyncMeta
 *
 * Signals the release gate now (the consumer is done with the memory); later calls and the
 * signal on free do nothing more. A meta without a gate ignores the call.
 *
 * Since: 0.1
 */
GST_GPUHANDLE_API void gst_gpu_handle_sync_meta_release(GstGpuHandleSyncMeta *meta);

G_END_DECLS
