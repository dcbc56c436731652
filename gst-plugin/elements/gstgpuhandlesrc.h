// gpuhandlesrc: the element type and its instance (not installed).
#pragma once

#include <gpuhandle/frame_transport.h>

#include "gstgpuhandleelements.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <gst/base/gstpushsrc.h>
#include <gst/video/video.h>

extern "C" GType gst_gpu_handle_src_get_type(void);

namespace gpuhandle::gst::src {

// What the element keeps. Properties are guarded by `mutex`; the receiver is made in start and
// destroyed in stop, and used by the streaming thread (get_caps reads its caps under `mutex`).
struct SrcState {
	std::mutex mutex{};
	std::string socketPath{};
	guint64 connectTimeoutNs = 5ull * GST_SECOND;
	std::string allowedUids{};

	std::unique_ptr<FrameReceiver> receiver{};
	std::string caps{}; // the producer's caps the pad was negotiated for
	// From the last allocation query (the streaming thread's): whether downstream reads
	// GstVideoMeta, and the negotiated video info its system-memory buffers must match.
	bool downstreamVideoMeta = false;
	GstVideoInfo info{};
	std::atomic<bool> flushing{ false };
	std::atomic<uint64_t> frames{ 0 };
	std::atomic<uint64_t> gpuHandleFrames{ 0 }; // pushed as memory:GpuHandle
	// Frames whose metas from the producer were malformed.
	std::atomic<uint64_t> metasRefused{ 0 };
};

} // namespace gpuhandle::gst::src

struct GstGpuHandleSrc {
	GstPushSrc parent;
	gpuhandle::gst::src::SrcState *state;
};
struct GstGpuHandleSrcClass {
	GstPushSrcClass parent_class;
};
