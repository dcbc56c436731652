// gpuhandle-avbridge's GStreamer pipeline: parse, play, bus errors and EOS, element statistics.
#include "avbridge_pipeline.h"

#include "gpuhandle_i18n.h"

#include <cstdio>
#include <string_view>

namespace gpuhandle::avbridge {

namespace {

std::string valueText(const GValue *value)
{
	gchar *text = g_strdup_value_contents(value);
	std::string out = text ? text : "";
	g_free(text);
	return out;
}

std::string statsText(GstElement *element)
{
	GstStructure *stats = nullptr;
	g_object_get(element, "stats", &stats, nullptr);
	if (!stats)
		return {};
	std::string out;
	const gint fields = gst_structure_n_fields(stats);
	for (gint i = 0; i < fields; ++i) {
		const gchar *name = gst_structure_nth_field_name(stats, static_cast<guint>(i));
		out += (out.empty() ? "" : ", ") + std::string(name) + "=" +
		       valueText(gst_structure_get_value(stats, name));
	}
	gst_structure_free(stats);
	return out;
}

} // namespace

Pipeline::Pipeline(GstElement *pipeline) : pipeline_(pipeline), bus_(gst_element_get_bus(pipeline))
{
}

Pipeline::~Pipeline()
{
	gst_element_set_state(pipeline_, GST_STATE_NULL);
	gst_object_unref(bus_);
	gst_object_unref(pipeline_);
}

Result<std::unique_ptr<Pipeline>> Pipeline::launch(const std::string &description,
						   const std::string &shown)
{
	GError *error = nullptr;
	// FATAL_ERRORS: a missing element fails here instead of leaving a half-built pipeline.
	GstElement *pipeline = gst_parse_launch_full(description.c_str(), nullptr,
						     GST_PARSE_FLAG_FATAL_ERRORS, &error);
	if (error || !pipeline) {
		Error out = Error::format(ErrorCode::InvalidArgument, "pipeline",
					  _("could not make the pipeline '%s': %s"), shown.c_str(),
					  error ? error->message : _("gst_parse_launch failed"));
		g_clear_error(&error);
		if (pipeline)
			gst_object_unref(pipeline);
		return out;
	}
	return std::unique_ptr<Pipeline>(new Pipeline(pipeline));
}

GstElement *Pipeline::element(const char *name) const
{
	if (!GST_IS_BIN(pipeline_))
		return nullptr;
	GstElement *found = gst_bin_get_by_name(GST_BIN(pipeline_), name);
	if (found)
		gst_object_unref(found); // the bin keeps it
	return found;
}

Status Pipeline::play()
{
	if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
		return {};
	if (Status polled = poll(std::chrono::milliseconds(0)); !polled)
		return polled;
	return Error(ErrorCode::Backend, "pipeline",
		     _("the pipeline did not start (PLAYING failed)"));
}

Status Pipeline::poll(std::chrono::milliseconds wait)
{
	const auto types = static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING |
						       GST_MESSAGE_EOS);
	GstClockTime timeout = static_cast<GstClockTime>(wait.count()) * 1000000u;
	while (GstMessage *message = gst_bus_timed_pop_filtered(bus_, timeout, types)) {
		timeout = 0; // after the first, only what is already queued
		const GstMessageType type = GST_MESSAGE_TYPE(message);
		if (type == GST_MESSAGE_EOS) {
			eos_ = true;
			gst_message_unref(message);
			continue;
		}
		GError *error = nullptr;
		gchar *debug = nullptr;
		if (type == GST_MESSAGE_ERROR)
			gst_message_parse_error(message, &error, &debug);
		else
			gst_message_parse_warning(message, &error, &debug);
		const std::string source = GST_MESSAGE_SRC_NAME(message);
		const std::string text = error ? error->message : _("unknown error");
		const std::string details = debug ? debug : "";
		g_clear_error(&error);
		g_free(debug);
		gst_message_unref(message);
		if (type == GST_MESSAGE_WARNING) {
			std::fprintf(stderr, _("gpuhandle-avbridge: warning from %s: %s\n"),
				     source.c_str(), text.c_str());
			continue;
		}
		return Error::format(ErrorCode::Backend, "pipeline",
				     // TRANSLATORS: the element, its message, then " (", the
				     // details, ")" or nothing.
				     _("the pipeline failed in %s: %s%s%s%s"), source.c_str(),
				     text.c_str(), details.empty() ? "" : " (", details.c_str(),
				     details.empty() ? "" : ")");
	}
	return {};
}

Status Pipeline::waitEos(std::chrono::seconds timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;
	while (!eos_) {
		if (std::chrono::steady_clock::now() >= deadline)
			return Error::format(
				ErrorCode::Timeout, "pipeline",
				_("the pipeline did not finish within %lld s of the last frame"),
				static_cast<long long>(timeout.count()));
		if (Status polled = poll(std::chrono::milliseconds(100)); !polled)
			return polled;
	}
	return {};
}

void Pipeline::noteStats(Report &report) const
{
	if (!GST_IS_BIN(pipeline_))
		return;
	GstIterator *it = gst_bin_iterate_recurse(GST_BIN(pipeline_));
	GValue item = G_VALUE_INIT;
	while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
		auto *element = static_cast<GstElement *>(g_value_get_object(&item));
		GstElementFactory *factory = gst_element_get_factory(element);
		const std::string_view factoryName =
			factory ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory)) : "";
		if (factoryName.rfind("gpuhandle", 0) == 0 &&
		    g_object_class_find_property(G_OBJECT_GET_CLASS(element), "stats")) {
			const std::string stats = statsText(element);
			if (!stats.empty())
				report.note(std::string(GST_ELEMENT_NAME(element)) + ": " + stats);
		}
		g_value_reset(&item);
	}
	g_value_unset(&item);
	gst_iterator_free(it);
}

} // namespace gpuhandle::avbridge
