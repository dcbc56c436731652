// The Vulkan backend on lavapipe: its own device, allocation of buffers and images for several
// formats, CPU mapping, opaque-fd export into a second device, host-pointer import, device
// copies, refusals of bad input without fd leaks, and what keeps a host's device alive.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/vulkan_sync.h>
#include <gpuhandle/layout.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "fd_count.h"
#include "frame_pattern.h"
#include "lavapipe_device.h"
#include "skip_probe.h"

using namespace gpuhandle;

namespace {

constexpr WaitDuration kTimeout = std::chrono::seconds(10);
constexpr PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::P010LE,
				     PixelFormat::RGBA, PixelFormat::V210 };
constexpr FrameStorage kStorages[] = { FrameStorage::Buffer, FrameStorage::LinearImage,
				       FrameStorage::OptimalImage };

BackendRef openVulkan()
{
	auto backend = openBackend(BackendKind::Vulkan);
	ck_assert_ok(backend);
	return *backend;
}

Frame allocate(Backend &backend, PixelFormat format, uint32_t width, uint32_t height,
	       FrameStorage storage, bool exportable = true)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	request.storage = storage;
	request.exportable = exportable;
	auto frame = backend.allocate(request);
	ck_assert_msg(frame.ok(), "%s %s %ux%u: %s", pixelFormatName(format),
		      frameStorageName(storage), width, height,
		      frame.ok() ? "" : frame.error().message().c_str());
	return *frame;
}

START_TEST(opens_its_own_device)
{
	BackendRef vk = openVulkan();
	const DeviceInfo &info = vk->deviceInfo();
	ck_assert(vk->kind() == BackendKind::Vulkan);
	ck_assert(info.backend == BackendKind::Vulkan);
	ck_assert(!info.name.empty());
	ck_assert(info.id.uuid.has_value());
	const bool lavapipe = info.name.find("llvmpipe") != std::string::npos;
	ck_assert(info.isSoftware || !lavapipe);
	ck_assert(!info.driverVersion.empty());
	ck_assert(info.vendorId.has_value());
	ck_assert_ptr_nonnull(vk->context().get());
	ck_assert(vk->context()->backend() == BackendKind::Vulkan);
	ck_assert(sameDevice(vk->context()->deviceId(), info.id) == DeviceMatch::Same);

	const BackendCapabilities &caps = vk->capabilities();
	auto has = [](const auto &list, auto value) {
		return std::find(list.begin(), list.end(), value) != list.end();
	};
	ck_assert(has(caps.allocates, ResourceKind::VulkanBuffer));
	ck_assert(has(caps.allocates, ResourceKind::VulkanImage));
	ck_assert(has(caps.exports, ResourceKind::VulkanMemoryFd));
	ck_assert(has(caps.imports, ResourceKind::VulkanMemoryFd));
	if (lavapipe) // external_memory_host
		ck_assert(has(caps.imports, ResourceKind::CpuBytes));
	// DMA-BUF exactly where the driver has VK_EXT_external_memory_dma_buf (lavapipe from Mesa
	// 24; Mesa 22.3's has none), asked of the driver, not of the backend.
	const VulkanContext &driver = *vk->context()->vulkan().value();
	uint32_t count = 0;
	auto physical = static_cast<VkPhysicalDevice>(driver.physicalDevice);
	vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
	std::vector<VkExtensionProperties> extensions(count);
	vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data());
	const bool dmaBuf = std::any_of(extensions.begin(), extensions.end(), [](const auto &e) {
		return std::strcmp(e.extensionName,
				   VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME) == 0;
	});
	ck_assert(has(caps.routes, ImportRoute::DmaBuf) == dmaBuf);
	ck_assert(has(caps.imports, ResourceKind::DmaBuf) == dmaBuf);
	ck_assert(has(caps.routes, ImportRoute::Direct));
	ck_assert(has(caps.routes, ImportRoute::OpaqueFd));
	ck_assert(has(caps.routes, ImportRoute::HostPointer) ==
		  has(caps.imports, ResourceKind::CpuBytes));
	ck_assert(has(caps.fenceImports, SyncKind::VulkanSemaphore));
	// Fence export is a binary semaphore's SYNC_FD: listed only where the driver makes one.
	const VulkanContext &native = *vk->context()->vulkan().value();
	auto syncFd = vulkanCanExportSemaphoreFd(
		{ native.instance, native.physicalDevice, native.getInstanceProcAddr },
		VulkanSemaphoreKind::Binary, VulkanSemaphoreFdType::SyncFd);
	ck_assert_ok(syncFd);
	ck_assert(has(caps.fenceExports, SyncKind::VulkanSemaphore) == *syncFd);
	ck_assert(caps.cpuMap && caps.gpuCopy);

	ck_assert(vk->supportsFormat(PixelFormat::V210, FrameStorage::Buffer));
	ck_assert(vk->supportsFormat(PixelFormat::NV12, FrameStorage::LinearImage));
	ck_assert(vk->supportsFormat(PixelFormat::P010LE, FrameStorage::OptimalImage));
	if (lavapipe) // VK_FORMAT_R8G8B8_UNORM has no features there
		ck_assert(!vk->supportsFormat(PixelFormat::RGB24, FrameStorage::LinearImage));
	ck_assert(!vk->supportsFormat(PixelFormat::Unknown, FrameStorage::Buffer));
	ck_assert_uint_eq(vk->supportedFormats(FrameStorage::Buffer).size(), kPixelFormatCount - 1);

	BackendOpenOptions missing;
	missing.deviceIndex = 99;
	ck_assert_error(openBackend(BackendKind::Vulkan, missing), ErrorCode::NotSupported,
			"deviceIndex");
	// Inside a host context (here the first backend's): same device, its frames its own.
	BackendOpenOptions inside;
	inside.context = vk->context();
	auto hosted = openBackend(BackendKind::Vulkan, inside);
	ck_assert_ok(hosted);
	ck_assert(sameDevice((*hosted)->deviceId(), info.id) == DeviceMatch::Same);
	ck_assert((*hosted)->context() == vk->context());
	Frame frame = allocate(**hosted, PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
	ck_assert((*hosted)->holds(frame) && !vk->holds(frame));
	test::writePatternOk(**hosted, frame, 12);
	vk.reset(); // the context keeps the device
	test::checkPatternOk(**hosted, frame, 12);
}
END_TEST

