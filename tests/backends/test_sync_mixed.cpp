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

#include <CL/cl.h>
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <vulkan/vulkan.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "check_helpers.h"
#include "fd_count.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

long long msSince(Clock::time_point start)
{
	return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

// A lavapipe device with timeline semaphores.
struct Vulkan {
	VkInstance instance = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;

	std::string create()
	{
		VkApplicationInfo app{};
		app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
		app.apiVersion = VK_API_VERSION_1_2;
		VkInstanceCreateInfo instanceInfo{};
		instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
		instanceInfo.pApplicationInfo = &app;
		if (vkCreateInstance(&instanceInfo, nullptr, &instance) != VK_SUCCESS)
			return "vkCreateInstance failed";
		uint32_t count = 0;
		vkEnumeratePhysicalDevices(instance, &count, nullptr);
		std::vector<VkPhysicalDevice> devices(count);
		vkEnumeratePhysicalDevices(instance, &count, devices.data());
		VkPhysicalDevice physical = VK_NULL_HANDLE;
		for (VkPhysicalDevice candidate : devices) {
			VkPhysicalDeviceProperties properties{};
			vkGetPhysicalDeviceProperties(candidate, &properties);
			if (std::strstr(properties.deviceName, "llvmpipe") && properties.apiVersion >= VK_API_VERSION_1_2)
				physical = candidate;
		}
		if (!physical)
			return "no lavapipe device with Vulkan 1.2";
		float priority = 1.0f;
		VkDeviceQueueCreateInfo queueInfo{};
		queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		queueInfo.queueCount = 1;
		queueInfo.pQueuePriorities = &priority;
		VkPhysicalDeviceVulkan12Features enabled{};
		enabled.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
		enabled.timelineSemaphore = VK_TRUE;
		VkDeviceCreateInfo deviceInfo{};
		deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
		deviceInfo.pNext = &enabled;
		deviceInfo.queueCreateInfoCount = 1;
		deviceInfo.pQueueCreateInfos = &queueInfo;
		if (vkCreateDevice(physical, &deviceInfo, nullptr, &device) != VK_SUCCESS)
			return "vkCreateDevice with timeline semaphores failed";
		return "";
	}

	~Vulkan()
	{
		if (device)
			vkDestroyDevice(device, nullptr);
		if (instance)
			vkDestroyInstance(instance, nullptr);
	}
};

// A thread with a surfaceless GLES 3 context that runs posted work in order.
class GlThread
{
public:
	std::string start()
	{
		std::promise<std::string> started;
		auto result = started.get_future();
		thread_ = std::thread([this, &started] {
			std::string why = setUp();
			started.set_value(why);
			if (why.empty())
				loop();
		});
		std::string why = result.get();
		if (!why.empty())
			thread_.join();
		return why;
	}

	~GlThread()
	{
		if (!thread_.joinable())
			return;
		post({});
		thread_.join();
	}

	// Queues `work`; an empty function stops the thread once the queue before it ran.
	void post(std::function<void()> work)
	{
		{
			std::lock_guard<std::mutex> lock(mutex_);
			queue_.push_back(std::move(work));
		}
		wake_.notify_all();
	}

	void run(std::function<void()> work)
	{
		std::promise<void> ran;
		auto done = ran.get_future();
		post([&work, &ran] {
			work();
			ran.set_value();
		});
		done.get();
	}

	EGLContext context = EGL_NO_CONTEXT;

private:
	std::string setUp()
	{
		auto getPlatformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
			eglGetProcAddress("eglGetPlatformDisplayEXT"));
		const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
		if (!getPlatformDisplay || !client || !std::strstr(client, "EGL_MESA_platform_surfaceless"))
			return "EGL has no surfaceless platform";
		display_ = getPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
		if (display_ == EGL_NO_DISPLAY || !eglInitialize(display_, nullptr, nullptr) || !eglBindAPI(EGL_OPENGL_ES_API))
			return "the surfaceless EGL display did not initialize";
		const EGLint attributes[] = { EGL_CONTEXT_CLIENT_VERSION, 3, EGL_NONE };
		context = eglCreateContext(display_, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attributes);
		if (context == EGL_NO_CONTEXT || !eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context))
			return "no config-less GLES 3 context";
		return "";
	}

	void loop()
	{
		for (;;) {
			std::unique_lock<std::mutex> lock(mutex_);
			wake_.wait(lock, [this] { return !queue_.empty(); });
			auto work = std::move(queue_.front());
			queue_.pop_front();
			lock.unlock();
			if (!work)
				break;
			work();
		}
		eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		eglDestroyContext(display_, context);
		eglTerminate(display_);
		eglReleaseThread();
	}

	EGLDisplay display_ = EGL_NO_DISPLAY;
	std::thread thread_;
	std::mutex mutex_;
	std::condition_variable wake_;
	std::deque<std::function<void()>> queue_;
};

