// ReleaseGate: a CpuFence the consumer signals, chained with the consumer's own GPU fence.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/release_gate.h>

namespace gpuhandle {

struct ReleaseGate::State final : SyncWaiter {
	std::shared_ptr<CpuFence> fence;
	std::mutex mutex;
	bool signalled = false; // under mutex: only the first signal() counts
	SyncPoint consumerDone; // set once, under mutex, before fence is signalled

	SyncPoint consumerPoint()
	{
		std::lock_guard<std::mutex> lock(mutex);
		return consumerDone;
	}

	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override
	{
		Deadline deadline = Deadline::after(timeout);
		Status status = fence->wait(timeout);
		if (!status.ok())
			return status;
		return consumerPoint().wait(deadline.remaining());
	}
	Result<bool> isSignaled() override
	{
		auto fenceDone = fence->isSignaled();
		if (!fenceDone.ok() || !*fenceDone)
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
		return Error(ErrorCode::InvalidState, "gate", "ReleaseGate: signal() on an empty gate (none()).");
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		if (state_->signalled)
			return {}; // only the first signal counts
		state_->signalled = true;
		state_->consumerDone = std::move(consumerDone);
	}
	state_->fence->signal();
	return {};
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
