// gpuhandle-info's bridge matrix: for each pair of GStreamer memory types, the path a frame takes
// through gpuhandleupload ! gpuhandledownload here, measured by running the pipeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuhandle::info {

// One pair's run: each element's path counters (its `stats` property), or why it did not run.
struct Bridge {
	std::string from;       // the input memory type ("GLMemory")
	std::string into;       // the output memory type
	bool ran = false;       // frames went through
	std::string path;       // "zero-copy", "gpu-copy" or "cpu-copy": the costliest of the two
	std::string why;        // when !ran: the pipeline's error, or what is missing
	std::string detail;     // GStreamer's debug text of that error
	uint64_t frames = 0;    // frames gpuhandledownload handled
	uint64_t upload[3]{};   // gpuhandleupload's zero-copy, gpu-copies, cpu-copies
	uint64_t download[3]{}; // gpuhandledownload's
};

// How GStreamer's GL elements find a display in this process. With no window system (no
// DISPLAY, WAYLAND_DISPLAY or GST_GL_WINDOW) GStreamer's default display fails ("Failed to
// initialize egl") and every GLMemory bridge with it, so chooseGlDisplay() picks the EGL device
// display GStreamer has for headless machines (GST_GL_WINDOW=egl-device, GST_GL_PLATFORM=egl),
// for this process only. Called first in main: it sets environment variables, which must
// happen before any thread starts.
struct GlDisplay {
	std::string window;   // GST_GL_WINDOW's value, empty for the window system's default
	std::string chosenBy; // "environment", "window-system" or "gpuhandle-info"
};
GlDisplay chooseGlDisplay();
std::string glDisplayJson(const GlDisplay &display);

// Runs `videotestsrc ! <producer of from> ! gpuhandleupload ! gpuhandledownload !
// video/x-raw(<into>) ! fakesink` for every pair of built memory types (each bounded: 20 s).
// Empty when gpuhandle-info was built without GStreamer.
std::vector<Bridge> measureBridges();

// The list as a JSON array, and as a text table (rows: from, columns: into).
std::string bridgesJson(const std::vector<Bridge> &bridges);
void printBridgesText(const std::vector<Bridge> &bridges, const GlDisplay &glDisplay);

// The memory budget gpuhandle's elements share in this process (libgstgpuhandle-1.0's
// processBudget) after the bridge runs, for each backend kind they allocated frames on.
struct BudgetUse {
	std::string backend;
	uint64_t peakBytes = 0;  // the most held at once, over every run
	uint64_t inUseBytes = 0; // held now, every pipeline stopped: 0 unless frames leaked
	uint64_t capBytes = 0;   // the hard cap; 0 for none
};
std::vector<BudgetUse> budgetUse();
std::string budgetJson(const std::vector<BudgetUse> &uses);
void printBudgetText(const std::vector<BudgetUse> &uses);

} // namespace gpuhandle::info
