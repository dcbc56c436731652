// gpuhandle-demo's progress line and its table: frames, the path of each step, fences waited.
#include "demo_report.h"

#include "gpuhandle_i18n.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace gpuhandle::demo {

namespace {

double ms(std::chrono::nanoseconds ns)
{
	return static_cast<double>(ns.count()) / 1e6;
}

// Columns of the table: step, what, frames, zero-copy, GPU copy, CPU copy, fences, wait time.
constexpr size_t kColumns = 8;
using Widths = std::array<size_t, kColumns>;
constexpr Widths kMinWidths = { 13, 34, 6, 9, 8, 8, 6, 10 };

// Characters on the terminal, not bytes: translated headings and steps are UTF-8 ("Schritt",
// "étape"), and printf's %-13s would pad them by bytes. Counts code points (no wide scripts in
// the translations we ship).
size_t displayWidth(const std::string &text)
{
	size_t width = 0;
	for (const char c : text)
		if ((static_cast<unsigned char>(c) & 0xc0) != 0x80)
			++width;
	return width;
}

void pad(std::string &line, const std::string &text, size_t width, bool left)
{
	const size_t shown = displayWidth(text);
	const size_t fill = shown < width ? width - shown : 0;
	if (!left)
		line.append(fill, ' ');
	line += text;
	if (left)
		line.append(fill, ' ');
}

// Step and what to the left, numbers to the right; a column as wide as its widest heading.
void row(const Widths &widths, const std::array<std::string, kColumns> &cells)
{
	std::string line = "  ";
	for (size_t i = 0; i < kColumns; ++i) {
		if (i > 0)
			line += ' ';
		pad(line, cells[i], widths[i], i < 2);
	}
	line += '\n';
	std::fputs(line.c_str(), stdout);
}

void row(const Widths &widths, const char *step, const std::string &what, int64_t frames,
	 const std::string &zero, const std::string &gpu, const std::string &cpu,
	 const std::string &fences, const std::string &wait)
{
	row(widths, { step, what, std::to_string(frames), zero, gpu, cpu, fences, wait });
}

std::string count(uint64_t n)
{
	return std::to_string(n);
}

std::string waitText(double milliseconds)
{
	char text[32];
	std::snprintf(text, sizeof text, "%.2f ms", milliseconds);
	return text;
}

} // namespace

Progress::Progress(bool quiet, int64_t total)
	: enabled_(!quiet && isatty(STDERR_FILENO) == 1), total_(total),
	  start_(std::chrono::steady_clock::now())
{
}

void Progress::update(int64_t pushed, int64_t rendered, bool force)
{
	if (!enabled_)
		return;
	const auto now = std::chrono::steady_clock::now();
	if (!force && shown_ && now - last_ < std::chrono::milliseconds(100))
		return;
	last_ = now;
	const double seconds = std::chrono::duration<double>(now - start_).count();
	// \r and erase-line keep it on one line however the numbers shrink.
	std::fputs("\r\x1b[K", stderr);
	std::fprintf(stderr,
		     _("gpuhandle-demo: frame %lld/%lld decoded and handed over, %lld in GL"
		       "  %.1f fps"),
		     static_cast<long long>(pushed), static_cast<long long>(total_),
		     static_cast<long long>(rendered),
		     seconds > 0 ? static_cast<double>(rendered) / seconds : 0.0);
	std::fflush(stderr);
	shown_ = true;
}

void Progress::end()
{
	if (!shown_)
		return;
	std::fputc('\n', stderr);
	shown_ = false;
}

