/* The gpuhandle C API (C99): opaque refcounted errors, resources, frames and contexts. */
#pragma once

/*
 * gpuhandle's typed, validated GPU handles for C programs (GStreamer elements, FFmpeg tools),
 * implemented over the C++ API with the same rules:
 * - gpuhandle_error.h: gpuhandle_status (the numbers of gpuhandle::ErrorCode), the error object
 *   (code, kind, field, message), and the backend, resource-kind and execution-path enums.
 * - gpuhandle_resource.h: gpuhandle_resource, one validated native handle per desc struct;
 *   constructors take ownership of the fds they are given, anchors keep borrowed handles alive.
 * - gpuhandle_frame.h: gpuhandle_frame, plane views over 1..4 resources it holds references to.
 * - gpuhandle_context.h: gpuhandle_context, the host's own GPU context, and device identity.
 * - gpuhandle_sync.h: gpuhandle_sync_point (fences of every API), CPU fences, release gates,
 *   bounded and asynchronous waits, and frames that carry an acquire point and a release gate.
 * - gpuhandle_transport.h: frames with their fences between processes over a Unix socket.
 * Calling conventions (outputs, errors, NULL, threads) are listed in gpuhandle_error.h.
 */

#include <gpuhandle/gpuhandle_context.h>
#include <gpuhandle/gpuhandle_error.h>
#include <gpuhandle/gpuhandle_frame.h>
#include <gpuhandle/gpuhandle_resource.h>
#include <gpuhandle/gpuhandle_sync.h>
#include <gpuhandle/gpuhandle_transport.h>
