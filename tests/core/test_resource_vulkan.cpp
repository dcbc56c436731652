// VulkanImage, VulkanBuffer and VulkanMemoryFd factories: accepted, refused, no fd leaks.
#include <gpuhandle/resource.h>
#include <gpuhandle/vulkan_resources.h>

#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::makeMemfd;
using gpuhandle::test::openFdCount;

namespace {

int g_device;
void *const kDevice = &g_device;
constexpr uint32_t kFormatR8G8B8A8Unorm = 37;
constexpr uint32_t kUsageSampledTransferDst = 0x4 | 0x2;

VulkanMemoryFdDesc imageExport(uint64_t size)
{
	VulkanMemoryFdDesc d;
	d.fd = SharedFd(makeMemfd(size));
	d.exportDesc.allocationSize = size;
	d.exportDesc.memoryTypeIndex = 1;
	d.exportDesc.dedicated = true;
	d.exportDesc.format = kFormatR8G8B8A8Unorm;
	d.exportDesc.width = 64;
	d.exportDesc.height = 64;
	d.exportDesc.tiling = 0;
	d.exportDesc.usage = kUsageSampledTransferDst;
	d.exportDesc.acquireTimelineValue = 7;
	d.deviceUuid = Uuid{ 1, 2, 3 };
	return d;
}

} // namespace

START_TEST(image_valid_and_refused)
{
	auto ok = VulkanImage::create({ .image = 0x1234,
					.device = kDevice,
					.deviceUuid = Uuid{ 9 },
					.rowPitch = 256,
					.anchor = {} });
	ck_assert_ok(ok);
	ck_assert_uint_eq(ok->desc().image, 0x1234);
	ck_assert_uint_eq(ok->desc().rowPitch, 256);
	ck_assert_error(VulkanImage::create({ .image = 0, .device = kDevice }),
			ErrorCode::NullHandle, "image");
	ck_assert_error(VulkanImage::create({ .image = 1, .device = nullptr }),
			ErrorCode::NullHandle, "device");
	// A multi-planar image: one subresource per plane, pitches in the frame's plane views.
	auto nv12 = VulkanImage::create({ .image = 1, .device = kDevice, .planes = 2 });
	ck_assert_ok(nv12);
	ck_assert_uint_eq(Resource(*nv12).subresourceCount(), 2);
	ck_assert_error(VulkanImage::create({ .image = 1, .device = kDevice, .planes = 0 }),
			ErrorCode::OutOfRange, "planes");
	ck_assert_error(VulkanImage::create({ .image = 1, .device = kDevice, .planes = 4 }),
			ErrorCode::OutOfRange, "planes");
	ck_assert_error(VulkanImage::create({ .image = 1,
					      .device = kDevice,
					      .rowPitch = 64,
					      .anchor = {},
					      .planes = 3 }),
			ErrorCode::InvalidArgument, "rowPitch");
}
END_TEST

START_TEST(buffer_valid_and_refused)
{
	ck_assert_ok(VulkanBuffer::create({ .buffer = 5, .device = kDevice, .size = 4096 }));
	ck_assert_error(VulkanBuffer::create({ .buffer = 0, .device = kDevice, .size = 1 }),
			ErrorCode::NullHandle, "buffer");
	ck_assert_error(VulkanBuffer::create({ .buffer = 5, .device = nullptr, .size = 1 }),
			ErrorCode::NullHandle, "device");
	ck_assert_error(VulkanBuffer::create({ .buffer = 5, .device = kDevice, .size = 0 }),
			ErrorCode::ZeroSize, "size");
}
END_TEST

START_TEST(memory_fd_image_and_buffer_exports)
{
	int before = openFdCount();
	{
		auto image = VulkanMemoryFd::create(imageExport(64 * 64 * 4));
		ck_assert_ok(image);
		ck_assert(image->isImage());
		ck_assert(image->desc().exportDesc.acquireTimelineValue == 7u);

		VulkanMemoryFdDesc buffer;
		buffer.fd = SharedFd(makeMemfd(1024));
		buffer.exportDesc.allocationSize = 1024;
		buffer.exportDesc.usage = 0x20; // VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
		auto b = VulkanMemoryFd::create(std::move(buffer));
		ck_assert_ok(b);
		ck_assert(!b->isImage());
		ck_assert_int_eq(openFdCount(), before + 2);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(memory_fd_refusals)
{
	int before = openFdCount();
	VulkanMemoryFdDesc d = imageExport(16384);
	d.fd = SharedFd();
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::BadFd, "fd");
	d = imageExport(16384);
	d.exportDesc.allocationSize = 0;
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::ZeroSize,
			"exportDesc.allocationSize");
	d = imageExport(16384);
	d.exportDesc.memoryTypeIndex = 32;
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::OutOfRange,
			"exportDesc.memoryTypeIndex");
	d = imageExport(16384);
	d.exportDesc.usage = 0;
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::InvalidArgument, "exportDesc.usage");
	d = imageExport(16384);
	d.exportDesc.tiling = 2;
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::InvalidArgument, "exportDesc.tiling");
	d = imageExport(16384);
	d.exportDesc.width = 0;
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::ZeroSize, "exportDesc.width");
	d = imageExport(16384);
	d.exportDesc.height = 0;
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::ZeroSize, "exportDesc.height");
	d = imageExport(16384);
	d.exportDesc.format = 0; // an extent without a format
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::InvalidArgument, "exportDesc.format");
	d = imageExport(16384);
	d.exportDesc.allocationSize = 1 << 20; // larger than the memfd
	ck_assert_error(VulkanMemoryFd::create(d), ErrorCode::OutOfRange,
			"exportDesc.allocationSize");
	d = imageExport(16384);
	d.exportDesc.tiling = 1000158000;
	ck_assert_ok(VulkanMemoryFd::create(d));
	d = VulkanMemoryFdDesc();
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(memory_fd_closes_given_fd_on_failure)
{
	int before = openFdCount();
	VulkanMemoryFdDesc d = imageExport(4096);
	d.exportDesc.usage = 0;
	auto r = VulkanMemoryFd::create(std::move(d));
	ck_assert(!r.ok());
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-vulkan");
	TCase *tc = tcase_create("vulkan");
	tcase_add_test(tc, image_valid_and_refused);
	tcase_add_test(tc, buffer_valid_and_refused);
	tcase_add_test(tc, memory_fd_image_and_buffer_exports);
	tcase_add_test(tc, memory_fd_refusals);
	tcase_add_test(tc, memory_fd_closes_given_fd_on_failure);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
