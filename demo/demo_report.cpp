// gpuhandle-demo's progress line and its table: frames, the path of each step, fences waited.
#include "demo_report.h"

#include <cstdio>
#include <unistd.h>

namespace gpuhandle::demo {

namespace {

double ms(std::chrono::nanoseconds ns)
{
	return static_cast<double>(ns.count()) / 1e6;
}

void row(const char *step, const std::string &what, int64_t frames, const std::string &zero,
	 const std::string &gpu, const std::string &cpu, const std::string &fences,
	 const std::string &wait)
{
	std::printf("  %-13s %-34s %6lld %9s %8s %8s %6s %10s\n", step, what.c_str(),
		    static_cast<long long>(frames), zero.c_str(), gpu.c_str(), cpu.c_str(),
		    fences.c_str(), wait.c_str());
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
	std::fprintf(stderr,
		     "\r\x1b[Kgpuhandle-demo: frame %lld/%lld decoded and handed over, %lld in GL"
		     "  %.1f fps",
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
	std::printf("gpuhandle-demo: %lld frame%s of %dx%d in %.2f s (%.1f fps); contact sheet of "
		    "%d frame%s (%dx%d) in %s\n",
		    static_cast<long long>(s.frames), s.frames == 1 ? "" : "s", s.width, s.height,
		    seconds, seconds > 0 ? static_cast<double>(s.rendered) / seconds : 0.0,
		    s.sheet->placed(), s.sheet->placed() == 1 ? "" : "s", s.sheet->width(),
		    s.sheet->height(), s.output.c_str());
	std::printf("  FFmpeg Vulkan device: %s\n",
		    clip.vulkanDevice.empty() ? ("none (" + clip.vulkanProblem + ")").c_str()
					      : clip.vulkanDevice.c_str());
	std::printf("  GStreamer: %s\n\n", s.pipeline.c_str());
	std::printf("  %-13s %-34s %6s %9s %8s %8s %6s %10s\n", "step", "what", "frames",
		    "zero-copy", "GPU copy", "CPU copy", "fences", "wait time");
	row("ffmpeg", "testsrc2 -> FFV1 -> decoded yuv420p", clip.decoded, "-", "-", "-", "-", "-");
	if (clip.uploaded > 0)
		row("ffmpeg", "upload into Vulkan (hwupload)", clip.uploaded, "0", "0",
		    count(static_cast<uint64_t>(clip.uploaded)), "-", "-");
	row("bridge", "AVFrame -> Frame -> GstBuffer", bridge.frames,
	    count(static_cast<uint64_t>(bridge.zeroCopy)), "0", "0",
	    count(static_cast<uint64_t>(bridge.fenceWaits)), waitText(ms(bridge.waitTime)));
	uint64_t zero = static_cast<uint64_t>(bridge.zeroCopy), gpu = 0, cpu = 0;
	uint64_t fences = static_cast<uint64_t>(bridge.fenceWaits);
	double waitMs = ms(bridge.waitTime);
	for (const ElementReport &e : s.elements) {
		row(e.name.c_str(), e.factory, static_cast<int64_t>(e.frames), count(e.zeroCopy),
		    count(e.gpuCopies), count(e.cpuCopies), count(e.fenceWaits),
		    waitText(static_cast<double>(e.waitNs) / 1e6));
		zero += e.zeroCopy;
		gpu += e.gpuCopies;
		cpu += e.cpuCopies;
		fences += e.fenceWaits;
		waitMs += static_cast<double>(e.waitNs) / 1e6;
	}
	row("gl", "convert, scale, gldownload -> sheet", s.rendered, "-", "-", "-", "-", "-");
	row("total", "gpuhandle hand-offs", static_cast<int64_t>(zero + gpu + cpu), count(zero),
	    count(gpu), count(cpu), count(fences), waitText(waitMs));

	std::printf("\n  paths taken:\n");
	if (clip.uploaded > 0)
		std::printf("    ffmpeg: CPU copy: the FFV1 decoder writes host memory, so FFmpeg "
			    "uploads each frame into its Vulkan frames once (%.2f ms in all)\n",
			    ms(clip.uploadTime));
	else
		std::printf("    ffmpeg: frames stay in host memory: %s\n",
			    clip.vulkanProblem.c_str());
	std::printf("    bridge: zero-copy: %s wrapped as GpuHandle memory (memory:GpuHandle)\n",
		    bridge.memory.c_str());
	for (const ElementReport &e : s.elements)
		for (const std::string &line : e.paths)
			std::printf("    %s: %s\n", e.name.c_str(), line.c_str());
	for (const ElementReport &e : s.elements)
		if (e.name == "into-gl" && e.gpuCopies > 0 && s.elements.size() > 1)
			std::printf(
				"    note: GStreamer's Vulkan images reach GL by a GPU copy; with "
				"--direct, FFmpeg's frames enter GL without one\n");
	std::printf("    gl: thumbnails read back by gldownload for the PNG (a CPU copy of %dx%d "
		    "RGBA per frame, outside gpuhandle)\n",
		    s.sheet->thumbWidth(), s.sheet->thumbHeight());
	std::printf("  fences: %llu waited, %.2f ms in all (bridge: at most %.2f ms for one)\n",
		    static_cast<unsigned long long>(fences), waitMs, ms(bridge.maxWait));
}

} // namespace gpuhandle::demo
