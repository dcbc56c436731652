// The Vulkan backend's DMA-BUFs: without VK_EXT_external_memory_dma_buf (lavapipe) export and
// import are refused with errors naming the extension; with it (a real GPU) a frame exported as
// a DMA-BUF imports into a second device and reads the same, and mismatches are refused. Also
// images shared through an export keep what the other side writes.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/format_mappings.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "fd_count.h"
#include "frame_pattern.h"
#include "lavapipe_device.h"
#include "skip_probe.h"

using namespace gpuhandle;

namespace {

constexpr WaitDuration kTimeout = std::chrono::seconds(10);
constexpr const char *kExtension = "VK_EXT_external_memory_dma_buf";

template<typename List, typename Value>
bool has(const List &list, Value value)
{
	return std::find(list.begin(), list.end(), value) != list.end();
}

BackendRef openVulkan()
{
	auto backend = openBackend(BackendKind::Vulkan);
	ck_assert_ok(backend);
	return *backend;
}

bool offersDmaBuf(const Backend &backend)
{
	return has(backend.capabilities().routes, ImportRoute::DmaBuf);
}

// The round trips need a device that also exports DMA-BUFs: a driver may only import them
// (Mesa 25's lavapipe), which is said once and the test has nothing to run.
bool exportsDmaBuf(const Backend &backend)
{
	if (has(backend.capabilities().exports, ResourceKind::DmaBuf))
		return true;
	std::printf("%s imports DMA-BUFs but exports none: no round trip to run here\n",
		    backend.deviceInfo().name.c_str());
	return false;
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

// A LINEAR RGBA DMA-BUF frame over a memfd (the fd backend's kind of memory), `modifier` aside.
Frame memfdDmaBuf(PixelFormat format, uint64_t modifier)
{
	DmaBufDesc desc;
	desc.fourcc = toApiFormat(FormatApi::DrmFourcc, PixelFormat::RGBA).value();
	desc.modifier = modifier;
	desc.width = 16;
	desc.height = 16;
	desc.numObjects = 1;
	desc.objects[0] = DmaBufObject{ SharedFd(test::makeMemfd(4096)), 4096 };
	desc.numPlanes = 1;
	desc.planes[0] = DmaBufPlane{ 0, 0, 64 };
	auto dmabuf = DmaBuf::create(std::move(desc));
	ck_assert_ok(dmabuf);
	auto frame = Frame::wrap(format, 16, 16, {}, Resource(std::move(*dmabuf)));
	ck_assert_ok(frame);
	return *frame;
}

void assertNamesExtension(const Error &error)
{
	ck_assert_msg(error.message().find(kExtension) != std::string::npos,
		      "the error does not name %s: %s", kExtension, error.message().c_str());
}

START_TEST(refused_without_the_extension)
{
	BackendRef vk = openVulkan();
	if (offersDmaBuf(*vk)) {
		ck_assert(has(vk->capabilities().imports, ResourceKind::DmaBuf));
		ck_assert(has(vk->capabilities().drmModifiers, kDrmModifierLinear));
		return; // dmabuf_round_trip covers this device
	}
	ck_assert(!has(vk->capabilities().imports, ResourceKind::DmaBuf));
	ck_assert(!has(vk->capabilities().exports, ResourceKind::DmaBuf));
	ck_assert(vk->capabilities().drmModifiers.empty());
	Frame mine = allocate(*vk, PixelFormat::RGBA, 16, 16, FrameStorage::Buffer);
	(void)vk->exportFrame(mine, ResourceKind::DmaBuf); // warm-up: fds the driver keeps
	const int before = test::openFdCount();
	for (int i = 0; i < 3; i++) {
		auto exported = vk->exportFrame(mine, ResourceKind::DmaBuf);
		ck_assert_error(exported, ErrorCode::NotSupported, "kind");
		assertNamesExtension(exported.error());
		for (uint64_t modifier : { kDrmModifierLinear, uint64_t{ 0x0100000000000001 } }) {
			auto imported = vk->importFrame(memfdDmaBuf(PixelFormat::RGBA, modifier),
							ImportRoute::DmaBuf);
			ck_assert_error(imported, ErrorCode::NotSupported, "route");
			assertNamesExtension(imported.error());
		}
	}
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

// Exported from one device as LINEAR DMA-BUFs, imported as buffers into a second: the same
// bytes, through a copy on the importing device and through its mapping.
START_TEST(dmabuf_round_trip)
{
	BackendRef a = openVulkan();
	if (!offersDmaBuf(*a) || !exportsDmaBuf(*a))
		return; // refused_without_the_extension covers this device
	BackendRef b = openVulkan();
	uint32_t seed = 3;
	const int before = test::openFdCount();
	for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::LinearImage })
		for (PixelFormat format :
		     { PixelFormat::NV12, PixelFormat::RGBA, PixelFormat::P010LE }) {
			if (!a->supportsFormat(format, storage) ||
			    !b->supportsFormat(format, FrameStorage::Buffer))
				continue;
			Frame frame = allocate(*a, format, 33, 17, storage);
			test::writePatternOk(*a, frame, ++seed);
			auto exported = a->exportFrame(frame, ResourceKind::DmaBuf);
			ck_assert_ok(exported);
			const DmaBuf *dmabuf = exported->resource(0).get<DmaBuf>();
			ck_assert_ptr_nonnull(dmabuf);
			ck_assert_uint_eq(dmabuf->desc().modifier, kDrmModifierLinear);
			ck_assert_uint_eq(dmabuf->desc().fourcc,
					  toApiFormat(FormatApi::DrmFourcc, format).value());
			ck_assert_uint_eq(dmabuf->desc().numObjects, frame.numResources());
			ck_assert_uint_eq(exported->numPlanes(), frame.numPlanes());

			auto imported = b->importFrame(*exported, ImportRoute::DmaBuf);
			ck_assert_ok(imported);
			ck_assert(b->holds(*imported));
			ck_assert(imported->resource(0).kind() == ResourceKind::VulkanBuffer);
			Frame copy = allocate(*b, format, 33, 17, FrameStorage::Buffer);
			ck_assert_ok(b->copyFrame(copy, *imported, kTimeout));
			const std::string wrong = test::checkPattern(*b, copy, seed);
			ck_assert_msg(wrong.empty(), "%s: %s", frameStorageName(storage),
				      wrong.c_str());
			// Host-visible imports also map in place.
			auto mapped = b->map(*imported, MapAccess::Read, kTimeout);
			if (mapped.ok()) {
				ck_assert_ok(mapped->unmap());
				test::checkPatternOk(*b, *imported, seed);
			}
		}
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

START_TEST(dmabuf_mismatches_are_refused)
{
	BackendRef vk = openVulkan();
	if (!offersDmaBuf(*vk) || !exportsDmaBuf(*vk))
		return;
	const BackendCapabilities &caps = vk->capabilities();
	Frame rgba = allocate(*vk, PixelFormat::RGBA, 16, 16, FrameStorage::Buffer);
	auto exported = vk->exportFrame(rgba, ResourceKind::DmaBuf);
	ck_assert_ok(exported);
	// The same memory called another format with another fourcc.
	auto bgra = Frame::wrap(PixelFormat::BGRA, 16, 16, {}, exported->resource(0));
	ck_assert_ok(bgra);
	ck_assert_error(vk->importFrame(*bgra, ImportRoute::DmaBuf), ErrorCode::FormatMismatch,
			"fourcc");
	// No export of memory allocated without it, nor of optimal images.
	Frame plain = allocate(*vk, PixelFormat::RGBA, 16, 16, FrameStorage::Buffer, false);
	ck_assert_error(vk->exportFrame(plain, ResourceKind::DmaBuf), ErrorCode::NotSupported,
			"frame");
	Frame optimal = allocate(*vk, PixelFormat::RGBA, 16, 16, FrameStorage::OptimalImage);
	ck_assert_error(vk->exportFrame(optimal, ResourceKind::DmaBuf), ErrorCode::NotSupported,
			"frame");
	// A format without a DRM fourcc.
	for (PixelFormat format : { PixelFormat::V210, PixelFormat::YUV420P10LE })
		if (!canRepresent(FormatApi::DrmFourcc, format)) {
			Frame frame = allocate(*vk, format, 32, 16, FrameStorage::Buffer);
			ck_assert_error(vk->exportFrame(frame, ResourceKind::DmaBuf),
					ErrorCode::NotSupported, "format");
		}
	// A tiled modifier the device does not list.
	const uint64_t tiled = 0x0100000000000001; // I915_FORMAT_MOD_X_TILED
	if (!has(caps.drmModifiers, tiled))
		ck_assert_error(vk->importFrame(memfdDmaBuf(PixelFormat::RGBA, tiled),
						ImportRoute::DmaBuf),
				ErrorCode::NotSupported, "modifier");
}
END_TEST

// An optimal image exported (as opaque fds) before any use keeps what the importer writes into
// it (no later transition from UNDEFINED discards it), both ways, again and again.
START_TEST(exported_images_keep_what_the_importer_writes)
{
	BackendRef a = openVulkan();
	BackendRef b = openVulkan();
	for (PixelFormat format : { PixelFormat::RGBA, PixelFormat::NV12 }) {
		Frame frame = allocate(*a, format, 33, 17, FrameStorage::OptimalImage);
		auto exported = a->exportFrame(frame, ResourceKind::VulkanMemoryFd);
		ck_assert_ok(exported);
		auto imported = b->importFrame(*exported, ImportRoute::OpaqueFd);
		ck_assert_ok(imported);
		for (uint32_t seed : { 50u, 51u }) {
			test::writePatternOk(*b, *imported, seed);
			test::checkPatternOk(*a, frame, seed);
			test::writePatternOk(*a, frame, seed + 10);
			test::checkPatternOk(*b, *imported, seed + 10);
		}
		// A second export of the frame, now in use, is as good.
		ck_assert_ok(a->exportFrame(frame, ResourceKind::VulkanMemoryFd));
		test::checkPatternOk(*a, frame, 61);
	}
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
	// The probe runs in a child so that no driver thread exists when Check forks each test.
	int status = test::probeInChild(probe);
	if (status != 0)
		return status;
	test::nameLavapipeIcd();
	Suite *s = suite_create("vulkan-backend-dmabuf");
	TCase *tc = tcase_create("vulkan-backend-dmabuf");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, refused_without_the_extension);
	tcase_add_test(tc, dmabuf_round_trip);
	tcase_add_test(tc, dmabuf_mismatches_are_refused);
	tcase_add_test(tc, exported_images_keep_what_the_importer_writes);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
