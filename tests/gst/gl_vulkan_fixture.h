// Test fixture shared by the GL and Vulkan conversion tests: video patterns written and checked
// through GStreamer's own maps, and one-buffer pipelines through a GStreamer element.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/pixel_format.h>

#include "pipeline_release.h"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include <gst/video/video.h>

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"

namespace gpuhandle::test {

// GStreamer's cast and field macros are C casts; their expansions would land in the tests.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
inline GstQuery *probeQuery(GstPadProbeInfo *info)
{
	return GST_PAD_PROBE_INFO_QUERY(info);
}
inline GstBuffer *probeBuffer(GstPadProbeInfo *info)
{
	return GST_PAD_PROBE_INFO_BUFFER(info);
}
inline bool isContextQuery(GstQuery *query)
{
	return GST_QUERY_TYPE(query) == GST_QUERY_CONTEXT;
}
inline GstMessageType messageType(GstMessage *message)
{
	return GST_MESSAGE_TYPE(message);
}
inline GstBin *asBin(GstElement *element)
{
	return GST_BIN(element);
}
#pragma GCC diagnostic pop

struct Size {
	uint32_t width = 0;
	uint32_t height = 0;
};

inline GstVideoInfo videoInfo(GstVideoFormat format, Size size)
{
	GstVideoInfo info;
	gst_video_info_init(&info);
	gst_video_info_set_format(&info, format, size.width, size.height);
	return info;
}

// A seed for the pattern of one format and size, so that cases do not share bytes.
inline uint32_t seedOf(GstVideoFormat format, Size size)
{
	return static_cast<uint32_t>(format) * 7 + size.width + size.height;
}

// A frame `backend` allocates (exportable), asserted.
inline Frame allocate(Backend &backend, PixelFormat format, Size size, FrameStorage storage)
{
	AllocateRequest request{ format, size.width, size.height, {}, storage, 0, true };
	Result<Frame> frame = backend.allocate(request);
	ck_assert_msg(frame.ok(), "%s %s %ux%u: %s", backendKindName(backend.kind()),
		      pixelFormatName(format), size.width, size.height,
		      frame.ok() ? "" : frame.error().message().c_str());
	return *frame;
}

inline PixelFormat pixelFormatOf(GstVideoFormat format)
{
	return *fromApiFormat(FormatApi::GStreamer, static_cast<uint32_t>(format));
}

inline const char *formatName(GstVideoFormat format)
{
	return gst_video_format_to_string(format);
}

// Checks every pixel byte of every plane of a mapped video frame against patternByte(), at the
// rows gpuhandle's format counts (padding is not looked at): empty, else the first difference.
inline std::string checkVideoFrame(const GstVideoFrame &video, PixelFormat format, uint32_t seed)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	const uint32_t width = GST_VIDEO_INFO_WIDTH(&video.info);
	const uint32_t height = GST_VIDEO_INFO_HEIGHT(&video.info);
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const auto *base = static_cast<const uint8_t *>(video.data[p]);
		const auto stride = static_cast<uint32_t>(video.info.stride[p]);
		for (uint32_t y = 0; y < info.planes[p].rows(height); y++)
			for (uint64_t x = 0; x < info.planes[p].rowBytes(width); x++) {
				const uint8_t got = base[uint64_t{ stride } * y + x];
				if (got != patternByte(seed, p, y, x)) {
					char where[160];
					std::snprintf(where, sizeof where,
						      "%s %ux%u plane %u row %u byte %llu: %u, "
						      "expected %u",
						      pixelFormatName(format), width, height, p, y,
						      static_cast<unsigned long long>(x), got,
						      patternByte(seed, p, y, x));
					return where;
				}
			}
	}
	return {};
}

// Maps `buffer` as `info` for reading, as a CPU consumer downstream of gldownload or any element
// does (gst_video_frame_map(), through the buffer's GstVideoMeta when it has one: GStreamer
// downloads GPU memory for it), and checks the pattern: empty when every byte matches.
inline std::string checkBuffer(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed)
{
	GstVideoInfo layout = info;
	GstVideoFrame video;
	if (!gst_video_frame_map(&video, &layout, buffer, GST_MAP_READ))
		return std::string("gst_video_frame_map of a ") +
		       formatName(GST_VIDEO_INFO_FORMAT(&info)) + " buffer for reading failed";
	std::string checked =
		checkVideoFrame(video, pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info)), seed);
	gst_video_frame_unmap(&video);
	return checked;
}