// Every format in every storage the device makes, at odd and tiny sizes: written through a
// mapping, read back through another, byte for byte.
START_TEST(map_round_trips_every_storage)
{
	BackendRef vk = openVulkan();
	const std::pair<uint32_t, uint32_t> sizes[] = { { 33, 17 }, { 1, 1 } };
	uint8_t seed = 1;
	for (PixelFormat format : kFormats)
		for (FrameStorage storage : kStorages) {
			if (!vk->supportsFormat(format, storage))
				continue;
			for (const auto &[width, height] : sizes) {
				Frame frame = allocate(*vk, format, width, height, storage);
				ck_assert(vk->holds(frame));
				if (storage != FrameStorage::Buffer) {
					ck_assert_uint_eq(frame.numResources(), frame.numPlanes());
					ck_assert(frame.resource(0).kind() ==
						  ResourceKind::VulkanImage);
				}
				test::writePatternOk(*vk, frame, ++seed);
				const std::string wrong = test::checkPattern(*vk, frame, seed);
				ck_assert_msg(wrong.empty(), "%s: %s", frameStorageName(storage),
					      wrong.c_str());
			}
		}
}
END_TEST

START_TEST(large_frames_round_trip)
{
	BackendRef vk = openVulkan();
	for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::OptimalImage }) {
		Frame frame = allocate(*vk, PixelFormat::NV12, 3840, 2160, storage);
		ck_assert_string_eq(test::writePattern(*vk, frame, 77), "");
		ck_assert_string_eq(test::checkPattern(*vk, frame, 77), "");
	}
}
END_TEST

// A frame exported as opaque fds and imported on a second device reads the same bytes, after
// the exporting backend and frame are gone.
START_TEST(opaque_fd_into_a_second_device)
{
	BackendRef b = openVulkan();
	for (FrameStorage storage : kStorages)
		for (PixelFormat format : { PixelFormat::NV12, PixelFormat::RGBA }) {
			std::optional<Frame> exported;
			{
				BackendRef a = openVulkan();
				Frame frame = allocate(*a, format, 33, 17, storage);
				test::writePatternOk(*a, frame, 40);
				auto made = a->exportFrame(frame, ResourceKind::VulkanMemoryFd);
				ck_assert_ok(made);
				ck_assert(made->resource(0).kind() == ResourceKind::VulkanMemoryFd);
				ck_assert_uint_eq(made->numPlanes(), frame.numPlanes());
				ck_assert(!b->holds(frame));
				ck_assert_error(b->importFrame(frame, ImportRoute::Direct),
						ErrorCode::NotSupported, "route");
				exported = *made;
			}
			auto imported = b->importFrame(*exported, ImportRoute::OpaqueFd);
			ck_assert_ok(imported);
			ck_assert(b->holds(*imported));
			auto direct = b->importFrame(*imported, ImportRoute::Direct);
			ck_assert_ok(direct);
			exported.reset();
			const std::string wrong = test::checkPattern(*b, *imported, 40);
			ck_assert_msg(wrong.empty(), "%s: %s", frameStorageName(storage),
				      wrong.c_str());
		}
}
END_TEST

