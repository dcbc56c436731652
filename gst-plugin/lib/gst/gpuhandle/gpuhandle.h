/* libgstgpuhandle-1.0: its C API in one include (C++ users add the .hpp headers they need). */
#pragma once

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.h>
