// ReleaseGate: a CpuFence the consumer signals, chained with the consumer's own GPU fence.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/release_gate.h>

#include <atomic>

namespace gpuhandle {

struct ReleaseGate::State final : SyncWaiter {
	std::shared_ptr<CpuFence> fence;
	std::mutex mutex;       // guards signalled, consumerDone and the listener
	bool signalled = false; // only the first signal() counts
	SyncPoint consumerDone; // set once, under mutex, before fence is signalled
	// listen()'s, until the signal that tells it (or reset()).
	std::weak_ptr<ReleaseListener> listener;
	uint64_t listenerTag = 0;
	bool listened = false; // this use has a listener (one at most)
	// consumerDone is not a Noop point: set with it, before the fence is signalled, so that a
	// gate released without a consumer fence (the common case) is checked without the lock.
	std::atomic<bool> consumerPending{ false };

	SyncPoint consumerPoint()
	{
		std::lock_guard<std::mutex> lock(mutex);
		return consumerDone;
	}

	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override
	{
		if (fence->isSignaled().value() && !consumerPending.load(std::memory_order_acquire))
			return {}; // released without a consumer fence: no lock, no clock
		Deadline deadline = Deadline::after(timeout);
		Status status = fence->wait(timeout);
		if (!status.ok() || !consumerPending.load(std::memory_order_acquire))
			return status;
		return consumerPoint().wait(deadline.remaining());
	}
	// The fence's eventfd: readable once the consumer signalled, so that waiter threads and
	// main loops sleep in epoll until then instead of re-checking the gate every slice. A
	// consumer fence still pending then is re-checked by them as a readable fd whose point is
	// not yet signalled (parked: once per slice) until it is done.
	int pollFd() const noexcept override { return fence->pollFd(); }
	Result<bool> isSignaled() override
	{
		auto fenceDone = fence->isSignaled();
		if (!fenceDone.ok() || !*fenceDone ||
		    !consumerPending.load(std::memory_order_acquire))
			return fenceDone;
		return consumerPoint().isSignaled();
	}
};

Result<ReleaseGate> ReleaseGate::create()
{
	auto fence = CpuFence::create();
	if (!fence.ok())
		return std::move(fence).error();
	ReleaseGate gate;
	gate.state_ = std::make_shared<State>();
	gate.state_->fence = std::move(*fence);
	return gate;
}

Status ReleaseGate::signal(SyncPoint consumerDone) const
{
	if (!state_)
		return Error(ErrorCode::InvalidState, "gate",
			     "ReleaseGate: signal() on an empty gate (none()).");
	std::weak_ptr<ReleaseListener> listener;
	uint64_t tag = 0;
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		if (state_->signalled)
			return {}; // only the first signal counts
		state_->signalled = true;
		if (!consumerDone.isNoop()) {
			state_->consumerDone = consumerDone;
			state_->consumerPending.store(true, std::memory_order_release);
		}
		listener = std::move(state_->listener);
		tag = state_->listenerTag;
	}
	// After consumerPending is set: whoever sees the fence signalled sees that flag too.
	state_->fence->signal();
	if (auto told = listener.lock())
		told->gateSignalled(tag, consumerDone);
	return {};
}

Status ReleaseGate::listen(std::weak_ptr<ReleaseListener> listener, uint64_t tag) const
{
	if (!state_)
		return Error(ErrorCode::InvalidState, "gate",
			     "ReleaseGate: listen() on an empty gate (none()).");
	SyncPoint consumerDone;
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		if (state_->listened)
			return Error(ErrorCode::InvalidState, "gate",
				     "ReleaseGate: this use of the gate already has a listener.");
		state_->listened = true;
		if (!state_->signalled) {
			state_->listener = std::move(listener);
			state_->listenerTag = tag;
			return {};
		}
		consumerDone = state_->consumerDone;
	}
	if (auto told = listener.lock())
		told->gateSignalled(tag, consumerDone);
	return {};
}

Status ReleaseGate::reset() const
{
	if (!state_)
		return Error(ErrorCode::InvalidState, "gate",
			     "ReleaseGate: reset() on an empty gate (none()).");
	SyncPoint previous; // dropped after the lock: its waiter may do work when it goes
	std::weak_ptr<ReleaseListener> listener;
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		previous = std::move(state_->consumerDone);
		state_->consumerDone = SyncPoint::noop();
		state_->consumerPending.store(false, std::memory_order_relaxed);
		listener = std::move(state_->listener);
		state_->listened = false;
		state_->fence->reset();
		state_->signalled = false;
	}
	return {};
}

bool ReleaseGate::uniquelyHeld() const noexcept
{
	if (!state_ || state_.use_count() != 1)
		return false;
	// use_count() reads the count relaxed: the fence orders what the last other holder did
	// (its signal) before what the pool does next (reset).
	std::atomic_thread_fence(std::memory_order_acquire);
	return true;
}

bool ReleaseGate::isSignaled() const noexcept
{
	return state_ && state_->fence->isSignaled().value();
}

SyncPoint ReleaseGate::released() const
{
	if (!state_)
		return SyncPoint::noop();
	auto point = SyncPoint::fromWaiter(SyncKind::Cpu, state_);
	return point.ok() ? *point : SyncPoint::noop();
}

} // namespace gpuhandle
