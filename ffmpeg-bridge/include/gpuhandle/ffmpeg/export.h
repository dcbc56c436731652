// libgpuhandle-ffmpeg's export macro: what gpuhandle/ffmpeg/... headers declare is its API.
#pragma once

#include <gpuhandle/export.h>

// On the namespace blocks of this library's installed headers (see gpuhandle/export.h).
#define GPUHANDLE_FFMPEG_API GPUHANDLE_EXPORT
