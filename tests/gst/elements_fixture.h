// Shared by the element tests: caps strings, a videotestsrc source of them, the appsink.
#pragma once

#include "pipeline_run.h"

#include <string>

namespace gpuhandle::test::elements {

inline std::string rawCaps(const char *format, Size size)
{
	return "video/x-raw,format=" + std::string(format) +
	       ",width=" + std::to_string(size.width) + ",height=" + std::to_string(size.height) +
	       ",framerate=30/1";
}

inline std::string source(const char *format, Size size, int buffers = 2)
{
	return "videotestsrc num-buffers=" + std::to_string(buffers) + " pattern=smpte ! " +
	       rawCaps(format, size);
}

inline constexpr const char *kSink = "appsink name=sink sync=false";

} // namespace gpuhandle::test::elements
