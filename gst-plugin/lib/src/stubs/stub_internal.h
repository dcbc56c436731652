// What the per-API stubs of libgstgpuhandle-1.0 share: the error a call of an API the library was
// built without answers. The stubs keep the library's exported symbols the same whichever
// GStreamer libraries were found, as the backends' stubs keep libgpuhandle-interop's.
#pragma once

#include <gpuhandle/error.h>

namespace gpuhandle::gst::detail {

// NotSupported naming `function` and the development package the build did not find.
inline Error notBuilt(const char *function, const char *library)
{
	return Error::format(ErrorCode::NotSupported, "",
			     "%s: libgstgpuhandle-1.0 was built without %s (its development files "
			     "were not found when it was configured).",
			     function, library);
}

} // namespace gpuhandle::gst::detail
