// SyncPoint core: raw carriers per kind, fence-fd and CpuFence waits, deadlines, composites,
// release gates, frames carrying them; bounded timeouts and no fd leaks.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/release_gate.h>
#include <gpuhandle/sync_point.h>

#include "alloc_counter.h"
#include "fd_count.h"

#include <atomic>
#include <chrono>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

int g_handle;
void *const kHandle = &g_handle;

SyncPoint eventfdPoint(int &raw)
{
	UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	raw = fd.get();
	return SyncPoint::fromFenceFd(SharedFd(std::move(fd))).value();
}

void signalEventfd(int fd)
{
	uint64_t one = 1;
	ck_assert_int_eq(write(fd, &one, sizeof(one)), 8);
}

// A waiter whose driver fails: the error must pass through, never read as "not signalled".
struct FailingWaiter final : SyncWaiter {
	BackendKind backend() const noexcept override { return BackendKind::Vulkan; }
	Status wait(WaitDuration) override
	{
		return Error(ErrorCode::DeviceLost, "device", "The device was lost.");
	}
	Result<bool> isSignaled() override
	{
		return Error(ErrorCode::DeviceLost, "device", "The device was lost.");
	}
};

SyncPoint failingPoint()
{
	return SyncPoint::create(VulkanSemaphoreSync{ 1, VulkanSemaphoreKind::Timeline, 1,
						      kHandle },
				 std::make_shared<FailingWaiter>())
		.value();
}

} // namespace

START_TEST(noop_is_done)
{
	SyncPoint noop;
	ck_assert(noop.isNoop());
	ck_assert(noop.kind() == SyncKind::Noop);
	ck_assert_ok(noop.wait(0ns));
	ck_assert(*noop.isSignaled());
	ck_assert(!noop.isRawCarrier());
	ck_assert_str_eq(syncKindName(SyncKind::GlSync), "gl-sync");
	ck_assert(backendOf(SyncKind::CudaEvent) == BackendKind::Cuda);
}
END_TEST

START_TEST(raw_carriers_validate_and_refuse_cpu_waits)
{
	auto vk = SyncPoint::create(
		VulkanSemaphoreSync{ 5, VulkanSemaphoreKind::Timeline, 42, kHandle }, nullptr);
	ck_assert_ok(vk);
	ck_assert(vk->isRawCarrier());
	ck_assert_uint_eq(vk->raw<VulkanSemaphoreSync>()->value, 42);
	ck_assert(vk->backend() == BackendKind::Vulkan);
	ck_assert_error(vk->wait(1ms), ErrorCode::NotSupported, "waiter");
	ck_assert_error(vk->isSignaled(), ErrorCode::NotSupported, "waiter");
	ck_assert_error(SyncPoint::create(VulkanSemaphoreSync{ 0, VulkanSemaphoreKind::Timeline, 1,
							       kHandle },
					  nullptr),
			ErrorCode::NullHandle, "semaphore");
	ck_assert_error(
		SyncPoint::create(VulkanSemaphoreSync{ 5, VulkanSemaphoreKind::Binary, 0, nullptr },
				  nullptr),
		ErrorCode::NullHandle, "device");
	ck_assert_error(SyncPoint::create(VulkanSemaphoreSync{ 5,
							       static_cast<VulkanSemaphoreKind>(7),
							       0, kHandle },
					  nullptr),
			ErrorCode::InvalidArgument, "kind");
	ck_assert_error(SyncPoint::create(D3D12FenceSync{ nullptr, 1 }, nullptr),
			ErrorCode::NullHandle, "fence");
	ck_assert_error(SyncPoint::create(D3D11KeyedMutexSync{ nullptr, 0 }, nullptr),
			ErrorCode::NullHandle, "keyedMutex");
	ck_assert_error(SyncPoint::create(CudaExternalSemaphoreSync{ nullptr, 3u }, nullptr),
			ErrorCode::NullHandle, "semaphore");
	ck_assert_error(SyncPoint::create(CudaEventSync{ nullptr, kHandle, 0 }, nullptr),
			ErrorCode::NullHandle, "event");
	ck_assert_error(SyncPoint::create(CudaEventSync{ kHandle, kHandle, -1 }, nullptr),
			ErrorCode::OutOfRange, "ordinal");
	ck_assert_error(SyncPoint::create(OpenClEventSync{ nullptr }, nullptr),
			ErrorCode::NullHandle, "event");
	ck_assert_error(SyncPoint::create(MetalSharedEventSync{ nullptr, 1 }, nullptr),
			ErrorCode::NullHandle, "event");
	ck_assert_error(SyncPoint::create(GlSemaphoreSync{ 0, kHandle }, nullptr),
			ErrorCode::NullHandle, "semaphore");
	ck_assert_error(SyncPoint::create(GlSyncSync{ nullptr, kHandle, GlFlavour::Egl }, nullptr),
			ErrorCode::NullHandle, "sync");
	ck_assert_error(SyncPoint::create(GlSyncSync{ kHandle, kHandle, static_cast<GlFlavour>(8) },
					  nullptr),
			ErrorCode::InvalidArgument, "flavour");
	ck_assert_error(SyncPoint::create(WebGpuSubmissionSync{ nullptr, 1 }, nullptr),
			ErrorCode::NullHandle, "queue");
	ck_assert_error(SyncPoint::create(FenceFdSync{ SharedFd() }, nullptr), ErrorCode::BadFd,
			"fd");
	ck_assert_ok(SyncPoint::create(D3D12FenceSync{ kHandle, 9 }, nullptr));
	ck_assert_ok(SyncPoint::create(MetalSharedEventSync{ kHandle, 9 }, nullptr));
	ck_assert_error(SyncPoint::fromWaiter(SyncKind::Cpu, nullptr), ErrorCode::NullHandle,
			"waiter");
	ck_assert_error(SyncPoint::fromWaiter(SyncKind::GlSync, std::make_shared<FailingWaiter>()),
			ErrorCode::InvalidArgument, "kind");
}
END_TEST

