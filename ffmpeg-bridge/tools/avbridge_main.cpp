// gpuhandle-avbridge: FFmpeg decode/filter/encode to and from GStreamer pipelines through
// gpuhandle.
#include "avbridge_args.h"
#include "avbridge_ffmpeg.h"
#include "avbridge_modes.h"
#include "avbridge_report.h"
#include "gpuhandle_i18n.h"
#include "gpuhandle_program.h"

#include <cstdio>

#include <gst/gst.h>

using namespace gpuhandle;
using namespace gpuhandle::avbridge;

int main(int argc, char **argv)
{
	i18n::initProgram(); // messages, usage and the summary in the user's language
	Result<Options> options = parseArgs(argc, argv);
	if (!options) {
		std::fprintf(stderr, "gpuhandle-avbridge: %s\n", options.error().message().c_str());
		return 2;
	}
	if (options->mode == Mode::Help) {
		std::fputs(helpText(), stdout);
		return 0;
	}
	if (options->mode == Mode::Version)
		return program::printVersion("gpuhandle-avbridge");
	GError *error = nullptr;
	if (!gst_init_check(nullptr, nullptr, &error)) {
		std::fprintf(stderr, _("gpuhandle-avbridge: GStreamer did not initialise: %s\n"),
			     error ? error->message : _("unknown error"));
		g_clear_error(&error);
		return 1;
	}
	installLog(options->verbose);
	catchInterrupt();
	Report report(options->quiet);
	const Status status = options->mode == Mode::ToGst ? runToGst(*options, report)
							   : runFromGst(*options, report);
	gst_deinit(); // every pipeline is gone: the leaks tracer reports here
	if (!status) {
		report.endLine();
		std::fprintf(stderr, _("gpuhandle-avbridge: error: %s\n"),
			     status.error().message().c_str());
		return 1;
	}
	return 0;
}
