// GStreamer's layout rule for a peer without GstVideoMeta: the caps' default layout and size.
#pragma once

#include <gpuhandle/result.h>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// Whether `buffer`'s planes lie where GStreamer's default layout for `info` puts them (the video
// meta's offsets and strides, when it has one, equal `info`'s) and it holds at least
// GST_VIDEO_INFO_SIZE(info) bytes: a peer that ignores GstVideoMeta reads it right once it is
// trimmed to that size. False for a null buffer or a format that does not match.
GST_GPUHANDLE_API bool hasDefaultLayout(GstBuffer *buffer, const GstVideoInfo &info);

// What a peer that did not put GstVideoMeta in its allocation query must receive (the rule of
// gst_video_frame_map() and of every raw consumer: filesink, appsink readers, encoders): exactly
// GST_VIDEO_INFO_SIZE(info) bytes in GStreamer's default layout for `info`, and no GstVideoMeta.
// `buffer` (transfer full) is fixed in place when hasDefaultLayout() (trimmed, its video meta
// removed; a shared buffer is first copied shallowly, so no pixel moves); otherwise its frame is
// copied into a new buffer, which takes its
// timestamps, flags and metas (but the video meta). Returns the buffer to push (transfer full).
// On error `buffer` is released. Errors: InvalidArgument (a buffer too small for its layout, or
// that does not map), Io (no output buffer).
GST_GPUHANDLE_API Result<GstBuffer *> toDefaultLayout(GstBuffer *buffer, const GstVideoInfo &info);

} // namespace gst
} // namespace gpuhandle
