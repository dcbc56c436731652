// The Vulkan backend on a host's device (lavapipe) with the host's own images and buffers, which
// it did not allocate (as GStreamer's): held, mapped through a staging copy, copied from and
// into with the right barriers, not exported; the planner copies them into exportable memory on
// the device (or through the CPU when the host's device exports nothing).
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/format_mappings.h>

#include <cstdint>
#include <string>
#include <vector>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "fd_count.h"
#include "frame_pattern.h"
#include "lavapipe_device.h"
#include "skip_probe.h"
#include "vulkan_host_device.h"

using namespace gpuhandle;

namespace {

constexpr WaitDuration kTimeout = std::chrono::seconds(10);
constexpr PixelFormat kFormats[] = { PixelFormat::RGBA, PixelFormat::NV12, PixelFormat::YUV420P };
struct Size {
	uint32_t width = 0;
	uint32_t height = 0;
};
constexpr Size kSizes[] = { { 33, 17 }, { 1, 1 }, { 320, 240 } };

#define HOST(name, exportable)                                                                     \
	test::VulkanHost name;                                                                     \
	do {                                                                                       \
		std::string why_ = name.create(exportable);                                        \
		ck_assert_msg(why_.empty(), "lavapipe: %s", why_.c_str());                         \
	} while (0)

// The host's images of a frame, one per plane, with their sizes.
struct HostPlanes {
	std::vector<test::HostObjectRef> images{};
	std::vector<Size> texels{};
	std::vector<uint32_t> tightBytes{}; // texels.width * bytes per texel
};

// A frame over host images (one per plane, in GENERAL), holding the pattern of `seed` written by
// the host's own commands.
Frame hostFrame(const test::VulkanHost &host, PixelFormat format, Size size, bool linear,
		uint32_t seed, HostPlanes &planes)
{
	const PixelFormatInfo &info = **pixelFormatInfo(format);
	FrameDesc desc;
	desc.format = format;
	desc.width = size.width;
	desc.height = size.height;
	desc.numResources = desc.numPlanes = info.numPlanes;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const PlaneInfo &plane = info.planes[p];
		auto vkFormat = toPlaneApiFormat(PlaneApi::VkFormat, plane.format);
		ck_assert_ok(vkFormat);
		const Size texels{ plane.rowTexels(size.width), plane.rows(size.height) };
		const uint32_t tight = texels.width * bytesPerTexel(plane.format);
		test::HostObjectRef image = host.makeImage(static_cast<VkFormat>(vkFormat->value),
							   texels.width, texels.height, linear);
		std::vector<uint8_t> bytes(uint64_t{ tight } * texels.height);
		for (uint32_t y = 0; y < texels.height; y++)
			for (uint64_t x = 0; x < plane.rowBytes(size.width); x++)
				bytes[y * tight + x] = test::patternByte(seed, p, y, x);
		host.upload(*image, texels.width, texels.height, bytes);
		auto resource = VulkanImage::create({ reinterpret_cast<uint64_t>(image->image),
						      host.device(),
						      {},
						      image->rowPitch,
						      image });
		ck_assert_ok(resource);
		desc.resources[p] = *resource;
		desc.planes[p] = PlaneView{ p, 0, 0, image->rowPitch };
		planes.images.push_back(image);
		planes.texels.push_back(texels);
		planes.tightBytes.push_back(tight);
	}
	auto frame = Frame::create(std::move(desc));
	ck_assert_ok(frame);
	return *frame;
}

// Empty when the host reads the pattern of `seed` from the images with its own commands.
std::string hostReads(const test::VulkanHost &host, const Frame &frame, const HostPlanes &planes,
		      uint32_t seed)
{
	std::vector<std::vector<uint8_t>> bytes;
	for (size_t p = 0; p < planes.images.size(); p++)
		bytes.push_back(host.download(*planes.images[p], planes.texels[p].width,
					      planes.texels[p].height, planes.tightBytes[p]));
	return test::checkRows(frame, seed, [&](uint32_t p, uint32_t y) -> const uint8_t * {
		return bytes[p].data() + uint64_t{ y } * planes.tightBytes[p];
	});
}

Frame allocate(Backend &backend, PixelFormat format, Size size, FrameStorage storage)
{
	auto frame = backend.allocate({ format, size.width, size.height, {}, storage, 0, true });
	ck_assert_ok(frame);
	return *frame;
}

