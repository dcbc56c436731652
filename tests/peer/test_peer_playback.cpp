// gpuhandle inside pipelines of GStreamer's own making and around its own elements: playbin's
// video-sink and video-filter, an encoder and muxer, a caps change mid stream, GStreamer's GL
// filters downstream, and the cross-process pair into a raw file; each compared byte for byte
// with the same pipeline without gpuhandle.
#include <gpuhandle/backends/backend.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include <gst/gst.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "launch_words.h"
#include "peer_fixture.h"

#include "check_helpers.h"

extern char **environ;

using namespace gpuhandle;
using namespace gpuhandle::test::peer;

namespace {

// The backends gpuhandleupload puts system memory on here (probed before Check forks).
std::vector<std::string> gBackends;
bool gGl = false;

std::string through(const std::string &backend)
{
	return "gpuhandleupload backend=" + backend + " ! gpuhandledownload";
}

std::string fileUri(const std::string &path)
{
	return "file://" + path;
}

// Runs `source ! after` without gpuhandle, then with `through(backend)` between them for every
// backend here, and checks that each file is the reference's bytes. Returns the backends run.
int sameBytesOnEveryBackend(const std::string &source, const std::string &after,
			    size_t minimumBytes)
{
	const std::string reference = runToFile(source + " ! " + after);
	ck_assert_msg(reference.size() >= minimumBytes, "%s ! %s wrote %zu bytes", source.c_str(),
		      after.c_str(), reference.size());
	int ran = 0;
	for (const std::string &backend : gBackends) {
		const std::string out =
			runToFile(source + " ! " + through(backend) + " ! " + after);
		ck_assert_msg(out == reference,
			      "%s: %s ! gpuhandle ! %s wrote %zu bytes that differ from the %zu "
			      "without gpuhandle",
			      backend.c_str(), source.c_str(), after.c_str(), out.size(),
			      reference.size());
		++ran;
	}
	ck_assert_int_gt(ran, 0);
	return ran;
}

// playbin decodes the clip (demuxer, parser and decoder of its choosing) into a video-sink
// bin that converts to I420 and writes the raw file at %s.
std::string playbin(const ClipSize &size, const std::string &filter)
{
	return "playbin uri=" + fileUri(clipPath(size)) + " flags=video" +
	       (filter.empty() ? "" : " video-filter=\"" + filter + "\"");
}

// playbin with gpuhandle in its video-sink, and in its video-filter: the files playbin writes
// are the bytes it writes without gpuhandle.
START_TEST(playbin_video_sink_and_video_filter)
{
	for (const ClipSize &size : kClipSizes) {
		const std::string sink =
			" video-sink=\"videoconvert ! video/x-raw,format=I420 ! filesink "
			"location=%s\"";
		const std::string reference = runToFile(playbin(size, "") + sink);
		ck_assert_uint_eq(reference.size(), kClipFrames * frameSize("I420", size));
		for (const std::string &backend : gBackends) {
			const std::string inSink =
				runToFile(playbin(size, "") + " video-sink=\"" + through(backend) +
					  " ! videoconvert ! video/x-raw,format=I420 ! filesink "
					  "location=%s\"");
			ck_assert_msg(inSink == reference,
				      "%s, %ux%u: video-sink differs (%zu bytes)", backend.c_str(),
				      size.width, size.height, inSink.size());
			const std::string inFilter =
				runToFile(playbin(size, through(backend)) + sink);
			ck_assert_msg(inFilter == reference,
				      "%s, %ux%u: video-filter differs (%zu bytes)",
				      backend.c_str(), size.width, size.height, inFilter.size());
		}
	}
	ck_assert(!gBackends.empty());
}
END_TEST

// x264enc ! mp4mux after gpuhandle: the encoded files decode to the frames the same encoder
// makes of the same input without gpuhandle (x264 with one thread is deterministic).
START_TEST(encoder_and_muxer_downstream)
{
	ck_assert_msg(std::system("gst-inspect-1.0 x264enc >/dev/null 2>&1") == 0,
		      "x264enc is not installed (Debian: gstreamer1.0-plugins-ugly; "
		      "scripts/setup-debian.sh installs it)");
	const ClipSize size = kClipSizes[0];
	const std::string encode = "x264enc threads=1 speed-preset=ultrafast key-int-max=6 ! "
				   "mp4mux ! filesink location=%s";
	auto decodedFrames = [](const std::string &mp4) {
		const std::string path =
			clipDir() + "/encoded-" + std::to_string(getpid()) + ".mp4";
		std::FILE *f = std::fopen(path.c_str(), "wb");
		ck_assert_ptr_nonnull(f);
		std::fwrite(mp4.data(), 1, mp4.size(), f);
		std::fclose(f);
		const std::string raw = runToFile("filesrc location=" + path +
						  " ! qtdemux ! h264parse ! avdec_h264 ! "
						  "video/x-raw,format=I420 ! filesink location=%s");
		std::remove(path.c_str());
		return raw;
	};
	const std::string reference = decodedFrames(runToFile(decodeClip(size) + " ! " + encode));
	ck_assert_uint_eq(reference.size(), kClipFrames * frameSize("I420", size));
	for (const std::string &backend : gBackends) {
		const std::string got = decodedFrames(
			runToFile(decodeClip(size) + " ! " + through(backend) + " ! " + encode));
		ck_assert_msg(got == reference,
			      "%s: the encoded file decodes to other frames (%zu bytes)",
			      backend.c_str(), got.size());
	}
	ck_assert(!gBackends.empty());
}
END_TEST

// concat switches from a 320x240 to a 160x120 stream: the caps change mid stream through
// gpuhandle, and the file holds both parts as without it.
START_TEST(caps_change_mid_stream)
{
	// The output chain links to "c." at the end of the description.
	const std::string source =
		"concat name=c "
		"videotestsrc num-buffers=5 pattern=ball ! video/x-raw,format=I420,width=320,"
		"height=240 ! c. "
		"videotestsrc num-buffers=7 pattern=smpte ! video/x-raw,format=I420,width=160,"
		"height=120 ! c. c.";
	const size_t bothParts =
		5 * frameSize("I420", { 320, 240 }) + 7 * frameSize("I420", { 160, 120 });
	ck_assert_int_gt(sameBytesOnEveryBackend(source, "filesink location=%s", bothParts), 0);
}
END_TEST

// GStreamer's GL filters reading gpuhandle's GLMemory write what they write of glupload's.
START_TEST(gl_filters_downstream)
{
	if (!gGl) {
		std::printf("not run: no GL here\n");
		return;
	}
	const ClipSize size = kClipSizes[1];
	const std::string source = decodeClip(size) + " ! videoconvert ! video/x-raw,format=RGBA";
	const std::string filters[] = {
		"glcolorconvert ! video/x-raw(memory:GLMemory),format=NV12",
		"glcolorscale ! video/x-raw(memory:GLMemory),width=320,height=180",
		"gltransformation rotation-z=15",
	};
	for (const std::string &filter : filters) {
		const std::string after = filter + " ! gldownload ! filesink location=%s";
		const std::string reference = runToFile(source + " ! glupload ! " + after);
		ck_assert_uint_gt(reference.size(), 0);
		for (const std::string &backend : gBackends) {
			const std::string got = runToFile(
				source + " ! gpuhandleupload backend=" + backend +
				" ! gpuhandledownload ! video/x-raw(memory:GLMemory) ! " + after);
			ck_assert_msg(got == reference,
				      "%s into %s: %zu bytes differ from glupload's",
				      backend.c_str(), filter.c_str(), got.size());
		}
	}
	// glvideomixer mixing gpuhandle's GLMemory with GStreamer's own, against two gluploads.
	auto mixer = [&](const std::string &secondInput) {
		return runToFile(
			"glvideomixer name=m sink_1::xpos=40 sink_1::ypos=30 ! gldownload ! "
			"filesink location=%s " +
			source + " ! glupload ! m. " + source + " ! " + secondInput + " ! m.");
	};
	const std::string reference = mixer("glupload");
	for (const std::string &backend : gBackends) {
		const std::string got =
			mixer("gpuhandleupload backend=" + backend +
			      " ! gpuhandledownload ! video/x-raw(memory:GLMemory)");
		ck_assert_msg(got == reference, "%s into glvideomixer: differs", backend.c_str());
	}
}
END_TEST

// Starts `description` in a gst-launch-1.0 process (launchWords) and
// waits for `socket` to appear (once its gpuhandlesink has its first frame).
pid_t launchProducer(const std::string &description, const std::string &socket)
{
	std::vector<std::string> words = { "gst-launch-1.0", "-q" };
	for (std::string &word : gpuhandle::test::launchWords(description))
		words.push_back(std::move(word));
	std::vector<char *> argv;
	for (std::string &w : words)
		argv.push_back(w.data());
	argv.push_back(nullptr);
	pid_t child = 0;
	ck_assert_int_eq(
		posix_spawnp(&child, "gst-launch-1.0", nullptr, nullptr, argv.data(), environ), 0);
	for (int i = 0; i < 200 && access(socket.c_str(), F_OK) != 0; ++i)
		usleep(50 * 1000);
	return child;
}

void expectCleanExit(pid_t child, const std::string &what)
{
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "%s: the producer ended with status %d", what.c_str(), status);
}

