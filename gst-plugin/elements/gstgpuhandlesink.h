// gpuhandlesink's parts shared by its files (not installed): its state and the copy pool.
#pragma once

#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/waiter_thread.h>
#include <gpuhandle/wire_format.h>

#include "gstgpuhandleelements.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <gst/base/gstbasesink.h>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_sink_debug);

namespace gpuhandle::gst::sink {

// How a sent frame's release wait ended, shared with the waiter thread's callback: `outstanding`
// while consumers may hold it; `released` once they all signalled its gate (false when the wait
// timed out or was cancelled: a stuck consumer may still signal that gate later).
struct ReleaseTrack {
	std::atomic<bool> outstanding{ false };
	std::atomic<bool> released{ false };
};

// A frame sent and not yet released: what its release does then (drop `keep`, update `track`,
// spare `reuse`). Records are reused: `generation` moves on with each use, so that a late signal
// of an earlier use (after its timeout) is told apart. Fields under SinkState::heldMutex.
struct HeldFrame {
	GstBuffer *keep = nullptr;
	std::shared_ptr<ReleaseTrack> track{};
	ReleaseGate reuse{}; // the gate to spare once released (zero-copy frames)
	std::chrono::steady_clock::time_point sentAt{};
	uint32_t index = 0; // in SinkState::heldFrames
	uint32_t generation = 0;
	bool pending = false;
};

// One memfd of the copy pool: mapped here, a frame over it, and the gate its consumers signal
// (re-armed on reuse). `buffer` wraps the mapping so that gst_video_frame_copy can write it.
struct CopySlot {
	uint8_t *bytes = nullptr;
	size_t size = 0;
	GstBuffer *buffer = nullptr;
	ReleaseGate gate{};
	std::optional<Frame> frame{};
	// The slot's last send: the gate may be re-armed only once `released`; after a timeout the
	// slot gets a fresh gate, so that a late release cannot be taken for the next use's.
	std::shared_ptr<ReleaseTrack> track = std::make_shared<ReleaseTrack>();
	uint64_t sentAt = 0; // the send count when its frame last went out (0: never sent)
};

// The properties the streaming thread uses, copied under `mutex` in start() (they are
// MUTABLE_READY, so they do not change until stop()).
struct StreamConfig {
	guint maxConsumers = 8;
	guint maxInFlight = 4;
	guint waitForConsumers = 0;
	// How long consumers may hold a frame before it is counted back anyway.
	std::chrono::nanoseconds releaseTimeout{ std::chrono::seconds(30) };
	// Frames all consumers together may hold, plus one being written: the copy pool's and the
	// proposed upstream pool's largest size, so that a stuck consumer at its bound never
	// starves the others.
	guint poolMax() const noexcept { return maxInFlight * maxConsumers + 1; }
};

// The properties a sender listens with: a change in READY makes start() listen again.
struct ListenKey {
	std::string socketPath;
	guint socketMode;
	guint maxConsumers;
	guint maxInFlight;
	std::string allowedUids;
	friend bool operator==(const ListenKey &, const ListenKey &) = default;
};

// Counters read by the `stats` property from any thread.
struct SinkCounters {
	std::atomic<uint64_t> frames{ 0 };       // buffers rendered
	std::atomic<uint64_t> zeroCopy{ 0 };     // sent over the buffer's own fds
	std::atomic<uint64_t> copied{ 0 };       // copied into the memfd pool first
	std::atomic<uint64_t> dropped{ 0 };      // no pool slot came back in time
	std::atomic<uint64_t> unsent{ 0 };       // no consumer took the frame
	std::atomic<uint64_t> metasLeftOut{ 0 }; // metas past what a frame's attachment holds
	std::atomic<uint64_t> releasedLate{ 0 }; // counted back after release-timeout
	void reset() noexcept
	{
		releasedLate = 0;
		metasLeftOut = 0;
		frames = 0;
		zeroCopy = 0;
		copied = 0;
		dropped = 0;
		unsent = 0;
	}
};

// What the element keeps. Properties are guarded by `mutex` (set from the application's thread);
// the sender is made when the element goes to READY (again in start after a stop or a change of
// its properties) and destroyed in stop and at NULL, all under `mutex`, and used by the streaming
// thread; the pool belongs to the streaming thread.
struct SinkState {
	GstElement *element = nullptr; // the element this is the state of (for its logs)
	std::mutex mutex{};
	std::string socketPath{};
	guint socketMode = 0600;
	guint maxConsumers = 8;
	guint maxInFlight = 4;
	std::string allowedUids{};
	guint waitForConsumers = 0;
	std::chrono::nanoseconds releaseTimeout{ std::chrono::seconds(30) };

