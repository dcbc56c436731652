// What the FFmpeg elements' tests share: a directory for clips, shell commands, and a pipeline
// played to its appsink keeping each frame's bytes, time and size.
#pragma once

#include "pipeline_run.h" // last: Check's fail() macro breaks standard headers after it

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <glib/gstdio.h>

namespace gpuhandle::test {

// A directory for a test's clips, removed at the end.
struct ClipDir {
	std::string path;
	ClipDir()
	{
		char name[] = "/tmp/avelements.XXXXXX";
		ck_assert(g_mkdtemp(name) != nullptr);
		path = name;
	}
	~ClipDir()
	{
		const std::string command = "rm -rf '" + path + "'";
		if (std::system(command.c_str()) != 0)
			std::fprintf(stderr, "could not remove %s\n", path.c_str());
	}
	std::string operator/(const std::string &file) const { return path + "/" + file; }
};

inline void sh(const std::string &command)
{
	ck_assert_msg(std::system(command.c_str()) == 0, "failed: %s", command.c_str());
}

struct Timed {
	std::vector<GstClockTime> pts{};
	std::vector<GstClockTime> durations{};
	std::vector<std::pair<int, int>> sizes{};
	Run run{};
};

// Plays `description` (an appsink "sink"), after an optional flushing accurate seek to `seekTo`,
// keeping each frame's bytes, time and size.
inline Timed play(const std::string &description, GstClockTime seekTo = GST_CLOCK_TIME_NONE)
{
	Timed t;
	GError *error = nullptr;
	t.run.pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(t.run.pipeline && !error, "%s", error ? error->message : "?");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(t.run.pipeline), "sink");
	ck_assert(sink != nullptr);
	if (GST_CLOCK_TIME_IS_VALID(seekTo)) {
		gst_element_set_state(t.run.pipeline, GST_STATE_PAUSED);
		ck_assert(gst_element_get_state(t.run.pipeline, nullptr, nullptr,
						60 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS);
		ck_assert(gst_element_seek_simple(t.run.pipeline, GST_FORMAT_TIME,
						  static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH |
									    GST_SEEK_FLAG_ACCURATE),
						  static_cast<gint64>(seekTo)));
	}
	gst_element_set_state(t.run.pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(t.run.pipeline);
	for (int idle = 0; idle < 3000; ++idle) { // 60 s without a frame at most
		if (GstSample *sample =
			    gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_MSECOND)) {
			GstBuffer *buffer = gst_sample_get_buffer(sample);
			t.pts.push_back(GST_BUFFER_PTS(buffer));
			t.durations.push_back(GST_BUFFER_DURATION(buffer));
			GstVideoInfo info;
			ck_assert(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
			t.sizes.emplace_back(GST_VIDEO_INFO_WIDTH(&info),
					     GST_VIDEO_INFO_HEIGHT(&info));
			appendFrame(t.run, sample);
			gst_sample_unref(sample);
			idle = 0;
			continue;
		}
		if (GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
			GError *err = nullptr;
			gst_message_parse_error(msg, &err, nullptr);
			t.run.error = err->message;
			g_clear_error(&err);
			gst_message_unref(msg);
			break;
		}
		if (gst_app_sink_is_eos(GST_APP_SINK(sink)))
			break;
	}
	gst_object_unref(bus);
	gst_object_unref(sink);
	gst_element_set_state(t.run.pipeline, GST_STATE_NULL);
	ck_assert_msg(t.run.error.empty(), "%s: %s", description.c_str(), t.run.error.c_str());
	return t;
}

} // namespace gpuhandle::test
