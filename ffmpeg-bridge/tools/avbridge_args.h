// gpuhandle-avbridge's command line: the two modes, their options, and the help text.
#pragma once

#include <gpuhandle/result.h>

#include <cstdint>
#include <string>

namespace gpuhandle::avbridge {

enum class Mode : uint8_t { Help, Version, ToGst, FromGst };

struct Options {
	Mode mode = Mode::Help;
	std::string input{};    // to-gst: the file FFmpeg decodes
	std::string pipeline{}; // the GStreamer pipeline after appsrc (to-gst) or before appsink
	std::string output{};   // from-gst: the file FFmpeg writes
	std::string hwaccel{};  // to-gst: decoder device type (ffmpeg's -hwaccel)
	std::string hwDevice{}; // TYPE[:DEVICE] for the filter graph (ffmpeg's -init_hw_device)
	std::string filter{};   // a libavfilter graph description; empty: frames pass as they are
	std::string codec = "rawvideo";
	std::string format{}; // from-gst: the muxer (ffmpeg's -f); empty: guessed from OUTPUT
	int64_t frames = -1;  // stop after this many frames; -1: all
	int64_t timeoutSeconds = 30; // the longest the program waits for the pipeline to move
	bool verbose = false;        // FFmpeg's and the pipeline's messages at info level
	bool quiet = false;          // no progress line and no summary
};

// Parses argv. Errors: InvalidArgument with a sentence for the user (unknown option, missing
// value or argument, an option of the other mode, a malformed number).
Result<Options> parseArgs(int argc, char **argv);

// The --help text.
const char *helpText() noexcept;

} // namespace gpuhandle::avbridge
