// The element tests' pipeline runner: a gst-launch description to its appsink's frames (visible
// pixels only, unpacked by GStreamer), its first error and its elements' stats.
#pragma once

#include "pipeline_release.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test {

struct Size {
	int width = 0;
	int height = 0;
};
// What a pipeline delivered to its appsink "sink": every frame's visible bytes, plane by plane,
// row by row (strides dropped), so that two pipelines compare whatever their layouts.
struct Run {
	std::vector<uint8_t> bytes{};
	guint64 frames = 0;
	std::string error{};            // the first error message's text and debug string
	GstElement *pipeline = nullptr; // kept (to read stats) until Run is destroyed
	Run() = default;
	Run(const Run &) = delete;
	Run &operator=(const Run &) = delete;
	Run(Run &&other) noexcept
		: bytes(std::move(other.bytes)), frames(other.frames),
		  error(std::move(other.error)), pipeline(std::exchange(other.pipeline, nullptr))
	{
	}
	~Run()
	{
		if (pipeline && !releasePipeline(pipeline))
			std::fprintf(stderr, "a pipeline was still held 10 s after it stopped\n");
	}
	// A counter of the `stats` structure of the element called `name`.
	guint64 stat(const char *name, const char *field) const
	{
		GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
		ck_assert_msg(element != nullptr, "no element %s", name);
		GstStructure *stats = nullptr;
		g_object_get(element, "stats", &stats, nullptr);
		gst_object_unref(element);
		ck_assert_msg(stats != nullptr, "%s has no stats", name);
		guint64 value = 0;
		ck_assert_msg(gst_structure_get_uint64(stats, field, &value), "no %s in stats",
			      field);
		gst_structure_free(stats);
		return value;
	}
};

inline void appendFrame(Run &run, GstSample *sample)
{
	GstVideoInfo info;
	const GstCaps *caps = gst_sample_get_caps(sample);
#if GST_CHECK_VERSION(1, 24, 0)
	// GStreamer 1.24+'s DMA-BUF caps (format=DMA_DRM): the format is in drm-format.
	if (gst_video_is_dma_drm_caps(caps)) {
		GstVideoInfoDmaDrm drm;
		ck_assert(gst_video_info_dma_drm_from_caps(&drm, caps));
		ck_assert(gst_video_info_dma_drm_to_video_info(&drm, &info));
	} else
#endif
		ck_assert(gst_video_info_from_caps(&info, caps));
	GstVideoFrame frame;
	ck_assert(gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ));
	// Every visible pixel, unpacked by GStreamer to AYUV/ARGB (8 or 16 bits): the bytes of a
	// format's padding (the odd luma sample of a packed 4:2:2 row, the tail of a v210 block)
	// are undefined and must not be compared.
	const GstVideoFormatInfo *finfo = info.finfo;
	const auto width = static_cast<size_t>(GST_VIDEO_INFO_WIDTH(&info));
	const size_t pixelBytes =
		GST_VIDEO_FORMAT_INFO_BITS(gst_video_format_get_info(finfo->unpack_format)) > 8 ? 8
												: 4;
	// Rows are unpacked in place, one after another: an unpack may write past its row's end
	// (v210 unpacks six pixels at a time), which the next row then overwrites, and 64 bytes of
	// slack after the last row take the rest. (Unpacking through a row buffer and appending
	// spent most of the element tests' time copying and faulting pages in.)
	const size_t rowBytes = width * pixelBytes;
	const size_t start = run.bytes.size();
	const size_t frameBytes = rowBytes * static_cast<size_t>(GST_VIDEO_INFO_HEIGHT(&info));
	run.bytes.resize(start + frameBytes + 64);
	for (gint y = 0; y < GST_VIDEO_INFO_HEIGHT(&info); ++y)
		finfo->unpack_func(finfo, GST_VIDEO_PACK_FLAG_NONE,
				   run.bytes.data() + start + static_cast<size_t>(y) * rowBytes,
				   frame.data, frame.info.stride, 0, y,
				   GST_VIDEO_INFO_WIDTH(&info));
	run.bytes.resize(start + frameBytes);
	gst_video_frame_unmap(&frame);
	++run.frames;
}

