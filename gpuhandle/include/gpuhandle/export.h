/* Export macros: the one place that says what a gpuhandle library makes visible to its users. */
#pragma once

/*
 * Every gpuhandle library is built with hidden symbol visibility (-fvisibility=hidden): what its
 * sources define is private to it unless an installed header declares it inside an exported
 * block. Each library has its own macro (as GStreamer's GST_*_API and libplacebo's PL_API), put
 * on the namespace blocks of its installed C++ headers and on each function of its C headers:
 *   GPUHANDLE_API           libgpuhandle           (gpuhandle/...)
 *   GPUHANDLE_INTEROP_API   libgpuhandle-interop   (gpuhandle/backends/...)
 *   GPUHANDLE_GLIB_API      libgpuhandle-glib      (gpuhandle/glib_sync_source.h)
 *   GPUHANDLE_FFMPEG_API    libgpuhandle-ffmpeg    (gpuhandle/ffmpeg/...)
 *   GST_GPUHANDLE_API       libgstgpuhandle-1.0    (gst/gpuhandle/...)
 * On ELF the same attribute serves the library and its users: a class's type information and
 * vtable must be visible on both sides for RTTI, dynamic_cast and std::function
 * targets to agree across libraries. GPUHANDLE_LOCAL keeps an implementation type that a public
 * header must name (a pimpl, a forward-declared listener) out of the exported set.
 */
#if defined(__cplusplus) && (defined(__GNUC__) || defined(__clang__))
/* The standard attribute form, which GCC and Clang both take before a namespace's name
 * (`namespace GPUHANDLE_API gpuhandle {`), as well as on classes and declarations. */
#define GPUHANDLE_EXPORT [[gnu::visibility("default")]]
#define GPUHANDLE_LOCAL [[gnu::visibility("hidden")]]
#elif defined(__GNUC__) || defined(__clang__)
#define GPUHANDLE_EXPORT __attribute__((visibility("default")))
#define GPUHANDLE_LOCAL __attribute__((visibility("hidden")))
#else
#define GPUHANDLE_EXPORT
#define GPUHANDLE_LOCAL
#endif

#define GPUHANDLE_API GPUHANDLE_EXPORT
