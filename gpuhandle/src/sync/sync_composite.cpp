// SyncPoint::all / any / chain: one point over several, across backends.
#include <gpuhandle/sync_point.h>

#include "validation.h"

#include <algorithm>
#include <poll.h>
#include <thread>
#include <vector>

namespace gpuhandle {

namespace {

enum class Mode { All, Any, Chain };

// Fences that only offer a blocking native wait are polled in slices this long at most.
constexpr WaitDuration kSlice = std::chrono::milliseconds(10);

class CompositeWaiter final : public SyncWaiter
{
public:
	CompositeWaiter(Mode mode, std::vector<SyncPoint> points)
		: mode_(mode), points_(std::move(points))
	{
	}

	BackendKind backend() const noexcept override { return BackendKind::Cpu; }

	Status wait(WaitDuration timeout) override
	{
		if (mode_ != Mode::Any) {
			// Every point, in order: one deadline shared by all.
			Deadline deadline = Deadline::after(timeout);
			for (const SyncPoint &point : points_) {
				Status status = point.wait(deadline.remaining());
				if (!status.ok())
					return status;
			}
			return {};
		}
		return waitAny(timeout);
	}

	Result<bool> isSignaled() override
	{
		bool any = false;
		for (const SyncPoint &point : points_) {
			auto done = point.isSignaled();
			if (!done.ok())
				return done;
			if (mode_ == Mode::Any && *done)
				return true;
			if (mode_ != Mode::Any && !*done)
				// Chain: a later point is not polled before this one is done.
				return false;
			any = any || *done;
		}
		return mode_ == Mode::Any ? any : true;
	}

private:
	// Polls every point; sleeps on the pollable fds between rounds, in slices when some point
	// has no fd.
	Status waitAny(WaitDuration timeout)
	{
		Deadline deadline = Deadline::after(timeout);
		std::vector<pollfd> fds;
		bool allPollable = true;
		for (const SyncPoint &point : points_) {
			int fd = point.waiter() ? point.waiter()->pollFd() : -1;
			if (fd >= 0)
				fds.push_back({ fd, POLLIN, 0 });
			else
				allPollable = false;
		}
		WaitDuration nap = std::chrono::microseconds(100);
		for (;;) {
			auto done = isSignaled();
			if (!done.ok())
				return std::move(done).error();
			if (*done)
				return {};
			if (deadline.expired())
				return waitTimeoutError(BackendKind::Cpu, timeout);
			WaitDuration sleep =
				allPollable ? deadline.remaining()
					    : std::min({ nap, kSlice, deadline.remaining() });
			nap = std::min(nap * 2, kSlice);
			if (fds.empty()) {
				std::this_thread::sleep_for(sleep);
				continue;
			}
			timespec limit{};
			if (sleep != kWaitForever) {
				limit.tv_sec = static_cast<time_t>(sleep.count() / 1000000000);
				limit.tv_nsec = static_cast<long>(sleep.count() % 1000000000);
			}
			ppoll(fds.data(), fds.size(), sleep == kWaitForever ? nullptr : &limit,
			      nullptr);
		}
	}

	Mode mode_;
	std::vector<SyncPoint> points_;
};

Result<SyncPoint> composite(Mode mode, std::span<const SyncPoint> points)
{
	if (points.empty())
		return Error(ErrorCode::ZeroSize, "points",
			     "SyncPoint: a composite needs at least one point.");
	std::vector<SyncPoint> kept;
	for (size_t i = 0; i < points.size(); ++i) {
		if (points[i].isRawCarrier())
			return Error::format(
				ErrorCode::NotSupported,
				detail::indexed("points", static_cast<uint32_t>(i), ""),
				"SyncPoint: points[%zu] is a raw %s carrier; import it before combining it.",
				i, syncKindName(points[i].kind()));
		if (!points[i].isNoop())
			kept.push_back(points[i]);
	}
	if (kept.empty())
		return SyncPoint::noop(); // nothing left to wait for
	if (kept.size() == 1 && mode != Mode::Any)
		return kept.front();
	return SyncPoint::fromWaiter(SyncKind::Composite,
				     std::make_shared<CompositeWaiter>(mode, std::move(kept)));
}

} // namespace

Result<SyncPoint> SyncPoint::all(std::span<const SyncPoint> points)
{
	return composite(Mode::All, points);
}

Result<SyncPoint> SyncPoint::any(std::span<const SyncPoint> points)
{
	// Any over a set that contains a done (Noop) point is done already.
	for (const SyncPoint &point : points) {
		if (point.isNoop())
			return SyncPoint::noop();
	}
	return composite(Mode::Any, points);
}

Result<SyncPoint> SyncPoint::chain(std::span<const SyncPoint> points)
{
	return composite(Mode::Chain, points);
}

} // namespace gpuhandle