// Writes the pattern into `buffer` through gst_video_frame_map() for writing, as a CPU producer
// does (GStreamer uploads GPU memory from it when it is next used there). False when the map
// failed.
inline bool fillBuffer(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed)
{
	GstVideoInfo layout = info;
	GstVideoFrame video;
	if (!gst_video_frame_map(&video, &layout, buffer, GST_MAP_WRITE))
		return false;
	const PixelFormatInfo &pixels =
		**pixelFormatInfo(pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info)));
	const uint32_t width = GST_VIDEO_INFO_WIDTH(&info);
	const uint32_t height = GST_VIDEO_INFO_HEIGHT(&info);
	for (uint32_t p = 0; p < pixels.numPlanes; p++) {
		auto *base = static_cast<uint8_t *>(video.data[p]);
		const auto stride = static_cast<uint64_t>(video.info.stride[p]);
		for (uint32_t y = 0; y < pixels.planes[p].rows(height); y++)
			for (uint64_t x = 0; x < pixels.planes[p].rowBytes(width); x++)
				base[stride * y + x] = patternByte(seed, p, y, x);
	}
	gst_video_frame_unmap(&video);
	return true;
}

// The pattern in memory p of `buffer` for plane p (one memory per plane), rows strideOf(p)
// bytes apart: written (false when a memory does not map or is too small), or checked (empty,
// else the first difference or what failed).
template<typename StrideOf>
bool fillPlaneMemories(GstBuffer *buffer, PixelFormat format, Size size, uint32_t seed,
		       StrideOf strideOf)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	if (gst_buffer_n_memory(buffer) != info.numPlanes)
		return false;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const uint32_t rows = info.planes[p].rows(size.height);
		const uint64_t rowBytes = info.planes[p].rowBytes(size.width);
		const uint64_t stride = strideOf(p);
		GstMapInfo map;
		if (!gst_memory_map(gst_buffer_peek_memory(buffer, p), &map, GST_MAP_WRITE))
			return false;
		const bool fits = stride * (rows - 1) + rowBytes <= map.size;
		for (uint32_t y = 0; fits && y < rows; y++)
			for (uint64_t x = 0; x < rowBytes; x++)
				map.data[stride * y + x] = patternByte(seed, p, y, x);
		gst_memory_unmap(gst_buffer_peek_memory(buffer, p), &map);
		if (!fits)
			return false;
	}
	return true;
}

template<typename StrideOf>
std::string checkPlaneMemories(GstBuffer *buffer, PixelFormat format, Size size, uint32_t seed,
			       StrideOf strideOf)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	if (gst_buffer_n_memory(buffer) != info.numPlanes)
		return "the buffer does not hold one memory per plane";
	std::string failed;
	for (uint32_t p = 0; p < info.numPlanes && failed.empty(); p++) {
		const uint32_t rows = info.planes[p].rows(size.height);
		const uint64_t rowBytes = info.planes[p].rowBytes(size.width);
		const uint64_t stride = strideOf(p);
		GstMapInfo map;
		if (!gst_memory_map(gst_buffer_peek_memory(buffer, p), &map, GST_MAP_READ))
			return "memory " + std::to_string(p) + " did not map for reading";
		if (stride * (rows - 1) + rowBytes > map.size)
			failed = "memory " + std::to_string(p) + " is too small for its plane";
		for (uint32_t y = 0; failed.empty() && y < rows; y++)
			for (uint64_t x = 0; failed.empty() && x < rowBytes; x++)
				if (map.data[stride * y + x] != patternByte(seed, p, y, x)) {
					char where[160];
					std::snprintf(where, sizeof where,
						      "%s %ux%u plane %u row %u byte %llu: %u, "
						      "expected %u",
						      pixelFormatName(format), size.width,
						      size.height, p, y,
						      static_cast<unsigned long long>(x),
						      map.data[stride * y + x],
						      patternByte(seed, p, y, x));
					failed = where;
				}
		gst_memory_unmap(gst_buffer_peek_memory(buffer, p), &map);
	}
	return failed;
}

