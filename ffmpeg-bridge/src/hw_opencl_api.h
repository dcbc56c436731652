// Private to libgpuhandle-ffmpeg: the few OpenCL calls it makes, resolved at run time from the
// ICD loader, so that the bridge does not need libOpenCL unless an OpenCL frame or device is used.
#pragma once

#include <gpuhandle/result.h>

#if GPUHANDLE_FFMPEG_HAVE_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

namespace gpuhandle::ffmpeg::detail {

struct OpenClApi {
	cl_int(CL_API_CALL *getMemObjectInfo)(cl_mem, cl_mem_info, size_t, void *,
					      size_t *) = nullptr;
	cl_int(CL_API_CALL *getDeviceInfo)(cl_device_id, cl_device_info, size_t, void *,
					   size_t *) = nullptr;
	cl_command_queue(CL_API_CALL *createCommandQueue)(cl_context, cl_device_id,
							  cl_command_queue_properties,
							  cl_int *) = nullptr;
	cl_int(CL_API_CALL *releaseCommandQueue)(cl_command_queue) = nullptr;
};

// The ICD loader's entry points (libOpenCL.so.1, loaded once, never unloaded); NotSupported
// with the reason when it is absent or lacks one of them.
Result<const OpenClApi *> openClApi();

} // namespace gpuhandle::ffmpeg::detail

#endif
