// The Vulkan backend inside a host's device submits on the host's queue under the host's lock.
#include <gpuhandle/backends/backend.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "lavapipe_device.h"
#include "skip_probe.h"
#include "vulkan_host_device.h"

using namespace gpuhandle;

namespace {

constexpr int kRounds = 200;
constexpr WaitDuration kTimeout = std::chrono::seconds(10);

// The host's lock of its queue, as an application (or GStreamer's gst_vulkan_queue_submit_lock)
// keeps one: every submission to the queue, the host's and gpuhandle's, happens under it.
struct HostQueueLock {
	std::mutex mutex;
	std::atomic<int> taken{ 0 };
	std::atomic<int> released{ 0 };
	std::atomic<int> holders{ 0 };
	std::atomic<int> mostHolders{ 0 };

	void operator()(bool lock)
	{
		if (lock) {
			mutex.lock();
			const int now = ++holders;
			int most = mostHolders.load();
			while (now > most && !mostHolders.compare_exchange_weak(most, now)) {
			}
			++taken;
		} else {
			--holders;
			++released;
			mutex.unlock();
		}
	}
};

} // namespace

// Two threads submit to one VkQueue: the host (empty submissions with a fence, under its lock)
// and the backend (GPU copies between its own images). Vulkan requires the queue to be
// externally synchronized: gpuhandle takes the host's lock around each of its submissions,
// which ThreadSanitizer (suite sync) and the validation layer's thread checks (--setup
// validation) would otherwise catch as two threads in vkQueueSubmit at once.
START_TEST(backend_and_host_share_one_queue)
{
	test::VulkanHost host;
	const std::string made = host.create(false);
	ck_assert_msg(made.empty(), "%s", made.c_str());
	HostQueueLock lock;
	BackendRef backend = host.backend([&lock](bool take) { lock(take); });
	AllocateRequest request;
	request.format = PixelFormat::RGBA;
	request.width = 64;
	request.height = 64;
	request.storage = FrameStorage::OptimalImage;
	Result<Frame> src = backend->allocate(request);
	ck_assert_ok(src);
	Result<Frame> dst = backend->allocate(request);
	ck_assert_ok(dst);

	std::atomic<bool> hostFailed{ false };
	std::thread hostThread([&] {
		VkFenceCreateInfo info{ VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, nullptr, 0 };
		VkFence fence = VK_NULL_HANDLE;
		if (vkCreateFence(host.device(), &info, nullptr, &fence) != VK_SUCCESS) {
			hostFailed = true;
			return;
		}
		for (int i = 0; i < kRounds && !hostFailed; i++) {
			VkResult submitted;
			{
				std::lock_guard<std::mutex> held(lock.mutex);
				submitted = vkQueueSubmit(host.queue(), 0, nullptr, fence);
			}
			if (submitted != VK_SUCCESS ||
			    vkWaitForFences(host.device(), 1, &fence, VK_TRUE, 10'000'000'000) !=
				    VK_SUCCESS ||
			    vkResetFences(host.device(), 1, &fence) != VK_SUCCESS)
				hostFailed = true;
		}
		vkDestroyFence(host.device(), fence, nullptr);
	});
	int copies = 0;
	for (int i = 0; i < kRounds; i++) {
		Status copied = backend->copyFrame(*dst, *src, kTimeout);
		if (!copied.ok())
			break;
		copies++;
	}
	hostThread.join();
	ck_assert_msg(!hostFailed, "the host's submissions failed");
	ck_assert_int_eq(copies, kRounds);
	// Each copy submitted under the host's lock, taken and released in pairs, never twice.
	ck_assert_int_ge(lock.taken.load(), kRounds);
	ck_assert_int_eq(lock.taken.load(), lock.released.load());
	ck_assert_int_eq(lock.mostHolders.load(), 1);
	ck_assert_int_eq(lock.holders.load(), 0);
}
END_TEST

int main()
{
	// The probe runs in a child (exit 77 with the reason where lavapipe is missing), so that
	// no driver thread exists when Check forks the test; lavapipe's ICD is named here again.
	if (int status = test::probeInChild(test::probeVulkanHost); status != 0)
		return status;
	test::nameLavapipeIcd();
	Suite *s = suite_create("vulkan-host-queue");
	TCase *tc = tcase_create("queue");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, backend_and_host_share_one_queue);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