inline Size sizeOf(const GstVideoInfo &info)
{
	return { static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info)),
		 static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)) };
}

inline GstCaps *capsOf(const GstVideoInfo &info, const char *feature)
{
	GstCaps *caps = gst_video_info_to_caps(&info);
	if (feature)
		gst_caps_set_features(caps, 0, gst_caps_features_new(feature, nullptr));
	return caps;
}

struct Capture {
	std::mutex mutex;
	GstBuffer *buffer = nullptr;
};

inline GstPadProbeReturn captureBuffer(GstPad *, GstPadProbeInfo *info, gpointer data)
{
	auto *capture = static_cast<Capture *>(data);
	std::lock_guard<std::mutex> lock(capture->mutex);
	if (!capture->buffer)
		capture->buffer = gst_buffer_ref(probeBuffer(info));
	return GST_PAD_PROBE_OK;
}

// Runs "appsrc ! element ! capsfilter ! fakesink" for one buffer and returns what reached the
// sink (transfer full), or null with `why`. `answer` (with `data`) sees the context queries that
// reach appsrc, so that the element works on the test's GPU objects.
inline GstBuffer *throughElement(const char *name, GstBuffer *input, GstCaps *inCaps,
				 GstCaps *outCaps, GstPadProbeCallback answer, gpointer data,
				 std::string &why)
{
	GstElement *pipeline = gst_pipeline_new(nullptr);
	GstElement *src = gst_element_factory_make("appsrc", nullptr);
	GstElement *element = gst_element_factory_make(name, nullptr);
	GstElement *filter = gst_element_factory_make("capsfilter", nullptr);
	GstElement *sink = gst_element_factory_make("fakesink", nullptr);
	if (!src || !element || !filter || !sink) {
		why = std::string("an element is missing (appsrc, ") + name +
		      ", capsfilter, fakesink)";
		gst_object_unref(pipeline);
		return nullptr;
	}
	g_object_set(src, "caps", inCaps, "format", GST_FORMAT_TIME, nullptr);
	g_object_set(filter, "caps", outCaps, nullptr);
	g_object_set(sink, "sync", FALSE, nullptr);
	gst_bin_add_many(asBin(pipeline), src, element, filter, sink, nullptr);
	gst_element_link_many(src, element, filter, sink, nullptr);
	GstPad *srcPad = gst_element_get_static_pad(src, "src");
	gst_pad_add_probe(srcPad, GST_PAD_PROBE_TYPE_QUERY_UPSTREAM, answer, data, nullptr);
	gst_object_unref(srcPad);
	Capture capture;
	GstPad *sinkPad = gst_element_get_static_pad(sink, "sink");
	gst_pad_add_probe(sinkPad, GST_PAD_PROBE_TYPE_BUFFER, captureBuffer, &capture, nullptr);
	gst_object_unref(sinkPad);
	GstFlowReturn flow = GST_FLOW_OK;
	g_signal_emit_by_name(src, "push-buffer", input, &flow);
	g_signal_emit_by_name(src, "end-of-stream", &flow);
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *message = gst_bus_timed_pop_filtered(
		bus, 30 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	if (!message) {
		why = "the pipeline reached no end within 30 s";
	} else if (messageType(message) == GST_MESSAGE_ERROR) {
		GError *error = nullptr;
		gst_message_parse_error(message, &error, nullptr);
		why = std::string(name) + ": " + (error ? error->message : "error");
		g_clear_error(&error);
	}
	if (message)
		gst_message_unref(message);
	gst_object_unref(bus);
	if (!releasePipeline(pipeline) && why.empty())
		why = "the pipeline was still held 10 s after it stopped";
	if (why.empty() && !capture.buffer)
		why = std::string(name) + " passed no buffer on";
	if (!why.empty() && capture.buffer) {
		gst_buffer_unref(capture.buffer);
		capture.buffer = nullptr;
	}
	return capture.buffer;
}

} // namespace gpuhandle::test
