/* libgstgpuhandle-1.0: everything in one include. */
#pragma once

#include <gst/gpuhandle/gstgpuhandlememory.h>
