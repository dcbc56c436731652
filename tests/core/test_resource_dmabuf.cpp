// DmaBuf::create: counts, indices, fds, geometry per fourcc and modifier; no fd leaks either way.
#include <gpuhandle/fd_resources.h>

#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::makeMemfd;
using gpuhandle::test::openFdCount;

namespace {

constexpr uint32_t fourcc(char a, char b, char c, char d)
{
	return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
	       uint32_t(uint8_t(d)) << 24;
}
constexpr uint32_t kNV12 = fourcc('N', 'V', '1', '2');
constexpr uint32_t kYUV420 = fourcc('Y', 'U', '1', '2');
constexpr uint32_t kXRGB = fourcc('X', 'R', '2', '4');
constexpr uint32_t kYUYV = fourcc('Y', 'U', 'Y', 'V');
constexpr uint32_t kP010 = fourcc('P', '0', '1', '0');
constexpr uint64_t kIntelYTiledCcs = (uint64_t(0x01) << 56) | 4; // I915_FORMAT_MOD_Y_TILED_CCS

// One object holding a linear NV12 picture of w x h with the given pitch.
DmaBufDesc nv12OneObject(uint32_t w, uint32_t h, uint32_t pitch)
{
	uint64_t size = uint64_t(pitch) * h + uint64_t(pitch) * ((h + 1) / 2);
	DmaBufDesc d;
	d.fourcc = kNV12;
	d.modifier = kDrmModifierLinear;
	d.width = w;
	d.height = h;
	d.numObjects = 1;
	d.objects[0] = { SharedFd(makeMemfd(size)), size };
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, pitch };
	d.planes[1] = { 0, uint64_t(pitch) * h, pitch };
	return d;
}

} // namespace

START_TEST(nv12_one_object_is_accepted)
{
	int before = openFdCount();
	{
		auto r = DmaBuf::create(nv12OneObject(1920, 1080, 2048));
		ck_assert_ok(r);
		const DmaBufDesc &d = r->desc();
		ck_assert_uint_eq(d.numPlanes, 2);
		ck_assert_uint_eq(d.planes[1].offset, 2048u * 1080u);
		ck_assert(d.objects[0].fd.isOwned());
		ck_assert_int_eq(openFdCount(), before + 1);
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

START_TEST(odd_sizes_round_chroma_up)
{
	// 1921x1081 NV12: chroma rows = 541, chroma row bytes = 2 * 961 = 1922.
	auto r = DmaBuf::create(nv12OneObject(1921, 1081, 1922));
	ck_assert_ok(r);
	DmaBufDesc d = nv12OneObject(1921, 1081, 1921);
	ck_assert_error(DmaBuf::create(std::move(d)), ErrorCode::OutOfRange, "planes[1].pitch");
}
END_TEST

START_TEST(one_object_per_plane_is_accepted)
{
	// The AVDRMFrameDescriptor "one layer per plane" shape: YUV420 with three objects.
	DmaBufDesc d;
	d.fourcc = kYUV420;
	d.modifier = kDrmModifierInvalid;
	d.width = 64;
	d.height = 48;
	d.numObjects = 3;
	d.objects[0] = { SharedFd(makeMemfd(64 * 48)), 64 * 48 };
	d.objects[1] = { SharedFd(makeMemfd(32 * 24)), 32 * 24 };
	d.objects[2] = { SharedFd(makeMemfd(32 * 24)), 32 * 24 };
	d.numPlanes = 3;
	d.planes[0] = { 0, 0, 64 };
	d.planes[1] = { 1, 0, 32 };
	d.planes[2] = { 2, 0, 32 };
	ck_assert_ok(DmaBuf::create(std::move(d)));
}
END_TEST

START_TEST(packed_and_rgb_rows)
{
	DmaBufDesc d;
	d.fourcc = kYUYV;
	d.width = 33; // 17 macropixels of 4 bytes
	d.height = 2;
	d.numObjects = 1;
	d.objects[0] = { SharedFd(makeMemfd(68 * 2)), 68 * 2 };
	d.numPlanes = 1;
	d.planes[0] = { 0, 0, 68 };
	ck_assert_ok(DmaBuf::create(d));
	d.planes[0].pitch = 66;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "planes[0].pitch");

	DmaBufDesc rgb;
	rgb.fourcc = kXRGB;
	rgb.width = 16;
	rgb.height = 16;
	rgb.numObjects = 1;
	rgb.objects[0] = { SharedFd(makeMemfd(64 * 16)), 64 * 16 };
	rgb.numPlanes = 1;
	rgb.planes[0] = { 0, 0, 64 };
	ck_assert_ok(DmaBuf::create(rgb));
	rgb.planes[0].pitch = 63;
	ck_assert_error(DmaBuf::create(rgb), ErrorCode::OutOfRange, "planes[0].pitch");
}
END_TEST

START_TEST(counts_out_of_range)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.numPlanes = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "numPlanes");
	d.numPlanes = 5;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "numPlanes");
	d = nv12OneObject(64, 64, 64);
	d.numObjects = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "numObjects");
	d.numObjects = 5;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "numObjects");
}
END_TEST

START_TEST(plane_naming_a_missing_object)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.planes[1].objectIndex = 1;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "planes[1].objectIndex");
}
END_TEST

