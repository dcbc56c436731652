// mapFrame over CPU planes, a memfd (ShmFd) and a DMA-BUF (memfd stand-in): pixels written through
// one mapping read back through another; the acquire fence is honoured; nothing leaks.
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/layout.h>

#include "fd_count.h"

#include <chrono>
#include <cstring>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kW = 33, kH = 17; // odd sizes: chroma rounds up

// An NV12 frame over one memfd, as a ShmFd or as a one-object DMA-BUF.
Frame nv12OverMemfd(bool asDmaBuf)
{
	FrameLayout layout =
		computeLayout(PixelFormat::NV12, kW, kH, LayoutPolicy::StrideAlign, 64).value();
	SharedFd fd(test::makeMemfd(layout.size));
	FrameDesc d;
	d.format = PixelFormat::NV12;
	d.width = kW;
	d.height = kH;
	d.numResources = 1;
	d.numPlanes = 2;
	for (uint32_t i = 0; i < 2; ++i)
		d.planes[i] = { 0, 0, layout.planes[i].offset, layout.planes[i].stride };
	if (asDmaBuf) {
		DmaBufDesc dmabuf;
		dmabuf.fourcc = 0x3231564e; // DRM_FORMAT_NV12
		dmabuf.modifier = kDrmModifierLinear;
		dmabuf.width = kW;
		dmabuf.height = kH;
		dmabuf.numObjects = 1;
		dmabuf.objects[0] = { fd, layout.size };
		dmabuf.numPlanes = 2;
		for (uint32_t i = 0; i < 2; ++i)
			dmabuf.planes[i] = { 0, layout.planes[i].offset, layout.planes[i].stride };
		d.resources[0] = DmaBuf::create(std::move(dmabuf)).value();
	} else {
		d.resources[0] = ShmFd::create({ .fd = fd, .size = layout.size }).value();
	}
	return Frame::create(std::move(d)).value();
}

// Writes a pattern into every row of every plane, then checks it through a second mapping.
void writeThenRead(const Frame &frame)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	{
		CpuMapping write = mapFrame(frame, MapAccess::Write).value();
		ck_assert_uint_eq(write.numPlanes(), 2);
		for (uint32_t p = 0; p < 2; ++p) {
			for (uint32_t y = 0; y < info.planes[p].rows(kH); ++y)
				std::memset(write.data(p) + uint64_t(y) * write.stride(p),
					    int(p * 100 + y), info.planes[p].rowBytes(kW));
		}
		ck_assert_ok(write.unmap());
	}
	CpuMapping read = mapFrame(Frame(frame), MapAccess::Read).value();
	for (uint32_t p = 0; p < 2; ++p) {
		for (uint32_t y = 0; y < info.planes[p].rows(kH); ++y) {
			const uint8_t *row = read.data(p) + uint64_t(y) * read.stride(p);
			for (uint64_t x = 0; x < info.planes[p].rowBytes(kW); ++x)
				ck_assert_msg(row[x] == uint8_t(p * 100 + y),
					      "plane %u row %u byte %llu", p, y,
					      static_cast<unsigned long long>(x));
		}
	}
}

} // namespace

START_TEST(cpu_planes_map_to_their_pointers)
{
	std::vector<uint8_t> y(kW * kH), uv(34 * 9);
	CpuPlanesDesc planes;
	planes.numPlanes = 2;
	planes.planes[0] = { y.data(), kW, kH };
	planes.planes[1] = { uv.data(), 34, 9 };
	Frame frame = Frame::wrap(PixelFormat::NV12, kW, kH, {}, CpuPlanes::create(planes).value())
			      .value();
	CpuMapping mapping = mapFrame(frame, MapAccess::ReadWrite).value();
	ck_assert_ptr_eq(mapping.data(0), y.data());
	ck_assert_ptr_eq(mapping.data(1), uv.data());
	ck_assert_uint_eq(mapping.stride(1), 34);
	ck_assert(mapping.access() == MapAccess::ReadWrite);
}
END_TEST

START_TEST(memfd_and_dmabuf_round_trip)
{
	int before = test::openFdCount();
	writeThenRead(nv12OverMemfd(false));
	writeThenRead(nv12OverMemfd(true));
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

START_TEST(acquire_fence_is_honoured)
{
	Frame frame = nv12OverMemfd(false);
	auto fence = CpuFence::create().value();
	frame.setAcquire(fence->point());
	ck_assert_error(mapFrame(frame, MapAccess::Read, 20ms), ErrorCode::Timeout, "timeout");
	fence->signal();
	ck_assert_ok(mapFrame(frame, MapAccess::Read, 20ms));
}
END_TEST

START_TEST(mappings_move_and_unmap_once)
{
	Frame frame = nv12OverMemfd(true);
	CpuMapping first = mapFrame(frame, MapAccess::Read).value();
	uint8_t *data = first.data(0);
	CpuMapping moved = std::move(first);
	ck_assert_uint_eq(first.numPlanes(), 0);
	ck_assert_ptr_eq(moved.data(0), data);
	ck_assert_ok(moved.unmap());
	ck_assert_uint_eq(moved.numPlanes(), 0);
	ck_assert_ok(moved.unmap()); // a second unmap does nothing
}
END_TEST

START_TEST(refusals)
{
	int device;
	Frame image =
		Frame::wrap(PixelFormat::RGBA, 8, 8, {},
			    VulkanImage::create({ .image = 1, .device = &device, .rowPitch = 32 })
				    .value())
			.value();
	ck_assert_error(mapFrame(image, MapAccess::Read), ErrorCode::NotSupported, "resources");
	ck_assert_error(mapFrame(nv12OverMemfd(false), static_cast<MapAccess>(0)),
			ErrorCode::InvalidArgument, "access");
	// A raw-carrier acquire point cannot be waited on the CPU: mapping must refuse, not guess.
	Frame frame = nv12OverMemfd(false);
	frame.setAcquire(SyncPoint::create(OpenClEventSync{ &device }, nullptr).value());
	ck_assert_error(mapFrame(frame, MapAccess::Read), ErrorCode::NotSupported, "waiter");
}
END_TEST

int main()
{
	Suite *s = suite_create("cpu-map");
	TCase *tc = tcase_create("cpu-map");
	tcase_add_test(tc, cpu_planes_map_to_their_pointers);
	tcase_add_test(tc, memfd_and_dmabuf_round_trip);
	tcase_add_test(tc, acquire_fence_is_honoured);
	tcase_add_test(tc, mappings_move_and_unmap_once);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
