// OpenCL import of host memory: CPU bytes used in place as a cl_mem buffer (CL_MEM_USE_HOST_PTR).
#pragma once

#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/backends/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/resource.h>
#include <gpuhandle/result.h>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// Makes `bytes` a buffer of `clContext` (a cl_context) with clCreateBuffer(CL_MEM_USE_HOST_PTR),
// recorded with `clQueue` (a cl_command_queue of that context) in an OpenClMem of the same size.
// `access` is what kernels may do with it: Read, Write or ReadWrite (CL_MEM_READ_ONLY,
// CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE). The spec lets the implementation cache the bytes in
// device memory: the buffer starts with the bytes there at import, and afterwards the host may
// touch them only while the buffer is mapped (clEnqueueMapBuffer/clEnqueueUnmapMemObject);
// otherwise what either side sees is undefined. PoCL's CPU device uses the
// host memory itself as the storage.
// The OpenClMem's anchor holds the cl_mem (released with clReleaseMemObject, once, by the last
// copy), then the bytes' anchor and `owner`, so the host memory outlives the buffer.
// Errors: NullHandle (clContext, clQueue), InvalidArgument (access; a queue of another context),
// Backend (clQueue is not a queue, clCreateBuffer failed: with the code), NotSupported (a build
// without OpenCL).
GPUHANDLE_INTEROP_API Result<Resource> importHostMemoryIntoOpenCl(const CpuBytes &bytes,
								  void *clContext, void *clQueue,
								  MapAccess access,
								  KeepAliveRef owner = {});

} // namespace gpuhandle
