// Benchmark 5, GPU fences: a Vulkan timeline semaphore (lavapipe where no GPU is named) and a
// GLsync (llvmpipe, surfaceless EGL). Cases whose API was not built or does not open are skipped.
#include "fences.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unistd.h>

#if BENCH_HAVE_VULKAN
#include <gpuhandle/backends/vulkan_sync.h>

#include <vulkan/vulkan.h>
#endif
#if BENCH_HAVE_GL
#include "egl_gl_thread.h"
#endif

namespace gpuhandle::bench {

#if BENCH_HAVE_VULKAN
namespace {

constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

// An instance and a device with Vulkan 1.2 timeline semaphores (lavapipe's, unless the
// environment names another ICD).
struct VulkanDevice {
	VkInstance instance = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;
	std::string name{};
	~VulkanDevice()
	{
		if (device)
			vkDestroyDevice(device, nullptr);
		if (instance)
			vkDestroyInstance(instance, nullptr);
	}
	// Empty on success, else why there is none.
	std::string create()
	{
		if (!std::getenv("VK_ICD_FILENAMES") && access(kLavapipeIcd, R_OK) == 0)
			setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
		VkApplicationInfo app{};
		app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
		app.apiVersion = VK_API_VERSION_1_2;
		VkInstanceCreateInfo instanceInfo{};
		instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
		instanceInfo.pApplicationInfo = &app;
		if (VkResult r = vkCreateInstance(&instanceInfo, nullptr, &instance);
		    r != VK_SUCCESS)
			return "vkCreateInstance failed (" + std::to_string(r) + ")";
		uint32_t count = 0;
		vkEnumeratePhysicalDevices(instance, &count, nullptr);
		std::vector<VkPhysicalDevice> devices(count);
		vkEnumeratePhysicalDevices(instance, &count, devices.data());
		for (VkPhysicalDevice candidate : devices) {
			VkPhysicalDeviceProperties properties{};
			vkGetPhysicalDeviceProperties(candidate, &properties);
			VkPhysicalDeviceVulkan12Features supported{};
			supported.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
			VkPhysicalDeviceFeatures2 features{};
			features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
			features.pNext = &supported;
			vkGetPhysicalDeviceFeatures2(candidate, &features);
			if (properties.apiVersion < VK_API_VERSION_1_2 ||
			    !supported.timelineSemaphore)
				continue;
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
			if (vkCreateDevice(candidate, &deviceInfo, nullptr, &device) ==
			    VK_SUCCESS) {
				name = properties.deviceName;
				return {};
			}
		}
		return "no Vulkan 1.2 device with timeline semaphores among " +
		       std::to_string(count);
	}
};

} // namespace

void benchVulkan(Report &out, int samples, WaiterThread &thread, LoopThread &loop)
{
	if (std::getenv("GPUHANDLE_UNDER_VKVALIDATION")) {
		// The layer (1.3.239) holds its lock through a host vkWaitSemaphores, so a host
		// signal from another thread waits for the wait's timeout (Vulkan-ValidationLayers
		// issue 4968, fixed in 1.3.259): the figures would measure the layer.
		std::printf(
			"  skip wake/vulkan-timeline: under the validation layer, whose host waits "
			"block host signals until they time out (Vulkan-ValidationLayers #4968)\n");
		return;
	}
	VulkanDevice vk;
	if (std::string why = vk.create(); !why.empty()) {
		std::printf("  skip wake/vulkan-timeline: %s\n", why.c_str());
		return;
	}
	VkSemaphoreTypeCreateInfo typeInfo{ VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
					    VK_SEMAPHORE_TYPE_TIMELINE, 0 };
	VkSemaphoreCreateInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &typeInfo, 0 };
	VkSemaphore semaphore = VK_NULL_HANDLE;
	if (vkCreateSemaphore(vk.device, &info, nullptr, &semaphore) != VK_SUCCESS) {
		std::printf("  skip wake/vulkan-timeline: vkCreateSemaphore failed\n");
		return;
	}
	VulkanDeviceDispatch dispatch;
	dispatch.device = vk.device;
	dispatch.getDeviceProcAddr = reinterpret_cast<void *>(&vkGetDeviceProcAddr);
	// One timeline for every case: sample i of a case waits for `next`, then signals it.
	uint64_t next = 0;
	std::vector<uint64_t> values(static_cast<size_t>(samples));
	std::vector<std::optional<SyncPoint>> points(static_cast<size_t>(samples));
	int failures = 0;
	auto arm = [&](int i) {
		values[size_t(i)] = ++next;
		auto point = importVulkanSemaphore({ reinterpret_cast<uint64_t>(semaphore),
						     VulkanSemaphoreKind::Timeline,
						     values[size_t(i)], vk.device },
						   dispatch);
		if (point.ok())
			points[size_t(i)] = std::move(*point);
		else
			failures++;
	};
	auto signal = [&](int i) {
		VkSemaphoreSignalInfo signalInfo{ VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, nullptr,
						  semaphore, values[size_t(i)] };
		if (vkSignalSemaphore(vk.device, &signalInfo) != VK_SUCCESS)
			failures++;
	};
	auto pointOf = [&](int i) -> const SyncPoint & { return *points[size_t(i)]; };
	WakeFigures f;
	f.rawWhat = "vkWaitSemaphores";
	f.note = vk.name;
	f.asyncTarget = 1.5;
	auto rawWait = [&](int i) {
		VkSemaphoreWaitInfo wait{ VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
					  nullptr,
					  0,
					  1,
					  &semaphore,
					  &values[size_t(i)] };
		return vkWaitSemaphores(vk.device, &wait, 5000000000ull) == VK_SUCCESS;
	};
	interleave(samples,
		   {
			   [&](int count) {
				   append(f.raw,
					  measureBlocking(count, arm, rawWait, signal, failures));
			   },
			   [&](int count) {
				   append(f.blocking,
					  measureBlocking(
						  count, arm,
						  [&](int i) {
							  return pointOf(i).wait(kWaitBudget).ok();
						  },
						  signal, failures));
			   },
			   [&](int count) {
				   append(f.async, measureCallback(
							   count,
							   [&](int i, Stamp stamp) {
								   arm(i);
								   auto ticket = thread.enqueue(
									   pointOf(i), kWaitBudget,
									   [stamp](Status s) {
										   stamp(s.ok());
									   });
								   if (!ticket.ok())
									   stamp(false);
							   },
							   signal, failures));
			   },
			   [&](int count) {
				   append(f.source,
					  measureCallback(
						  count,
						  [&](int i, Stamp stamp) {
							  arm(i);
							  loop.attachSyncSource(pointOf(i),
										std::move(stamp));
						  },
						  signal, failures));
			   },
		   });
	reportWake(out, "vulkan-timeline", f);
	if (failures)
		std::printf("  wake/vulkan-timeline: %d waits failed\n", failures);
	points.clear();
	// The loop and the waiter thread dropped their copies once their callbacks ran.
	vkDestroySemaphore(vk.device, semaphore, nullptr);
}
#else
void benchVulkan(Report &, int, WaiterThread &, LoopThread &)
{
	std::printf("  skip wake/vulkan-timeline: built without Vulkan (libvulkan-dev)\n");
}
#endif