// The host's images (optimal and linear) read through map(), copied into the backend's memory
// and written back by copyFrame() and by a mapping: every byte as the host sees it.
START_TEST(host_images_map_and_copy)
{
	HOST(host, false);
	BackendRef vk = host.backend();
	uint32_t seed = 1;
	for (PixelFormat format : kFormats)
		for (Size size : kSizes)
			for (bool linear : { false, true }) {
				HostPlanes planes;
				Frame frame = hostFrame(host, format, size, linear, ++seed, planes);
				ck_assert(vk->holds(frame));
				auto direct = vk->importFrame(frame, ImportRoute::Direct);
				ck_assert_ok(direct);
				ck_assert(direct->resource(0).get<VulkanImage>()->desc().image ==
					  frame.resource(0).get<VulkanImage>()->desc().image);
				test::checkPatternOk(*vk, frame, seed);

				// Into the backend's own images and buffers, and back.
				uint32_t held = seed;
				for (FrameStorage storage :
				     { FrameStorage::OptimalImage, FrameStorage::Buffer }) {
					Frame own = allocate(*vk, format, size, storage);
					ck_assert_ok(vk->copyFrame(own, frame, kTimeout));
					test::checkPatternOk(*vk, own, held);
					held += 100;
					test::writePatternOk(*vk, own, held);
					ck_assert_ok(vk->copyFrame(frame, own, kTimeout));
					ck_assert_string_eq(hostReads(host, frame, planes, held),
							    "");
				}
				// A mapping writes back into the host's images when it ends.
				test::writePatternOk(*vk, frame, seed + 50);
				ck_assert_string_eq(hostReads(host, frame, planes, seed + 50), "");
				test::checkPatternOk(*vk, frame, seed + 50);
			}
	// Every host object was released once its last frame went.
	ck_assert_int_eq(host.alive(), 0);
}
END_TEST

// A host buffer with two NV12 planes at offsets and a wide stride: mapped and copied as well.
START_TEST(host_buffer_maps_and_copies)
{
	HOST(host, false);
	BackendRef vk = host.backend();
	const Size size{ 33, 17 };
	const uint32_t stride = 64;
	const uint64_t chroma = uint64_t{ stride } * size.height + 128;
	const uint64_t bytes = chroma + uint64_t{ stride } * ((size.height + 1) / 2);
	test::HostObjectRef buffer = host.makeBuffer(bytes);
	auto resource = VulkanBuffer::create(
		{ reinterpret_cast<uint64_t>(buffer->buffer), host.device(), bytes, {}, buffer });
	ck_assert_ok(resource);
	FrameDesc desc;
	desc.format = PixelFormat::NV12;
	desc.width = size.width;
	desc.height = size.height;
	desc.numResources = 1;
	desc.resources[0] = *resource;
	desc.numPlanes = 2;
	desc.planes[0] = PlaneView{ 0, 0, 0, stride };
	desc.planes[1] = PlaneView{ 0, 0, chroma, stride };
	auto made = Frame::create(std::move(desc));
	ck_assert_ok(made);
	const Frame frame = *made;
	const uint64_t offsets[] = { 0, chroma };
	uint8_t *memory = host.mapped(*buffer);
	auto rowOf = [&](uint32_t p, uint32_t y) {
		return memory + offsets[p] + uint64_t{ y } * stride;
	};
	test::fillRows(frame, 5, rowOf);

	ck_assert(vk->holds(frame));
	test::checkPatternOk(*vk, frame, 5);
	Frame own = allocate(*vk, PixelFormat::NV12, size, FrameStorage::OptimalImage);
	ck_assert_ok(vk->copyFrame(own, frame, kTimeout));
	test::checkPatternOk(*vk, own, 5);
	test::writePatternOk(*vk, frame, 6);
	ck_assert_string_eq(test::checkRows(frame, 6, rowOf), "");
	test::writePatternOk(*vk, own, 7);
	ck_assert_ok(vk->copyFrame(frame, own, kTimeout));
	ck_assert_string_eq(test::checkRows(frame, 7, rowOf), "");
	vkUnmapMemory(host.device(), buffer->memory);
}
END_TEST

