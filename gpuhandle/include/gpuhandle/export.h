/* Export macros: the one place that says what a gpuhandle library makes visible to its users. */
#pragma once

/*
 * Every gpuhandle library is built with hidden symbol visibility (-fvisibility=hidden): what its
 * sources define is private to it unless an installed header exports it. Each library has its own
 * macro (as GStreamer's GST_*_API and libplacebo's PL_API), put on the namespace blocks of its
 * installed C++ headers (for the classes declared there) and on each function and variable
 * declared outside a class, C or C++:
 *   GPUHANDLE_API           libgpuhandle           (gpuhandle/...)
 *   GPUHANDLE_INTEROP_API   libgpuhandle-interop   (gpuhandle/backends/...)
 *   GPUHANDLE_GLIB_API      libgpuhandle-glib      (gpuhandle/glib_sync_source.h)
 *   GPUHANDLE_FFMPEG_API    libgpuhandle-ffmpeg    (gpuhandle/ffmpeg/...)
 *   GST_GPUHANDLE_API       libgstgpuhandle-1.0    (gst/gpuhandle/...)
 * On ELF the same attribute serves the library and its users: a class's type information and
 * vtable must be visible on both sides for RTTI, dynamic_cast and std::function
 * targets to agree across libraries. Free functions need the macro of their own: GCC gives a
 * function the visibility of the namespace block it was first declared in (the header's), but
 * Clang that of the block it is defined in (the source's plain `namespace gpuhandle {`), so
 * without it a Clang build exports no free function (the fuzz build links with Clang). A class's
 * members follow the class under both. GPUHANDLE_LOCAL keeps an implementation type that a public
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
#define GPUHANDLE_EXPORT /* default visibility: exported; empty without GCC or Clang */
#define GPUHANDLE_LOCAL  /* hidden visibility: never exported; empty without GCC or Clang */
#endif

/* libgpuhandle's macro, on its installed headers' namespace blocks and free declarations. */
#define GPUHANDLE_API GPUHANDLE_EXPORT
