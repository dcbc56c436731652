// The wire format: frames and control messages survive encode, an fd hop and decode unchanged.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/gl_resources.h>

#include "wire_test_frames.h"

#include <cstring>
#include <string>
#include <vector>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test;

namespace {

// Encodes `frame`, moves it across (dup'd fds), decodes it, and checks everything the sender
// put in came out: geometry, colour, plane views, resource descriptions and the files behind
// every fd.
WireFrame roundTrip(const Frame &frame, uint64_t id, bool wantsRelease)
{
	WireMessage m;
	ck_assert_ok(encodeFrame(frame, id, wantsRelease, m));
	Received r = receive(m);
	auto type = decodeHeader(r.data(), r.numFds);
	ck_assert_ok(type);
	ck_assert(*type == WireType::Frame);
	auto decoded = decodeFrame(r.data(), r.fdList());
	ck_assert_ok(decoded);
	const Frame &out = decoded->frame;
	ck_assert_uint_eq(decoded->id, id);
	ck_assert(decoded->wantsRelease == wantsRelease);
	ck_assert(out.format() == frame.format());
	ck_assert_uint_eq(out.width(), frame.width());
	ck_assert_uint_eq(out.height(), frame.height());
	ck_assert(out.colorimetry() == frame.colorimetry());
	ck_assert_uint_eq(out.numPlanes(), frame.numPlanes());
	for (uint32_t i = 0; i < frame.numPlanes(); ++i)
		ck_assert(out.plane(i) == frame.plane(i));
	ck_assert_uint_eq(out.numResources(), frame.numResources());
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const Resource &a = frame.resource(i), &b = out.resource(i);
		ck_assert(a.kind() == b.kind());
		if (const ShmFd *s = a.get<ShmFd>()) {
			const ShmFdDesc &x = s->desc(), &y = b.get<ShmFd>()->desc();
			ck_assert_uint_eq(x.offset, y.offset);
			ck_assert_uint_eq(x.size, y.size);
			ck_assert_int_ne(x.fd.get(), y.fd.get());
			ck_assert(sameFile(x.fd.get(), y.fd.get()));
		} else {
			const DmaBufDesc &x = a.get<DmaBuf>()->desc(), &y = b.get<DmaBuf>()->desc();
			ck_assert_uint_eq(x.fourcc, y.fourcc);
			ck_assert_uint_eq(x.modifier, y.modifier);
			ck_assert_uint_eq(x.width, y.width);
			ck_assert_uint_eq(x.height, y.height);
			ck_assert_uint_eq(x.numObjects, y.numObjects);
			for (uint32_t o = 0; o < x.numObjects; ++o) {
				ck_assert_uint_eq(x.objects[o].size, y.objects[o].size);
				ck_assert(sameFile(x.objects[o].fd.get(), y.objects[o].fd.get()));
			}
			ck_assert_uint_eq(x.numPlanes, y.numPlanes);
			for (uint32_t p = 0; p < x.numPlanes; ++p) {
				ck_assert_uint_eq(x.planes[p].objectIndex, y.planes[p].objectIndex);
				ck_assert_uint_eq(x.planes[p].offset, y.planes[p].offset);
				ck_assert_uint_eq(x.planes[p].pitch, y.planes[p].pitch);
			}
		}
	}
	ck_assert(out.acquire().kind() == frame.acquire().kind());
	ck_assert(out.release().isNone());
	return std::move(decoded).value();
}

} // namespace