// Runs `description` (ending in an appsink named "sink") to EOS or its first error, bounded;
// `context`, when given, is set on the pipeline first (a device to share).
inline Run runPipeline(const std::string &description, GstContext *context = nullptr,
		       int seconds = 120)
{
	Run run;
	GError *error = nullptr;
	run.pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(run.pipeline && !error, "%s: %s", description.c_str(),
		      error ? error->message : "?");
	if (context)
		gst_element_set_context(run.pipeline, context);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(run.pipeline), "sink");
	ck_assert(sink != nullptr);
	GstBus *bus = gst_element_get_bus(run.pipeline);
	gst_element_set_state(run.pipeline, GST_STATE_PLAYING);
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	while (std::chrono::steady_clock::now() < deadline) {
		if (GstSample *sample =
			    gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_MSECOND)) {
			appendFrame(run, sample);
			gst_sample_unref(sample);
			continue;
		}
		if (GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
			GError *err = nullptr;
			gchar *debug = nullptr;
			gst_message_parse_error(msg, &err, &debug);
			run.error = std::string(err->message) + " | " + (debug ? debug : "");
			g_clear_error(&err);
			g_free(debug);
			gst_message_unref(msg);
			break;
		}
		if (gst_app_sink_is_eos(GST_APP_SINK(sink)))
			break;
	}
	ck_assert_msg(std::chrono::steady_clock::now() < deadline, "%s: no EOS in %d s",
		      description.c_str(), seconds);
	gst_object_unref(bus);
	gst_object_unref(sink);
	gst_element_set_state(run.pipeline, GST_STATE_NULL);
	return run;
}

// Where two byte strings first differ, for failure messages ("" when equal).
inline std::string firstDifference(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b)
{
	if (a.size() != b.size())
		return ": " + std::to_string(a.size()) + " bytes, expected " +
		       std::to_string(b.size());
	for (size_t i = 0; i < a.size(); ++i)
		if (a[i] != b[i])
			return ": byte " + std::to_string(i) + " is " + std::to_string(a[i]) +
			       ", expected " + std::to_string(b[i]);
	return {};
}

// `describe(buffer)` for each buffer that reached the appsink "sink" of `description`, in order.
template<typename Describe>
auto eachBuffer(const std::string &description, Describe describe)
{
	std::vector<decltype(describe(static_cast<GstBuffer *>(nullptr)))> results;
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s: %s", description.c_str(),
		      error ? error->message : "?");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	ck_assert(sink != nullptr);
	g_object_set(sink, "sync", FALSE, nullptr);
	ck_assert(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
	while (std::chrono::steady_clock::now() < deadline &&
	       !gst_app_sink_is_eos(GST_APP_SINK(sink))) {
		GstSample *sample =
			gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 50 * GST_MSECOND);
		if (!sample) {
			GstBus *bus = gst_element_get_bus(pipeline);
			GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
			gst_object_unref(bus);
			if (msg) {
				GError *err = nullptr;
				gst_message_parse_error(msg, &err, nullptr);
				const std::string text = err ? err->message : "?";
				g_clear_error(&err);
				gst_message_unref(msg);
				ck_abort_msg("%s: %s", description.c_str(), text.c_str());
			}
			continue;
		}
		results.push_back(describe(gst_sample_get_buffer(sample)));
		gst_sample_unref(sample);
	}
	ck_assert_msg(gst_app_sink_is_eos(GST_APP_SINK(sink)), "%s: no EOS within 60 s",
		      description.c_str());
	gst_object_unref(sink);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	return results;
}

} // namespace gpuhandle::test
