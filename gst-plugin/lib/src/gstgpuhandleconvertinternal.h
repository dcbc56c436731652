// What the two halves of the buffer conversions share (not installed).
#pragma once

#include <gst/gst.h>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_convert_debug);

namespace gpuhandle::gst::detail {

// Registers the debug category and makes the fd allocators, once (after gst_init()).
void initConvert();
// The process's GstDmaBufAllocator (dmaBuf) or GstFdAllocator, made by initConvert().
GstAllocator *fdAllocator(bool dmaBuf);

} // namespace gpuhandle::gst::detail