	StreamConfig config{}; // copied from the properties above in start()
	PeerRule peers{};
	std::unique_ptr<FrameSender> sender{};
	std::optional<ListenKey> listening{};   // what `sender` was made with
	std::shared_ptr<WaiterThread> waiter{}; // releases with a consumer fence, the late timer
	BackendRef fdBackend{};                 // the memfd pool proposed upstream (under `mutex`)
	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	std::vector<CopySlot> pool{}; // grows on demand up to config.poolMax()
	uint64_t copiesSent = 0;
	bool waitedForConsumers = false;
	// A consumer stayed at its in-flight bound past the wait: frames then wait only when no
	// consumer has room (see waitForRoom).
	bool skippingStuck = false;
	// Frames sent and not yet released (copies and zero-copy buffers, of any caps); render
	// waits (bounded) while every connected consumer is at its in-flight bound.
	std::mutex heldMutex{};
	std::condition_variable heldChanged{};
	uint32_t held = 0;
	// The sender's roomChanged calls (under heldMutex): waitForRoom sleeps until it moves.
	uint64_t roomEvents = 0;
	// Zero-copy frames' gates that every consumer released, re-armed for the next ones (under
	// heldMutex): no eventfd, fence or gate is made per frame in steady state.
	std::vector<ReleaseGate> spareGates{};
	// What each frame's release does, made once and reused (under heldMutex; see trackRelease).
	std::vector<std::unique_ptr<HeldFrame>> heldFrames{};
	std::vector<HeldFrame *> freeHeldFrames{};
	// Told by each sent frame's gate, on the thread that signals it (the sender's), that the
	// frame is back (gstgpuhandlesinkrelease.cpp): no waiter-thread wake-up per frame. Made in
	// start(), kept until the element goes (the gates hold it weakly).
	std::shared_ptr<ReleaseListener> releases{};
	// Never signalled: its wait's timeout is the waiter thread's timer for frames held past the
	// release bound. `sweepArmed` (under heldMutex) while that wait is queued.
	std::shared_ptr<CpuFence> lateTimer{};
	bool sweepArmed = false;
	std::atomic<bool> flushing{ false };
	SinkCounters counters{};
	// The streaming thread's: the metas of the buffer being sent, as bytes (see metasOf).
	std::array<std::byte, kWireMaxAttachment> metaBytes{};
	// The streaming thread's: the last segment, the latency last sent with it, and the times
	// of the buffer being sent (gstgpuhandlesinktiming.cpp).
	GstSegment segment{};
	GstClockTime latency = GST_CLOCK_TIME_NONE;
	FrameTiming frameTiming{};
	// The pipeline's clock is the monotonic system clock (set_clock, any thread).
	std::atomic<bool> monotonicClock{ true };
};

SinkState &stateOf(void *self);
// gstgpuhandlesinkproperties.cpp: installs the element's properties and their accessors.
void installProperties(GObjectClass *object);

// `buffer`'s metas that cross processes (gstgpuhandlemetabytes.hpp), written into
// s.metaBytes: the attachment that goes with its frame (empty when it has none).
std::span<const std::byte> metasOf(SinkState &s, GstBuffer *buffer);

// gstgpuhandlesinkpool.cpp: the copy path. Copies `buffer` (any mappable memory) into a free
// memfd slot (a new one while the pool is below its size) and sends it; with every slot held,
// the first whose consumers release it is reused (bounded wait).
GstFlowReturn sendCopy(GstBaseSink *sink, GstBuffer *buffer);
void freePool(SinkState &s);
// Waits (bounded, ended by a flush) while a consumer is at its in-flight bound; once one stayed
// there past the bound, only while none has room. False when flushing.
bool waitForRoom(SinkState &s);
// gstgpuhandlesinkrelease.cpp: the release of every frame sent.
// Makes s.releases and s.lateTimer (start()); false when no fence can be made.
bool startReleases(GstBaseSink *sink);
// A zero-copy frame's gate: a spare one (s.spareGates) re-armed, else a new one.
Result<ReleaseGate> takeGate(SinkState &s);
// Counts a sent frame as held until `gate` is released (or release-timeout passes): then drops
// `keep` (a buffer reference, or null) and updates `track` (or null), on the thread that
// signals the gate (or the waiter thread, for a consumer fence or the timeout). With `spare`, a
// gate every consumer released goes to s.spareGates for a later frame.
void trackRelease(GstBaseSink *sink, const ReleaseGate &gate, GstBuffer *keep,
		  std::shared_ptr<ReleaseTrack> track, bool spare = false);
// stop(): counts every frame still held as back (Cancelled), once the sender and the waiter
// thread are gone.
void releaseAllHeld(SinkState &s);
// gstgpuhandlesinktiming.cpp: the times that cross with each frame.
// A SEGMENT event: kept, and sent to consumers (with the latency) as their timeline.
void segmentChanged(GstBaseSink *sink, GstEvent *event);
// s.frameTiming for `buffer`, about to be sent; the timeline again when the latency changed.
void timeFrame(GstBaseSink *sink, GstBuffer *buffer);

} // namespace gpuhandle::gst::sink

// The element type, declared as GStreamer's elements are (G_DECLARE_FINAL_TYPE,
// GST_ELEMENT_REGISTER_DECLARE); its instance holds the state above.
G_BEGIN_DECLS
#define GST_TYPE_GPU_HANDLE_SINK (gst_gpu_handle_sink_get_type())
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DECLARE_FINAL_TYPE(GstGpuHandleSink, gst_gpu_handle_sink, GST, GPU_HANDLE_SINK, GstBaseSink)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DECLARE(gpuhandlesink);
G_END_DECLS

struct _GstGpuHandleSink {
	GstBaseSink parent;
	gpuhandle::gst::sink::SinkState *state;
};
