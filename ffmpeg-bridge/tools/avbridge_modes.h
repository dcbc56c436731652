// gpuhandle-avbridge's two directions, each run to the end of its stream.
#pragma once

#include <gpuhandle/result.h>

#include "avbridge_args.h"
#include "avbridge_report.h"

namespace gpuhandle::avbridge {

// FFmpeg decode (and filter) into `appsrc ! PIPELINE` as memory:GpuHandle buffers.
Status runToGst(const Options &options, Report &report);
// `PIPELINE ! appsink` into FFmpeg's filter graph, encoder and muxer.
Status runFromGst(const Options &options, Report &report);

} // namespace gpuhandle::avbridge
