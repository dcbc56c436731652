// gst-launch-1.0 for the tests: plays a pipeline description to EOS or its first error, printing
// errors and warnings as gst-launch-1.0 does, and exits 0 (EOS), 1 (an error) or 2 (no end within
// 100 s, or a description that does not parse). gst-launch-1.0 1.22 now and then loses an error
// posted while the pipeline prerolls and then waits forever (stock elements too: filesrc ! qtdemux
// on a file that is not MP4, about 1 run in 20); this sets PLAYING at once and reads every
// message. Calls gst_deinit(), so that GStreamer's leaks tracer reports at exit.
#include <cstdio>
#include <string>

#include <gst/gst.h>

namespace {

void print(GstMessage *message, const char *kind)
{
	GError *error = nullptr;
	gchar *debug = nullptr;
	if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR)
		gst_message_parse_error(message, &error, &debug);
	else
		gst_message_parse_warning(message, &error, &debug);
	gchar *path = gst_object_get_path_string(GST_MESSAGE_SRC(message));
	std::fprintf(stderr, "%s: from element %s: %s\nAdditional debug info:\n%s\n", kind, path,
		     error->message, debug ? debug : "");
	g_free(path);
	g_free(debug);
	g_error_free(error);
}

int run(const std::string &description)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	if (!pipeline || error) {
		std::fprintf(stderr, "WARNING: erroneous pipeline: %s\n",
			     error ? error->message : "?");
		g_clear_error(&error);
		if (pipeline)
			gst_object_unref(pipeline);
		return 2;
	}
	GstBus *bus = gst_element_get_bus(pipeline);
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	int status = 2;
	const gint64 deadline = g_get_monotonic_time() + 100 * G_TIME_SPAN_SECOND;
	while (status == 2 && g_get_monotonic_time() < deadline) {
		GstMessage *message = gst_bus_timed_pop_filtered(
			bus, 100 * GST_MSECOND,
			static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING |
						    GST_MESSAGE_EOS));
		if (!message)
			continue;
		switch (GST_MESSAGE_TYPE(message)) {
		case GST_MESSAGE_ERROR:
			print(message, "ERROR");
			status = 1;
			break;
		case GST_MESSAGE_WARNING: print(message, "WARNING"); break;
		default: status = 0; break;
		}
		gst_message_unref(message);
	}
	if (status == 2)
		std::fprintf(stderr, "ERROR: the pipeline did not end within 100 s\n");
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(bus);
	gst_object_unref(pipeline);
	return status;
}

} // namespace

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	std::string description;
	for (int i = 1; i < argc; ++i)
		if (std::string(argv[i]) != "-q")
			description += std::string(description.empty() ? "" : " ") + argv[i];
	const int status = run(description);
	gst_deinit();
	return status;
}
