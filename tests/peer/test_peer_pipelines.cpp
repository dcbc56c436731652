// gpuhandle between elements it did not write (gst-libav decoders, filesink, videoconvert,
// videoscale, compositor, tee): byte for byte what the same pipeline writes without gpuhandle.
#include <gpuhandle/backends/backend.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "peer_fixture.h"

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::test::peer;

namespace {

// The backends gpuhandleupload can put system memory on, by the name its property takes, and
// whether they opened here (probed once, before Check forks the tests).
struct PeerBackend {
	const char *name;
	BackendKind kind;
	bool here;
};
std::array<PeerBackend, 5> gBackends{ { { "cpu", BackendKind::Cpu, false },
					{ "memfd", BackendKind::Fd, false },
					{ "vulkan", BackendKind::Vulkan, false },
					{ "gl", BackendKind::OpenGL, false },
					{ "opencl", BackendKind::OpenCl, false } } };

// How many of gBackends opened here.
int backendsHere()
{
	int n = 0;
	for (const PeerBackend &b : gBackends)
		n += b.here ? 1 : 0;
	return n;
}

// gpuhandle's pair, system memory in and out, on `backend`.
std::string throughGpuhandle(const char *backend)
{
	return std::string("gpuhandleupload backend=") + backend + " ! gpuhandledownload";
}

// Runs `source ! <gpuhandle> ! after` (`after` ends in a filesink at %s) with gpuhandle on every
// backend here, and `source ! after` without it, and checks that the files are the same and hold
// exactly kClipFrames frames of `frameBytes` (a raw file has no room for padding or another
// layout). Returns how many backends ran (at least one, or the test fails).
int expectSameFileOnEveryBackend(const std::string &source, const std::string &after,
				 size_t frameBytes)
{
	const std::string reference = runToFile(source + " ! " + after);
	ck_assert_msg(reference.size() == kClipFrames * frameBytes,
		      "%s ! %s wrote %zu bytes, not %u frames of %zu", source.c_str(),
		      after.c_str(), reference.size(), kClipFrames, frameBytes);
	int ran = 0;
	for (const PeerBackend &b : gBackends) {
		if (!b.here)
			continue;
		const std::string out =
			runToFile(source + " ! " + throughGpuhandle(b.name) + " ! " + after);
		ck_assert_msg(
			out.size() == reference.size(),
			"%s, %s ! gpuhandle ! %s: %zu bytes, expected %zu (%u frames of %zu): "
			"the buffers are not the caps' size",
			b.name, source.c_str(), after.c_str(), out.size(), reference.size(),
			kClipFrames, frameBytes);
		ck_assert_msg(out == reference,
			      "%s, %s ! gpuhandle ! %s: the bytes differ from the pipeline without "
			      "gpuhandle",
			      b.name, source.c_str(), after.c_str());
		++ran;
	}
	ck_assert_int_gt(ran, 0);
	return ran;
}

// The clip decoded, in `format` (avdec_h264 gives I420; videoconvert makes the others).
std::string decodedAs(const ClipSize &size, const char *format)
{
	return decodeClip(size) + " ! videoconvert ! video/x-raw,format=" + format;
}

constexpr const char *kRawFormats[] = { "I420", "NV12", "YUY2", "RGBA", "GRAY8" };

} // namespace

// filesink takes no GstVideoMeta: every buffer must be exactly the caps' frame in the default
// layout (page-rounded memfd frames were 348,160 bytes for 640x360 I420's 345,600).
START_TEST(decoder_into_raw_filesink)
{
	for (const ClipSize &size : kClipSizes) {
		ck_assert_int_eq(backendsHere(), expectSameFileOnEveryBackend(
							 decodeClip(size), "filesink location=%s",
							 frameSize("I420", size)));
		for (const char *format : kRawFormats)
			ck_assert_int_eq(backendsHere(),
					 expectSameFileOnEveryBackend(decodedAs(size, format),
								      "filesink location=%s",
								      frameSize(format, size)));
	}
}
END_TEST

// videoconvert in passthrough forwards filesink's allocation query: the same rule holds.
START_TEST(decoder_through_passthrough_videoconvert_into_filesink)
{
	for (const ClipSize &size : kClipSizes)
		ck_assert_int_eq(
			backendsHere(),
			expectSameFileOnEveryBackend(
				decodeClip(size),
				"videoconvert ! video/x-raw,format=I420 ! filesink location=%s",
				frameSize("I420", size)));
}
END_TEST

