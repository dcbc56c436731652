// gpuhandle-avbridge's command line: options in any order, `--opt VALUE` or `--opt=VALUE`.
#include "avbridge_args.h"

#include "gpuhandle_i18n.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace gpuhandle::avbridge {

namespace {

constexpr const char *kHelp = N_(
	"Usage:\n"
	"  gpuhandle-avbridge to-gst INPUT [OPTIONS] PIPELINE\n"
	"  gpuhandle-avbridge from-gst PIPELINE [OPTIONS] OUTPUT\n"
	"\n"
	"to-gst decodes INPUT with FFmpeg, runs the filter graph, and pushes every frame as\n"
	"video/x-raw(memory:GpuHandle) into `appsrc ! PIPELINE` (hardware frames stay on their\n"
	"device). from-gst runs `PIPELINE ! appsink`, turns every buffer into an AVFrame, runs the\n"
	"filter graph and encodes and muxes the frames into OUTPUT.\n"
	"\n"
	"Options:\n"
	"  --hwaccel TYPE     to-gst: decode on a device of TYPE (vulkan, vaapi, cuda, ...)\n"
	"  --hw-device TYPE[:DEVICE]\n"
	"                     create a device of TYPE for the filter graph (hwupload, hwmap)\n"
	"  --filter GRAPH     a libavfilter graph run on every frame, e.g. format=nv12,hwupload\n"
	"  --frames N         stop after N frames\n"
	"  --codec NAME       from-gst: the encoder (default rawvideo)\n"
	"  --format NAME      from-gst: the muxer (default: guessed from OUTPUT; .yuv and .raw\n"
	"                     files get rawvideo)\n"
	"  --timeout SECONDS  the longest wait for the pipeline to take or give a frame (30)\n"
	"  --verbose          FFmpeg's messages at info level\n"
	"  --quiet            no progress line and no summary\n"
	"  --version          the program's version\n"
	"  -h, --help         this text\n"
	"\n"
	"Examples:\n"
	"  gpuhandle-avbridge to-gst clip.mkv gpuhandledownload ! videoconvert ! autovideosink\n"
	"  gpuhandle-avbridge to-gst clip.mkv --hw-device vulkan --filter format=nv12,hwupload \\\n"
	"      'gpuhandledownload ! filesink location=out.nv12'\n"
	"  gpuhandle-avbridge from-gst 'videotestsrc num-buffers=10 ! video/x-raw,format=I420' "
	"out.yuv\n");

// A year: far beyond any wait the program makes, far below what a deadline can hold.
constexpr int64_t kLongestTimeout = 365LL * 24 * 3600;

enum class Takes : uint8_t { Nothing, Value };

struct OptionSpec {
	const char *name;
	Takes takes;
	bool toGst;
	bool fromGst;
};

constexpr OptionSpec kOptions[] = {
	{ "--hwaccel", Takes::Value, true, false }, { "--hw-device", Takes::Value, true, true },
	{ "--filter", Takes::Value, true, true },   { "--frames", Takes::Value, true, true },
	{ "--codec", Takes::Value, false, true },   { "--format", Takes::Value, false, true },
	{ "--timeout", Takes::Value, true, true },  { "--verbose", Takes::Nothing, true, true },
	{ "--quiet", Takes::Nothing, true, true },
};

Error usage(const std::string &sentence)
{
	return Error(ErrorCode::InvalidArgument, "arguments",
		     i18n::format(_("%s (see gpuhandle-avbridge --help)"), sentence.c_str()));
}

Result<int64_t> positiveNumber(const std::string &option, const std::string &text)
{
	errno = 0;
	char *end = nullptr;
	const long long value = std::strtoll(text.c_str(), &end, 10);
	if (text.empty() || errno != 0 || !end || *end != '\0' || value <= 0)
		return usage(i18n::format(_("%s needs a positive whole number, not '%s'"),
					  option.c_str(), text.c_str()));
	return static_cast<int64_t>(value);
}

Status apply(Options &options, std::string_view name, const std::string &value)
{
	if (name == "--hwaccel")
		options.hwaccel = value;
	else if (name == "--hw-device")
		options.hwDevice = value;
	else if (name == "--filter")
		options.filter = value;
	else if (name == "--codec")
		options.codec = value;
	else if (name == "--format")
		options.format = value;
	else if (name == "--verbose")
		options.verbose = true;
	else if (name == "--quiet")
		options.quiet = true;
	else if (name == "--frames" || name == "--timeout") {
		Result<int64_t> number = positiveNumber(std::string(name), value);
		if (!number)
			return number.error();
		// steady_clock::now() + seconds(N) overflows (a deadline in the past) for huge N.
		if (name == "--timeout" && *number > kLongestTimeout)
			return usage(i18n::format(_("--timeout takes at most %lld seconds, not %s"),
						  static_cast<long long>(kLongestTimeout),
						  value.c_str()));
		(name == "--frames" ? options.frames : options.timeoutSeconds) = *number;
	}
	return {};
}

std::string joined(const std::vector<std::string> &words, size_t from, size_t to)
{
	std::string out;
	for (size_t i = from; i < to; ++i)
		out += (out.empty() ? "" : " ") + words[i];
	return out;
}

} // namespace

