// gpuhandleavfilter: the element type, its state, and the parts its files share (not installed).
#pragma once

#include "av_filter_graph.h"
#include "av_util.h"
#include "gstgpuhandleelements.h"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

struct AVFrame;

namespace gpuhandle::gst::avfilter {

// What the element keeps. Properties are guarded by `mutex` and read when a graph is built; the
// rest belongs to the streaming thread (and to the state change to READY, which stops it).
struct AvfilterState {
	std::mutex mutex{};
	std::string graphText{ "null" };
	std::string hwDevice{}; // empty: the input frames' own device, when they are GPU frames

	// The input caps (the CAPS event's; the graph is built at the next buffer).
	GstVideoInfo inInfo{};
	bool inGpuHandle = false;
	bool inCapsChanged = false;
	bool haveInCaps = false;

	// The graph, its device and the frames context hardware input frames are wrapped in.
	std::unique_ptr<av::FilterGraph> graph{};
	av::AvBufferOwner device{};
	av::AvBufferOwner inFrames{};
	bool built = false;
	bool feedsHardware = false;
	// An element error was posted: EOS is not passed on (a sink would preroll on it and wait
	// while the application handles the error).
	bool failed = false;
	// Host-memory input frames the graph may still be reading on a Vulkan device: FFmpeg 5.1's
	// hwupload imports their memory, submits the copy without waiting and frees the frame at
	// once (the next allocation may then reuse the memory before the GPU read it). Each output
	// frame is complete when handed on (its acquire point waited, or downloaded), and so are
	// the uploads before it: older inputs are freed then, the newest few kept.
	std::deque<AVFrame *> heldInputs{};
	// Sticky events (segment, tags) that came before the first output caps: pushed after them.
	std::vector<GstEvent *> pendingEvents{};

	// What the src pad was negotiated for (the graph's frames that made its caps).
	bool negotiated = false;
	bool gpuHandle = false;
	bool downstreamVideoMeta = false;
	int outWidth = 0;
	int outHeight = 0;
	int outFormat = -1;
	GstVideoInfo outInfo{};

	std::atomic<uint64_t> framesIn{ 0 };
	std::atomic<uint64_t> framesOut{ 0 };
	std::atomic<uint64_t> gpuHandleFrames{ 0 }; // pushed as memory:GpuHandle
	std::atomic<uint64_t> copiesIn{ 0 };        // input frames copied to reach FFmpeg
	std::atomic<uint64_t> copiesOut{ 0 };       // output frames copied to reach downstream
};

AvfilterState &stateOf(void *self);

// gstgpuhandleavfilterio.cpp: a graph for the input caps and the first buffer's frames (its
// device chosen, its errors posted), an input buffer into it, and a filtered frame to the src
// pad's caps and memory (negotiated or renegotiated for it).
bool buildGraph(GstBaseTransform *trans, AvfilterState &s, GstBuffer *first);
GstFlowReturn feed(GstBaseTransform *trans, AvfilterState &s, GstBuffer *buffer);
GstFlowReturn outputOf(GstBaseTransform *trans, AvfilterState &s, AVFrame *frame, GstBuffer **out);
void dropGraph(AvfilterState &s);
// Frees the held input frames but the newest `keep`.
void releaseHeldInputs(AvfilterState &s, size_t keep);

} // namespace gpuhandle::gst::avfilter

// The element type, declared as GStreamer's elements are (G_DECLARE_FINAL_TYPE,
// GST_ELEMENT_REGISTER_DECLARE); its instance holds the state above.
G_BEGIN_DECLS
#define GST_TYPE_GPU_HANDLE_AVFILTER (gst_gpu_handle_avfilter_get_type())
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DECLARE_FINAL_TYPE(GstGpuHandleAvfilter, gst_gpu_handle_avfilter, GST, GPU_HANDLE_AVFILTER,
		     GstBaseTransform)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DECLARE(gpuhandleavfilter);
G_END_DECLS

struct _GstGpuHandleAvfilter {
	GstBaseTransform parent;
	gpuhandle::gst::avfilter::AvfilterState *state;
};
