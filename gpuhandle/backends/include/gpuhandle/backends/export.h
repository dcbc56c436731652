// libgpuhandle-interop's export macro: what gpuhandle/backends/... headers declare is its API.
#pragma once

#include <gpuhandle/export.h>

// On the namespace blocks of this library's installed headers (see gpuhandle/export.h).
#define GPUHANDLE_INTEROP_API GPUHANDLE_EXPORT