std::string producerSocket(const std::string &name)
{
	return "/tmp/gpuhandle-peer-" + std::to_string(getpid()) + "-" + name + ".sock";
}

// The cross-process pair: gpuhandlesink in a gst-launch-1.0 process, gpuhandlesrc into a raw
// filesink here; the file holds the decoded frames as they were.
START_TEST(cross_process_pair_into_a_raw_filesink)
{
	const ClipSize size = kClipSizes[1];
	const std::string reference = runToFile(decodeClip(size) + " ! filesink location=%s");
	for (const std::string &backend : { std::string("memfd"), std::string("cpu") }) {
		const std::string socket = producerSocket(backend);
		const pid_t child =
			launchProducer(decodeClip(size) + " ! gpuhandleupload backend=" + backend +
					       " ! gpuhandlesink sync=false socket-path=" + socket +
					       " wait-for-consumers=1",
				       socket);
		const std::string got =
			runToFile("gpuhandlesrc socket-path=" + socket + " ! filesink location=%s");
		expectCleanExit(child, backend);
		ck_assert_msg(got == reference,
			      "%s: gpuhandlesrc ! filesink wrote %zu bytes, expected %zu",
			      backend.c_str(), got.size(), reference.size());
	}
}
END_TEST

// The producer's metas cross with its frames: avdec_h264's SEI user data and timecodestamper's
// time codes reach an appsink behind gpuhandlesrc as they reach one in the producer's pipeline,
// on the zero-copy path (memfd) and the copy path (cpu: system memory copied into memfds).
START_TEST(cross_process_pair_carries_metas)
{
	const ClipSize size = kClipSizes[0];
	const std::string stamped = decodeClip(size) + " ! timecodestamper";
	const std::vector<std::string> reference =
		contentMetasPerFrame(stamped + " ! appsink name=sink");
	ck_assert_int_eq(static_cast<int>(reference.size()), static_cast<int>(kClipFrames));
	ck_assert_msg(
		reference[0].find("GstVideoSEIUserDataUnregisteredMetaAPI") != std::string::npos &&
			reference[0].find("GstVideoTimeCodeMetaAPI") != std::string::npos,
		"the reference's first frame has no SEI or time code: %s", reference[0].c_str());
	for (const std::string &backend : { std::string("memfd"), std::string("cpu") }) {
		const std::string socket = producerSocket("metas-" + backend);
		const pid_t child =
			launchProducer(stamped + " ! gpuhandleupload backend=" + backend +
					       " ! gpuhandlesink sync=false socket-path=" + socket +
					       " wait-for-consumers=1",
				       socket);
		const std::vector<std::string> got = contentMetasPerFrame(
			"gpuhandlesrc socket-path=" + socket + " ! appsink name=sink");
		expectCleanExit(child, backend);
		ck_assert_int_eq(static_cast<int>(got.size()), static_cast<int>(reference.size()));
		for (size_t i = 0; i < got.size(); ++i)
			ck_assert_msg(got[i] == reference[i], "%s, frame %zu: %s\nexpected: %s",
				      backend.c_str(), i, got[i].c_str(), reference[i].c_str());
	}
}
END_TEST

} // namespace

