// The peer suite's fixture: an H.264 clip made by ffmpeg (libx264), pipelines run to raw files
// or to an appsink, bounded, failing the test on any error.
#pragma once

#include "../gst/pipeline_run.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

namespace gpuhandle::test::peer {

using gpuhandle::test::eachBuffer;

inline constexpr unsigned kClipFrames = 12;

// The clips' sizes: 320x240, whose I420 and NV12 chroma rows (160 bytes) are not what a
// 64-byte-aligned pool lays out, and 640x360, whose are (so its frames are wrapped, not copied).
struct ClipSize {
	unsigned width;
	unsigned height;
};
inline constexpr ClipSize kClipSizes[] = { { 320, 240 }, { 640, 360 } };

inline std::string &clipDir()
{
	static std::string dir;
	return dir;
}

inline std::string clipPath(const ClipSize &size)
{
	return clipDir() + "/clip-" + std::to_string(size.width) + "x" +
	       std::to_string(size.height) + ".mp4";
}

// The bytes of one frame of `format` at `size` in GStreamer's default layout.
inline size_t frameSize(const char *format, const ClipSize &size)
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, gst_video_format_from_string(format), size.width,
				  size.height);
	return GST_VIDEO_INFO_SIZE(&info);
}

// Whether ffmpeg (with libx264) and GStreamer's H.264 parser, qtdemux and avdec_h264 are here;
// prints the reason (the suite then exits 77) when they are not.
inline bool clipToolsPresent()
{
	if (std::system("ffmpeg -hide_banner -encoders 2>/dev/null | grep -q libx264") != 0) {
		std::printf("SKIP: ffmpeg with libx264 is not installed (Debian: ffmpeg)\n");
		return false;
	}
	if (std::system("gst-inspect-1.0 avdec_h264 >/dev/null 2>&1") != 0) {
		std::printf("SKIP: avdec_h264 is not installed (Debian: gstreamer1.0-libav)\n");
		return false;
	}
	return true;
}

// kClipFrames of testsrc2 at each of kClipSizes, I420 H.264 in MP4, a key frame every 6 frames.
inline bool makeClips()
{
	char pattern[] = "/tmp/gpuhandle-peer-XXXXXX";
	if (!mkdtemp(pattern))
		return false;
	clipDir() = pattern;
	for (const ClipSize &size : kClipSizes) {
		const std::string command =
			"ffmpeg -hide_banner -loglevel error -f lavfi -i testsrc2=size=" +
			std::to_string(size.width) + "x" + std::to_string(size.height) +
			":rate=30 -frames:v " + std::to_string(kClipFrames) +
			" -c:v libx264 -pix_fmt yuv420p -g 6 -y " + clipPath(size);
		if (std::system(command.c_str()) != 0) {
			std::printf("ffmpeg did not make the clip: %s\n", command.c_str());
			return false;
		}
	}
	return true;
}

inline void removeClip()
{
	if (!clipDir().empty())
		std::system(("rm -rf '" + clipDir() + "'").c_str());
}

// A clip decoded by gst-libav, explicitly or through decodebin.
inline std::string decodeClip(const ClipSize &size)
{
	return "filesrc location=" + clipPath(size) + " ! qtdemux ! h264parse ! avdec_h264";
}
inline std::string decodebinClip(const ClipSize &size)
{
	return "filesrc location=" + clipPath(size) + " ! decodebin";
}

// Runs `pipeline` to EOS, failing the test on an error or after `seconds`.
inline void runToEos(GstElement *pipeline, const std::string &description, int seconds = 60)
{
	GstBus *bus = gst_element_get_bus(pipeline);
	ck_assert(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, static_cast<GstClockTime>(seconds) * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	std::string error;
	if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
		GError *err = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(msg, &err, &debug);
		error = std::string(err->message) + " | " + (debug ? debug : "");
		g_clear_error(&err);
		g_free(debug);
	}
	const bool timedOut = msg == nullptr;
	if (msg)
		gst_message_unref(msg);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	ck_assert_msg(!timedOut, "%s: no EOS within %d s", description.c_str(), seconds);
	ck_assert_msg(error.empty(), "%s: %s", description.c_str(), error.c_str());
}

inline std::string readFile(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs `description`, in which each %s is a filesink's location, to EOS; returns each file's
// bytes (in the order of the %s).
inline std::vector<std::string> runToFiles(std::string description, int count)
{
	std::vector<std::string> paths;
	for (int i = 0; i < count; ++i) {
		const size_t at = description.find("%s");
		ck_assert_msg(at != std::string::npos, "%s has fewer than %d %%s",
			      description.c_str(), count);
		static int serial = 0;
		paths.push_back(clipDir() + "/out-" + std::to_string(getpid()) + "-" +
				std::to_string(++serial) + ".raw");
		description.replace(at, 2, paths.back());
	}
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s: %s", description.c_str(),
		      error ? error->message : "?");
	runToEos(pipeline, description);
	gst_object_unref(pipeline);
	std::vector<std::string> files;
	for (const std::string &path : paths) {
		files.push_back(readFile(path));
		std::remove(path.c_str());
	}
	return files;
}

inline std::string runToFile(const std::string &description)
{
	return runToFiles(description, 1)[0];
}

// How many metas of `api` each buffer that reached the appsink "sink" carried.
inline std::vector<int> metasPerFrame(const std::string &description, GType api)
{
	return eachBuffer(description, [api](GstBuffer *buffer) {
		int n = 0;
		gpointer state = nullptr;
		while (GstMeta *meta = gst_buffer_iterate_meta(buffer, &state))
			n += meta->info->api == api ? 1 : 0;
		return n;
	});
}

// Each buffer's metas that describe its content, as GStreamer's own functions print them: the
// API's name, and for SEI user data its bytes, for time codes the time code.
inline std::vector<std::string> contentMetasPerFrame(const std::string &description)
{
	return eachBuffer(description, [](GstBuffer *buffer) {
		std::string out;
		gpointer state = nullptr;
		while (GstMeta *meta = gst_buffer_iterate_meta(buffer, &state)) {
			const GType api = meta->info->api;
			if (api == GST_VIDEO_META_API_TYPE ||
			    api == GST_PARENT_BUFFER_META_API_TYPE ||
			    g_str_has_prefix(g_type_name(api), "GstGpuHandle"))
				continue; // the memory's, not the content's
			out += g_type_name(api);
			if (api == GST_VIDEO_SEI_USER_DATA_UNREGISTERED_META_API_TYPE) {
				auto *m = reinterpret_cast<GstVideoSEIUserDataUnregisteredMeta *>(
					meta);
				out += " " + std::string(reinterpret_cast<const char *>(m->data),
							 m->size);
			} else if (api == GST_VIDEO_TIME_CODE_META_API_TYPE) {
				gchar *tc = gst_video_time_code_to_string(
					&reinterpret_cast<GstVideoTimeCodeMeta *>(meta)->tc);
				out += std::string(" ") + tc;
				g_free(tc);
			}
			out += "; ";
		}
		return out;
	});
}

} // namespace gpuhandle::test::peer