#if BENCH_HAVE_GL
// A GLsync cannot be timed from its signal (llvmpipe signals it whenever its rasteriser is
// done), so every figure here runs from glFenceSync + glFlush to the waiter running: the same
// GL work in each, so the differences are the waits'.
void benchGl(Report &out, int samples, WaiterThread &thread, LoopThread &loop)
{
	test::EglGlThread gl;
	if (std::string why = gl.start(); !why.empty()) {
		std::printf("  skip wake/glsync: %s\n", why.c_str());
		return;
	}
	int failures = 0;
	auto micros = [](Clock::time_point a, Clock::time_point b) {
		return std::chrono::duration<double, std::micro>(b - a).count();
	};
	// Issues the fence on the GL thread (called there); `issued` is when.
	auto issue = [&](Clock::time_point &issued) {
		issued = Clock::now();
		GLsync sync = gl.clearAndFence();
		glFlush();
		return sync;
	};
	auto adopt = [&](GLsync sync) {
		auto point = importGlSync({ sync, gl.context, GlFlavour::Egl }, gl.blocking());
		if (!point.ok())
			failures++;
		return point.ok() ? *point : SyncPoint::noop();
	};
	WakeFigures f;
	f.rawWhat = "glClientWaitSync on the GL thread";
	f.note = "from glFenceSync + glFlush; gpuhandle's figure includes importGlSync";
	std::vector<double> otherThread;
	auto blockingSamples = [&](int count) {
		for (int i = 0; i < count; i++) {
			gl.run([&] {
				Clock::time_point issued;
				GLsync sync = issue(issued);
				if (glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT,
						     5000000000ull) == GL_WAIT_FAILED)
					failures++;
				f.raw.push_back(micros(issued, Clock::now()));
				glDeleteSync(sync);
			});
			gl.run([&] {
				Clock::time_point issued;
				SyncPoint point = adopt(issue(issued));
				if (!point.wait(kWaitBudget).ok())
					failures++;
				f.blocking.push_back(micros(issued, Clock::now()));
			});
			Clock::time_point issued;
			GLsync sync = nullptr;
			gl.run([&] { sync = issue(issued); });
			SyncPoint point = adopt(sync);
			if (!point.wait(kWaitBudget).ok())
				failures++;
			otherThread.push_back(micros(issued, Clock::now()));
		}
	};
	// Callback waits: the point goes to the waiter thread or the loop once the fence is issued.
	auto callbackSamples = [&](int count, const std::function<void(SyncPoint, Stamp)> &start) {
		std::vector<double> us;
		for (int i = 0; i < count; i++) {
			Clock::time_point issued, woken;
			std::atomic<bool> done{ false };
			GLsync sync = nullptr;
			gl.run([&] { sync = issue(issued); });
			start(adopt(sync), [&](bool ok) {
				woken = Clock::now();
				if (!ok)
					failures++;
				done.store(true, std::memory_order_release);
			});
			while (!done.load(std::memory_order_acquire))
				std::this_thread::yield();
			us.push_back(micros(issued, woken));
		}
		return us;
	};
	auto toThread = [&](SyncPoint point, Stamp stamp) {
		auto ticket = thread.enqueue(std::move(point), kWaitBudget,
					     [stamp](Status s) { stamp(s.ok()); });
		if (!ticket.ok())
			stamp(false);
	};
	auto toLoop = [&](SyncPoint point, Stamp stamp) {
		loop.attachSyncSource(std::move(point), std::move(stamp));
	};
	interleave(samples,
		   {
			   blockingSamples,
			   [&](int count) { append(f.async, callbackSamples(count, toThread)); },
			   [&](int count) { append(f.source, callbackSamples(count, toLoop)); },
		   });
	reportWake(out, "glsync", f);
	const Stats raw = statsOf(f.raw), other = statsOf(otherThread);
	char note[160];
	std::snprintf(note, sizeof note,
		      "SyncPoint::wait from another thread (blocking executor hop); p99 %.1f us",
		      other.p99);
	out.add({ "wake/glsync/blocking-other-thread", f.rawWhat, raw.median, other.median, "us", 0,
		  note });
	if (failures)
		std::printf("  wake/glsync: %d waits failed\n", failures);
}
#else
void benchGl(Report &, int, WaiterThread &, LoopThread &)
{
	std::printf("  skip wake/glsync: built without EGL and GLESv2 (libegl-dev, libgles-dev)\n");
}
#endif

} // namespace gpuhandle::bench
