// The GStreamer layout policy: strides and offsets as gst_video_info_set_format() fills them.
//
// GStreamer 1.22's fill_planes() (gst-libs/gst/video/video-info.c) has one case per format, but
// for progressive frames of every format gpuhandle shares with it they reduce to three rules:
//  1. A row is rounded up to 4 bytes, except v210's, which holds whole 48-pixel groups (128 bytes).
//  2. Planes follow each other in plane order; each spans its stride times the rows it counts.
//  3. The rows a plane counts come from the frame height rounded up to even when chroma is halved
//     vertically (4:2:0: luma and alpha count an even number of rows, chroma ceil(h / 2)) and,
//     a GStreamer quirk, for planar 4:2:2 with 16-bit samples (I422_10/12, A422_10: every plane
//     counts an even number of rows). 8-bit Y42B and 4:1:0 YUV9 count the plain height.
// layout.cpp turns these rules into each format's layout recipe;
// tests/formats/test_formats_gstreamer.cpp compares every shared format against GstVideoInfo.
// Formats GStreamer lacks get the same rules, which is what its newer cases for them do (A444_12,
// RGBA_F16, GRAY10_LE16 ...): rows rounded to 4 bytes, planes in order. Interlaced layouts (where
// GStreamer rounds 4:2:0 chroma rows to even again) are not modelled.
#include "layout_internal.h"

namespace gpuhandle::detail {

uint32_t gstreamerStrideAlignment(const PixelFormatInfo &info)
{
	return info.format == PixelFormat::V210 ? 128 : 4;
}

bool gstreamerCountsEvenHeight(const PixelFormatInfo &info)
{
	for (uint32_t i = 0; i < info.numPlanes; ++i) {
		if (info.planes[i].vsub == 2)
			return true;
	}
	const PlaneInfo &chroma = info.planes[1];
	return info.numPlanes >= 3 && chroma.hsub == 2 && chroma.vsub == 1 &&
	       bytesPerTexel(info.planes[0].format) == 2;
}

} // namespace gpuhandle::detail
