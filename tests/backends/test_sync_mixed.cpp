// Combinators across backends: any / all / chain over a Vulkan timeline semaphore (lavapipe), a
// GLsync (llvmpipe, surfaceless EGL), an OpenCL user event (PoCL) and an eventfd, blocking and
// through the waiter thread; no fd leaks.
#define CL_TARGET_OPENCL_VERSION 120
#include <gpuhandle/async_wait.h>
#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/backends/opencl_sync.h>
#include <gpuhandle/backends/vulkan_sync.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/waiter_thread.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <CL/cl.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <vulkan/vulkan.h>

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "check_helpers.h"
#include "egl_gl_thread.h"
#include "fd_count.h"
#include "lavapipe_device.h"
#include "opencl_context.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

long long msSince(Clock::time_point start)
{
	return static_cast<long long>(
		std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)
			.count());
}

// Every backend, opened per test: Check forks each test and driver state must not cross a fork.
struct Backends {
	test::LavapipeDevice vk;
	test::EglGlThread gl;
	cl_context cl = nullptr;

	std::string open()
	{
		std::string why = vk.create();
		if (why.empty())
			why = gl.start();
		if (why.empty())
			cl = test::openClContext(why);
		return why;
	}
	~Backends()
	{
		if (cl)
			clReleaseContext(cl);
	}
};

Backends *g_backends = nullptr;

void setUp()
{
	g_backends = new Backends();
	std::string why = g_backends->open();
	ck_assert_msg(why.empty(), "%s", why.c_str());
}

void tearDown()
{
	delete g_backends;
	g_backends = nullptr;
}

enum Index : size_t { kVulkan = 0, kGl = 1, kOpenCl = 2, kEventFd = 3 };
constexpr const char *kNames[] = { "vulkan", "gl", "opencl", "eventfd" };

// One unsignalled fence of each kind and a way to signal each. The GLsync is fenced after a
// glClear, then the GL thread is held busy: its point cannot complete until the gate opens.
class Fences
{
public:
	Fences()
	{
		Backends &b = *g_backends;
		semaphore_ = b.vk.makeSemaphore(VK_SEMAPHORE_TYPE_TIMELINE);
		// The semaphore goes with the last copy of its point.
		struct Doomed {
			VkDevice device;
			VkSemaphore semaphore;
		};
		auto owner = makeKeepAlive(
			[](void *data) {
				auto *doomed = static_cast<Doomed *>(data);
				vkDestroySemaphore(doomed->device, doomed->semaphore, nullptr);
				delete doomed;
			},
			new Doomed{ b.vk.device, semaphore_ });
		VulkanSemaphoreSync timeline{ test::handleOf(semaphore_),
					      VulkanSemaphoreKind::Timeline, 1, b.vk.device };
		points_[kVulkan] = importVulkanSemaphore(timeline, b.vk.dispatch(), owner).value();

		GLsync sync = b.gl.clearAndFence();
		points_[kGl] = importGlSync(GlSyncSync{ sync, b.gl.context, GlFlavour::Egl },
					    b.gl.posting())
				       .value();
		auto gate =
			std::make_shared<std::shared_future<void>>(glGate_.get_future().share());
		b.gl.post([gate] { gate->wait(); });

		event_ = test::makeUserEvent(b.cl);
		points_[kOpenCl] = importOpenClEvent(OpenClEventSync{ event_ }).value();

		UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
		eventFd_ = fd.get();
		points_[kEventFd] = SyncPoint::fromFenceFd(SharedFd(std::move(fd))).value();
	}

	// Signals whatever is left, so that no GL thread or driver callback is left hanging.
	~Fences()
	{
		for (size_t i = 0; i < points_.size(); ++i)
			signal(i);
		clReleaseEvent(event_);
	}

	void signal(size_t index)
	{
		if (signaled_[index])
			return;
		signaled_[index] = true;
		uint64_t one = 1;
		switch (index) {
		case kVulkan: g_backends->vk.hostSignal(semaphore_, 1); break;
		case kGl: glGate_.set_value(); break;
		case kOpenCl:
			ck_assert_int_eq(clSetUserEventStatus(event_, CL_COMPLETE), CL_SUCCESS);
			break;
		default: ck_assert_int_eq(write(eventFd_, &one, sizeof(one)), 8); break;
		}
	}

