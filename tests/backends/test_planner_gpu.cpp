// The planner between real devices: Vulkan (lavapipe) into GL (llvmpipe) zero-copy through an
// opaque fd, as a buffer and as a texture, with matching device UUIDs; GL into Vulkan by a GPU
// copy; host memory into Vulkan in place; a timeline semaphore carried or waited; copies refused.
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/cpu_fence.h>

#include "fd_count.h"
#include "frame_pattern.h"
#include "lavapipe_device.h"
#include "skip_probe.h"

#include <thread>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

struct Devices {
	BackendRef vulkan;
	BackendRef gl;
	BackendRef cpu;
};

Devices openDevices()
{
	Devices d;
	d.vulkan = openBackend(BackendKind::Vulkan).value();
	d.gl = openBackend(BackendKind::OpenGL).value();
	d.cpu = openBackend(BackendKind::Cpu).value();
	return d;
}

AllocateRequest request(PixelFormat format, uint32_t width, uint32_t height, FrameStorage storage)
{
	AllocateRequest r;
	r.format = format;
	r.width = width;
	r.height = height;
	r.storage = storage;
	return r;
}

START_TEST(lavapipe_and_llvmpipe_are_one_device)
{
	Devices d = openDevices();
	ck_assert(d.vulkan->deviceId().uuid.has_value());
	ck_assert(d.gl->deviceId().uuid.has_value());
	ck_assert(sameDevice(d.vulkan->deviceId(), d.gl->deviceId()) == DeviceMatch::Same);
}
END_TEST

