// gpuhandlesrc: the element type and its instance (not installed).
#pragma once

#include <gpuhandle/frame_transport.h>

#include "gstgpuhandleelements.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <gst/base/gstpushsrc.h>
#include <gst/gpuhandle/gstgpuhandleshmcache.hpp>
#include <gst/video/video.h>

namespace gpuhandle::gst::src {

// What the element keeps. Properties are guarded by `mutex`; the receiver is made in start and
// destroyed in stop, and used by the streaming thread (get_caps reads its caps under `mutex`).
struct SrcState {
	std::mutex mutex{};
	std::string socketPath{};
	guint64 connectTimeoutNs = 5ull * GST_SECOND;
	std::string allowedUids{};

	std::unique_ptr<FrameReceiver> receiver{};
	std::string caps{};        // the producer's caps the pad was negotiated for
	uint64_t capsMessages = 0; // the receiver's count when `caps` was last read from it
	// From the last allocation query (the streaming thread's): whether downstream reads
	// GstVideoMeta, whether the caps are memory:GpuHandle (read per frame without a caps
	// query), and the negotiated video info its system-memory buffers must match.
	bool downstreamVideoMeta = false;
	bool gpuHandleCaps = false;
	GstVideoInfo info{};
	std::atomic<bool> flushing{ false };
	std::atomic<uint64_t> frames{ 0 };
	std::atomic<uint64_t> gpuHandleFrames{ 0 }; // pushed as memory:GpuHandle
	// Frames whose metas from the producer were malformed.
	std::atomic<uint64_t> metasRefused{ 0 };
	// The producer's memfds, each mapped once (the streaming thread's; emptied when the caps
	// change and in stop): a reader of the pixels pays no mmap and page faults per frame.
	ShmMemoryCache shmFiles{};
	std::atomic<uint64_t> framesOverCachedFiles{ 0 };
};

} // namespace gpuhandle::gst::src

// The element type, declared as GStreamer's elements are (G_DECLARE_FINAL_TYPE,
// GST_ELEMENT_REGISTER_DECLARE); its instance holds the state above.
G_BEGIN_DECLS
#define GST_TYPE_GPU_HANDLE_SRC (gst_gpu_handle_src_get_type())
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DECLARE_FINAL_TYPE(GstGpuHandleSrc, gst_gpu_handle_src, GST, GPU_HANDLE_SRC, GstPushSrc)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DECLARE(gpuhandlesrc);
G_END_DECLS

struct _GstGpuHandleSrc {
	GstPushSrc parent;
	gpuhandle::gst::src::SrcState *state;
};