	// Signals `index` from another thread after 20 ms, while the caller blocks in a wait.
	std::thread signalLater(size_t index)
	{
		return std::thread([this, index] {
			std::this_thread::sleep_for(20ms);
			signal(index);
		});
	}

	const std::array<SyncPoint, 4> &points() const { return points_; }

private:
	std::array<SyncPoint, 4> points_{};
	std::array<bool, 4> signaled_{};
	VkSemaphore semaphore_ = VK_NULL_HANDLE;
	std::promise<void> glGate_;
	cl_event event_ = nullptr;
	int eventFd_ = -1;
};

void assertTimesOut(const SyncPoint &point, std::chrono::milliseconds timeout)
{
	auto start = Clock::now();
	Status status = point.wait(timeout);
	long long took = msSince(start);
	ck_assert_error(status, ErrorCode::Timeout, "timeout");
	ck_assert_msg(took >= timeout.count(), "a %lld ms wait took %lld ms",
		      static_cast<long long>(timeout.count()), took);
	auto done = point.isSignaled();
	ck_assert_ok(done);
	ck_assert(!*done);
}

void assertWokenBy(Fences &fences, const SyncPoint &point, size_t index)
{
	std::thread signaller = fences.signalLater(index);
	Status status = point.wait(test::kWaitAcrossHostSignal);
	signaller.join();
	// Woken by the signal: ok, not a Timeout.
	ck_assert_msg(status.ok(), "after signalling %s: %s", kNames[index],
		      status.ok() ? "" : status.error().message().c_str());
}

// Collects asynchronous outcomes; each callback must run exactly once.
struct Outcomes {
	std::mutex mutex;
	std::condition_variable changed;
	std::vector<Status> statuses;

	WaitCallback callback()
	{
		return [this](Status status) {
			std::lock_guard<std::mutex> lock(mutex);
			statuses.push_back(std::move(status));
			changed.notify_all();
		};
	}
	// A copy: callbacks may still append (and reallocate) on the waiter thread.
	Status at(size_t index)
	{
		std::lock_guard<std::mutex> lock(mutex);
		return statuses.at(index);
	}
	size_t count()
	{
		std::lock_guard<std::mutex> lock(mutex);
		return statuses.size();
	}
	bool awaitCount(size_t n)
	{
		std::unique_lock<std::mutex> lock(mutex);
		return changed.wait_for(lock, test::kWaitAcrossHostSignal,
					[this, n] { return statuses.size() >= n; });
	}
};

} // namespace

START_TEST(any_resolves_when_the_first_signals)
{
	for (size_t first = 0; first < 4; ++first) {
		Fences fences;
		auto any = SyncPoint::any(fences.points());
		ck_assert_ok(any);
		assertTimesOut(*any, 50ms);
		assertWokenBy(fences, *any, first);
		for (size_t other = 0; other < 4; ++other) {
			if (other == first)
				continue;
			auto done = fences.points()[other].isSignaled();
			ck_assert_ok(done);
			ck_assert_msg(!*done, "%s signalled with %s", kNames[other], kNames[first]);
		}
	}
}
END_TEST

START_TEST(all_resolves_only_after_the_last)
{
	constexpr size_t kOrder[] = { kEventFd, kVulkan, kOpenCl, kGl };
	for (size_t last = 0; last < 4; ++last) {
		Fences fences;
		auto all = SyncPoint::all(fences.points());
		ck_assert_ok(all);
		for (size_t i = 1; i < 4; ++i) {
			fences.signal(kOrder[(last + i) % 4]);
			assertTimesOut(*all, 20ms);
		}
		assertWokenBy(fences, *all, kOrder[last]);
	}
}
END_TEST

