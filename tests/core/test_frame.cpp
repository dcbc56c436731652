// Frame::create and Frame::wrap: plane views checked against resources, colorimetry, sync slots.
#include <gpuhandle/frame.h>
#include <gpuhandle/vulkan_resources.h>

#include "fd_count.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::makeMemfd;
using gpuhandle::test::openFdCount;

namespace {

constexpr uint32_t kW = 64, kH = 48;

Resource nv12Shm()
{
	return ShmFd::create(
		       { .fd = SharedFd(makeMemfd(kW * kH * 3 / 2)), .size = kW * kH * 3 / 2 })
		.value();
}

FrameDesc nv12OverShm()
{
	FrameDesc d;
	d.width = kW;
	d.height = kH;
	d.colorimetry = { ColorRange::Limited, ColorMatrix::Bt709, ColorPrimaries::Bt709,
			  ColorTransfer::Bt709 };
	d.numResources = 1;
	d.resources[0] = nv12Shm();
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 0, kW };
	d.planes[1] = { 0, 0, uint64_t(kW) * kH, kW };
	return d;
}

} // namespace

START_TEST(create_over_one_memfd)
{
	int before = openFdCount();
	{
		auto r = Frame::create(nv12OverShm());
		ck_assert_ok(r);
		const Frame &f = *r;
		ck_assert_uint_eq(f.width(), kW);
		ck_assert_uint_eq(f.numPlanes(), 2);
		ck_assert_uint_eq(f.plane(1).offset, kW * kH);
		ck_assert(f.resource(0).kind() == ResourceKind::ShmFd);
		ck_assert(f.colorimetry().matrix == ColorMatrix::Bt709);
		ck_assert(f.acquire().isNoop());
		ck_assert(f.release().isNone());
		ck_assert_int_eq(openFdCount(), before + 1);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(create_over_two_resources)
{
	std::vector<uint8_t> y(kW * kH), uv(kW * kH / 2);
	FrameDesc d;
	d.width = kW;
	d.height = kH;
	d.numResources = 2;
	d.resources[0] = CpuBytes::create({ .data = y.data(), .size = y.size() }).value();
	d.resources[1] = CpuBytes::create({ .data = uv.data(), .size = uv.size() }).value();
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 0, kW };
	d.planes[1] = { 1, 0, 0, kW };
	ck_assert_ok(Frame::create(d));
}
END_TEST

START_TEST(refusals_name_the_field)
{
	FrameDesc d = nv12OverShm();
	d.width = 0;
	ck_assert_error(Frame::create(d), ErrorCode::ZeroSize, "width");
	d = nv12OverShm();
	d.height = 0;
	ck_assert_error(Frame::create(d), ErrorCode::ZeroSize, "height");
	d = nv12OverShm();
	d.numResources = 0;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "numResources");
	d = nv12OverShm();
	d.numResources = 2;
	ck_assert_error(Frame::create(d), ErrorCode::NullHandle, "resources[1]");
	d = nv12OverShm();
	d.resources[3] = nv12Shm();
	ck_assert_error(Frame::create(d), ErrorCode::InvalidArgument, "resources[3]");
	d = nv12OverShm();
	d.numPlanes = 5;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "numPlanes");
	d = nv12OverShm();
	d.planes[1].resource = 1;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[1].resource");
	d = nv12OverShm();
	d.planes[1].subresource = 1;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[1].subresource");
	d = nv12OverShm();
	d.planes[1].offset = kW * kH * 2;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[1].offset");
	d = nv12OverShm();
	d.planes[1].stride = kW * kH;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[1].stride");
	d = nv12OverShm();
	d.colorimetry.primaries = static_cast<ColorPrimaries>(3); // reserved in H.273
	ck_assert_error(Frame::create(d), ErrorCode::InvalidArgument, "colorimetry");
}
END_TEST