const char *helpText() noexcept
{
	return _(kHelp);
}

Result<Options> parseArgs(int argc, char **argv)
{
	Options options{};
	std::vector<std::string> positional;
	bool optionsEnded = false;
	for (int i = 1; i < argc; ++i) {
		const std::string arg = argv[i];
		if (arg == "-h" || arg == "--help") {
			options.mode = Mode::Help;
			return options;
		}
		if (arg == "--version") {
			options.mode = Mode::Version;
			return options;
		}
		if (optionsEnded || arg.size() < 2 || arg[0] != '-') {
			positional.push_back(arg);
			continue;
		}
		if (arg == "--") {
			optionsEnded = true;
			continue;
		}
		const size_t eq = arg.find('=');
		const std::string name = arg.substr(0, eq);
		const OptionSpec *spec = nullptr;
		for (const OptionSpec &candidate : kOptions)
			if (name == candidate.name)
				spec = &candidate;
		if (!spec)
			return usage(i18n::format(_("unknown option '%s'"), name.c_str()));
		std::string value;
		if (spec->takes == Takes::Value) {
			if (eq != std::string::npos)
				value = arg.substr(eq + 1);
			else if (i + 1 < argc)
				value = argv[++i];
			else
				return usage(
					i18n::format(_("option %s needs a value"), name.c_str()));
		} else if (eq != std::string::npos) {
			return usage(i18n::format(_("option %s takes no value"), name.c_str()));
		}
		if (Status applied = apply(options, name, value); !applied)
			return applied.error();
		// Checked once the mode is known, below.
		positional.push_back("\x01" + name);
	}
	size_t modeAt = 0;
	while (modeAt < positional.size() && positional[modeAt][0] == '\x01')
		++modeAt;
	if (modeAt == positional.size())
		return usage(_("no mode given: to-gst or from-gst"));
	const std::string mode = positional[modeAt];
	positional.erase(positional.begin() + static_cast<std::ptrdiff_t>(modeAt));
	if (mode == "to-gst")
		options.mode = Mode::ToGst;
	else if (mode == "from-gst")
		options.mode = Mode::FromGst;
	else
		return usage(
			i18n::format(_("unknown mode '%s': to-gst or from-gst"), mode.c_str()));
	std::vector<std::string> words;
	for (const std::string &word : positional) {
		if (word.empty() || word[0] != '\x01') {
			words.push_back(word);
			continue;
		}
		for (const OptionSpec &spec : kOptions) {
			if (word.compare(1, std::string::npos, spec.name) != 0)
				continue;
			if (options.mode == Mode::ToGst ? !spec.toGst : !spec.fromGst)
				return usage(i18n::format(_("option %s is not an option of %s"),
							  word.c_str() + 1, mode.c_str()));
		}
	}
	if (words.size() < 2)
		return usage(options.mode == Mode::ToGst ? _("to-gst needs INPUT and PIPELINE")
							 : _("from-gst needs PIPELINE and OUTPUT"));
	if (options.mode == Mode::ToGst) {
		options.input = words.front();
		options.pipeline = joined(words, 1, words.size());
	} else {
		options.pipeline = joined(words, 0, words.size() - 1);
		options.output = words.back();
	}
	return options;
}

} // namespace gpuhandle::avbridge