START_TEST(opaque_fd_of_another_device_is_refused)
{
	BackendRef vk = openVulkan();
	Frame frame = allocate(*vk, PixelFormat::RGBA, 16, 16, FrameStorage::Buffer);
	auto exported = vk->exportFrame(frame, ResourceKind::VulkanMemoryFd);
	ck_assert_ok(exported);
	VulkanMemoryFdDesc desc = exported->resource(0).get<VulkanMemoryFd>()->desc();
	desc.deviceUuid = test::uuidOf(9);
	Resource other = VulkanMemoryFd::create(desc).value();
	auto foreign = Frame::wrap(PixelFormat::RGBA, 16, 16, {}, other);
	ck_assert_ok(foreign);
	auto refused = vk->importFrame(*foreign, ImportRoute::OpaqueFd);
	ck_assert_error(refused, ErrorCode::DeviceMismatch, "deviceUuid");
	ck_assert(refused.error().message().find(formatUuid(test::uuidOf(9))) != std::string::npos);
	// Memory allocated without export has no fd to give.
	Frame plain = allocate(*vk, PixelFormat::RGBA, 16, 16, FrameStorage::Buffer, false);
	ck_assert_error(vk->exportFrame(plain, ResourceKind::VulkanMemoryFd),
			ErrorCode::NotSupported, "frame");
}
END_TEST

