// gpuhandlesink's releases: every frame sent is counted as held until its gate is signalled, told
// on the signalling thread (a ReleaseListener), with a timer for frames held past the bound.
//
// Why a listener rather than a wait per frame: the sender's thread signals a frame's gate when
// its last consumer's Release comes in; a wait on the gate woke the sink's waiter thread for each
// frame only to drop a buffer reference. The waiter thread now waits only where there is
// something to wait for: a consumer's fence still pending, and one timer (a fence never
// signalled, whose wait's timeout is the next frame's release bound) for consumers that hold a
// frame past the element's release-timeout (the stats count them as frames-released-late).
#include "gstgpuhandlesink.h"

#include <algorithm>
#include <chrono>
#include <utility>

#define GST_CAT_DEFAULT gst_gpu_handle_sink_debug

using namespace gpuhandle;

namespace gpuhandle::gst::sink {

namespace {

using Clock = std::chrono::steady_clock;

// A sent frame is counted as back after release-timeout even when a consumer still holds it (a
// zero-copy buffer goes back to its pool): the producer does not stall for good behind a stuck
// consumer.
WaitDuration leftOfBound(const SinkState &s, Clock::time_point sentAt)
{
	return std::max<WaitDuration>(std::chrono::duration_cast<WaitDuration>(
					      sentAt + s.config.releaseTimeout - Clock::now()),
				      WaitDuration::zero());
}

// A record and its use, in a listener's tag and a wait's callback.
uint64_t tagOf(const HeldFrame &record)
{
	return (uint64_t(record.generation) << 32) | record.index;
}

// Counts the frame of `tag` as back: drops its buffer, updates its track, spares its gate (only
// one every consumer released). Once per use: a second call, or one for an earlier use, does
// nothing. Any thread; takes heldMutex.
void finish(SinkState &s, uint64_t tag, const Status &released)
{
	HeldFrame *record = nullptr;
	GstBuffer *kept = nullptr;
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		const auto index = static_cast<size_t>(tag & 0xffffffffu);
		if (index >= s.heldFrames.size())
			return;
		record = s.heldFrames[index].get();
		if (!record->pending || record->generation != uint32_t(tag >> 32))
			return;
		record->pending = false;
		kept = std::exchange(record->keep, nullptr);
	}
	if (!released && released.error().code() == ErrorCode::Timeout)
		s.counters.releasedLate++;
	if (!released && released.error().code() != ErrorCode::Cancelled)
		GST_WARNING_OBJECT(s.element, "a frame came back late: %s",
				   released.error().message().c_str());
	// Outside the lock: the buffer may go back to its pool and wake upstream.
	if (kept)
		gst_buffer_unref(kept);
	std::lock_guard<std::mutex> lock(s.heldMutex);
	if (record->track) {
		record->track->released = released.ok();
		record->track->outstanding = false;
		record->track.reset();
	}
	if (released.ok() && !record->reuse.isNone())
		s.spareGates.push_back(record->reuse);
	record->reuse = ReleaseGate();
	record->generation++;
	s.freeHeldFrames.push_back(record);
	s.held--;
	s.heldChanged.notify_all();
}

// Waits on the waiter thread, until the frame's bound, for the fence its last consumer released
// it with. FrameSender signals without one today (a Release on the wire carries no fence), but
// a ReleaseListener must honour one.
void watchFenced(SinkState &s, uint64_t tag, const SyncPoint &consumerDone)
{
	Clock::time_point sentAt;
	std::shared_ptr<WaiterThread> waiter;
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		const auto index = static_cast<size_t>(tag & 0xffffffffu);
		if (index >= s.heldFrames.size())
			return;
		const HeldFrame &record = *s.heldFrames[index];
		if (!record.pending || record.generation != uint32_t(tag >> 32))
			return;
		sentAt = record.sentAt;
		waiter = s.waiter;
	}
	SinkState *state = &s;
	auto done = [state, tag](Status released) { finish(*state, tag, released); };
	if (!waiter || !waiter->enqueue(consumerDone, leftOfBound(s, sentAt), WaitCallback(done)))
		finish(s, tag,
		       Error(ErrorCode::Cancelled, "thread",
			     "gpuhandlesink: no thread to wait for a consumer's fence."));
}

// The gates' listener: the frame is back at once, or (a consumer fence) once that signals.
class SinkReleases final : public ReleaseListener
{
public:
	explicit SinkReleases(SinkState &s) : state_(s) {}
	void gateSignalled(uint64_t tag, const SyncPoint &consumerDone) noexcept override
	{
		if (consumerDone.isNoop())
			finish(state_, tag, Status{});
		else
			watchFenced(state_, tag, consumerDone);
	}

private:
	SinkState &state_;
};

