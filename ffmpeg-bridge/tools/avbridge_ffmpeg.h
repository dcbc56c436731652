// gpuhandle-avbridge's FFmpeg log, and the shared FFmpeg helpers by their short names.
#pragma once

#include <gpuhandle/result.h>

#include "av_util.h"

#include <string>

namespace gpuhandle::avbridge {

// The shared helpers (ffmpeg-bridge/av/), by their short names here.
using av::AvBufferOwner;
using av::avError;
using av::avErrorText;
using av::createHwDevice;

// FFmpeg's log: errors (info with `verbose`) printed; problems reading the input recorded.
void installLog(bool verbose);
// Starts recording what the demuxer `demuxer` (an AVFormatContext) reports as damage.
void watchDemuxer(const void *demuxer);
// The first damage the watched demuxer reported (a truncated file, invalid data), or empty.
std::string demuxerDamage();

} // namespace gpuhandle::avbridge