// A frame Vulkan wrote is read by GL from the same memory: no copy anywhere.
START_TEST(vulkan_frames_reach_gl_without_a_copy)
{
	const int fdsBefore = test::openFdCount();
	{
		Devices d = openDevices();
		struct Case {
			PixelFormat format;
			FrameStorage storage;
		} cases[] = { { PixelFormat::NV12, FrameStorage::Buffer },
			      { PixelFormat::V210, FrameStorage::Buffer },
			      { PixelFormat::RGBA, FrameStorage::LinearImage } };
		uint32_t seed = 1;
		for (Case c : cases) {
			Frame frame = d.vulkan->allocate(request(c.format, 1920, 1080, c.storage))
					      .value();
			ck_assert_string_eq(test::writePattern(*d.vulkan, frame, seed), "");
			ImportOptions options;
			options.source = d.vulkan;
			Result<ImportResult> result = importFrame(frame, *d.gl, options);
			ck_assert_msg(result.ok(), "%s %s: %s", pixelFormatName(c.format),
				      frameStorageName(c.storage),
				      result.ok() ? "" : result.error().message().c_str());
			ck_assert(result->route == ImportRoute::OpaqueFd);
			ck_assert(result->path == ExecutionPath::zeroCopy());
			const ResourceKind expected = c.storage == FrameStorage::Buffer
							      ? ResourceKind::GlBuffer
							      : ResourceKind::GlTexture;
			ck_assert(result->frame.resource(0).kind() == expected);
			ck_assert_string_eq(test::checkPattern(*d.gl, result->frame, seed), "");
			// Written through GL, seen through Vulkan: one allocation.
			ck_assert_string_eq(test::writePattern(*d.gl, result->frame, seed + 100),
					    "");
			ck_assert_string_eq(test::checkPattern(*d.vulkan, frame, seed + 100), "");
			++seed;
		}
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// GL exports nothing, so a GL frame reaches Vulkan by GL copying into memory Vulkan exported.
START_TEST(gl_frames_reach_vulkan_by_a_gpu_copy)
{
	const int fdsBefore = test::openFdCount();
	{
		Devices d = openDevices();
		Frame frame = d.gl->allocate(request(PixelFormat::P010LE, 1281, 721,
						     FrameStorage::Buffer))
				      .value();
		ck_assert_string_eq(test::writePattern(*d.gl, frame, 9), "");
		ImportOptions options;
		options.source = d.gl;
		Result<ImportResult> result = importFrame(frame, *d.vulkan, options);
		ck_assert_msg(result.ok(), "%s",
			      result.ok() ? "" : result.error().message().c_str());
		ck_assert(result->route == ImportRoute::GpuCopy);
		ck_assert(result->path.kind() == ExecutionPath::Kind::GpuCopy);
		ck_assert(d.vulkan->holds(result->frame));
		ck_assert_string_eq(test::checkPattern(*d.vulkan, result->frame, 9), "");

		options.allowCopies = false;
		Result<ImportResult> refused = importFrame(frame, *d.vulkan, options);
		ck_assert_error(refused, ErrorCode::NotSupported, "allowCopies");
		ck_assert(refused.error().kind() == ErrorKind::Configuration);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Page-aligned host memory is used by Vulkan in place (VK_EXT_external_memory_host).
// The GL buffer or texture that a GL frame names.
uint32_t glNameOf(const Frame &frame)
{
	if (const GlTexture *texture = frame.resource(0).get<GlTexture>())
		return texture->desc().name;
	const GlBuffer *buffer = frame.resource(0).get<GlBuffer>();
	ck_assert_ptr_nonnull(buffer);
	return buffer->desc().name;
}

// A pooled frame reaches GL again and again: its allocation is imported once (imports alive at
// the same time name one GL object, which shows the frame's bytes of the moment), another
// allocation gets its own, and the objects go with the allocation, backends still open.
START_TEST(a_vulkan_allocation_is_imported_into_gl_once)
{
	Devices d = openDevices();
	ImportOptions options;
	options.source = d.vulkan;
	options.allowCopies = false;
	auto intoGl = [&](const Frame &frame) {
		Result<ImportResult> result = importFrame(frame, *d.gl, options);
		ck_assert_ok(result);
		ck_assert(result->path == ExecutionPath::zeroCopy());
		return result->frame;
	};
	int tested = 0;
	for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::OptimalImage }) {
		if (!d.vulkan->supportsFormat(PixelFormat::NV12, storage))
			continue;
		tested++;
		const int fdsBefore = test::openFdCount();
		{
			Frame a = d.vulkan->allocate(request(PixelFormat::NV12, 330, 170, storage))
					  .value();
			Frame b = d.vulkan->allocate(request(PixelFormat::NV12, 330, 170, storage))
					  .value();
			ck_assert_string_eq(test::writePattern(*d.vulkan, a, 1), "");
			Frame first = intoGl(a);
			ck_assert_string_eq(test::checkPattern(*d.gl, first, 1), "");
			for (uint32_t seed = 2; seed <= 4; ++seed) {
				ck_assert_string_eq(test::writePattern(*d.vulkan, a, seed), "");
				Frame again = intoGl(a);
				ck_assert_uint_eq(glNameOf(again), glNameOf(first));
				ck_assert_string_eq(test::checkPattern(*d.gl, again, seed), "");
			}
			Frame other = intoGl(b);
			ck_assert_uint_ne(glNameOf(other), glNameOf(first));
		}
		ck_assert_int_eq(test::openFdCount(), fdsBefore);
	}
	ck_assert_int_gt(tested, 0);
}
END_TEST

START_TEST(host_memory_reaches_vulkan_in_place)
{
	Devices d = openDevices();
	const auto &routes = d.vulkan->capabilities().routes;
	if (std::find(routes.begin(), routes.end(), ImportRoute::HostPointer) == routes.end()) {
		std::printf(
			"this Vulkan driver does not import host memory; host-pointer case not run\n");
		return;
	}
	Frame frame =
		d.cpu->allocate(request(PixelFormat::YUV420P, 3840, 2160, FrameStorage::Buffer))
			.value();
	Result<ImportResult> result = importFrame(frame, *d.vulkan);
	ck_assert_msg(result.ok(), "%s", result.ok() ? "" : result.error().message().c_str());
	ck_assert(result->route == ImportRoute::HostPointer);
	ck_assert(result->path == ExecutionPath::zeroCopy());
	// Written by the CPU after the import, read by Vulkan: the same pages.
	ck_assert_string_eq(test::writePattern(*d.cpu, frame, 4), "");
	ck_assert_string_eq(test::checkPattern(*d.vulkan, result->frame, 4), "");

	// A memfd is mapped whole, so its planes (NV12 chroma starts mid-page) import as one range.
	BackendRef fd = openBackend(BackendKind::Fd).value();
	Frame shared =
		fd->allocate(request(PixelFormat::NV12, 33, 17, FrameStorage::Buffer)).value();
	Result<ImportResult> fromFd = importFrame(shared, *d.vulkan);
	ck_assert_msg(fromFd.ok(), "%s", fromFd.ok() ? "" : fromFd.error().message().c_str());
	ck_assert(fromFd->route == ImportRoute::HostPointer);
	ck_assert_string_eq(test::writePattern(*fd, shared, 5), "");
	ck_assert_string_eq(test::checkPattern(*d.vulkan, fromFd->frame, 5), "");
}
END_TEST

// A timeline semaphore on the Vulkan backend's device: GL cannot wait on it, so the planner
// does, and the imported frame is ready; on the same device the point travels with the frame.
START_TEST(a_timeline_semaphore_is_waited_or_carried)
{
	Devices d = openDevices();
	const VulkanContext *vk = d.vulkan->context()->vulkan().value();
	VkDevice device = static_cast<VkDevice>(vk->device);
	VkSemaphoreTypeCreateInfo typeInfo{ VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
					    VK_SEMAPHORE_TYPE_TIMELINE, 0 };
	VkSemaphoreCreateInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &typeInfo, 0 };
	VkSemaphore semaphore = VK_NULL_HANDLE;
	ck_assert_int_eq(vkCreateSemaphore(device, &info, nullptr, &semaphore), VK_SUCCESS);
	VulkanDeviceDispatch dispatch;
	dispatch.device = device;
	dispatch.getDeviceProcAddr = reinterpret_cast<void *>(&vkGetDeviceProcAddr);
	{
		Frame frame = d.vulkan->allocate(request(PixelFormat::NV12, 640, 360,
							 FrameStorage::Buffer))
				      .value();
		frame.setAcquire(
			importVulkanSemaphore(test::timelineAt(semaphore, 1), dispatch).value());

		ImportOptions options;
		options.source = d.vulkan;
		Result<ImportResult> same = importFrame(frame, *d.vulkan, options);
		ck_assert_ok(same);
		ck_assert(same->route == ImportRoute::Direct);
		ck_assert(same->fence == FenceTransfer::Carried);
		ck_assert(same->frame.acquire().kind() == SyncKind::VulkanSemaphore);

		std::thread producer([device, semaphore] {
			std::this_thread::sleep_for(30ms);
			VkSemaphoreSignalInfo signal{ VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
						      nullptr, semaphore, 1 };
			vkSignalSemaphore(device, &signal);
		});
		options.timeout = test::kWaitAcrossHostSignal; // the producer's host signal ends it
		Result<ImportResult> intoGl = importFrame(frame, *d.gl, options);
		// Back only once the producer signalled, however late the planner began its wait
		// (so no lower bound on fenceWait: the 30 ms may have passed before it began).
		Result<bool> signalledAtReturn = frame.acquire().isSignaled();
		producer.join();
		ck_assert_msg(intoGl.ok(), "%s",
			      intoGl.ok() ? "" : intoGl.error().message().c_str());
		ck_assert(intoGl->fence == FenceTransfer::CpuWait);
		ck_assert_ok(signalledAtReturn);
		ck_assert(*signalledAtReturn);
		ck_assert(intoGl->frame.acquire().isNoop());
	}
	vkDestroySemaphore(device, semaphore, nullptr);
}
END_TEST

// exportFence turns only a not-yet-waited binary semaphore of the device into a fence fd, and
// says why for everything else (lavapipe offers no SYNC_FD export at all).
START_TEST(fence_export_says_why_it_cannot)
{
	Devices d = openDevices();
	const VulkanContext *vk = d.vulkan->context()->vulkan().value();
	VkDevice device = static_cast<VkDevice>(vk->device);
	VkSemaphoreTypeCreateInfo typeInfo{ VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
					    VK_SEMAPHORE_TYPE_TIMELINE, 0 };
	VkSemaphoreCreateInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &typeInfo, 0 };
	VkSemaphore timeline = VK_NULL_HANDLE, binary = VK_NULL_HANDLE;
	ck_assert_int_eq(vkCreateSemaphore(device, &info, nullptr, &timeline), VK_SUCCESS);
	typeInfo.semaphoreType = VK_SEMAPHORE_TYPE_BINARY;
	ck_assert_int_eq(vkCreateSemaphore(device, &info, nullptr, &binary), VK_SUCCESS);
	{
		VulkanSemaphoreSync timelineRaw = test::timelineAt(timeline, 1);
		timelineRaw.device = device;
		Result<SyncPoint> created = SyncPoint::create(timelineRaw, nullptr);
		ck_assert_ok(created);
		SyncPoint timelinePoint = *created;
		ck_assert_error(d.vulkan->exportFence(timelinePoint), ErrorCode::NotSupported,
				"point");
		VulkanSemaphoreSync raw{ test::handleOf(binary), VulkanSemaphoreKind::Binary, 0,
					 device };
		Result<SyncPoint> createdBinary = SyncPoint::create(raw, nullptr);
		ck_assert_ok(createdBinary);
		SyncPoint binaryPoint = *createdBinary;
		Result<SyncPoint> exported = d.vulkan->exportFence(binaryPoint);
		ck_assert(!exported.ok());
		ck_assert(exported.error().code() == ErrorCode::NotSupported);
		ck_assert(!exported.error().message().empty());
		auto cpuFence = CpuFence::create().value();
		ck_assert_error(d.vulkan->exportFence(cpuFence->point()), ErrorCode::NotSupported,
				"point");
		ck_assert_error(d.gl->exportFence(cpuFence->point()), ErrorCode::NotSupported,
				"point");
		ck_assert_error(d.gl->importFence(cpuFence->point()), ErrorCode::NotSupported,
				"point");
	}
	vkDestroySemaphore(device, binary, nullptr);
	vkDestroySemaphore(device, timeline, nullptr);
}
END_TEST

} // namespace

int main()
{
	test::nameLavapipeIcd();
	int probe = test::probeInChild([] {
		Result<BackendRef> vulkan = openBackend(BackendKind::Vulkan);
		if (!vulkan.ok())
			return "the Vulkan backend does not open: " + vulkan.error().message();
		Result<BackendRef> gl = openBackend(BackendKind::OpenGL);
		if (!gl.ok())
			return "the OpenGL backend does not open: " + gl.error().message();
		return std::string();
	});
	if (probe != 0)
		return probe;
	Suite *suite = suite_create("planner-gpu");
	TCase *tc = tcase_create("vulkan-gl");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, lavapipe_and_llvmpipe_are_one_device);
	tcase_add_test(tc, vulkan_frames_reach_gl_without_a_copy);
	tcase_add_test(tc, gl_frames_reach_vulkan_by_a_gpu_copy);
	tcase_add_test(tc, a_vulkan_allocation_is_imported_into_gl_once);
	tcase_add_test(tc, host_memory_reaches_vulkan_in_place);
	tcase_add_test(tc, a_timeline_semaphore_is_waited_or_carried);
	tcase_add_test(tc, fence_export_says_why_it_cannot);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