cl_context openClContext(std::string &why)
{
	cl_platform_id platform = nullptr;
	cl_uint platforms = 0;
	cl_device_id device = nullptr;
	cl_uint devices = 0;
	if (clGetPlatformIDs(1, &platform, &platforms) != CL_SUCCESS || platforms == 0 ||
	    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &devices) != CL_SUCCESS || devices == 0) {
		why = "no OpenCL platform with a device";
		return nullptr;
	}
	cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, nullptr);
	if (!context)
		why = "clCreateContext failed";
	return context;
}

// Every backend, opened per test: Check forks each test and driver state must not cross a fork.
struct Backends {
	Vulkan vk;
	GlThread gl;
	cl_context cl = nullptr;

	std::string open()
	{
		std::string why = vk.create();
		if (why.empty())
			why = gl.start();
		if (why.empty())
			cl = openClContext(why);
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
		VkSemaphoreTypeCreateInfo typeInfo{ VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
						    VK_SEMAPHORE_TYPE_TIMELINE, 0 };
		VkSemaphoreCreateInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &typeInfo, 0 };
		ck_assert_int_eq(vkCreateSemaphore(b.vk.device, &info, nullptr, &semaphore_), VK_SUCCESS);
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
		VulkanDeviceDispatch dispatch;
		dispatch.device = b.vk.device;
		dispatch.getDeviceProcAddr = reinterpret_cast<void *>(&vkGetDeviceProcAddr);
		points_[kVulkan] = importVulkanSemaphore(VulkanSemaphoreSync{ reinterpret_cast<uint64_t>(semaphore_),
									      VulkanSemaphoreKind::Timeline, 1,
									      b.vk.device },
							 dispatch, owner)
					   .value();

		GLsync sync = nullptr;
		b.gl.run([&sync] {
			glClear(GL_COLOR_BUFFER_BIT);
			sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
		});
		GlThread *gl = &b.gl;
		points_[kGl] = importGlSync(GlSyncSync{ sync, b.gl.context, GlFlavour::Egl },
					    [gl](std::function<void()> work) { gl->post(std::move(work)); })
				       .value();
		auto gate = std::make_shared<std::shared_future<void>>(glGate_.get_future().share());
		b.gl.post([gate] { gate->wait(); });

		cl_int error = CL_SUCCESS;
		event_ = clCreateUserEvent(b.cl, &error);
		ck_assert_int_eq(error, CL_SUCCESS);
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
		case kVulkan: {
			VkSemaphoreSignalInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, nullptr, semaphore_, 1 };
			ck_assert_int_eq(vkSignalSemaphore(g_backends->vk.device, &info), VK_SUCCESS);
			break;
		}
		case kGl: glGate_.set_value(); break;
		case kOpenCl: ck_assert_int_eq(clSetUserEventStatus(event_, CL_COMPLETE), CL_SUCCESS); break;
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
	ck_assert_msg(took >= timeout.count() && took < 2000, "a %lld ms wait took %lld ms",
		      static_cast<long long>(timeout.count()), took);
	auto done = point.isSignaled();
	ck_assert_ok(done);
	ck_assert(!*done);
}

void assertWokenBy(Fences &fences, const SyncPoint &point, size_t index)
{
	std::thread signaller = fences.signalLater(index);
	auto start = Clock::now();
	Status status = point.wait(kDefaultWaitTimeout);
	long long took = msSince(start);
	signaller.join();
	ck_assert_msg(status.ok(), "after signalling %s: %s", kNames[index],
		      status.ok() ? "" : status.error().message().c_str());
	ck_assert_msg(took < 2000, "the wake-up by %s took %lld ms", kNames[index], took);
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
		return changed.wait_for(lock, 5s, [this, n] { return statuses.size() >= n; });
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
	ck_assert_ok(waitAsync(*any, kDefaultWaitTimeout, outcomes.callback(), thread->get()));
	ck_assert_ok(waitAsync(*all, kDefaultWaitTimeout, outcomes.callback(), thread->get()));
	ck_assert_ok(waitAsync(*chain, kDefaultWaitTimeout, outcomes.callback(), thread->get()));
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

// Exits 77 (with the reason) unless every backend opens; probed in a child so that this process
// starts no driver threads before Check forks.
int probe()
{
	pid_t child = fork();
	if (child == 0) {
		std::string why = Backends().open();
		if (!why.empty()) {
			std::printf("SKIP: %s\n", why.c_str());
			std::fflush(stdout);
			_exit(77);
		}
		_exit(0);
	}
	int status = 0;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

int main()
{
	int probed = probe();
	if (probed != 0 && !std::getenv("VK_ICD_FILENAMES") && access(kLavapipeIcd, R_OK) == 0) {
		setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1); // the loader did not offer lavapipe
		probed = probe();
	}
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
