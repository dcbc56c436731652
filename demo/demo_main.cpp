// gpuhandle-demo: FFmpeg frames through gpuhandle into GStreamer's Vulkan and GL, a contact sheet.
#include "demo_pipeline.h"
#include "demo_report.h"
#include "demo_sheet.h"
#include "demo_source.h"
#include "gpuhandle_i18n.h"
#include "gpuhandle_program.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include <gst/gst.h>

extern "C" {
#include <libavutil/log.h>
}

namespace gpuhandle::demo {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct Options {
	int64_t frames = 48;
	int width = 640;
	int height = 360;
	std::string output = "demo.png";
	bool quiet = false;
	bool vulkan = true;    // FFmpeg uploads to its Vulkan device when one opens
	bool exportFds = true; // FFmpeg's Vulkan memory crosses as opaque fds (zero-copy into GL)
	bool viaVulkan = true; // through GStreamer's Vulkan images before GL
	int64_t timeoutSeconds = 30;
	bool help = false;
	bool version = false;
};

void usage(FILE *out)
{
	std::fputs(
		_("Usage: gpuhandle-demo [--frames N] [--size WxH] [--output PATH] [--quiet]\n"
		  "\n"
		  "Makes a clip with FFmpeg (libavfilter's testsrc2), encodes and decodes it\n"
		  "(FFV1), uploads each frame to FFmpeg's Vulkan device, hands it through\n"
		  "gpuhandle to a GStreamer pipeline that moves it into Vulkan, then into\n"
		  "OpenGL, renders a contact sheet to a PNG and prints what each step did.\n"
		  "\n"
		  "  --frames N      frames to make (default 48; 1 to 100000)\n"
		  "  --size WxH      frame size (default 640x360; even numbers, 16 to 7680)\n"
		  "  --output PATH   the contact sheet (default demo.png)\n"
		  "  --quiet         no progress line and no table, only errors\n"
		  "  --no-vulkan     keep FFmpeg's frames in host memory (gpuhandle uploads them)\n"
		  "  --direct        FFmpeg's Vulkan frames straight into GL (no Vulkan step)\n"
		  "  --no-export     hand FFmpeg's Vulkan images over as images, not opaque fds\n"
		  "  --timeout S     the longest wait for the pipeline (default 30)\n"
		  "  --version       the program's version\n"
		  "  --help          this text\n"),
		out);
}

bool parseInt(const char *text, int64_t low, int64_t high, int64_t &out)
{
	char *end = nullptr;
	errno = 0;
	const long long value = std::strtoll(text, &end, 10);
	if (errno || end == text || *end || value < low || value > high)
		return false;
	out = value;
	return true;
}

bool parseSize(const std::string &text, int &width, int &height)
{
	const size_t x = text.find('x');
	int64_t w = 0, h = 0;
	if (x == std::string::npos || !parseInt(text.substr(0, x).c_str(), 16, 7680, w) ||
	    !parseInt(text.substr(x + 1).c_str(), 16, 7680, h) || (w % 2) || (h % 2))
		return false;
	width = static_cast<int>(w);
	height = static_cast<int>(h);
	return true;
}

// The options, or an error message for the usage exit.
std::optional<Options> parse(int argc, char **argv, std::string &problem)
{
	Options o{};
	for (int i = 1; i < argc; ++i) {
		const std::string arg = argv[i];
		const bool hasValue = i + 1 < argc;
		if (arg == "--help" || arg == "-h") {
			o.help = true;
		} else if (gpuhandle::program::isVersion(arg.c_str())) {
			o.version = true;
		} else if (arg == "--quiet" || arg == "-q") {
			o.quiet = true;
		} else if (arg == "--no-vulkan") {
			o.vulkan = false;
		} else if (arg == "--direct") {
			o.viaVulkan = false;
		} else if (arg == "--no-export") {
			o.exportFds = false;
		} else if (arg == "--frames" || arg == "--size" || arg == "--output" ||
			   arg == "--timeout") {
			if (!hasValue) {
				problem =
					gpuhandle::i18n::format(_("%s needs a value"), arg.c_str());
				return std::nullopt;
			}
			const std::string value = argv[++i];
			if (arg == "--frames" && !parseInt(value.c_str(), 1, 100000, o.frames)) {
				problem = gpuhandle::i18n::format(
					_("--frames wants a number from 1 to 100000, not '%s'"),
					value.c_str());
				return std::nullopt;
			}
			if (arg == "--size" && !parseSize(value, o.width, o.height)) {
				problem = gpuhandle::i18n::format(
					_("--size wants WxH with even numbers from 16 to 7680, not '%s'"),
					value.c_str());
				return std::nullopt;
			}
			if (arg == "--timeout" &&
			    !parseInt(value.c_str(), 1, 3600, o.timeoutSeconds)) {
				problem = gpuhandle::i18n::format(
					_("--timeout wants seconds from 1 to 3600, not '%s'"),
					value.c_str());
				return std::nullopt;
			}
			if (arg == "--output") {
				if (value.empty()) {
					problem = _("--output wants a path");
					return std::nullopt;
				}
				o.output = value;
			}
		} else {
			problem = gpuhandle::i18n::format(_("unknown option '%s'"), arg.c_str());
			return std::nullopt;
		}
	}
	return o;
}

// Headless machines (no X11 or Wayland display): GStreamer's GL opens an EGL device (llvmpipe
// where there is no GPU). A user's own settings win.
void chooseGlWindow()
{
	if (std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY"))
		return;
	setenv("GST_GL_WINDOW", "egl-device", 0);
	setenv("GST_GL_PLATFORM", "egl", 0);
}

// The gpuhandle plugin: installed, on GST_PLUGIN_PATH, or (run from the build tree) beside us.
Status findPlugin()
{
	if (GstElementFactory *factory = gst_element_factory_find("gpuhandledownload")) {
		gst_object_unref(factory);
		return {};
	}
#ifdef GPUHANDLE_DEMO_PLUGIN_DIR
	gst_registry_scan_path(gst_registry_get(), GPUHANDLE_DEMO_PLUGIN_DIR);
	if (GstElementFactory *factory = gst_element_factory_find("gpuhandledownload")) {
		gst_object_unref(factory);
		return {};
	}
#endif
	return Error(ErrorCode::NotSupported, "plugin",
		     _("GStreamer has no gpuhandledownload element: install gpuhandle's GStreamer "
		       "plugin or point GST_PLUGIN_PATH at it (build/gst-plugin/elements)"));
}

Status run(const Options &o)
{
	const auto start = std::chrono::steady_clock::now();
	if (Status plugin = findPlugin(); !plugin)
		return plugin;
	Clip clip;
	if (Status opened = clip.open(o.width, o.height, o.vulkan); !opened)
		return opened;
	Sheet sheet(o.width, o.height, o.frames);
	Pipeline pipeline(sheet, o.viaVulkan);
	if (Status started = pipeline.start(std::chrono::seconds(o.timeoutSeconds)); !started)
		return started;
	Progress progress(o.quiet, o.frames);
	for (int64_t i = 0; i < o.frames; ++i) {
		Result<AVFrame *> frame = clip.next();
		if (!frame) {
			progress.end();
			return frame.error();
		}
		if (!*frame) {
			progress.end();
			return Error(ErrorCode::Backend, "clip", _("FFmpeg's clip ended early"));
		}
		AVFrame *owned = *frame;
		Status pushed = pipeline.push(owned, o.exportFds);
		av_frame_free(&owned);
		if (!pushed) {
			progress.end();
			return pushed;
		}
		progress.update(i + 1, pipeline.rendered());
	}
	Status finished = pipeline.finish();
	progress.update(o.frames, pipeline.rendered(), true);
	progress.end();
	if (!finished)
		return finished;
	if (pipeline.rendered() != o.frames)
		return Error::format(ErrorCode::Backend, "pipeline",
				     _("%lld of %lld frames reached the contact sheet"),
				     static_cast<long long>(pipeline.rendered()),
				     static_cast<long long>(o.frames));
	if (Status written = sheet.writePng(o.output); !written)
		return written;
	if (!o.quiet) {
		Summary summary{};
		summary.width = o.width;
		summary.height = o.height;
		summary.frames = o.frames;
		summary.output = o.output;
		summary.sheet = &sheet;
		summary.clip = &clip.stats();
		summary.bridge = &pipeline.bridge();
		summary.elements = pipeline.elements();
		summary.rendered = pipeline.rendered();
		summary.pipeline = pipeline.description();
		summary.elapsed = std::chrono::steady_clock::now() - start;
		printSummary(summary);
	}
	return {};
}

} // namespace
} // namespace gpuhandle::demo

int main(int argc, char **argv)
{
	using namespace gpuhandle::demo;
	gpuhandle::i18n::initProgram(); // messages and usage in the user's language
	std::string problem;
	const std::optional<Options> options = parse(argc, argv, problem);
	if (!options) {
		std::fprintf(stderr, _("gpuhandle-demo: %s (--help lists the options)\n"),
			     problem.c_str());
		return kExitUsage;
	}
	if (options->help) {
		usage(stdout);
		return 0;
	}
	if (options->version)
		return gpuhandle::program::printVersion("gpuhandle-demo");
	chooseGlWindow();
	GError *error = nullptr;
	if (!gst_init_check(nullptr, nullptr, &error)) {
		std::fprintf(stderr, _("gpuhandle-demo: GStreamer did not start: %s\n"),
			     error ? error->message : _("gst_init failed"));
		g_clear_error(&error);
		return kExitFailure;
	}
	av_log_set_level(AV_LOG_ERROR);
	const gpuhandle::Status status = run(*options);
	if (!status)
		std::fprintf(stderr, _("gpuhandle-demo: error: %s\n"),
			     status.error().message().c_str());
	gst_deinit();
	return status ? 0 : kExitFailure;
}
