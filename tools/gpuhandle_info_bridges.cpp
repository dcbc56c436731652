// gpuhandle-info's bridge matrix: gpuhandleupload ! gpuhandledownload run between every pair of
// GStreamer memory types this build has (the memory-type table of libgstgpuhandle-1.0).
#include "gpuhandle_info_bridges.h"

#include "gpuhandle_i18n.h"
#include "gpuhandle_info_json.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#if GPUHANDLE_INFO_HAVE_GST
#include <gpuhandle/backends/backend.h>

#include <gst/gpuhandle/gstgpuhandlebudget.hpp>
#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>
#include <gst/gst.h>
#endif

namespace gpuhandle::info {

namespace {

constexpr const char *kCounters[] = { "zero-copy", "gpu-copies", "cpu-copies" };

#if GPUHANDLE_INFO_HAVE_GST

// An element's path counters, from its `stats` property.
void readStats(GstElement *pipeline, const char *name, uint64_t counts[3], uint64_t *frames)
{
	GstElement *element = gst_bin_get_by_name(GST_BIN(pipeline), name);
	if (!element)
		return;
	GstStructure *stats = nullptr;
	g_object_get(element, "stats", &stats, nullptr);
	if (stats) {
		for (size_t i = 0; i < 3; ++i) {
			guint64 value = 0;
			gst_structure_get_uint64(stats, kCounters[i], &value);
			counts[i] = value;
		}
		guint64 value = 0;
		if (frames && gst_structure_get_uint64(stats, "frames", &value))
			*frames = value;
		gst_structure_free(stats);
	}
	gst_object_unref(element);
}

// The pipeline's first error: its message, said to be the producer's when neither gpuhandle
// element posted it, and GStreamer's debug text apart.
void noteError(GstMessage *message, Bridge &bridge)
{
	GError *error = nullptr;
	gchar *debug = nullptr;
	gst_message_parse_error(message, &error, &debug);
	const char *source = GST_MESSAGE_SRC_NAME(message);
	const bool ours = source && (g_str_equal(source, "up") || g_str_equal(source, "down"));
	bridge.why = std::string(ours ? "" : "the producer failed: ") +
		     (error ? error->message : "error");
	bridge.detail = debug ? debug : "";
	// GStreamer's debug text is "file(line): function (): element path:\nreason": the reason
	// says why, so it joins the message.
	if (const size_t line = bridge.detail.find('\n'); line != std::string::npos)
		bridge.why += " " + bridge.detail.substr(line + 1);
	g_clear_error(&error);
	g_free(debug);
}

Bridge run(const gst::MemoryTypeInfo &from, const gst::MemoryTypeInfo &into)
{
	Bridge bridge;
	bridge.from = from.name;
	bridge.into = into.name;
	if (!from.producer) {
		bridge.why = std::string("no GStreamer element makes ") + from.name;
		return bridge;
	}
	const std::string description =
		std::string("videotestsrc num-buffers=5 ! "
			    "video/x-raw,format=NV12,width=64,height=48 ! ") +
		(*from.producer ? std::string(from.producer) + " ! " : std::string()) +
		"gpuhandleupload name=up ! gpuhandledownload name=down ! video/x-raw(" +
		into.feature + ") ! fakesink";
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	if (error || !pipeline) {
		bridge.why = error ? error->message : "the pipeline could not be made";
		g_clear_error(&error);
		if (pipeline)
			gst_object_unref(pipeline);
		return bridge;
	}
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *message = gst_bus_timed_pop_filtered(
		bus, 20 * GST_SECOND,
		static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
	if (!message)
		bridge.why = "no end of stream within 20 s";
	else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR)
		noteError(message, bridge);
	readStats(pipeline, "up", bridge.upload, nullptr);
	readStats(pipeline, "down", bridge.download, &bridge.frames);
	if (message)
		gst_message_unref(message);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	bridge.ran = bridge.why.empty() && bridge.frames > 0;
	if (bridge.ran) {
		// The costliest step of the two elements names the path.
		const bool cpu = bridge.upload[2] || bridge.download[2];
		const bool gpu = bridge.upload[1] || bridge.download[1];
		bridge.path = cpu ? "cpu-copy" : gpu ? "gpu-copy" : "zero-copy";
	} else if (bridge.why.empty()) {
		bridge.why = "no frame reached gpuhandledownload";
	}
	return bridge;
}

// Where the memory type named `name` sits in the table (for the report's order).
size_t rowOf(const std::string &name)
{
	size_t row = 0;
	for (const gst::MemoryTypeInfo &type : gst::memoryTypes()) {
		if (name == type.name)
			return row;
		row++;
	}
	return row;
}

#endif

} // namespace

GlDisplay chooseGlDisplay()
{
	auto set = [](const char *name) {
		const char *value = std::getenv(name);
		return value && *value;
	};
	if (set("GST_GL_WINDOW"))
		return { std::getenv("GST_GL_WINDOW"), "environment" };
	if (set("DISPLAY") || set("WAYLAND_DISPLAY"))
		return { "", "window-system" };
	setenv("GST_GL_WINDOW", "egl-device", 1);
	if (!set("GST_GL_PLATFORM"))
		setenv("GST_GL_PLATFORM", "egl", 1);
	return { "egl-device", "gpuhandle-info" };
}

std::string glDisplayJson(const GlDisplay &display)
{
	return "{\"window\": " + jsonString(display.window) +
	       ", \"chosenBy\": " + jsonString(display.chosenBy) + "}";
}

std::vector<Bridge> measureBridges()
{
	std::vector<Bridge> bridges;
#if GPUHANDLE_INFO_HAVE_GST
	if (!gst_init_check(nullptr, nullptr, nullptr))
		return bridges;
	GstElementFactory *factory = gst_element_factory_find("gpuhandleupload");
	if (!factory)
		return bridges; // the plugin is not installed (or not on GST_PLUGIN_PATH)
	gst_object_unref(factory);
	for (const gst::MemoryTypeInfo &into : gst::memoryTypes()) {
		if (!into.built || into.outputRank < 0)
			continue;
		// An output whose API has no device here (CUDA without a driver) is reported,
		// not run: the pipeline would only fail at its first caps, and GStreamer 1.22 tears
		// such a pipeline down racily behind vulkanupload (docs/gstreamer.md).
		Result<BackendRef> device = openBackend(into.backend);
		for (const gst::MemoryTypeInfo &from : gst::memoryTypes()) {
			if (!from.built || from.inputRank < 0)
				continue;
			if (device.ok()) {
				bridges.push_back(run(from, into));
				continue;
			}
			Bridge bridge;
			bridge.from = from.name;
			bridge.into = into.name;
			bridge.why = std::string("no ") + backendKindName(into.backend) +
				     " device here: " + device.error().message();
			bridges.push_back(std::move(bridge));
		}
	}
	// In the table's order: rows by input, then output.
	std::stable_sort(bridges.begin(), bridges.end(), [](const Bridge &a, const Bridge &b) {
		return rowOf(a.from) < rowOf(b.from);
	});
#endif
	return bridges;
}

std::string bridgesJson(const std::vector<Bridge> &bridges)
{
	std::string out = "[";
	for (size_t i = 0; i < bridges.size(); ++i) {
		const Bridge &b = bridges[i];
		out += std::string(i ? "," : "") + "\n    {\"from\": " + jsonString(b.from) +
		       ", \"into\": " + jsonString(b.into) +
		       ", \"ran\": " + (b.ran ? "true" : "false");
		if (b.ran) {
			out += ", \"path\": " + jsonString(b.path) +
			       ", \"frames\": " + std::to_string(b.frames);
			for (const auto &[name, counts] : { std::pair{ "upload", b.upload },
							    std::pair{ "download", b.download } }) {
				out += std::string(", \"") + name + "\": {";
				for (size_t c = 0; c < 3; ++c)
					out += std::string(c ? ", " : "") + "\"" + kCounters[c] +
					       "\": " + std::to_string(counts[c]);
				out += "}";
			}
		} else {
			out += ", \"why\": " + jsonString(b.why) +
			       ", \"detail\": " + jsonString(b.detail);
		}
		out += "}";
	}
	return out + (bridges.empty() ? "]" : "\n  ]");
}

void printBridgesText(const std::vector<Bridge> &bridges, const GlDisplay &glDisplay)
{
	std::printf("\n%s\n",
		    _("GStreamer memory bridges (gpuhandleupload ! gpuhandledownload, measured)"));
	if (glDisplay.chosenBy == "environment")
		// TRANSLATORS: %s is the value of GST_GL_WINDOW (egl-device, x11, wayland...).
		std::printf(_("  GL display: GST_GL_WINDOW=%s, from the environment\n"),
			    glDisplay.window.c_str());
	else if (glDisplay.chosenBy == "window-system")
		std::printf("  %s\n",
			    _("GL display: the window system's (DISPLAY or WAYLAND_DISPLAY);"
			      " on a headless machine set GST_GL_WINDOW=egl-device"
			      " GST_GL_PLATFORM=egl"));
	else
		std::printf("  %s\n", _("GL display: an EGL device, no window system (none here, so"
					" gpuhandle-info set GST_GL_WINDOW=egl-device"
					" GST_GL_PLATFORM=egl; your pipelines need the same)"));
	if (bridges.empty()) {
		std::printf("  %s\n", _("(not measured: no GStreamer, or the gpuhandle plugin is "
					"not on GST_PLUGIN_PATH)"));
		return;
	}
	for (const Bridge &b : bridges) {
		if (b.ran)
			std::printf("  %-12s -> %-12s %s\n", b.from.c_str(), b.into.c_str(),
				    b.path.c_str());
		else
			std::printf("  %-12s -> %-12s %s: %s\n", b.from.c_str(), b.into.c_str(),
				    _("not here"), b.why.c_str());
	}
}

std::vector<BudgetUse> budgetUse()
{
	std::vector<BudgetUse> uses;
#if GPUHANDLE_INFO_HAVE_GST
	const std::shared_ptr<MemoryBudget> budget = gst::processBudget();
	for (uint32_t k = 0; budget && k < kBackendKindCount; ++k) {
		const auto kind = static_cast<BackendKind>(k);
		if (budget->peakUsage(kind) == 0)
			continue;
		uses.push_back({ backendKindName(kind), budget->peakUsage(kind),
				 budget->usage(kind), budget->caps(kind).hardBytes.value_or(0) });
	}
#endif
	return uses;
}

std::string budgetJson(const std::vector<BudgetUse> &uses)
{
	std::string out = "[";
	for (size_t i = 0; i < uses.size(); ++i)
		out += std::string(i ? ", " : "") + "{\"backend\": " + jsonString(uses[i].backend) +
		       ", \"peakBytes\": " + std::to_string(uses[i].peakBytes) +
		       ", \"inUseBytes\": " + std::to_string(uses[i].inUseBytes) +
		       ", \"capBytes\": " + std::to_string(uses[i].capBytes) + "}";
	return out + "]";
}

void printBudgetText(const std::vector<BudgetUse> &uses)
{
	std::printf("\n%s\n", _("Memory budget of the elements (after the bridge runs)"));
	if (uses.empty())
		std::printf("  %s\n", _("(no gpuhandle frames were allocated)"));
	for (const BudgetUse &u : uses)
		// TRANSLATORS: a backend, the most bytes its frames held at once, then now.
		std::printf(_("  %-8s peak %llu bytes, %llu held now, cap %s\n"), u.backend.c_str(),
			    static_cast<unsigned long long>(u.peakBytes),
			    static_cast<unsigned long long>(u.inUseBytes),
			    u.capBytes ? std::to_string(u.capBytes).c_str() : _("none"));
}

} // namespace gpuhandle::info
