// The GStreamer layout policy: strides and offsets as gst_video_info_set_format() fills them.
#include "layout_internal.h"

namespace gpuhandle::detail {

// First approximation, refined against GstVideoInfo by tests/formats: rows rounded to 4 bytes,
// and 4:2:0 luma heights rounded to even so that chroma rows line up.
std::optional<Error> gstreamerLayout(const PixelFormatInfo &info, FrameLayout &layout)
{
	for (uint32_t i = 0; i < info.numPlanes; ++i) {
		const PlaneInfo &p = info.planes[i];
		PlaneLayout &plane = layout.planes[i];
		plane.width = static_cast<uint32_t>((uint64_t(layout.width) + p.hsub - 1) / p.hsub);
		plane.height = p.rows(layout.height);
		plane.stride = static_cast<uint32_t>(roundUp(p.rowBytes(layout.width), 4));
	}
	return packPlanes(layout);
}

} // namespace gpuhandle::detail
