// gpuhandle-avbridge's output for people: a progress line on a terminal, the summary at the end.
#pragma once

#include <gpuhandle/execution_path.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpuhandle::avbridge {

// Ctrl-C (SIGINT, SIGTERM) ends the stream cleanly: the output is finished as at its end. A
// second one kills the program.
void catchInterrupt();
bool interrupted() noexcept;

// Counts frames, how each moved, and prints progress (in place, on a terminal only) and the
// summary on stderr.
class Report
{
public:
	explicit Report(bool quiet);

	// One frame done; `path` is how it crossed the bridge.
	void frame(const ExecutionPath &path);
	// A line the summary prints as it is (a pipeline element's statistics).
	void note(std::string line);
	// Ends the progress line (before an error message).
	void endLine();
	// Ends the progress line and prints the summary.
	void finish(const char *what);
	int64_t frames() const noexcept { return frames_; }

private:
	void progress(bool force);

	bool quiet_ = false;
	bool tty_ = false;
	bool progressShown_ = false;
	int64_t frames_ = 0;
	std::chrono::steady_clock::time_point start_{};
	std::chrono::steady_clock::time_point lastPrint_{};
	std::map<std::pair<uint32_t, std::string>, int64_t> paths_{};
	std::vector<std::string> notes_{};
};

} // namespace gpuhandle::avbridge
