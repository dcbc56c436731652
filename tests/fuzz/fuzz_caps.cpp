// Fuzz harness: caps strings to a Frame, the way gpuhandle's elements read caps: parsed, turned
// into GstVideoInfo and DMA-BUF info, a gpuhandle format, colorimetry and layout, a frame over
// CPU memory of that layout, and back to GstVideoInfo.
#include <gpuhandle/frame.h>
#include <gpuhandle/layout.h>

#include <algorithm>
#include <string>

#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

using namespace gpuhandle;

namespace {

uint8_t g_bytes[1 << 20]; // frames up to 1 MiB get memory; larger ones stop at the layout

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	// GStreamer's caps parser logs (and asserts, as criticals) about malformed strings, which
	// is what a fuzzer feeds it: those messages are its own and expected here, so they go
	// nowhere.
	static const bool initialised = [] {
		g_log_set_default_handler(
			[](const gchar *, GLogLevelFlags, const gchar *, gpointer) {}, nullptr);
		gst_init(nullptr, nullptr);
		return true;
	}();
	(void)initialised;
	const std::string text(reinterpret_cast<const char *>(data), std::min<size_t>(size, 4096));
	// Deeply nested ranges ("<<<<...") only exercise GStreamer's own recursive parser, which
	// leaks on them (tests/lsan.supp) deeper than LeakSanitizer can attribute: not ours to
	// test.
	if (std::count(text.begin(), text.end(), '<') > 32)
		return 0;
	GstCaps *caps = gst_caps_from_string(text.c_str());
	if (!caps)
		return 0;
	(void)gst::dmaDrmInfoFromCaps(caps);
	GstVideoInfo info;
	if (gst_caps_is_fixed(caps) && gst_video_info_from_caps(&info, caps)) {
		auto format = gst::pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
		if (format.ok()) {
			auto layout = computeLayout(*format, GST_VIDEO_INFO_WIDTH(&info),
						    GST_VIDEO_INFO_HEIGHT(&info),
						    LayoutPolicy::GStreamer);
			if (layout.ok() && layout->size <= sizeof g_bytes) {
				auto bytes = CpuBytes::create({ g_bytes, layout->size });
				FrameDesc d;
				d.format = *format;
				d.width = layout->width;
				d.height = layout->height;
				d.colorimetry = gst::colorimetryOf(info);
				d.numResources = 1;
				d.resources[0] = *bytes;
				d.numPlanes = layout->numPlanes;
				for (uint32_t p = 0; p < layout->numPlanes; ++p)
					d.planes[p] = { 0, 0, layout->planes[p].offset,
							layout->planes[p].stride };
				auto frame = Frame::create(std::move(d));
				if (frame.ok())
					(void)gst::videoInfoOf(*frame);
			}
		}
	}
	gst_caps_unref(caps);
	return 0;
}
