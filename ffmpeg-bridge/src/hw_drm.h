// Private to libgpuhandle-ffmpeg: an AVDRMFrameDescriptor as a Frame, for DRM_PRIME and VA-API.
#pragma once

#include "hw_frames.h"

extern "C" {
#include <libavutil/hwcontext_drm.h>
}

namespace gpuhandle::ffmpeg::detail {

// One DmaBuf resource over `descriptor`'s objects (fds dup'd, each holding `in.anchor` so that
// the producer cannot recycle the memory while the Frame lives), of in.format's DRM fourcc,
// whether the descriptor has one layer with every plane or one layer per plane.
// Errors: InvalidArgument (a malformed descriptor, named field and value), NotSupported (a
// format DRM has no fourcc for), FormatMismatch (a layer of another format), Backend (dup).
Result<Frame> frameFromDrmDescriptor(const HwImport &in, const AVDRMFrameDescriptor *descriptor);

} // namespace gpuhandle::ffmpeg::detail