uint64_t hostAlignment()
{
	return static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// A CpuBytes frame over page-aligned memory; `shift` moves its start off the page.
Frame hostFrame(PixelFormat format, uint32_t width, uint32_t height, uint8_t *&host,
		uint64_t shift = 0)
{
	FrameLayout layout = computeLayout(format, width, height).value();
	const uint64_t align = hostAlignment();
	const uint64_t size = (layout.size + align - 1) / align * align;
	host = static_cast<uint8_t *>(std::aligned_alloc(align, size + align));
	ck_assert_ptr_nonnull(host);
	FrameDesc desc;
	desc.format = format;
	desc.width = width;
	desc.height = height;
	desc.numResources = 1;
	desc.resources[0] =
		CpuBytes::create({ host + shift, size, makeKeepAlive(std::free, host) }).value();
	desc.numPlanes = layout.numPlanes;
	for (uint32_t i = 0; i < layout.numPlanes; i++)
		desc.planes[i] =
			PlaneView{ 0, 0, layout.planes[i].offset, layout.planes[i].stride };
	return Frame::create(std::move(desc)).value();
}

// Host bytes used in place: what the CPU writes after the import, the device reads (through a
// mapping and through a copy into its own buffer).
START_TEST(host_pointer_import_is_zero_copy)
{
	BackendRef vk = openVulkan();
	uint8_t *host = nullptr;
	Frame frame = hostFrame(PixelFormat::NV12, 33, 17, host);
	auto imported = vk->importFrame(frame, ImportRoute::HostPointer);
	ck_assert_ok(imported);
	ck_assert(imported->resource(0).kind() == ResourceKind::VulkanBuffer);
	ck_assert(vk->holds(*imported));
	auto cpu = mapFrame(frame, MapAccess::Write);
	ck_assert_ok(cpu);
	test::fillPatternOk(*cpu, frame, 5);
	ck_assert_ok(cpu->unmap());
	test::checkPatternOk(*vk, *imported, 5);
	Frame copy = allocate(*vk, PixelFormat::NV12, 33, 17, FrameStorage::Buffer);
	ck_assert_ok(vk->copyFrame(copy, *imported, kTimeout));
	test::checkPatternOk(*vk, copy, 5);
	// Tight host rows put the chroma plane at an odd offset: no buffer-to-image copy.
	Frame image = allocate(*vk, PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
	ck_assert_error(vk->copyFrame(image, *imported, kTimeout), ErrorCode::NotSupported,
			"planes");

	uint8_t *other = nullptr;
	Frame shifted = hostFrame(PixelFormat::NV12, 33, 17, other, 16);
	auto refused = vk->importFrame(shifted, ImportRoute::HostPointer);
	ck_assert_error(refused, ErrorCode::NotSupported, "alignment");
	ck_assert(refused.error().message().find("minImportedHostPointerAlignment") !=
		  std::string::npos);
}
END_TEST

START_TEST(copies_between_storages)
{
	BackendRef vk = openVulkan();
	for (PixelFormat format : { PixelFormat::NV12, PixelFormat::P010LE, PixelFormat::RGBA })
		for (FrameStorage from : kStorages)
			for (FrameStorage to : kStorages) {
				Frame src = allocate(*vk, format, 33, 17, from);
				Frame dst = allocate(*vk, format, 33, 17, to);
				test::writePatternOk(*vk, src, 21);
				ck_assert_ok(vk->copyFrame(dst, src, kTimeout));
				const std::string wrong = test::checkPattern(*vk, dst, 21);
				ck_assert_msg(wrong.empty(), "%s -> %s: %s", frameStorageName(from),
					      frameStorageName(to), wrong.c_str());
			}
}
END_TEST

START_TEST(bad_input_is_refused_without_leaks)
{
	BackendRef vk = openVulkan();
	BackendRef other = openVulkan();
	// Warm up: the driver keeps what it opens for the device's lifetime.
	{
		Frame frame = allocate(*vk, PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
		test::writePatternOk(*vk, frame, 3);
		ck_assert_ok(other->importFrame(
			vk->exportFrame(frame, ResourceKind::VulkanMemoryFd).value(),
			ImportRoute::OpaqueFd));
	}
	const int before = test::openFdCount();
	for (int i = 0; i < 5; i++) {
		uint8_t *host = nullptr;
		Frame cpuFrame = hostFrame(PixelFormat::RGBA, 8, 8, host);
		Frame mine = allocate(*vk, PixelFormat::RGBA, 8, 8, FrameStorage::Buffer);
		Frame theirs = allocate(*other, PixelFormat::RGBA, 8, 8, FrameStorage::Buffer);
		ck_assert_error(vk->map(cpuFrame, MapAccess::Read, kTimeout), ErrorCode::WrongKind,
				"frame");
		ck_assert_error(vk->map(theirs, MapAccess::Read, kTimeout), ErrorCode::WrongKind,
				"frame");
		ck_assert_error(vk->copyFrame(mine, theirs, kTimeout), ErrorCode::WrongKind,
				"frame");
		ck_assert_error(vk->exportFrame(cpuFrame, ResourceKind::VulkanMemoryFd),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(vk->exportFrame(mine, ResourceKind::ShmFd), ErrorCode::NotSupported,
				"kind");
		// DmaBuf: test_vulkan_backend_dmabuf.
		const auto &exports = vk->capabilities().exports;
		if (std::find(exports.begin(), exports.end(), ResourceKind::DmaBuf) ==
		    exports.end())
			ck_assert_error(vk->exportFrame(mine, ResourceKind::DmaBuf),
					ErrorCode::NotSupported, "kind");
		ck_assert_error(vk->importFrame(cpuFrame, ImportRoute::OpaqueFd),
				ErrorCode::NotSupported, "route");
		ck_assert_error(vk->importFrame(mine, ImportRoute::DmaBuf), ErrorCode::NotSupported,
				"route");
		ck_assert_error(vk->importFrame(mine, ImportRoute::GpuCopy),
				ErrorCode::NotSupported, "route");
		Frame wrongSize = allocate(*vk, PixelFormat::RGBA, 8, 9, FrameStorage::Buffer);
		ck_assert_error(vk->copyFrame(wrongSize, mine, kTimeout), ErrorCode::FormatMismatch,
				"dst");
		AllocateRequest request;
		request.format = PixelFormat::RGB24; // lavapipe: R8G8B8 images have no features
		request.width = 16;
		request.height = 16;
		request.storage = FrameStorage::LinearImage;
		ck_assert_error(vk->allocate(request), ErrorCode::NotSupported, "format");
		request.width = 0;
		ck_assert_error(vk->allocate(request), ErrorCode::ZeroSize, "width");
		// A closed fd never becomes a resource to import.
		VulkanMemoryFdDesc desc = vk->exportFrame(mine, ResourceKind::VulkanMemoryFd)
						  .value()
						  .resource(0)
						  .get<VulkanMemoryFd>()
						  ->desc();
		int closed = -1;
		{
			UniqueFd memfd = test::makeMemfd(4096);
			closed = memfd.get();
		}
		desc.fd = SharedFd::borrow(closed, {});
		ck_assert_error(VulkanMemoryFd::create(desc), ErrorCode::BadFd, "fd");
	}
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

// Frames keep the device alive: they stay usable by another backend's import after the
// allocating BackendRef is dropped.
START_TEST(frames_outlive_their_backend)
{
	std::optional<Frame> frame;
	std::optional<Frame> exported;
	{
		BackendRef vk = openVulkan();
		frame = allocate(*vk, PixelFormat::YUV420P, 33, 17, FrameStorage::Buffer);
		test::writePatternOk(*vk, *frame, 8);
		exported = vk->exportFrame(*frame, ResourceKind::VulkanMemoryFd).value();
	}
	frame.reset(); // the last reference to the first device goes here
	BackendRef b = openVulkan();
	auto imported = b->importFrame(*exported, ImportRoute::OpaqueFd);
	ck_assert_ok(imported);
	test::checkPatternOk(*b, *imported, 8);
}
END_TEST

// Set when the anchor of a hostContext() goes.
bool hostReleased = false;

struct HostAnchor final : KeepAlive {
	ContextRef device{}; // the Context of the backend whose device the host lends
	~HostAnchor() override { hostReleased = true; }
};

// A host's Context over a Vulkan device (a backend's own), whose anchor records its release.
ContextRef hostContext()
{
	hostReleased = false;
	BackendRef owner = openVulkan();
	auto anchor = std::make_shared<HostAnchor>();
	anchor->device = owner->context();
	auto context = Context::create(*owner->context()->vulkan().value(), anchor);
	ck_assert_ok(context);
	return *context;
}

BackendRef openInside(const ContextRef &context)
{
	BackendOpenOptions inside;
	inside.context = context;
	auto backend = openBackend(BackendKind::Vulkan, inside);
	ck_assert_ok(backend);
	return *backend;
}

// A backend on a host's device keeps that device (the host's Context) until its last frame goes,
// after the BackendRef and the Context; work that timed out after the backend went (a mapping's
// write-back) does not keep it for ever either.
START_TEST(host_device_lives_as_long_as_the_frames)
{
	std::optional<Frame> frame;
	{
		BackendRef vk = openInside(hostContext());
		frame = allocate(*vk, PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
		test::writePatternOk(*vk, *frame, 31);
	}
	ck_assert(!hostReleased);
	frame.reset();
	ck_assert(hostReleased);

	std::optional<CpuMapping> mapping;
	{
		BackendRef vk = openInside(hostContext());
		Frame image =
			allocate(*vk, PixelFormat::RGBA, 640, 480, FrameStorage::OptimalImage);
		auto mapped = vk->map(image, MapAccess::Write, WaitDuration::zero());
		ck_assert_ok(mapped);
		mapping.emplace(std::move(*mapped));
	}
	// No time to wait: the copy back stays pending, holding the image and the device, until
	// the mapping (the last user of the device) goes and drains the queue.
	ck_assert_error(mapping->unmap(), ErrorCode::Timeout, "timeout");
	mapping.reset();
	ck_assert(hostReleased);
}
END_TEST

std::string probe()
{
	auto opened = openBackend(BackendKind::Vulkan);
	if (!opened.ok() && test::nameLavapipeIcd())
		opened = openBackend(BackendKind::Vulkan);
	if (!opened.ok())
		return "the Vulkan backend did not open: " + opened.error().message();
	return {};
}

} // namespace

int main()
{
	// The probe runs in a child so that no driver thread exists when Check forks each test;
	// naming lavapipe's ICD there must be repeated here.
	int status = test::probeInChild(probe);
	if (status != 0)
		return status;
	test::nameLavapipeIcd();
	Suite *s = suite_create("vulkan-backend");
	TCase *tc = tcase_create("vulkan-backend");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, opens_its_own_device);
	tcase_add_test(tc, map_round_trips_every_storage);
	tcase_add_test(tc, large_frames_round_trip);
	tcase_add_test(tc, opaque_fd_into_a_second_device);
	tcase_add_test(tc, opaque_fd_of_another_device_is_refused);
	tcase_add_test(tc, host_pointer_import_is_zero_copy);
	tcase_add_test(tc, copies_between_storages);
	tcase_add_test(tc, bad_input_is_refused_without_leaks);
	tcase_add_test(tc, frames_outlive_their_backend);
	tcase_add_test(tc, host_device_lives_as_long_as_the_frames);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
