// Test fixture: an OpenCL (PoCL) context on the first platform with a device, and user events.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif

#include <algorithm>
#include <string>

#include <CL/cl.h>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test {

// A context on the first platform that has a device, whose id goes to `device` (when not null);
// null with `why` set when there is none. Open it per test: Check forks each test, and the
// driver's threads do not survive a fork.
inline cl_context openClContext(std::string &why, cl_device_id *device = nullptr)
{
	cl_uint platforms = 0;
	cl_platform_id platform[8];
	if (clGetPlatformIDs(8, platform, &platforms) != CL_SUCCESS || platforms == 0) {
		why = "no OpenCL platform (install pocl-opencl-icd)";
		return nullptr;
	}
	cl_device_id found = nullptr;
	for (cl_uint i = 0; i < std::min<cl_uint>(platforms, 8); ++i) {
		cl_uint devices = 0;
		if (clGetDeviceIDs(platform[i], CL_DEVICE_TYPE_ALL, 1, &found, &devices) !=
			    CL_SUCCESS ||
		    devices == 0)
			continue;
		cl_int error = CL_SUCCESS;
		cl_context context = clCreateContext(nullptr, 1, &found, nullptr, nullptr, &error);
		if (context) {
			// An earlier platform may have failed: callers read `why` only on failure,
			// but clear it all the same.
			why.clear();
			if (device)
				*device = found;
			return context;
		}
		why = "clCreateContext failed with " + std::to_string(error);
	}
	if (why.empty())
		why = "no OpenCL platform has a device";
	return nullptr;
}

// A new user event (its status is set by the test), or the test fails.
inline cl_event makeUserEvent(cl_context context)
{
	cl_int error = CL_SUCCESS;
	cl_event event = clCreateUserEvent(context, &error);
	ck_assert_int_eq(error, CL_SUCCESS);
	return event;
}

} // namespace gpuhandle::test
