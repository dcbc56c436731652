// Backend frames to AVFrames: memfd frames of the fd backend wrapped without a copy (fds counted),
// Vulkan (lavapipe) and GL (llvmpipe) frames copied to host memory by the planner.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/skip_probe.h"
#include "av_frames.h"
#include "fd_count.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
bool g_vulkan = false;
bool g_gl = false;

// Points the Vulkan loader at lavapipe when nobody named an ICD; true if it did.
bool nameLavapipeIcd()
{
	if (std::getenv("VK_ICD_FILENAMES") || access(kLavapipeIcd, R_OK) != 0)
		return false;
	setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
	return true;
}

BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_msg(backend.ok(), "%s: %s", backendKindName(kind),
		      backend.ok() ? "" : backend.error().message().c_str());
	return *backend;
}

struct Case {
	PixelFormat format = PixelFormat::Unknown;
	uint32_t width = 0;
	uint32_t height = 0;
};
constexpr Case kMemfdCases[] = { { PixelFormat::YUV420P, 33, 17 },
				 { PixelFormat::NV12, 1918, 1078 },
				 { PixelFormat::P010LE, 1, 1 },
				 { PixelFormat::RGBA, 3840, 2160 },
				 { PixelFormat::YUYV422, 33, 17 } };

// A memfd frame reaches FFmpeg without a copy: the AVFrame reads the fd's pages, which a later
// write through another mapping changes; no fd is left open once both sides are gone.
START_TEST(memfd_frames_wrap_without_a_copy)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	BackendRef fd = open(BackendKind::Fd);
	uint32_t seed = 11;
	for (const Case &c : kMemfdCases) {
		AVFrame *out = nullptr;
		{
			Result<Frame> frame = fd->allocate(
				{ c.format, c.width, c.height, {}, FrameStorage::Buffer, 0, true });
			ck_assert_ok(frame);
			ck_assert(frame->resource(0).kind() == ResourceKind::ShmFd);
			test::writePatternOk(*fd, *frame, seed);
			const int fdsWithFrame = test::openFdCount();
			ExecutionPath path;
			Result<AVFrame *> wrapped = avFrameFromFrame(*frame, {}, &path);
			ck_assert_ok(wrapped);
			out = *wrapped;
			ck_assert(path == ExecutionPath::zeroCopy());
			// A mapping, not another fd.
			ck_assert_int_eq(test::openFdCount(), fdsWithFrame);
			ck_assert_int_eq(out->format, toAvPixelFormat(c.format).value());
			const std::string checked = test::checkAvFrame(out, *frame, seed);
			ck_assert_msg(checked.empty(), "%s", checked.c_str());
			// Written through another mapping of the same memfd, seen by the AVFrame.
			Result<CpuMapping> writer =
				fd->map(*frame, MapAccess::Write, kDefaultWaitTimeout);
			ck_assert_ok(writer);
			writer->data(0)[0] = static_cast<uint8_t>(out->data[0][0] ^ 0xff);
			const uint8_t written = writer->data(0)[0];
			ck_assert_ok(writer->unmap());
			ck_assert_uint_eq(out->data[0][0], written);
		}
		// The frame is gone; the AVFrame's mapping holds the memory.
		ck_assert_uint_eq(out->data[0][1], test::patternByte(seed, 0, 0, 1));
		av_frame_free(&out);
		seed++;
	}
	fd.reset();
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A GPU frame reaches FFmpeg through the planner's CPU copy, with the bytes the GPU frame holds.
void copiedThroughPlanner(BackendKind kind)
{
	BackendRef backend = open(kind);
	uint32_t seed = 21;
	for (const Case &c : { Case{ PixelFormat::RGBA, 33, 17 }, Case{ PixelFormat::NV12, 64, 32 },
			       Case{ PixelFormat::YUV420P, 1918, 1078 } }) {
		if (!backend->supportsFormat(c.format, FrameStorage::Buffer)) {
			std::printf("%s: %s buffers not supported; case not run\n",
				    backendKindName(kind), pixelFormatName(c.format));
			continue;
		}
		Result<Frame> frame = backend->allocate(
			{ c.format, c.width, c.height, {}, FrameStorage::Buffer, 0, true });
		ck_assert_ok(frame);
		test::writePatternOk(*backend, *frame, seed);

		AvFrameOptions noCopies;
		noCopies.source = backend;
		noCopies.allowCopies = false;
		Result<AVFrame *> refused = avFrameFromFrame(*frame, noCopies);
		ck_assert_error(refused, ErrorCode::NotSupported, "allowCopies");

		ReleaseGate gate = ReleaseGate::create().value();
		frame->setRelease(gate);
		AvFrameOptions options;
		options.source = backend;
		ExecutionPath path;
		Result<AVFrame *> copied = avFrameFromFrame(*frame, options, &path);
		ck_assert_ok(copied);
		// The copy no longer reads the GPU frame: its producer has it back at once.
		ck_assert(gate.isSignaled());
		ck_assert(path.kind() == ExecutionPath::Kind::CpuCopy);
		ck_assert_msg(*path.reason() != '\0', "a copy says why");
		AVFrame *out = *copied;
		ck_assert_int_eq(out->width, static_cast<int>(c.width));
		const std::string checked = test::checkAvFrame(out, *frame, seed);
		ck_assert_msg(checked.empty(), "%s: %s", backendKindName(kind), checked.c_str());
		// And back: a Frame over the copy, zero-copy.
		Result<Frame> again = frameFromAVFrame(out);
		ck_assert_ok(again);
		ck_assert(again->format() == c.format);
		av_frame_free(&out);
		seed++;
	}
}

START_TEST(vulkan_frames_are_copied_by_the_planner)
{
	test::resetAvCounts();
	copiedThroughPlanner(BackendKind::Vulkan);
	ck_assert(g_vulkan);
}
END_TEST

START_TEST(gl_frames_are_copied_by_the_planner)
{
	test::resetAvCounts();
	copiedThroughPlanner(BackendKind::OpenGL);
	ck_assert(g_gl);
}
END_TEST

std::string probeVulkan()
{
	Result<BackendRef> opened = openBackend(BackendKind::Vulkan);
	if (!opened.ok() && nameLavapipeIcd())
		opened = openBackend(BackendKind::Vulkan);
	return opened.ok() ? std::string()
			   : "the Vulkan backend did not open: " + opened.error().message();
}

std::string probeGl()
{
	Result<BackendRef> opened = openBackend(BackendKind::OpenGL);
	return opened.ok() ? std::string()
			   : "the GL backend did not open: " + opened.error().message();
}

} // namespace

int main()
{
	// Probed in children so that no driver thread exists when Check forks each test.
	g_vulkan = test::probeInChild(probeVulkan) == 0;
	g_gl = test::probeInChild(probeGl) == 0;
	nameLavapipeIcd();
	Suite *suite = suite_create("ffmpeg-frame-backends");
	TCase *tc = tcase_create("backends");
	tcase_set_timeout(tc, 100);
	tcase_add_test(tc, memfd_frames_wrap_without_a_copy);
	if (g_vulkan)
		tcase_add_test(tc, vulkan_frames_are_copied_by_the_planner);
	else
		std::printf("The Vulkan case is skipped (the reason is above).\n");
	if (g_gl)
		tcase_add_test(tc, gl_frames_are_copied_by_the_planner);
	else
		std::printf("The GL case is skipped (the reason is above).\n");
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