void sweep(SinkState &s, const Status &timer);

// Queues the timer for the oldest held frame's bound, unless it is queued. Under heldMutex.
void armSweepLocked(SinkState &s)
{
	if (s.sweepArmed || !s.waiter || !s.lateTimer)
		return;
	Clock::time_point oldest = Clock::time_point::max();
	for (const auto &record : s.heldFrames)
		if (record->pending)
			oldest = std::min(oldest, record->sentAt);
	if (oldest == Clock::time_point::max())
		return;
	SinkState *state = &s;
	s.sweepArmed = s.waiter->enqueue(s.lateTimer->point(), leftOfBound(s, oldest),
					 [state](Status timer) { sweep(*state, timer); })
			       .ok();
}

// The timer's callback: frames held past their bound are counted back (Timeout), then the timer
// is queued again for the next one. A cancel (stop) ends it.
void sweep(SinkState &s, const Status &timer)
{
	std::vector<uint64_t> late;
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		s.sweepArmed = false;
		if (!timer && timer.error().code() == ErrorCode::Cancelled)
			return;
		const auto now = Clock::now();
		for (const auto &record : s.heldFrames)
			if (record->pending && record->sentAt + s.config.releaseTimeout <= now)
				late.push_back(tagOf(*record));
	}
	for (uint64_t tag : late)
		finish(s, tag,
		       Error::format(
			       ErrorCode::Timeout, "timeout",
			       "no consumer released the frame within %lld ms (release-timeout).",
			       static_cast<long long>(
				       std::chrono::duration_cast<std::chrono::milliseconds>(
					       s.config.releaseTimeout)
					       .count())));
	std::lock_guard<std::mutex> lock(s.heldMutex);
	armSweepLocked(s);
}

} // namespace

bool startReleases(GstBaseSink *sink)
{
	SinkState &s = stateOf(sink);
	if (!s.releases)
		s.releases = std::make_shared<SinkReleases>(s);
	if (!s.lateTimer) {
		Result<std::shared_ptr<CpuFence>> timer = CpuFence::create();
		if (!timer) {
			// The timer of the element's waiter thread (see sweep).
			GST_ELEMENT_ERROR(sink, RESOURCE, FAILED, (_("Could not start a thread.")),
					  ("the release timer's fence: %s",
					   timer.error().message().c_str()));
			return false;
		}
		s.lateTimer = std::move(*timer);
	}
	return true;
}

Result<ReleaseGate> takeGate(SinkState &s)
{
	std::optional<ReleaseGate> spare;
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		if (!s.spareGates.empty()) {
			spare = std::move(s.spareGates.back());
			s.spareGates.pop_back();
		}
	}
	if (spare && spare->reset().ok())
		return std::move(*spare);
	return ReleaseGate::create();
}

void trackRelease(GstBaseSink *bsink, const ReleaseGate &gate, GstBuffer *keep,
		  std::shared_ptr<ReleaseTrack> track, bool spare)
{
	SinkState &s = stateOf(bsink);
	uint64_t tag = 0;
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		s.held++;
		if (track) {
			track->released = false;
			track->outstanding = true;
		}
		HeldFrame *record = nullptr;
		if (s.freeHeldFrames.empty()) {
			s.heldFrames.push_back(std::make_unique<HeldFrame>());
			s.freeHeldFrames.reserve(s.heldFrames.size()); // returns never allocate
			record = s.heldFrames.back().get();
			record->index = static_cast<uint32_t>(s.heldFrames.size() - 1);
		} else {
			record = s.freeHeldFrames.back();
			s.freeHeldFrames.pop_back();
		}
		record->keep = keep;
		record->track = std::move(track);
		// Only a gate every consumer released may be re-armed: after a timeout or a cancel
		// a stuck consumer may still signal it (see rearm).
		record->reuse = spare ? gate : ReleaseGate();
		record->sentAt = Clock::now();
		record->pending = true;
		tag = tagOf(*record);
		armSweepLocked(s);
	}
	// Outside the lock: a gate already signalled (no consumer took the frame, or one released
	// it meanwhile) tells the listener here and now.
	if (Status listening = gate.listen(s.releases, tag); !listening)
		finish(s, tag, listening);
}

void releaseAllHeld(SinkState &s)
{
	std::vector<uint64_t> left;
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		s.sweepArmed = false;
		for (const auto &record : s.heldFrames)
			if (record->pending)
				left.push_back(tagOf(*record));
	}
	for (uint64_t tag : left)
		finish(s, tag,
		       Error(ErrorCode::Cancelled, "thread",
			     "gpuhandlesink: the element stopped."));
}

} // namespace gpuhandle::gst::sink
