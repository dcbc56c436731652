// The C++ values behind C API handles (c_bridge.h).
#include <gpuhandle/c_bridge.h>

#include "c_internal.h"
#include "c_sync_internal.h"

namespace gpuhandle {

const SyncPoint *syncPointOf(const gpuhandle_sync_point *point) noexcept
{
	return point ? &point->value : nullptr;
}

const Frame *frameOf(const gpuhandle_frame *frame) noexcept
{
	return frame ? &frame->value : nullptr;
}

} // namespace gpuhandle
