/* libgstgpuhandle-1.0's export macro (as GStreamer's gl-prelude.h): its installed API. */
#pragma once

#include <gpuhandle/export.h>

/* On each C function and on the namespace blocks of this library's installed headers (see
 * gpuhandle/export.h); like GST_GL_API, it is what a user's build and the library's agree on. */
#define GST_GPUHANDLE_API GPUHANDLE_EXPORT
