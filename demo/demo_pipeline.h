// gpuhandle-demo's GStreamer side: appsrc of GpuHandle frames -> Vulkan -> GL -> appsink.
#pragma once

#include <gpuhandle/result.h>

#include "demo_sheet.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gst/gst.h>

extern "C" {
#include <libavutil/frame.h>
}

namespace gpuhandle::demo {

// One gpuhandle element's `stats`, and the path lines its debug category printed.
struct ElementReport {
	std::string name;    // "into-vulkan"
	std::string factory; // "gpuhandledownload -> GLMemory": the element and what it does
	uint64_t frames = 0, zeroCopy = 0, gpuCopies = 0, cpuCopies = 0, fenceWaits = 0;
	uint64_t waitNs = 0;
	std::vector<std::string> paths; // "i420 into VulkanImage: gpu-copy (gpu-copy): ..."
};

// What the bridge (AVFrame -> Frame -> GstBuffer) did, for the table.
struct BridgeStats {
	int64_t frames = 0;
	int64_t zeroCopy = 0; // every frame: frameFromAVFrame and bufferFromFrame wrap
	int64_t fenceWaits = 0;
	std::chrono::nanoseconds waitTime{ 0 };
	std::chrono::nanoseconds maxWait{ 0 };
	std::string memory; // "VulkanMemoryFd (opaque fd)", "CpuPlanes"
};

class Pipeline
{
public:
	// `sheet` receives the thumbnails (borrowed: it outlives the pipeline). `viaVulkan`: the
	// frames go into GStreamer's Vulkan images first (into-vulkan, from-vulkan), then into GL;
	// else straight into GL.
	Pipeline(Sheet &sheet, bool viaVulkan);
	~Pipeline();
	Pipeline(const Pipeline &) = delete;
	Pipeline &operator=(const Pipeline &) = delete;

	// The description, for the table and errors.
	const std::string &description() const noexcept { return description_; }
	// Errors: InvalidArgument (an element is missing: GStreamer's sentence), Backend.
	Status start(std::chrono::seconds timeout);
	// Hands one FFmpeg frame (software or Vulkan) to appsrc through gpuhandle. The caller keeps
	// `frame`. Errors: those of the bridge, the pipeline's own errors, Timeout.
	Status push(const AVFrame *frame, bool exportVulkanMemory);
	// End of stream, then waits (bounded) for the last frame to reach the sheet.
	Status finish();
	int64_t rendered() const;

	const BridgeStats &bridge() const noexcept { return bridge_; }
	// One entry per gpuhandle element, in pipeline order.
	std::vector<ElementReport> elements() const;

	// Called by GStreamer (the appsink and the debug log); not for the caller.
	GstFlowReturn onSample(GstElement *sink);
	void onLog(GstDebugCategory *category, GstDebugLevel level, GObject *object,
		   GstDebugMessage *message);

private:
	Status poll(std::chrono::milliseconds wait);
	Status waitForRoom();

	Sheet &sheet_;
	std::string description_;
	std::chrono::seconds timeout_{ 30 };
	GstElement *pipeline_ = nullptr;
	GstElement *appsrc_ = nullptr;
	GstBus *bus_ = nullptr;
	GstCaps *caps_ = nullptr;
	bool eos_ = false;
	bool logInstalled_ = false;
	bool forwardPathLines_ = false; // the user asked for gpuhandle's INFO lines (GST_DEBUG)
	BridgeStats bridge_{};
	mutable std::mutex mutex_; // below: written on streaming threads
	int64_t rendered_ = 0;
	Status sampleStatus_{};
	std::map<std::string, std::vector<std::string>> pathLines_;
};

} // namespace gpuhandle::demo