// What the backend does not do with the host's memory, and memory of other devices or backends.
START_TEST(host_memory_refusals)
{
	HOST(host, true);
	BackendRef vk = host.backend();
	const int fds = test::openFdCount();
	{
		HostPlanes planes;
		Frame frame = hostFrame(host, PixelFormat::NV12, { 16, 8 }, false, 3, planes);
		// Its memory was not made exportable.
		ck_assert_error(vk->exportFrame(frame, ResourceKind::VulkanMemoryFd),
				ErrorCode::NotSupported, "frame");
		// Another VkDevice (the backend's own) neither holds nor reads it.
		BackendRef other = openBackend(BackendKind::Vulkan).value();
		ck_assert(!other->holds(frame));
		ck_assert_error(other->map(frame, MapAccess::Read, kTimeout), ErrorCode::WrongKind,
				"frame");
		Frame theirs = allocate(*other, PixelFormat::NV12, { 16, 8 }, FrameStorage::Buffer);
		ck_assert_error(other->copyFrame(theirs, frame, kTimeout), ErrorCode::WrongKind,
				"frame");
		ck_assert_error(other->importFrame(frame, ImportRoute::Direct),
				ErrorCode::NotSupported, "route");
		// Nor does a backend take another backend's frame on the same device as the host's.
		BackendRef second = host.backend();
		Frame secondOwn =
			allocate(*second, PixelFormat::NV12, { 16, 8 }, FrameStorage::OptimalImage);
		ck_assert(second->holds(secondOwn) && !vk->holds(secondOwn));
		ck_assert_error(vk->map(secondOwn, MapAccess::Read, kTimeout), ErrorCode::WrongKind,
				"frame");
		// One image holding both planes is not a plane image.
		FrameDesc shared = frame.desc();
		shared.numResources = 1;
		shared.resources[1] = Resource{};
		shared.planes[1] = PlaneView{ 0, 0, 0, 0 };
		auto both = Frame::create(std::move(shared));
		ck_assert_ok(both);
		ck_assert(vk->holds(*both));
		ck_assert_error(vk->map(*both, MapAccess::Read, kTimeout), ErrorCode::NotSupported,
				"planes");
	}
	ck_assert_int_eq(host.alive(), 0);
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

// The planner from the host's images into another device's backend: the host's memory exports
// nothing, so the source copies it on the GPU into its own exportable memory, which the target
// imports as an opaque fd; no fd is left behind.
START_TEST(planner_copies_host_images_into_exportable_memory)
{
	HOST(host, true);
	BackendRef vk = host.backend();
	BackendRef target = openBackend(BackendKind::Vulkan).value();
	const int fds = test::openFdCount();
	uint32_t seed = 20;
	for (PixelFormat format : kFormats) {
		HostPlanes planes;
		Frame frame = hostFrame(host, format, { 64, 32 }, false, ++seed, planes);
		ImportOptions options;
		options.source = vk;
		options.copyStorage = FrameStorage::OptimalImage;
		options.timeout = kTimeout;
		auto imported = importFrame(frame, *target, options);
		ck_assert_ok(imported);
		ck_assert(imported->route == ImportRoute::GpuCopy);
		ck_assert(imported->path.kind() == ExecutionPath::Kind::GpuCopy);
		ck_assert(target->holds(imported->frame));
		test::checkPatternOk(*target, imported->frame, seed);
		// Without copies, nothing takes the host's memory as it is.
		options.allowCopies = false;
		ck_assert_error(importFrame(frame, *target, options), ErrorCode::NotSupported,
				"allowCopies");
		// Into the host's own backend: the Direct route, the images as they are.
		auto direct = importFrame(frame, *vk, options);
		ck_assert_ok(direct);
		ck_assert(direct->route == ImportRoute::Direct);
	}
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

// A host device without VK_KHR_external_memory_fd (GStreamer 1.22's): no device copy can leave
// it, so the planner maps the host's images (a staging copy) and copies through the CPU.
START_TEST(planner_copies_through_the_cpu_without_exports)
{
	HOST(host, false);
	BackendRef vk = host.backend();
	BackendRef target = openBackend(BackendKind::Vulkan).value();
	HostPlanes planes;
	Frame frame = hostFrame(host, PixelFormat::NV12, { 64, 32 }, false, 9, planes);
	ImportOptions options;
	options.source = vk;
	options.copyStorage = FrameStorage::OptimalImage;
	options.timeout = kTimeout;
	auto imported = importFrame(frame, *target, options);
	ck_assert_ok(imported);
	ck_assert(imported->route == ImportRoute::CpuCopy);
	test::checkPatternOk(*target, imported->frame, 9);
}
END_TEST

} // namespace

int main()
{
	// The probe runs in a child so that no driver thread exists when Check forks each test;
	// naming lavapipe's ICD there must be repeated here.
	int status = test::probeInChild(test::probeVulkanHost);
	if (status != 0)
		return status;
	test::nameLavapipeIcd();
	Suite *s = suite_create("vulkan-backend-foreign");
	TCase *tc = tcase_create("vulkan-backend-foreign");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, host_images_map_and_copy);
	tcase_add_test(tc, host_buffer_maps_and_copies);
	tcase_add_test(tc, host_memory_refusals);
	tcase_add_test(tc, planner_copies_host_images_into_exportable_memory);
	tcase_add_test(tc, planner_copies_through_the_cpu_without_exports);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