START_TEST(nv12_over_one_memfd)
{
	int before = openFdCount();
	{
		Frame f = nv12Shm();
		WireFrame w = roundTrip(f, 0x0123456789abcdefULL, true);
		ck_assert(w.frame.acquire().isNoop());
		// The decoded frame holds its own fd (one more than the sender's).
		ck_assert_int_eq(openFdCount(), before + 2);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(yuv420p_over_three_memfds)
{
	int before = openFdCount();
	{
		WireFrame w = roundTrip(yuv420pShm(), UINT64_MAX, false);
		ck_assert_uint_eq(w.frame.numResources(), 3);
		ck_assert(w.frame.colorimetry().range == ColorRange::Full);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(nv12_dmabuf_with_two_objects)
{
	int before = openFdCount();
	{
		WireFrame w = roundTrip(nv12DmaBuf(), 7, true);
		const DmaBufDesc &d = w.frame.resource(0).get<DmaBuf>()->desc();
		ck_assert_uint_eq(d.fourcc, kDrmNV12);
		ck_assert_uint_eq(d.numObjects, 2);
		ck_assert_uint_eq(d.planes[1].objectIndex, 1);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(eventfd_acquire_fence_crosses)
{
	int before = openFdCount();
	{
		UniqueFd efd(eventfd(0, EFD_CLOEXEC));
		ck_assert(efd.isValid());
		WireFrame w = roundTrip(nv12Shm(eventfdPoint(efd.get())), 42, false);
		const SyncPoint &acquire = w.frame.acquire();
		ck_assert(acquire.kind() == SyncKind::FenceFd);
		auto early = acquire.wait(std::chrono::milliseconds(20));
		ck_assert(!early.ok());
		ck_assert(early.error().code() == ErrorCode::Timeout);
		const uint64_t one = 1;
		ck_assert_int_eq(write(efd.get(), &one, sizeof one), sizeof one);
		ck_assert_ok(acquire.wait(std::chrono::seconds(5)));
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(frame_layout_is_pinned)
{
	// The hostile tests patch fields at these offsets: a change in the encoder must show here.
	WireMessage m;
	ck_assert_ok(encodeFrame(nv12Shm(), 1, true, m));
	ck_assert_uint_eq(m.size, shm::kBytesNoop);
	ck_assert_uint_eq(m.numFds, 1);
	UniqueFd efd(eventfd(0, EFD_CLOEXEC));
	ck_assert_ok(encodeFrame(nv12Shm(eventfdPoint(efd.get())), 1, true, m));
	ck_assert_uint_eq(m.size, shm::kBytesFence);
	ck_assert_uint_eq(m.numFds, 2);
	ck_assert_ok(encodeFrame(nv12DmaBuf(), 1, true, m));
	ck_assert_uint_eq(m.size, dma::kBytes);
	ck_assert_ok(encodeFrame(yuv420pShm(), 1, true, m));
	ck_assert_uint_eq(m.size, yuv::kBytes);
	uint32_t header[4];
	std::memcpy(header, m.bytes.data(), sizeof header);
	ck_assert_uint_eq(header[0], kWireMagic);
	ck_assert_uint_eq(header[1] & 0xffff, kWireVersion);
	ck_assert_uint_eq(header[1] >> 16, uint32_t(WireType::Frame));
	ck_assert_uint_eq(header[2], yuv::kBytes);
	ck_assert_uint_eq(header[3], 3);
}
END_TEST

START_TEST(control_messages_round_trip)
{
	WireMessage m;
	const std::string caps = "video/x-raw(memory:GpuHandle), format=NV12, width=64, height=48";
	ck_assert_ok(encodeHello(caps, 4, m));
	ck_assert_uint_eq(m.numFds, 0);
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::Hello);
	auto hello = decodeHello(m.data());
	ck_assert_ok(hello);
	ck_assert_string_eq(std::string(hello->caps), caps.c_str());
	ck_assert_uint_eq(hello->maxInFlight, 4);

	const std::string longest(kWireMaxCaps, 'c');
	ck_assert_ok(encodeCaps(longest, m));
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::Caps);
	auto decodedCaps = decodeCaps(m.data());
	ck_assert_ok(decodedCaps);
	ck_assert(*decodedCaps == longest);
	ck_assert_ok(encodeCaps("", m));
	ck_assert(decodeCaps(m.data()).value().empty());

	encodeRelease(0xfeedfacecafebeefULL, m);
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::Release);
	ck_assert_uint_eq(decodeRelease(m.data()).value(), 0xfeedfacecafebeefULL);

	encodeBye(m);
	ck_assert_uint_eq(m.size, kWireHeaderBytes);
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::Bye);
	// A control message is not taken for another type.
	ck_assert(!decodeRelease(m.data()).ok());
	ck_assert(!decodeHello(m.data()).ok());

	encodeEndOfStream(m);
	ck_assert_uint_eq(m.size, kWireHeaderBytes);
	ck_assert(decodeHeader(m.data(), 0).value() == WireType::EndOfStream);
	ck_assert_str_eq(wireTypeName(WireType::EndOfStream), "end-of-stream");
	// The type after the last known one is still refused.
	uint16_t next = static_cast<uint16_t>(WireType::Timeline) + 1;
	std::memcpy(m.bytes.data() + 6, &next, sizeof next);
	ck_assert_error(decodeHeader(m.data(), 0), ErrorCode::InvalidArgument, "type");
}
END_TEST

START_TEST(cpu_and_gl_resources_do_not_cross)
{
	std::vector<uint8_t> bytes(kNv12Bytes);
	WireMessage m;
	FrameDesc d;
	d.format = PixelFormat::NV12;
	d.width = kW;
	d.height = kH;
	d.numResources = 1;
	d.resources[0] = CpuBytes::create({ .data = bytes.data(), .size = bytes.size() }).value();
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 0, kW };
	d.planes[1] = { 0, 0, uint64_t(kW) * kH, kW };
	auto cpu = Frame::create(d);
	ck_assert_ok(cpu);
	ck_assert_error(encodeFrame(*cpu, 1, false, m), ErrorCode::NotSupported,
			"resources[0].kind");

	CpuPlanesDesc planes;
	planes.numPlanes = 2;
	planes.planes[0] = { bytes.data(), kW, kH };
	planes.planes[1] = { bytes.data() + kW * kH, kW, kH / 2 };
	auto cpuPlanes =
		Frame::wrap(PixelFormat::NV12, kW, kH, {}, CpuPlanes::create(planes).value());
	ck_assert_ok(cpuPlanes);
	ck_assert_error(encodeFrame(*cpuPlanes, 1, false, m), ErrorCode::NotSupported,
			"resources[0].kind");

	int context = 0;
	GlTextureDesc texture{ .name = 3,
			       .target = 0x0DE1,
			       .internalFormat = 0x8058,
			       .width = kW,
			       .height = kH,
			       .context = &context };
	auto gl = Frame::wrap(PixelFormat::RGBA, kW, kH, {}, GlTexture::create(texture).value());
	ck_assert_ok(gl);
	ck_assert_error(encodeFrame(*gl, 1, false, m), ErrorCode::NotSupported,
			"resources[0].kind");
	// Shared memory that could shrink under a consumer's mapping does not cross either.
	auto unsealed =
		ShmFd::create({ .fd = SharedFd(makeMemfd(kNv12Bytes)), .size = kNv12Bytes });
	ck_assert_ok(unsealed);
	auto loose = Frame::wrap(PixelFormat::GRAY8, kW, kH * 3 / 2, kBt709, *unsealed);
	ck_assert_ok(loose);
	ck_assert_error(encodeFrame(*loose, 1, false, m), ErrorCode::NotSupported,
			"resources[0].fd");
}
END_TEST

START_TEST(cpu_fence_acquire_does_not_cross)
{
	auto fence = CpuFence::create();
	ck_assert_ok(fence);
	auto point = SyncPoint::fromWaiter(SyncKind::Cpu, *fence);
	ck_assert_ok(point);
	WireMessage m;
	int before = openFdCount();
	ck_assert_error(encodeFrame(nv12Shm(*point), 1, false, m), ErrorCode::NotSupported,
			"acquire");
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(hello_arguments_are_checked)
{
	WireMessage m;
	const std::string tooLong(kWireMaxCaps + 1, 'c');
	ck_assert_error(encodeHello(tooLong, 2, m), ErrorCode::InvalidArgument, "caps");
	ck_assert_error(encodeCaps(tooLong, m), ErrorCode::InvalidArgument, "caps");
	ck_assert_error(encodeHello("video/x-raw", 0, m), ErrorCode::InvalidArgument,
			"maxInFlight");
	ck_assert_ok(encodeHello(std::string(kWireMaxCaps, 'c'), 1, m));
}
END_TEST

int main()
{
	Suite *s = suite_create("wire_format");
	TCase *tc = tcase_create("round_trip");
	tcase_add_test(tc, nv12_over_one_memfd);
	tcase_add_test(tc, yuv420p_over_three_memfds);
	tcase_add_test(tc, nv12_dmabuf_with_two_objects);
	tcase_add_test(tc, eventfd_acquire_fence_crosses);
	tcase_add_test(tc, frame_layout_is_pinned);
	tcase_add_test(tc, control_messages_round_trip);
	tcase_add_test(tc, cpu_and_gl_resources_do_not_cross);
	tcase_add_test(tc, cpu_fence_acquire_does_not_cross);
	tcase_add_test(tc, hello_arguments_are_checked);
	suite_add_tcase(s, tc);
	return runSuite(s);
}