START_TEST(fence_fd_waits_by_poll)
{
	int before = test::openFdCount();
	{
		int raw;
		SyncPoint point = eventfdPoint(raw);
		ck_assert(point.kind() == SyncKind::FenceFd);
		ck_assert(!*point.isSignaled());
		auto start = Clock::now();
		ck_assert_error(point.wait(50ms), ErrorCode::Timeout, "timeout");
		auto waited = Clock::now() - start;
		ck_assert(waited >= 50ms);
		ck_assert(point.wait(1ms).error().kind() == ErrorKind::Recoverable);
		std::thread signaller([raw] {
			std::this_thread::sleep_for(20ms);
			signalEventfd(raw);
		});
		ck_assert_ok(point.wait(kWaitForever));
		signaller.join();
		ck_assert(*point.isSignaled());
		ck_assert_ok(point.wait(0ns)); // stays signalled
	}
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

START_TEST(cpu_fence_wakes_a_blocked_waiter)
{
	int before = test::openFdCount();
	{
		auto fence = CpuFence::create();
		ck_assert_ok(fence);
		SyncPoint point = (*fence)->point();
		ck_assert(point.kind() == SyncKind::Cpu);
		ck_assert_int_ge((*fence)->pollFd(), 0);
		ck_assert_error(point.wait(30ms), ErrorCode::Timeout, "timeout");
		std::thread signaller([f = *fence] {
			std::this_thread::sleep_for(20ms);
			f->signal();
		});
		ck_assert_ok(point.wait()); // woken by the signal, not the default 10 s Timeout
		signaller.join();
		(*fence)->signal(); // a second signal does nothing
		ck_assert(*point.isSignaled());
	}
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

START_TEST(driver_failures_are_errors_not_false)
{
	SyncPoint point = failingPoint();
	ck_assert_error(point.isSignaled(), ErrorCode::DeviceLost, "device");
	ck_assert_error(point.wait(1ms), ErrorCode::DeviceLost, "device");
	ck_assert(point.wait(1ms).error().kind() == ErrorKind::Fatal);
}
END_TEST

START_TEST(deadlines_saturate)
{
	ck_assert(Deadline::after(kWaitForever).isNever());
	ck_assert(Deadline::after(kWaitForever).remaining() == kWaitForever);
	// Not the sentinel: saturates, never wraps.
	Deadline huge = Deadline::after(kWaitForever - 1ns);
	ck_assert(!huge.isNever());
	ck_assert(huge.remaining() > std::chrono::hours(24 * 300));
	ck_assert(!huge.expired());
	Deadline now = Deadline::after(-5s);
	ck_assert(now.expired());
	ck_assert(now.remaining() == 0ns);
	ck_assert(kDefaultWaitTimeout == 10s);
}
END_TEST

START_TEST(composites_over_mixed_points)
{
	int a, b;
	SyncPoint first = eventfdPoint(a);
	SyncPoint second = eventfdPoint(b);
	auto fence = CpuFence::create().value();
	SyncPoint third = fence->point();
	const SyncPoint set[] = { first, second, third };
	SyncPoint all = SyncPoint::all(set).value();
	SyncPoint any = SyncPoint::any(set).value();
	SyncPoint chain = SyncPoint::chain(set).value();
	ck_assert(all.kind() == SyncKind::Composite);
	ck_assert(!*any.isSignaled());
	ck_assert_error(any.wait(20ms), ErrorCode::Timeout, "timeout");
	std::thread signaller([b] {
		std::this_thread::sleep_for(20ms);
		signalEventfd(b);
	});
	ck_assert_ok(any.wait(kDefaultWaitTimeout));
	signaller.join();
	ck_assert(!*all.isSignaled());
	ck_assert(!*chain.isSignaled());
	ck_assert_error(all.wait(20ms), ErrorCode::Timeout, "timeout");
	signalEventfd(a);
	fence->signal();
	ck_assert_ok(all.wait(2s));
	ck_assert_ok(chain.wait(2s));
	ck_assert(*chain.isSignaled());
	// An error in any member passes through the composite.
	const SyncPoint withFailure[] = { first, failingPoint() };
	ck_assert_error(SyncPoint::all(withFailure)->wait(10ms), ErrorCode::DeviceLost, "device");
	// Noops drop out; empty sets and raw carriers are refused.
	const SyncPoint noops[] = { SyncPoint::noop(), SyncPoint::noop() };
	ck_assert(SyncPoint::all(noops)->isNoop());
	ck_assert(SyncPoint::any(noops)->isNoop());
	ck_assert_error(SyncPoint::all(std::span<const SyncPoint>()), ErrorCode::ZeroSize,
			"points");
	const SyncPoint raw[] = { first,
				  SyncPoint::create(OpenClEventSync{ kHandle }, nullptr).value() };
	ck_assert_error(SyncPoint::chain(raw), ErrorCode::NotSupported, "points[1]");
}
END_TEST

START_TEST(release_gate_signals_the_producer)
{
	ReleaseGate none = ReleaseGate::none();
	ck_assert(none.isNone());
	ck_assert(none.released().isNoop());
	ck_assert_error(none.signal(), ErrorCode::InvalidState, "gate");

	ReleaseGate gate = ReleaseGate::create().value();
	SyncPoint released = gate.released();
	ck_assert(!*released.isSignaled());
	ck_assert_error(released.wait(20ms), ErrorCode::Timeout, "timeout");
	// The consumer is done on the CPU, but its own GPU work (an eventfd here) still reads.
	int consumerFd;
	SyncPoint consumerWork = eventfdPoint(consumerFd);
	ReleaseGate copy = gate; // copies share one gate
	ck_assert_ok(copy.signal(consumerWork));
	ck_assert(gate.isSignaled());
	ck_assert(!*released.isSignaled());
	ck_assert_ok(gate.signal()); // only the first signal counts
	std::thread gpu([consumerFd] {
		std::this_thread::sleep_for(20ms);
		signalEventfd(consumerFd);
	});
	ck_assert_ok(released.wait(kDefaultWaitTimeout));
	gpu.join();
}
END_TEST

START_TEST(frames_carry_acquire_and_release)
{
	std::vector<uint8_t> pixels(64 * 4);
	Frame frame =
		Frame::wrap(
			PixelFormat::RGBA, 8, 8, {},
			CpuBytes::create({ .data = pixels.data(), .size = pixels.size() }).value())
			.value();
	auto fence = CpuFence::create().value();
	ReleaseGate gate = ReleaseGate::create().value();
	frame.setAcquire(fence->point());
	frame.setRelease(gate);
	Frame copy = frame;
	ck_assert(copy.acquire().kind() == SyncKind::Cpu);
	ck_assert(!*copy.acquire().isSignaled());
	fence->signal();
	ck_assert_ok(copy.acquire().wait());
	ck_assert_ok(copy.release().signal());
	ck_assert_ok(frame.release().released().wait(1s));
}
END_TEST

START_TEST(copying_a_point_allocates_nothing)
{
	int raw;
	SyncPoint point = eventfdPoint(raw);
	test::AllocationScope scope;
	SyncPoint a = point;
	SyncPoint b = a;
	b = point;
	ck_assert_uint_eq(scope.count(), 0);
}
END_TEST

int main()
{
	Suite *s = suite_create("sync-point");
	TCase *tc = tcase_create("sync-point");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, noop_is_done);
	tcase_add_test(tc, raw_carriers_validate_and_refuse_cpu_waits);
	tcase_add_test(tc, fence_fd_waits_by_poll);
	tcase_add_test(tc, cpu_fence_wakes_a_blocked_waiter);
	tcase_add_test(tc, driver_failures_are_errors_not_false);
	tcase_add_test(tc, deadlines_saturate);
	tcase_add_test(tc, composites_over_mixed_points);
	tcase_add_test(tc, release_gate_signals_the_producer);
	tcase_add_test(tc, frames_carry_acquire_and_release);
	tcase_add_test(tc, copying_a_point_allocates_nothing);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