START_TEST(plane_past_the_object)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.planes[1].offset = 64 * 64 + 1; // the last chroma row now overruns by one byte
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "planes[1].offset");
	d = nv12OneObject(64, 64, 64);
	d.planes[1].offset = 1 << 20;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "planes[1].offset");
	// An offset whose end wraps past 2^64 back into the object (fuzz_native_resources found the
	// same in Frame::create): out of range, not a plane at the object's start.
	d = nv12OneObject(64, 64, 64);
	d.planes[1].offset = UINT64_MAX - 64 * 16;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "planes[1].offset");
}
END_TEST

START_TEST(plane_count_must_match_linear_format)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.numPlanes = 1;
	ck_assert_error(DmaBuf::create(d), ErrorCode::InvalidArgument, "numPlanes");
}
END_TEST

START_TEST(bad_scalars)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.fourcc = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::InvalidArgument, "fourcc");
	d = nv12OneObject(64, 64, 64);
	d.width = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::ZeroSize, "width");
	d = nv12OneObject(64, 64, 64);
	d.height = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::ZeroSize, "height");
	d = nv12OneObject(64, 64, 64);
	d.planes[0].pitch = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::ZeroSize, "planes[0].pitch");
	d = nv12OneObject(64, 64, 64);
	d.objects[0].size = 0;
	ck_assert_error(DmaBuf::create(d), ErrorCode::ZeroSize, "objects[0].size");
}
END_TEST

START_TEST(bad_fds)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.objects[0].fd = SharedFd();
	ck_assert_error(DmaBuf::create(d), ErrorCode::BadFd, "objects[0].fd");
	d = nv12OneObject(64, 64, 64);
	int closed = d.objects[0].fd.dup().release();
	close(closed);
	// A number that is no longer open (borrowed, so nothing closes it again later).
	d.objects[0].fd = SharedFd::borrow(closed, nullptr);
	ck_assert_error(DmaBuf::create(d), ErrorCode::BadFd, "objects[0].fd");
}
END_TEST

START_TEST(size_larger_than_the_fd)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.objects[0].size = 1 << 20; // the memfd holds only 64*96 bytes
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "objects[0].size");
}
END_TEST

START_TEST(extra_fd_beyond_count)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.objects[1] = { SharedFd(makeMemfd(16)), 16 };
	ck_assert_error(DmaBuf::create(d), ErrorCode::InvalidArgument, "objects[1].fd");
}
END_TEST

START_TEST(tiled_modifier_allows_aux_planes)
{
	// Y-tiled CCS NV12 carries a CCS plane per colour plane; pitches follow the tiling.
	DmaBufDesc d = nv12OneObject(64, 64, 128);
	d.modifier = kIntelYTiledCcs;
	d.numPlanes = 4;
	d.planes[2] = { 0, 100, 16 };
	d.planes[3] = { 0, 200, 16 };
	ck_assert_ok(DmaBuf::create(d));
	d.numPlanes = 1;
	ck_assert_error(DmaBuf::create(d), ErrorCode::InvalidArgument, "numPlanes");
}
END_TEST

START_TEST(unknown_fourcc_checks_only_indices)
{
	DmaBufDesc d = nv12OneObject(64, 64, 64);
	d.fourcc = fourcc('Z', 'Z', 'Z', 'Z');
	d.planes[0].pitch = 1; // meaning unknown: left to the importer
	ck_assert_ok(DmaBuf::create(d));
}
END_TEST

START_TEST(p010_needs_two_bytes_per_sample)
{
	DmaBufDesc d = nv12OneObject(64, 64, 128);
	d.fourcc = kP010;
	ck_assert_ok(DmaBuf::create(d));
	d = nv12OneObject(64, 64, 64);
	d.fourcc = kP010;
	ck_assert_error(DmaBuf::create(d), ErrorCode::OutOfRange, "planes[0].pitch");
}
END_TEST

START_TEST(no_fd_leaks_on_success_or_failure)
{
	int before = openFdCount();
	for (int i = 0; i < 50; ++i) {
		DmaBufDesc good = nv12OneObject(64, 64, 64);
		auto ok = DmaBuf::create(std::move(good));
		ck_assert(ok.ok());
		DmaBufDesc bad = nv12OneObject(64, 64, 64);
		bad.planes[1].objectIndex = 3;
		auto failed = DmaBuf::create(std::move(bad));
		ck_assert(!failed.ok());
	}
	ck_assert_int_eq(openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-dmabuf");
	TCase *tc = tcase_create("dmabuf");
	tcase_add_test(tc, nv12_one_object_is_accepted);
	tcase_add_test(tc, odd_sizes_round_chroma_up);
	tcase_add_test(tc, one_object_per_plane_is_accepted);
	tcase_add_test(tc, packed_and_rgb_rows);
	tcase_add_test(tc, counts_out_of_range);
	tcase_add_test(tc, plane_naming_a_missing_object);
	tcase_add_test(tc, plane_past_the_object);
	tcase_add_test(tc, plane_count_must_match_linear_format);
	tcase_add_test(tc, bad_scalars);
	tcase_add_test(tc, bad_fds);
	tcase_add_test(tc, size_larger_than_the_fd);
	tcase_add_test(tc, extra_fd_beyond_count);
	tcase_add_test(tc, tiled_modifier_allows_aux_planes);
	tcase_add_test(tc, unknown_fourcc_checks_only_indices);
	tcase_add_test(tc, p010_needs_two_bytes_per_sample);
	tcase_add_test(tc, no_fd_leaks_on_success_or_failure);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