START_TEST(wrap_derives_planes)
{
	std::vector<uint8_t> y(kW * kH), u(kW * kH / 4), v(kW * kH / 4);
	CpuPlanesDesc planes;
	planes.numPlanes = 3;
	planes.planes[0] = { y.data(), kW, kH };
	planes.planes[1] = { u.data(), kW / 2, kH / 2 };
	planes.planes[2] = { v.data(), kW / 2, kH / 2 };
	auto f = Frame::wrap(PixelFormat::Unknown, kW, kH, {}, CpuPlanes::create(planes).value());
	ck_assert_ok(f);
	ck_assert_uint_eq(f->numPlanes(), 3);
	ck_assert(f->plane(2) == (PlaneView{ 0, 2, 0, kW / 2 }));

	CudaPitched2DDesc cuda;
	cuda.pointer = 0x10000;
	cuda.pitch = 256;
	cuda.numPlanes = 2;
	cuda.planeOffsets = { 0, 256 * 64, 0, 0 };
	cuda.size = 256 * 96;
	auto g = Frame::wrap(PixelFormat::Unknown, kW, kH, {}, CudaPitched2D::create(cuda).value());
	ck_assert_ok(g);
	ck_assert(g->plane(1) == (PlaneView{ 0, 0, 256 * 64, 256 }));

	int device;
	auto h = Frame::wrap(
		PixelFormat::Unknown, kW, kH, {},
		VulkanImage::create({ .image = 5, .device = &device, .rowPitch = 512 }).value());
	ck_assert_ok(h);
	ck_assert_uint_eq(h->numPlanes(), 1);
	ck_assert_uint_eq(h->plane(0).stride, 512);
	// A multi-planar image's planes are its subresources (aspects), with opaque strides.
	auto i = Frame::wrap(
		PixelFormat::Unknown, kW, kH, {},
		VulkanImage::create({ .image = 5, .device = &device, .planes = 3 }).value());
	ck_assert_ok(i);
	ck_assert_uint_eq(i->numPlanes(), 3);
	ck_assert(i->plane(2) == (PlaneView{ 0, 2, 0, 0 }));
	FrameDesc beyond = i->desc();
	beyond.planes[2].subresource = 3;
	ck_assert_error(Frame::create(beyond), ErrorCode::OutOfRange, "planes[2].subresource");

	ck_assert_error(Frame::wrap(PixelFormat::Unknown, kW, kH, {}, Resource()),
			ErrorCode::NullHandle, "resources[0]");
}
END_TEST

START_TEST(wrap_dmabuf_uses_its_layout)
{
	DmaBufDesc d;
	d.fourcc = 0x3231564e; // NV12
	d.modifier = kDrmModifierLinear;
	d.width = kW;
	d.height = kH;
	d.numObjects = 1;
	d.objects[0] = { SharedFd(makeMemfd(kW * kH * 3 / 2)), kW * kH * 3 / 2 };
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, kW };
	d.planes[1] = { 0, kW * kH, kW };
	auto f =
		Frame::wrap(PixelFormat::Unknown, kW, kH, {}, DmaBuf::create(std::move(d)).value());
	ck_assert_ok(f);
	ck_assert(f->plane(1) == (PlaneView{ 0, 0, kW * kH, kW }));
}
END_TEST

