// gpuhandle-demo's output: the progress line while it runs and the table of what happened.
#pragma once

#include "demo_pipeline.h"
#include "demo_source.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuhandle::demo {

// "frame 12/48 ..." rewritten in place on stderr, a terminal only, at most 10 times a second.
class Progress
{
public:
	Progress(bool quiet, int64_t total);
	void update(int64_t pushed, int64_t rendered, bool force = false);
	// Ends the line (before the table or an error message).
	void end();

private:
	bool shown_ = false;
	bool enabled_ = false;
	int64_t total_ = 0;
	std::chrono::steady_clock::time_point start_{};
	std::chrono::steady_clock::time_point last_{};
};

struct Summary {
	int width = 0, height = 0;
	int64_t frames = 0;
	std::string output;
	const Sheet *sheet = nullptr;
	const ClipStats *clip = nullptr;
	const BridgeStats *bridge = nullptr;
	std::vector<ElementReport> elements;
	int64_t rendered = 0;
	std::string pipeline;
	std::chrono::nanoseconds elapsed{ 0 };
};

// The table, on stdout.
void printSummary(const Summary &summary);

} // namespace gpuhandle::demo
