// C++ access to the values behind C API handles, for libraries that offer both (libgpuhandle-glib).
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/gpuhandle.h>
#include <gpuhandle/sync_point.h>

namespace GPUHANDLE_API gpuhandle {

// The SyncPoint a C handle holds; null for a null handle. Borrowed: valid while the handle is.
GPUHANDLE_API const SyncPoint *syncPointOf(const gpuhandle_sync_point *point) noexcept;
// The Frame a C handle holds; null for a null handle. Borrowed: valid while the handle is.
GPUHANDLE_API const Frame *frameOf(const gpuhandle_frame *frame) noexcept;

} // namespace gpuhandle
