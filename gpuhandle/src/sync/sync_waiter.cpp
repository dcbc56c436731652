// Deadline arithmetic that saturates instead of overflowing, and the shared Timeout error.
#include <gpuhandle/sync_waiter.h>

namespace gpuhandle {

namespace {
// Far enough to be "no practical limit", near enough that time_point arithmetic cannot overflow.
constexpr WaitDuration kSaturation = std::chrono::hours(24 * 365);
} // namespace

Deadline Deadline::after(WaitDuration timeout) noexcept
{
	Deadline deadline;
	if (timeout == kWaitForever)
		return deadline;
	deadline.never_ = false;
	auto now = std::chrono::steady_clock::now();
	if (timeout <= WaitDuration::zero())
		deadline.when_ = now;
	else
		deadline.when_ = now + std::min(timeout, kSaturation);
	return deadline;
}

bool Deadline::expired() const noexcept
{
	return !never_ && std::chrono::steady_clock::now() >= when_;
}

WaitDuration Deadline::remaining() const noexcept
{
	if (never_)
		return kWaitForever;
	auto left = when_ - std::chrono::steady_clock::now();
	return left > WaitDuration::zero() ? std::chrono::duration_cast<WaitDuration>(left)
					   : WaitDuration::zero();
}

Error waitTimeoutError(BackendKind backend, WaitDuration timeout)
{
	return Error::format(
		ErrorCode::Timeout, "timeout", "The %s fence was not signalled within %lld ms.",
		backendKindName(backend),
		static_cast<long long>(
			std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
}

} // namespace gpuhandle
