// gpuhandle-avbridge's progress line and summary.
#include "avbridge_report.h"

#include "gpuhandle_i18n.h"

#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace gpuhandle::avbridge {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

const char *pathWords(uint32_t kind)
{
	switch (static_cast<ExecutionPath::Kind>(kind)) {
	case ExecutionPath::Kind::ZeroCopy: return _("zero-copy");
	case ExecutionPath::Kind::GpuCopy: return _("GPU copy");
	case ExecutionPath::Kind::CpuCopy: return _("CPU copy");
	case ExecutionPath::Kind::NotRun: break;
	}
	return _("not moved");
}

volatile std::sig_atomic_t interruptedFlag = 0;

void onInterrupt(int)
{
	interruptedFlag = 1;
}

} // namespace

void catchInterrupt()
{
	struct sigaction action {};
	action.sa_handler = onInterrupt;
	action.sa_flags = SA_RESETHAND; // the second Ctrl-C takes the default action
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, nullptr);
	sigaction(SIGTERM, &action, nullptr);
}

bool interrupted() noexcept
{
	return interruptedFlag != 0;
}

Report::Report(bool quiet)
	: quiet_(quiet), tty_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()),
	  lastPrint_(start_)
{
}

void Report::frame(const ExecutionPath &path)
{
	++frames_;
	++paths_[{ static_cast<uint32_t>(path.kind()), path.reason() }];
	progress(false);
}

void Report::note(std::string line)
{
	notes_.push_back(std::move(line));
}

void Report::progress(bool force)
{
	if (quiet_ || !tty_)
		return;
	const auto now = std::chrono::steady_clock::now();
	if (!force && now - lastPrint_ < std::chrono::milliseconds(250))
		return;
	lastPrint_ = now;
	const double seconds = secondsSince(start_);
	// \r and the erase-line sequence keep it on one line however the numbers shrink.
	std::fputs("\r\x1b[K", stderr);
	std::fprintf(stderr, _("frames: %lld  fps: %.1f"), static_cast<long long>(frames_),
		     seconds > 0 ? static_cast<double>(frames_) / seconds : 0.0);
	std::fflush(stderr);
	progressShown_ = true;
}

void Report::endLine()
{
	if (!progressShown_)
		return;
	progress(true);
	std::fputc('\n', stderr);
	progressShown_ = false;
}

void Report::finish(const char *what)
{
	if (quiet_)
		return;
	endLine();
	const double seconds = secondsSince(start_);
	// TRANSLATORS: the first %s is "to-gst: pushed" or "from-gst: wrote", translated.
	std::fprintf(stderr,
		     P_("gpuhandle-avbridge: %s %lld frame in %.2f s (%.1f fps)\n",
			"gpuhandle-avbridge: %s %lld frames in %.2f s (%.1f fps)\n", frames_),
		     what, static_cast<long long>(frames_), seconds,
		     seconds > 0 ? static_cast<double>(frames_) / seconds : 0.0);
	for (const auto &[key, count] : paths_)
		std::fprintf(stderr, "  %s: %lld%s%s%s\n", pathWords(key.first),
			     static_cast<long long>(count), key.second.empty() ? "" : " (",
			     key.second.c_str(), key.second.empty() ? "" : ")");
	for (const std::string &line : notes_)
		std::fprintf(stderr, "  %s\n", line.c_str());
}

} // namespace gpuhandle::avbridge