int main(int argc, char **argv)
{
	if (!clipToolsPresent())
		return 77;
	const std::array<std::pair<const char *, BackendKind>, 5> kinds{
		{ { "cpu", BackendKind::Cpu },
		  { "memfd", BackendKind::Fd },
		  { "vulkan", BackendKind::Vulkan },
		  { "gl", BackendKind::OpenGL },
		  { "opencl", BackendKind::OpenCl } }
	};
	for (const auto &[name, kind] : kinds)
		if (gpuhandle::test::probeBackend(kind) == 0)
			gBackends.emplace_back(name);
	gGl = gpuhandle::test::probeBackend(BackendKind::OpenGL) == 0;
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	if (!makeClips())
		return 1;
	Suite *s = suite_create("peer-playback");
	TCase *tc = tcase_create("peer-playback");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, playbin_video_sink_and_video_filter);
	tcase_add_test(tc, encoder_and_muxer_downstream);
	tcase_add_test(tc, caps_change_mid_stream);
	tcase_add_test(tc, gl_filters_downstream);
	tcase_add_test(tc, cross_process_pair_into_a_raw_filesink);
	tcase_add_test(tc, cross_process_pair_carries_metas);
	suite_add_tcase(s, tc);
	const int failed = gpuhandle::test::runSuite(s);
	removeClip();
	return failed;
}
