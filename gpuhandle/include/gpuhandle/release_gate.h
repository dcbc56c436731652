// ReleaseGate: the consumer says "done with this frame's memory"; the producer waits before reuse.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/sync_point.h>

#include <cstdint>
#include <memory>

namespace GPUHANDLE_API gpuhandle {

// Told by a gate, on the thread that signals it, that its consumer is done: what a pool or a
// transport does instead of waiting on released() with a thread of its own (one wake-up less
// per frame). See ReleaseGate::listen().
class ReleaseListener
{
public:
	virtual ~ReleaseListener() = default;
	// `tag` is listen()'s; `consumerDone` the fence the consumer passed to signal() (Noop:
	// released now; otherwise released() signals once it does). Runs on the signalling thread,
	// which may hold its own locks (a GstBuffer being freed): it must neither block nor take a
	// lock that thread could hold, and must not throw.
	virtual void gateSignalled(uint64_t tag, const SyncPoint &consumerDone) noexcept = 0;
};

// Shared between a pooled producer and its consumers: the consumer calls signal() once it no
// longer reads the memory (passing the fence of its own GPU work that still reads it, if any);
// the producer waits on released() before it writes the memory again (PipeWire's release point,
// Dawn's EndAccess fence). An empty gate (none()) belongs to producers that never reuse memory.
// Copies share one gate. Thread safety: any member from any thread.
class ReleaseGate
{
public:
	ReleaseGate() = default;
	// The empty gate, the same as ReleaseGate(): for producers that never reuse memory.
	static ReleaseGate none() noexcept { return {}; }
	// Io error when no eventfd can be made.
	static Result<ReleaseGate> create();

	// True for the empty gate.
	bool isNone() const noexcept { return !state_; }
	// Consumer: done reading once `consumerDone` signals (noop: done now). Only the first
	// call counts; InvalidState on a none() gate.
	Status signal(SyncPoint consumerDone = SyncPoint::noop()) const;
	// True once signal() was called on this use of the gate (its `consumerDone` may still be
	// pending: wait on released() for both). False for a none() gate.
	bool isSignaled() const noexcept;
	// Producer: a point that signals once the consumer signalled and its fence is done. A
	// none() gate gives a Noop point.
	SyncPoint released() const;
	// Producer (pools): re-arms a released gate for the next use of its memory, so that a slot
	// keeps one gate and allocates nothing per frame. Only once released() is done and no
	// consumer of the previous use will signal again. InvalidState on a none() gate.
	Status reset() const;
	// Pools: true when this is the only copy of the gate (no frame, consumer or wait holds one
	// any more), so that nobody who saw an earlier use can signal a re-armed one. False for a
	// none() gate.
	bool uniquelyHeld() const noexcept;
	// Producer: `listener` is told once, with `tag`, when this use of the gate is signalled:
	// inside signal(), or here at once if it already was. reset() forgets it; a listener that
	// is gone by then is skipped (the gate holds it weakly). One listener per use: InvalidState
	// for a second one, and on a none() gate.
	Status listen(std::weak_ptr<ReleaseListener> listener, uint64_t tag) const;

private:
	struct GPUHANDLE_LOCAL State;
	std::shared_ptr<State> state_{};
};

} // namespace gpuhandle
