// GstGpuHandleSyncMeta from C++: attach a Frame's acquire point and release gate to a GstBuffer.
#pragma once

#include <gpuhandle/release_gate.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// Adds (or, when `buffer` already has one, replaces the state of) a sync meta holding `acquire`
// and `release` (none(): no gate). The buffer must be writable (null, with a GST_WARNING,
// otherwise). The gate is signalled when the meta's state is freed (the last buffer sharing it,
// or a replacement) unless the consumer signalled it before.
GST_GPUHANDLE_API GstGpuHandleSyncMeta *addSyncMeta(GstBuffer *buffer, SyncPoint acquire,
						    ReleaseGate release = ReleaseGate::none());

// The acquire point (a Noop point when the meta has none, or for a null meta).
GST_GPUHANDLE_API SyncPoint syncMetaAcquire(const GstGpuHandleSyncMeta *meta);
// The release gate (none() when the meta has none).
GST_GPUHANDLE_API ReleaseGate syncMetaRelease(const GstGpuHandleSyncMeta *meta);

// Waits for `buffer`'s acquire point: the sync meta's when it has one. Success when the buffer
// has none. Errors: Timeout, and the wait's own errors; NullHandle for no buffer.
GST_GPUHANDLE_API Status waitBufferAcquire(GstBuffer *buffer,
					   WaitDuration timeout = kDefaultWaitTimeout);

} // namespace gst
} // namespace gpuhandle
