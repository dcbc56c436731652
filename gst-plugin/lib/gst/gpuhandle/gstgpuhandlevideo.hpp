// GstVideoInfo and caps <-> gpuhandle formats, layouts and colorimetry; DMA-BUF caps in both forms.
#pragma once

#include <gpuhandle/colorimetry.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/layout.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/result.h>

#include <cstdint>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/video/video.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// The gpuhandle format of a GstVideoFormat, through the core's tables. Errors: NotSupported
// naming the format (GST_VIDEO_FORMAT_UNKNOWN, ENCODED, DMA_DRM and formats without an entry).
GST_GPUHANDLE_API Result<PixelFormat> pixelFormatOf(GstVideoFormat format);
// The GstVideoFormat of a gpuhandle format. Errors: NotSupported naming the format.
GST_GPUHANDLE_API Result<GstVideoFormat> videoFormatOf(PixelFormat format);

// Colorimetry both ways (unknown GStreamer fields stay unset on our side and the reverse).
GST_GPUHANDLE_API Colorimetry colorimetryOf(const GstVideoInfo &info);
// Sets info.colorimetry's four fields; one without a GStreamer value becomes its UNKNOWN.
GST_GPUHANDLE_API void setColorimetry(GstVideoInfo &info, const Colorimetry &colorimetry);

// A GstVideoInfo for `frame` (format, size, colorimetry; offsets, strides and size from the
// frame's planes when they all lie in one range of one resource, else GStreamer's default
// layout). Errors: NotSupported (no GstVideoFormat), InvalidArgument (a size GStreamer cannot
// lay out).
GST_GPUHANDLE_API Result<GstVideoInfo> videoInfoOf(const Frame &frame);

// The plane layout of a buffer of `info`: its GstVideoMeta's offsets and strides when it has
// one (offsets counted across the buffer's memories), else `info`'s. Errors: InvalidArgument
// when the buffer is smaller than the layout needs (with the sizes; without a video meta the
// whole of info.size is needed, as gst_video_frame_map() wants) or a stride cannot hold a row,
// NotSupported (format), NullHandle (no buffer).
GST_GPUHANDLE_API Result<FrameLayout> bufferLayout(GstBuffer *buffer, const GstVideoInfo &info);

// DMA-BUF caps, both forms: GStreamer 1.22's plain `format=NV12` (modifier unknown: linear is
// assumed, as 1.22's elements do) and 1.24's `format=DMA_DRM, drm-format=NV12:0x...`
// (GstVideoInfoDmaDrm), the latter only when built against GStreamer >= 1.24.
struct DmaDrmInfo {
	GstVideoInfo info{};        // format set to the real format (never DMA_DRM)
	uint32_t drmFourcc = 0;     // DRM_FORMAT_* of the whole frame (the format tables)
	uint64_t modifier = 0;      // DRM_FORMAT_MOD_LINEAR when the caps do not say
	bool drmFormatCaps = false; // the caps were the DMA_DRM form
};
// Errors: InvalidArgument (not fixed video caps, an unparsable drm-format), NotSupported (a
// fourcc or format without a gpuhandle format, DMA_DRM caps on a build against 1.22).
GST_GPUHANDLE_API Result<DmaDrmInfo> dmaDrmInfoFromCaps(const GstCaps *caps);
// Caps for `info` with the memory:DMABuf feature: the DMA_DRM form when built against
// GStreamer >= 1.24 and `drmFormatCaps` is set, else the plain form. Transfer full; null when
// the info's format has no caps (or the DMA_DRM form is asked for an invalid modifier).
GST_GPUHANDLE_API GstCaps *dmaDrmInfoToCaps(const DmaDrmInfo &info);
// Whether this build writes and reads the DMA_DRM caps form (GStreamer >= 1.24 headers).
GST_GPUHANDLE_API bool hasDmaDrmCaps() noexcept;

} // namespace gst
} // namespace gpuhandle