void printSummary(const Summary &s)
{
	const ClipStats &clip = *s.clip;
	const BridgeStats &bridge = *s.bridge;
	const double seconds = std::chrono::duration<double>(s.elapsed).count();
	const std::string frames =
		i18n::format(P_("%lld frame of %dx%d in %.2f s (%.1f fps)",
				"%lld frames of %dx%d in %.2f s (%.1f fps)", s.frames),
			     static_cast<long long>(s.frames), s.width, s.height, seconds,
			     seconds > 0 ? static_cast<double>(s.rendered) / seconds : 0.0);
	const std::string sheet = i18n::format(
		P_("contact sheet of %d frame (%dx%d) in %s",
		   "contact sheet of %d frames (%dx%d) in %s", s.sheet->placed()),
		s.sheet->placed(), s.sheet->width(), s.sheet->height(), s.output.c_str());
	std::printf(_("gpuhandle-demo: %s; %s\n"), frames.c_str(), sheet.c_str());
	const std::string device =
		clip.vulkanDevice.empty() ? i18n::format(_("none (%s)"), clip.vulkanProblem.c_str())
					  : clip.vulkanDevice;
	std::printf("  %s\n", i18n::format(_("FFmpeg Vulkan device: %s"), device.c_str()).c_str());
	std::printf("  %s\n\n", i18n::format(_("GStreamer: %s"), s.pipeline.c_str()).c_str());

	const std::array<std::string, kColumns> headings = {
		_("step"),     _("what"),     _("frames"), _("zero-copy"),
		_("GPU copy"), _("CPU copy"), _("fences"), _("wait time"),
	};
	Widths w = kMinWidths;
	for (size_t i = 0; i < kColumns; ++i)
		w[i] = std::max(w[i], displayWidth(headings[i]));
	// A translated step or description widens its column so the numbers stay aligned. English
	// keeps its widths, one description overflowing by a character, as scripts have seen it.
	const auto translated = [&w](size_t column, const char *english) {
		const char *shown = _(english);
		if (std::strcmp(shown, english) != 0)
			w[column] = std::max(w[column], displayWidth(shown));
		return std::string(shown);
	};
	const std::string decoded = translated(1, N_("testsrc2 -> FFV1 -> decoded yuv420p"));
	const std::string upload = translated(1, N_("upload into Vulkan (hwupload)"));
	const std::string toSheet = translated(1, N_("convert, scale, gldownload -> sheet"));
	const std::string total = translated(0, N_("total"));
	const std::string handOffs = translated(1, N_("gpuhandle hand-offs"));
	row(w, headings);
	row(w, "ffmpeg", decoded, clip.decoded, "-", "-", "-", "-", "-");
	if (clip.uploaded > 0)
		row(w, "ffmpeg", upload, clip.uploaded, "0", "0",
		    count(static_cast<uint64_t>(clip.uploaded)), "-", "-");
	row(w, "bridge", "AVFrame -> Frame -> GstBuffer", bridge.frames,
	    count(static_cast<uint64_t>(bridge.zeroCopy)), "0", "0",
	    count(static_cast<uint64_t>(bridge.fenceWaits)), waitText(ms(bridge.waitTime)));
	uint64_t zero = static_cast<uint64_t>(bridge.zeroCopy), gpu = 0, cpu = 0;
	uint64_t fences = static_cast<uint64_t>(bridge.fenceWaits);
	double waitMs = ms(bridge.waitTime);
	for (const ElementReport &e : s.elements) {
		row(w, e.name.c_str(), e.factory, static_cast<int64_t>(e.frames), count(e.zeroCopy),
		    count(e.gpuCopies), count(e.cpuCopies), count(e.fenceWaits),
		    waitText(static_cast<double>(e.waitNs) / 1e6));
		zero += e.zeroCopy;
		gpu += e.gpuCopies;
		cpu += e.cpuCopies;
		fences += e.fenceWaits;
		waitMs += static_cast<double>(e.waitNs) / 1e6;
	}
	row(w, "gl", toSheet, s.rendered, "-", "-", "-", "-", "-");
	row(w, total.c_str(), handOffs, static_cast<int64_t>(zero + gpu + cpu), count(zero),
	    count(gpu), count(cpu), count(fences), waitText(waitMs));

	std::printf("\n  %s\n", _("paths taken:"));
	std::string text;
	if (clip.uploaded > 0)
		text = i18n::format(_("CPU copy: the FFV1 decoder writes host memory, so "
				      "FFmpeg uploads each frame into its Vulkan frames once "
				      "(%.2f ms in all)"),
				    ms(clip.uploadTime));
	else
		text = i18n::format(_("frames stay in host memory: %s"),
				    clip.vulkanProblem.c_str());
	std::printf("    ffmpeg: %s\n", text.c_str());
	text = i18n::format(_("zero-copy: %s wrapped as GpuHandle memory (memory:GpuHandle)"),
			    bridge.memory.c_str());
	std::printf("    bridge: %s\n", text.c_str());
	// The elements' own path lines (GStreamer debug text, in English like all debug output).
	for (const ElementReport &e : s.elements)
		for (const std::string &line : e.paths)
			std::printf("    %s: %s\n", e.name.c_str(), line.c_str());
	for (const ElementReport &e : s.elements)
		if (e.name == "into-gl" && e.gpuCopies > 0 && s.elements.size() > 1)
			std::printf("    %s\n",
				    _("note: GStreamer's Vulkan images reach GL by a GPU copy; "
				      "with --direct, FFmpeg's frames enter GL without one"));
	text = i18n::format(_("thumbnails read back by gldownload for the PNG (a CPU copy of %dx%d "
			      "RGBA per frame, outside gpuhandle)"),
			    s.sheet->thumbWidth(), s.sheet->thumbHeight());
	std::printf("    gl: %s\n", text.c_str());
	text = i18n::format(_("fences: %llu waited, %.2f ms in all (bridge: at most %.2f ms for "
			      "one)"),
			    static_cast<unsigned long long>(fences), waitMs, ms(bridge.maxWait));
	std::printf("  %s\n", text.c_str());
}

} // namespace gpuhandle::demo
