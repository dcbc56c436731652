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

// How the producer's times become this pipeline's running time (gstgpuhandlesrctiming.cpp):
// the producer's segment, moved by a constant so that each frame's running time here is the
// moment the producer said it is due (its clock time, turned into this pipeline's clock), and
// pushed downstream. The streaming thread's, but for `latency` (read by LATENCY queries).
struct SrcTiming {
	GstSegment producer{}; // the producer's timeline (a default time segment until one came)
	uint64_t timelineMessages = 0; // the receiver's count when `producer` was last read
	GstSegment pushed{};           // the producer's segment as pushed here, moved
	bool mapped = false;           // `pushed` maps this connection's frames
	bool remap = false;            // a new producer segment: map again at the next frame
	// Added to every frame's running time on this connection: how late this pipeline started
	// for the connection's first frame (0 when it ran already), so none falls before it
	GstClockTimeDiff shift = 0;
	std::atomic<GstClockTime> latency{ 0 }; // the producer's latency
	// The pipeline's clock is the monotonic system clock (set_clock, any thread)
	std::atomic<bool> monotonicClock{ true };
	// The next buffer is the first after a reconnect
	bool discont = false;
	// A new connection: nothing mapped, the producer's timeline not yet known.
	void reset()
	{
		gst_segment_init(&producer, GST_FORMAT_TIME);
		gst_segment_init(&pushed, GST_FORMAT_TIME);
		timelineMessages = 0;
		mapped = false;
		remap = false;
		shift = 0;
		latency = 0;
	}
};

// What the element keeps. Properties are guarded by `mutex`; the receiver is made in start (and
// again on a reconnect, on the streaming thread, under `mutex`) and destroyed in stop, and used by
// the streaming thread (get_caps reads its caps under `mutex`).
struct SrcState {
	std::mutex mutex{};
	std::string socketPath{};
	guint64 connectTimeoutNs = 5ull * GST_SECOND;
	std::string allowedUids{};
	bool reconnect = false;
	guint64 reconnectTimeoutNs = 30ull * GST_SECOND; // 0: for ever
	guint64 transportLatencyNs = 5ull * GST_MSECOND;
	PeerRule peers{}; // parsed from allowedUids in start()

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
	std::atomic<uint64_t> reconnects{ 0 };
	std::atomic<uint64_t> framesCopied{ 0 }; // downstream held the producer's bound

	SrcTiming timing{};
};

// gstgpuhandlesrcproperties.cpp: installs the element's properties and their accessors.
void installProperties(GObjectClass *object);

// gstgpuhandlesrctiming.cpp: the producer's times on each buffer, and the segment and latency.
// Gives `buffer` (the frame the receiver returned last) the producer's times, pushing the segment
// that maps them onto this pipeline's running time first when it is new or moved.
void stampBuffer(GstBaseSrc *src, FrameReceiver &receiver, GstBuffer *buffer);
// The LATENCY query's answer: the producer's latency plus transport-latency.
void answerLatency(GstBaseSrc *src, GstQuery *query);

// gstgpuhandlesrcreconnect.cpp: after the producer went away (crash or stop), with reconnect on:
// waits for the next producer on the path (bounded by reconnect-timeout; a flush ends it) and
// makes it the element's receiver; GST_FLOW_OK once one came.
GstFlowReturn reconnectProducer(GstBaseSrc *src, const char *why);
// Connects to the producer with the properties as start() read them (`timeout` to connect and
// hear its hello); s.flushing cancels.
Result<std::unique_ptr<FrameReceiver>> connectProducer(GstBaseSrc *src, const std::string &path,
						       WaitDuration timeout);
// The producer's caps (after a caps message or a reconnect): downstream renegotiated when they
// changed; false (with an error posted) when downstream refuses them.
bool adoptCaps(GstBaseSrc *src, const std::string &caps);

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

namespace gpuhandle::gst::src {

inline SrcState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleSrc *>(self)->state;
}

} // namespace gpuhandle::gst::src