// A converting videoconvert reads the GstVideoMeta it asked for.
START_TEST(decoder_through_videoconvert_to_rgba_into_filesink)
{
	for (const ClipSize &size : kClipSizes)
		ck_assert_int_eq(
			backendsHere(),
			expectSameFileOnEveryBackend(
				decodedAs(size, "NV12"),
				"videoconvert ! video/x-raw,format=RGBA ! filesink location=%s",
				frameSize("RGBA", size)));
}
END_TEST

START_TEST(decodebin_then_videoscale_into_filesink)
{
	for (const ClipSize &size : kClipSizes)
		ck_assert_int_eq(
			backendsHere(),
			expectSameFileOnEveryBackend(
				decodebinClip(size),
				"videoscale ! video/x-raw,width=160,height=120 ! filesink location=%s",
				frameSize("I420", { 160, 120 })));
}
END_TEST

START_TEST(compositor_downstream)
{
	for (const ClipSize &size : kClipSizes)
		ck_assert_int_eq(
			backendsHere(),
			expectSameFileOnEveryBackend(
				decodeClip(size),
				"compositor ! video/x-raw,format=I420 ! filesink location=%s",
				frameSize("I420", size)));
}
END_TEST

// Upstream's metas reach downstream as a GstBaseTransform that keeps the pixels would carry
// them: avdec_h264's GstVideoSEIUserDataUnregisteredMeta (x264 writes its version there in the
// first frame), on every backend, the copy paths (memfd, vulkan, ...) included.
START_TEST(decoder_metas_are_carried)
{
	const GType sei = GST_VIDEO_SEI_USER_DATA_UNREGISTERED_META_API_TYPE;
	for (const ClipSize &size : kClipSizes) {
		const std::vector<int> reference =
			metasPerFrame(decodeClip(size) + " ! appsink name=sink", sei);
		ck_assert_int_eq(static_cast<int>(reference.size()), static_cast<int>(kClipFrames));
		ck_assert_msg(reference[0] == 1,
			      "avdec_h264 attached %d SEI metas to the first frame", reference[0]);
		for (const PeerBackend &b : gBackends) {
			if (!b.here)
				continue;
			const std::vector<int> got =
				metasPerFrame(decodeClip(size) + " ! " + throughGpuhandle(b.name) +
						      " ! appsink name=sink",
					      sei);
			ck_assert_msg(got == reference,
				      "%s, %ux%u: the SEI metas per frame differ (first frame: %d)",
				      b.name, size.width, size.height, got.empty() ? -1 : got[0]);
		}
	}
}
END_TEST

// A tee feeding a raw filesink directly and through gpuhandle: both files match.
START_TEST(tee_into_gpuhandle_and_a_plain_branch)
{
	for (const ClipSize &size : kClipSizes) {
		const std::string reference =
			runToFile(decodeClip(size) + " ! filesink location=%s");
		for (const PeerBackend &b : gBackends) {
			if (!b.here)
				continue;
			const std::vector<std::string> files = runToFiles(
				decodeClip(size) +
					" ! tee name=t t. ! queue ! filesink location=%s t. ! "
					"queue ! " +
					throughGpuhandle(b.name) + " ! filesink location=%s",
				2);
			ck_assert_msg(files[0] == reference, "%s: the plain branch differs",
				      b.name);
			ck_assert_msg(files[1] == reference,
				      "%s: the gpuhandle branch differs (%zu bytes, expected %zu)",
				      b.name, files[1].size(), reference.size());
		}
	}
}
END_TEST

int main(int argc, char **argv)
{
	if (!clipToolsPresent())
		return 77;
	for (PeerBackend &b : gBackends) {
		b.here = gpuhandle::test::probeBackend(b.kind) == 0;
		std::printf("backend %s: %s\n", b.name, b.here ? "tested" : "not here (above)");
	}
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	if (!makeClips())
		return 1;
	Suite *s = suite_create("peer-pipelines");
	TCase *tc = tcase_create("peer-pipelines");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, decoder_into_raw_filesink);
	tcase_add_test(tc, decoder_through_passthrough_videoconvert_into_filesink);
	tcase_add_test(tc, decoder_through_videoconvert_to_rgba_into_filesink);
	tcase_add_test(tc, decodebin_then_videoscale_into_filesink);
	tcase_add_test(tc, compositor_downstream);
	tcase_add_test(tc, decoder_metas_are_carried);
	tcase_add_test(tc, tee_into_gpuhandle_and_a_plain_branch);
	suite_add_tcase(s, tc);
	const int failed = gpuhandle::test::runSuite(s);
	removeClip();
	return failed;
}