START_TEST(chain_waits_in_order)
{
	Fences fences;
	auto chain = SyncPoint::chain(fences.points());
	ck_assert_ok(chain);
	// Everything after the first is done: the chain is not, until the first is.
	fences.signal(kEventFd);
	fences.signal(kOpenCl);
	fences.signal(kGl);
	assertTimesOut(*chain, 50ms);
	assertWokenBy(fences, *chain, kVulkan);

	Fences inOrder;
	auto chain2 = SyncPoint::chain(inOrder.points());
	ck_assert_ok(chain2);
	for (size_t i = 0; i < 3; ++i) {
		inOrder.signal(i);
		assertTimesOut(*chain2, 20ms);
	}
	assertWokenBy(inOrder, *chain2, kEventFd);
}
END_TEST

START_TEST(waiter_thread_resolves_combinators_once)
{
	auto thread = WaiterThread::create("mixed");
	ck_assert_ok(thread);
	Outcomes outcomes;
	Fences fences;
	auto any = SyncPoint::any(fences.points());
	auto all = SyncPoint::all(fences.points());
	auto chain = SyncPoint::chain(fences.points());
	ck_assert_ok(any);
	ck_assert_ok(all);
	ck_assert_ok(chain);
	ck_assert_ok(
		waitAsync(*any, test::kWaitAcrossHostSignal, outcomes.callback(), thread->get()));
	ck_assert_ok(
		waitAsync(*all, test::kWaitAcrossHostSignal, outcomes.callback(), thread->get()));
	ck_assert_ok(
		waitAsync(*chain, test::kWaitAcrossHostSignal, outcomes.callback(), thread->get()));
	ck_assert_ok(waitAsync(*all, 50ms, outcomes.callback(), thread->get()));

	ck_assert(outcomes.awaitCount(1)); // the 50 ms one times out first
	ck_assert_error(outcomes.at(0), ErrorCode::Timeout, "timeout");
	fences.signal(kOpenCl);
	ck_assert(outcomes.awaitCount(2)); // any
	ck_assert_ok(outcomes.at(1));
	fences.signal(kGl);
	fences.signal(kEventFd);
	std::this_thread::sleep_for(30ms);
	ck_assert_int_eq(outcomes.count(), 2); // all and chain wait for the Vulkan semaphore
	fences.signal(kVulkan);
	ck_assert(outcomes.awaitCount(4));
	ck_assert_ok(outcomes.at(2));
	ck_assert_ok(outcomes.at(3));
	std::this_thread::sleep_for(20ms);
	ck_assert_int_eq(outcomes.count(), 4); // each resolved once
}
END_TEST

START_TEST(no_fd_leaked)
{
	auto round = [] {
		Fences fences;
		auto any = SyncPoint::any(fences.points());
		auto all = SyncPoint::all(fences.points());
		ck_assert_ok(any);
		ck_assert_ok(all);
		for (size_t i = 0; i < 4; ++i)
			fences.signal(i);
		ck_assert_ok(any->wait(kDefaultWaitTimeout));
		ck_assert_ok(all->wait(kDefaultWaitTimeout));
	};
	round(); // the drivers open their fds lazily
	int before = gpuhandle::test::openFdCount();
	for (int i = 0; i < 10; ++i)
		round();
	g_backends->gl.run([] {}); // the posted GLsync deletes ran
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

int main()
{
	// Exits 77 (with the reason) unless every backend opens.
	auto probe = [] { return test::probeInChild([] { return Backends().open(); }); };
	int probed = probe();
	if (probed != 0 && test::nameLavapipeIcd()) // the loader did not offer lavapipe
		probed = probe();
	if (probed != 0)
		return probed;
	Suite *s = suite_create("sync-mixed");
	TCase *tc = tcase_create("sync-mixed");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setUp, tearDown);
	tcase_add_test(tc, any_resolves_when_the_first_signals);
	tcase_add_test(tc, all_resolves_only_after_the_last);
	tcase_add_test(tc, chain_waits_in_order);
	tcase_add_test(tc, waiter_thread_resolves_combinators_once);
	tcase_add_test(tc, no_fd_leaked);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
