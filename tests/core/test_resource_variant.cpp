// Resource as a sum type: kinds, backends, typed access, sizes, subresources, consumption notice.
#include <gpuhandle/resource.h>

#include "fd_count.h"

#include <set>
#include <string>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {
int g_consumed = 0;
int g_released = 0;
KeepAliveRef countingAnchor()
{
	return makeKeepAlive([](void *) { ++g_released; }, nullptr, [](void *) { ++g_consumed; });
}
int g_device;
} // namespace

START_TEST(kinds_match_types_and_backends)
{
	static_assert(Resource::kindOf<VulkanImage> == ResourceKind::VulkanImage);
	static_assert(Resource::kindOf<WebGpuTexture> == ResourceKind::WebGpuTexture);
	static_assert(Resource::kindOf<CpuPlanes> == ResourceKind::CpuPlanes);

	Resource empty;
	ck_assert(empty.empty());
	ck_assert(empty.kind() == ResourceKind::None);
	ck_assert_uint_eq(empty.subresourceCount(), 0);

	Resource image = VulkanImage::create({ .image = 1, .device = &g_device }).value();
	ck_assert(image.kind() == ResourceKind::VulkanImage);
	ck_assert(image.backend() == BackendKind::Vulkan);
	ck_assert(backendOf(ResourceKind::DmaBuf) == BackendKind::Fd);
	ck_assert(backendOf(ResourceKind::VaSurface) == BackendKind::VaApi);
	ck_assert(backendOf(ResourceKind::CpuSharedSlot) == BackendKind::Cpu);
	ck_assert(backendOf(ResourceKind::D3D12Buffer) == BackendKind::D3D12);
	ck_assert_str_eq(backendKindName(BackendKind::OpenCl), "opencl");
}
END_TEST

START_TEST(every_kind_has_a_distinct_name)
{
	std::set<std::string> names;
	for (uint32_t k = 0; k < kResourceKindCount; ++k)
		names.insert(resourceKindName(static_cast<ResourceKind>(k)));
	ck_assert_uint_eq(names.size(), kResourceKindCount);
	ck_assert(names.count("unknown") == 0);
	ck_assert_str_eq(resourceKindName(static_cast<ResourceKind>(kResourceKindCount)),
			 "unknown");
	ck_assert_str_eq(resourceKindName(ResourceKind::DmaBuf), "dmabuf");
}
END_TEST

START_TEST(typed_access)
{
	Resource image = VulkanImage::create({ .image = 7, .device = &g_device }).value();
	ck_assert_ptr_nonnull(image.get<VulkanImage>());
	ck_assert_ptr_null(image.get<DmaBuf>());
	auto ok = image.as<VulkanImage>();
	ck_assert_ok(ok);
	ck_assert_uint_eq((*ok)->desc().image, 7);
	auto wrong = image.as<CudaBuffer>();
	ck_assert_error(wrong, ErrorCode::WrongKind, "kind");
	ck_assert(wrong.error().message().find("vulkan-image") != std::string::npos);
	ck_assert(wrong.error().message().find("cuda-buffer") != std::string::npos);
	int visited = image.visit([](const auto &h) {
		return std::is_same_v<std::decay_t<decltype(h)>, VulkanImage> ? 1 : 0;
	});
	ck_assert_int_eq(visited, 1);
}
END_TEST

START_TEST(byte_sizes_and_subresources)
{
	std::vector<uint8_t> y(64 * 4), uv(64 * 2);
	CpuPlanesDesc planes;
	planes.numPlanes = 2;
	planes.planes[0] = { y.data(), 64, 4 };
	planes.planes[1] = { uv.data(), 64, 2 };
	Resource cpu = CpuPlanes::create(planes).value();
	ck_assert_uint_eq(cpu.subresourceCount(), 2);
	ck_assert_uint_eq(cpu.byteSize(0), 256);
	ck_assert_uint_eq(cpu.byteSize(1), 128);
	ck_assert_uint_eq(cpu.byteSize(2), 0);

	Resource buffer =
		VulkanBuffer::create({ .buffer = 1, .device = &g_device, .size = 999 }).value();
	ck_assert_uint_eq(buffer.byteSize(), 999);
	ck_assert_uint_eq(buffer.subresourceCount(), 1);
	Resource texture = MetalTexture::create({ .texture = &g_device }).value();
	ck_assert_uint_eq(texture.byteSize(), 0);

	DmaBufDesc d;
	d.fourcc = 0x3231564e; // NV12
	d.width = 16;
	d.height = 16;
	d.numObjects = 2;
	d.objects[0] = { SharedFd(test::makeMemfd(256)), 256 };
	d.objects[1] = { SharedFd(test::makeMemfd(128)), 128 };
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 16 };
	d.planes[1] = { 1, 0, 16 };
	Resource dmabuf = DmaBuf::create(std::move(d)).value();
	ck_assert_uint_eq(dmabuf.subresourceCount(), 2);
	ck_assert_uint_eq(dmabuf.byteSize(1), 128);
	ck_assert(dmabuf.backend() == BackendKind::Fd);
}
END_TEST

START_TEST(mark_consumed_reaches_every_anchor)
{
	g_consumed = 0;
	g_released = 0;
	{
		Resource image =
			VulkanImage::create(
				{ .image = 1, .device = &g_device, .anchor = countingAnchor() })
				.value();
		image.markConsumed();
		ck_assert_int_eq(g_consumed, 1);

		UniqueFd owner = test::makeMemfd(64);
		ShmFdDesc shm;
		shm.fd = SharedFd::borrow(owner.get(), countingAnchor());
		shm.size = 64;
		Resource borrowed = ShmFd::create(std::move(shm)).value();
		borrowed.markConsumed();
		ck_assert_int_eq(g_consumed, 2);
		Resource copy = borrowed;
		ck_assert_int_eq(g_released, 0);
	}
	ck_assert_int_eq(g_released, 2);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-variant");
	TCase *tc = tcase_create("variant");
	tcase_add_test(tc, kinds_match_types_and_backends);
	tcase_add_test(tc, every_kind_has_a_distinct_name);
	tcase_add_test(tc, typed_access);
	tcase_add_test(tc, byte_sizes_and_subresources);
	tcase_add_test(tc, mark_consumed_reaches_every_anchor);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
