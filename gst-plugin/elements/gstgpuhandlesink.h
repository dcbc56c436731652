// gpuhandlesink's parts shared by its files (not installed): its state and the copy pool.
#pragma once

#include <gpuhandle/frame_transport.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/waiter_thread.h>

#include "gstgpuhandleelements.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gst/base/gstbasesink.h>

extern "C" GType gst_gpu_handle_sink_get_type(void);
GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_sink_debug);

namespace gpuhandle::gst::sink {

// One memfd of the copy pool: mapped here, a frame over it, and the gate its consumers signal
// (re-armed on reuse). `buffer` wraps the mapping so that gst_video_frame_copy can write it.
struct CopySlot {
	uint8_t *bytes = nullptr;
	size_t size = 0;
	GstBuffer *buffer = nullptr;
	ReleaseGate gate{};
	std::optional<Frame> frame{};
	// Set while consumers hold the slot's frame; cleared (on the waiter thread) once they
	// released it, after which the gate may be re-armed.
	std::shared_ptr<std::atomic<bool>> outstanding = std::make_shared<std::atomic<bool>>(false);
};

// Counters read by the `stats` property from any thread.
struct SinkCounters {
	std::atomic<uint64_t> frames{ 0 };   // buffers rendered
	std::atomic<uint64_t> zeroCopy{ 0 }; // sent over the buffer's own fds
	std::atomic<uint64_t> copied{ 0 };   // copied into the memfd pool first
	std::atomic<uint64_t> dropped{ 0 };  // no pool slot came back in time
	std::atomic<uint64_t> unsent{ 0 };   // no consumer took the frame
	void reset() noexcept
	{
		frames = 0;
		zeroCopy = 0;
		copied = 0;
		dropped = 0;
		unsent = 0;
	}
};

// What the element keeps. Properties are guarded by `mutex` (set from the application's thread);
// the sender is made in set_caps and destroyed in stop, both under `mutex`, and used by the
// streaming thread; the pool belongs to the streaming thread.
struct SinkState {
	std::mutex mutex{};
	std::string socketPath{};
	guint socketMode = 0600;
	guint maxConsumers = 8;
	guint maxInFlight = 4;
	std::string allowedUids{};
	guint waitForConsumers = 0;

	PeerRule peers{};
	std::unique_ptr<FrameSender> sender{};
	std::shared_ptr<WaiterThread> waiter{}; // drops zero-copy buffers once released
	BackendRef fdBackend{};                 // the memfd pool proposed upstream
	GstVideoInfo info{};
	PixelFormat format = PixelFormat::Unknown;
	std::vector<CopySlot> pool{};
	size_t nextSlot = 0;
	bool waitedForConsumers = false;
	// Frames sent and not yet released (copies and zero-copy buffers, of any caps): render
	// waits while consumers hold max-in-flight of them, so that none is skipped for them.
	std::mutex heldMutex{};
	std::condition_variable heldChanged{};
	uint32_t held = 0;
	std::atomic<bool> flushing{ false };
	SinkCounters counters{};
};

SinkState &stateOf(void *self);

// gstgpuhandlesinkpool.cpp: the copy path. Copies `buffer` (any mappable memory) into the next
// memfd slot and sends it; a slot is reused once its consumers released it (bounded wait).
GstFlowReturn sendCopy(GstBaseSink *sink, GstBuffer *buffer);
void freePool(SinkState &s);
// Before Bye: waits (bounded) for consumers to hand back what they hold.
void drainReleases(SinkState &s);
// Waits (bounded, ended by a flush) until fewer than max-in-flight sent frames are held; false
// when flushing.
bool waitForRoom(SinkState &s);
// Counts a sent frame as held until `gate` is released: then drops `keep` (a buffer reference,
// or null) and clears `outstanding` (or null), on the element's waiter thread.
void trackRelease(GstBaseSink *sink, const ReleaseGate &gate, GstBuffer *keep,
		  std::shared_ptr<std::atomic<bool>> outstanding);

} // namespace gpuhandle::gst::sink

struct GstGpuHandleSink {
	GstBaseSink parent;
	gpuhandle::gst::sink::SinkState *state;
};
struct GstGpuHandleSinkClass {
	GstBaseSinkClass parent_class;
};