START_TEST(known_format_checks_planes_against_the_layout)
{
	FrameDesc d = nv12OverShm();
	d.format = PixelFormat::NV12;
	ck_assert_ok(Frame::create(d));
	d.numPlanes = 1;
	ck_assert_error(Frame::create(d), ErrorCode::InvalidArgument, "numPlanes");
	d = nv12OverShm();
	d.format = PixelFormat::NV12;
	d.planes[0].stride = kW - 1; // smaller than a row of 64 luma bytes
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[0].stride");
	d = nv12OverShm();
	d.format = PixelFormat::NV12;
	// The last chroma row overruns the memfd by one byte.
	d.planes[1].offset = uint64_t(kW) * kH + 1;
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[1].offset");
	d = nv12OverShm();
	d.format = PixelFormat::P010LE; // two bytes per sample: the same strides are now too small
	ck_assert_error(Frame::create(d), ErrorCode::OutOfRange, "planes[0].stride");
	d = nv12OverShm();
	d.format = static_cast<PixelFormat>(5000);
	ck_assert_error(Frame::create(d), ErrorCode::InvalidArgument, "format");
	// A plane whose end passes 2^64 and wraps back inside a (huge) buffer, as
	// fuzz_native_resources found: refused, with the overflow named.
	FrameDesc huge;
	huge.format = PixelFormat::GRAY8;
	huge.width = 4096;
	huge.height = 4096;
	huge.numResources = 1;
	const uint64_t size = UINT64_MAX - 0xffff;
	huge.resources[0] =
		VulkanBuffer::create({ .buffer = 1, .device = test::fakeHandle(2), .size = size })
			.value();
	huge.numPlanes = 1;
	huge.planes[0] = { 0, 0, size - 4096, 0xffffffffu }; // 4095 strides of 4 GiB wrap past 2^64
	Result<Frame> wrapped = Frame::create(huge);
	ck_assert_error(wrapped, ErrorCode::OutOfRange, "planes[0].offset");
	ck_assert(wrapped.error().message().find("2^64") != std::string::npos);
	huge.planes[0] = { 0, 0, size - 4096 * 4096, 4096 }; // the last bytes of the buffer: fits
	ck_assert_ok(Frame::create(huge));
}
END_TEST

START_TEST(sync_slots_can_be_set)
{
	Frame f = Frame::create(nv12OverShm()).value();
	f.setAcquire(SyncPoint::noop());
	f.setRelease(ReleaseGate::none());
	ck_assert(f.acquire().isNoop());
	ck_assert(f.release().isNone());
}
END_TEST

// Copies on other threads: each thread writes its own copy's gate while the others read and drop
// theirs. Every copy keeps the fences it was given, and the memfd closes with the last copy (the
// TSan build checks that a write after another thread's drop is ordered after its reads).
START_TEST(copies_written_and_dropped_on_other_threads)
{
	const int fdsBefore = openFdCount();
	{
		Frame frame = Frame::create(nv12OverShm()).value();
		ReleaseGate gate = ReleaseGate::create().value();
		std::vector<std::thread> threads;
		std::atomic<int> wrong{ 0 };
		for (int t = 0; t < 4; ++t)
			threads.emplace_back([frame, gate, t, &wrong]() mutable {
				for (int i = 0; i < 2000; ++i) {
					Frame copy = frame;
					if ((i + t) % 2)
						copy.setRelease(gate);
					Frame reader = copy; // shares whichever body copy has now
					if (reader.release().isNone() != ((i + t) % 2 == 0) ||
					    reader.plane(1).offset != uint64_t(kW) * kH)
						wrong.fetch_add(1);
				}
				Frame moved = std::move(frame); // the thread's own copy: no count
								// change
				if (moved.numResources() != 1 || !moved.release().isNone() ||
				    frame.numResources() != 0)
					wrong.fetch_add(1);
			});
		for (std::thread &t : threads)
			t.join();
		ck_assert_int_eq(wrong.load(), 0);
		ck_assert(frame.release().isNone());
		ck_assert_int_gt(openFdCount(), fdsBefore);
	}
	ck_assert_int_eq(openFdCount(), fdsBefore); // the memfd went with the last copy
}
END_TEST

START_TEST(no_fd_leak_on_refusal)
{
	int before = openFdCount();
	for (int i = 0; i < 20; ++i) {
		FrameDesc d = nv12OverShm();
		d.planes[0].resource = 3;
		ck_assert(!Frame::create(std::move(d)).ok());
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("frame");
	tcase_add_test(tc, create_over_one_memfd);
	tcase_add_test(tc, create_over_two_resources);
	tcase_add_test(tc, refusals_name_the_field);
	tcase_add_test(tc, wrap_derives_planes);
	tcase_add_test(tc, wrap_dmabuf_uses_its_layout);
	tcase_add_test(tc, known_format_checks_planes_against_the_layout);
	tcase_add_test(tc, sync_slots_can_be_set);
	tcase_add_test(tc, copies_written_and_dropped_on_other_threads);
	tcase_add_test(tc, no_fd_leak_on_refusal);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
