// gpuhandleupload / gpuhandledownload in real pipelines: round trips of every format and size
// through each backend, zero-copy and copy paths, cross-API (Vulkan to GL), shared devices.
#include <gpuhandle/backends/backend.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gl/gl.h>
#endif
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "elements_fixture.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::appendFrame;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using gpuhandle::test::Size;
using namespace gpuhandle::test::elements;

namespace {

constexpr const char *kFormats[] = { "I420", "NV12", "P010_10LE", "Y444", "YUY2",
				     "UYVY", "v210", "RGBA",      "BGRx", "GRAY8" };
constexpr Size kSizes[] = { { 1, 1 }, { 33, 17 }, { 1918, 1078 }, { 1920, 1080 }, { 3840, 2160 } };
// Under sanitizers and valgrind: the first three (odd and unaligned sizes, the edge cases), as
// 1080p and 4K frames only add time there.
size_t sizeCount()
{
	return test::slowRuntime() ? 3 : std::size(kSizes);
}

// Which backends opened here (probed in a child before gst_init, see main).
bool gHave[kBackendKindCount] = {};

// The bits per component of a GStreamer video format (8 for RGBA, 16 for P010_10LE's storage).
unsigned formatBits(const char *format)
{
	const GstVideoFormatInfo *info =
		gst_video_format_get_info(gst_video_format_from_string(format));
	return GST_VIDEO_FORMAT_INFO_BITS(info) + GST_VIDEO_FORMAT_INFO_SHIFT(info, 0);
}

// Whether GStreamer's GL contexts are GLES here: GStreamer 1.26 on Mesa 25's EGL device makes
// GLES 3.2 contexts, 1.22 on Mesa 22.3 desktop GL 4.5 ones.
bool gstGlIsGles()
{
#if GPUHANDLE_GST_HAVE_GL
	GstGLDisplay *display = gst_gl_display_new();
	GstGLContext *context = nullptr;
	GError *error = nullptr;
	bool gles = false;
	if (gst_gl_display_create_context(display, nullptr, &context, &error)) {
		gles = (gst_gl_context_get_gl_api(context) & GST_GL_API_GLES2) != 0;
		gst_object_unref(context);
	} else {
		g_clear_error(&error);
	}
	gst_object_unref(display);
	return gles;
#else
	return false;
#endif
}

// Every format at every size through `backend` and back, byte-identical with the same pipeline
// without gpuhandle. Returns how many cases ran.
unsigned roundTrips(const char *backend)
{
	unsigned cases = 0;
	for (const char *format : kFormats) {
		for (size_t i = 0; i < sizeCount(); ++i) {
			ck_assert_uint_eq(checkRoundTrip(backend, format, kSizes[i]), 2);
			++cases;
		}
	}
	return cases;
}

START_TEST(round_trip_cpu)
{
	ck_assert_uint_eq(roundTrips("cpu"), std::size(kFormats) * sizeCount());
}
END_TEST

START_TEST(round_trip_memfd)
{
	ck_assert_uint_eq(roundTrips("memfd"), std::size(kFormats) * sizeCount());
}
END_TEST

START_TEST(round_trip_vulkan)
{
	ck_assert_uint_eq(roundTrips("vulkan"), std::size(kFormats) * sizeCount());
}
END_TEST

START_TEST(round_trip_gl)
{
	ck_assert_uint_eq(roundTrips("gl"), std::size(kFormats) * sizeCount());
}
END_TEST

START_TEST(round_trip_opencl)
{
	ck_assert_uint_eq(roundTrips("opencl"), std::size(kFormats) * sizeCount());
}
END_TEST

// cpu frames wrap the input in place, and CPU memory leaves as system memory in place too.
START_TEST(cpu_path_is_zero_copy_both_ways)
{
	Run run = runPipeline(
		source("NV12", { 640, 360 }, 5) +
		" ! gpuhandleupload name=up backend=cpu ! gpuhandledownload name=down ! " + kSink);
	ck_assert_msg(run.error.empty(), "%s", run.error.c_str());
	ck_assert_uint_eq(run.frames, 5);
	ck_assert_uint_eq(run.stat("up", "zero-copy"), 5);
	ck_assert_uint_eq(run.stat("down", "zero-copy"), 5);
	ck_assert_uint_eq(run.stat("down", "cpu-copies"), 0);
}
END_TEST

// memfd frames are copied in once (system memory into a pooled memfd). They leave in place for
// a consumer that reads GstVideoMeta (videoconvert), and are copied for one that does not
// (appsink), since the pool's strides are not GStreamer's default ones.
START_TEST(memfd_path_counts_one_copy)
{
	const std::string upload =
		source("I420", { 320, 240 }, 4) +
		" ! gpuhandleupload name=up backend=memfd ! gpuhandledownload name=down";
	Run meta = runPipeline(upload + " ! videoconvert ! video/x-raw,format=NV12 ! " + kSink);
	ck_assert_msg(meta.error.empty(), "%s", meta.error.c_str());
	ck_assert_uint_eq(meta.frames, 4);
	ck_assert_uint_eq(meta.stat("up", "cpu-copies"), 4);
	ck_assert_uint_eq(meta.stat("down", "zero-copy"), 4);
	Run plain = runPipeline(upload + " ! " + kSink);
	ck_assert_msg(plain.error.empty(), "%s", plain.error.c_str());
	ck_assert_uint_eq(plain.stat("down", "cpu-copies"), 4);
}
END_TEST

// gpuhandle's own exportable Vulkan memory into GL: zero-copy (opaque fds) for the formats whose
// planes are Vulkan images GL imports as textures; packed 4:2:2 lives in a Vulkan buffer, which
// GL does not take as a texture, so it is copied (and says so). Bytes equal GStreamer's own.
START_TEST(vulkan_to_gl_without_a_copy)
{
	struct Case {
		const char *format;
		bool zeroCopy;
	};
	const Case cases[] = { { "RGBA", true },      { "BGRx", true },  { "NV12", true },
			       { "I420", true },      { "GRAY8", true }, { "Y444", true },
			       { "P010_10LE", true }, { "YUY2", false }, { "UYVY", false } };
	const bool gles = gstGlIsGles();
	for (const Case &c : cases) {
		// On GLES, gldownload reads a texture back only as RGBA8 or in the driver's own
		// read format (gst_gl_memory_read_pixels): 16-bit R/RG textures (P010) do not read
		// back on GStreamer 1.26's GLES context on llvmpipe. There, the textures are drawn
		// into RGBA by glcolorconvert and compared with GStreamer's own upload drawn the
		// same way (the same shader, so the same bytes).
		const bool throughRgba = gles && formatBits(c.format) > 8;
		const std::string readBack =
			throughRgba ? " ! glcolorconvert ! video/x-raw(memory:GLMemory),format=RGBA"
				      " ! gldownload ! video/x-raw,format=RGBA ! "
				    : std::string(" ! gldownload ! ");
		if (throughRgba)
			std::printf("%s: read back through glcolorconvert to RGBA (GLES)\n",
				    c.format);
		for (Size size : { Size{ 33, 17 }, Size{ 1920, 1080 } }) {
			Run reference = runPipeline(
				source(c.format, size) +
				(throughRgba ? " ! glupload" + readBack : std::string(" ! ")) +
				kSink);
			Run run = runPipeline(
				source(c.format, size) +
				" ! gpuhandleupload name=up backend=vulkan ! gpuhandledownload name=down"
				" ! video/x-raw(memory:GLMemory)" +
				readBack + (throughRgba ? "" : rawCaps(c.format, size) + " ! ") +
				kSink);
			ck_assert_msg(run.error.empty(), "%s %dx%d: %s", c.format, size.width,
				      size.height, run.error.c_str());
			ck_assert_uint_eq(run.frames, 2);
			ck_assert_msg(run.bytes == reference.bytes, "%s %dx%d: bytes differ%s",
				      c.format, size.width, size.height,
				      firstDifference(run.bytes, reference.bytes).c_str());
			ck_assert_uint_eq(run.stat("down", c.zeroCopy ? "zero-copy" : "cpu-copies"),
					  2);
		}
	}
}
END_TEST

// glupload's textures through gpuhandle and back into GLMemory: gpuhandledownload finds the GL
// context the pipeline shares (glupload's), so the textures pass through as they are.
START_TEST(gl_memory_stays_in_the_shared_context)
{
	for (const char *format : { "RGBA", "NV12", "I420" }) {
		const Size size{ 64, 48 };
		Run reference = runPipeline(source(format, size) + " ! " + kSink);
		Run run = runPipeline(
			source(format, size) +
			" ! glupload ! gpuhandleupload name=up ! gpuhandledownload name=down"
			" ! video/x-raw(memory:GLMemory) ! gldownload ! " +
			rawCaps(format, size) + " ! " + kSink);
		ck_assert_msg(run.error.empty(), "%s: %s", format, run.error.c_str());
		ck_assert_msg(run.bytes == reference.bytes, "%s: bytes differ%s", format,
			      firstDifference(run.bytes, reference.bytes).c_str());
		ck_assert_uint_eq(run.stat("up", "zero-copy"), 2);
		ck_assert_uint_eq(run.stat("down", "zero-copy"), 2);
	}
}
END_TEST

// GStreamer's own GL textures and Vulkan images into system memory: gpuhandle's backends do not
// map memory they did not make, so the frames are read through GStreamer (the native buffer
// gpuhandleupload keeps as the parent), with the same bytes.
START_TEST(native_memories_download_to_system_memory)
{
	struct Case {
		const char *format;
		const char *upload;
	};
	for (const Case &c : { Case{ "RGBA", "glupload" }, Case{ "NV12", "glupload" },
			       Case{ "RGBA", "vulkanupload" } }) {
		const Size size{ 64, 48 };
		Run reference = runPipeline(source(c.format, size) + " ! " + kSink);
		Run run =
			runPipeline(source(c.format, size) + " ! " + c.upload +
				    " ! gpuhandleupload name=up ! gpuhandledownload name=down ! " +
				    rawCaps(c.format, size) + " ! " + kSink);
		ck_assert_msg(run.error.empty(), "%s %s: %s", c.upload, c.format,
			      run.error.c_str());
		ck_assert_msg(run.bytes == reference.bytes, "%s %s: bytes differ%s", c.upload,
			      c.format, firstDifference(run.bytes, reference.bytes).c_str());
		ck_assert_uint_eq(run.stat("up", "zero-copy"), 2);
		ck_assert_uint_eq(run.stat("down", "cpu-copies"), 2);
	}
}
END_TEST

// allow-copy=false turns a frame that would need a copy into a not-negotiated error.
START_TEST(allow_copy_false_refuses_copies)
{
	Run copied = runPipeline(source("YUY2", { 64, 32 }) +
				 " ! gpuhandleupload backend=vulkan ! gpuhandledownload name=down "
				 "allow-copy=false ! video/x-raw(memory:GLMemory) ! gldownload ! " +
				 kSink);
	ck_assert_msg(copied.error.find("allow-copy is false") != std::string::npos,
		      "expected the allow-copy error, got '%s'", copied.error.c_str());
	Run zero = runPipeline(source("NV12", { 64, 32 }) +
			       " ! gpuhandleupload backend=vulkan ! gpuhandledownload name=down "
			       "allow-copy=false ! video/x-raw(memory:GLMemory) ! gldownload ! " +
			       kSink);
	ck_assert_msg(zero.error.empty(), "%s", zero.error.c_str());
	ck_assert_uint_eq(zero.stat("down", "zero-copy"), 2);
}
END_TEST

// Device sharing: an application gives the pipeline its own DeviceSet (a backend it opened) and
// the elements use that backend; without one, the first element announces a set and the others
// of the pipeline take it (one have-context message for the whole pipeline).
START_TEST(devices_are_shared_through_gst_context)
{
	auto devices = std::make_shared<gst::DeviceSet>();
	Result<BackendRef> mine = openBackend(BackendKind::Fd);
	ck_assert_ok(mine);
	devices->setBackend(*mine);
	GError *error = nullptr;
	GstElement *pipeline =
		gst_parse_launch((source("NV12", { 64, 48 }, 1) +
				  " ! gpuhandleupload backend=memfd ! appsink name=sink sync=false")
					 .c_str(),
				 &error);
	ck_assert(pipeline && !error);
	GstContext *context = gst::devicesContextNew(devices);
	gst_element_set_context(pipeline, context);
	gst_context_unref(context);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
	ck_assert(sample != nullptr);
	GstMemory *mem = gst_buffer_peek_memory(gst_sample_get_buffer(sample), 0);
	ck_assert(gst::memoryBackend(mem) == *mine);
	gst_sample_unref(sample);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(sink);
	ck_assert(test::releasePipeline(pipeline));

	// No set given: count the announcements of two uploads and a download.
	pipeline = gst_parse_launch(
		(source("NV12", { 64, 48 }, 1) +
		 " ! gpuhandleupload backend=memfd ! gpuhandledownload ! gpuhandleupload backend=memfd"
		 " ! gpuhandledownload ! fakesink")
			.c_str(),
		&error);
	ck_assert(pipeline && !error);
	GstBus *bus = gst_element_get_bus(pipeline);
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	unsigned announced = 0;
	for (;;) {
		GstMessage *msg = gst_bus_timed_pop_filtered(
			bus, 10 * GST_SECOND,
			static_cast<GstMessageType>(GST_MESSAGE_HAVE_CONTEXT | GST_MESSAGE_EOS |
						    GST_MESSAGE_ERROR));
		ck_assert(msg != nullptr);
		const GstMessageType type = GST_MESSAGE_TYPE(msg);
		if (type == GST_MESSAGE_HAVE_CONTEXT) {
			GstContext *have = nullptr;
			gst_message_parse_have_context(msg, &have);
			if (gst::devicesFromContext(have))
				++announced;
			gst_context_unref(have);
		}
		gst_message_unref(msg);
		ck_assert(type != GST_MESSAGE_ERROR);
		if (type == GST_MESSAGE_EOS)
			break;
	}
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	ck_assert(test::releasePipeline(pipeline));
	ck_assert_uint_eq(announced, 1);
}
END_TEST

START_TEST(device_set_context_prints_what_it_holds)
{
	// Every context query and set_context is logged with the context's structure: the set
	// must read as what it holds, never as "(GstGpuHandleDeviceSet)NULL".
	auto devices = std::make_shared<gst::DeviceSet>();
	auto printed = [&devices] {
		GstContext *context = gst::devicesContextNew(devices);
		gchar *text = gst_structure_to_string(gst_context_get_structure(context));
		std::string out = text;
		g_free(text);
		gst_context_unref(context);
		return out;
	};
	std::string text = printed();
	ck_assert_msg(text.find("NULL") == std::string::npos, "%s", text.c_str());
	ck_assert_msg(text.find("no backend opened yet") != std::string::npos, "%s", text.c_str());

	Result<BackendRef> fd = openBackend(BackendKind::Fd);
	ck_assert_ok(fd);
	devices->setBackend(*fd);
	text = printed();
	const std::string expected =
		std::string(backendKindName(BackendKind::Fd)) + " on " + (*fd)->deviceInfo().name;
	ck_assert_msg(text.find(expected) != std::string::npos, "%s lacks %s", text.c_str(),
		      expected.c_str());
	if (!devices->backend(BackendKind::Cuda).ok()) { // no CUDA driver here
		text = printed();
		ck_assert_msg(text.find(std::string(backendKindName(BackendKind::Cuda)) +
					" did not open") != std::string::npos,
			      "%s", text.c_str());
	}
}
END_TEST

} // namespace

int main(int argc, char **argv)
{
	// Probes in children, so that no driver thread exists when Check forks each test.
	for (BackendKind kind : kInteropBackends)
		gHave[static_cast<size_t>(kind)] = test::probeBackend(kind) == 0;
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-elements");
	TCase *tc = tcase_create("gst-elements");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, cpu_path_is_zero_copy_both_ways);
	tcase_add_test(tc, devices_are_shared_through_gst_context);
	tcase_add_test(tc, device_set_context_prints_what_it_holds);
	tcase_add_test(tc, memfd_path_counts_one_copy);
	tcase_add_test(tc, round_trip_cpu);
	tcase_add_test(tc, round_trip_memfd);
	auto have = [](BackendKind kind) { return gHave[static_cast<size_t>(kind)]; };
	if (have(BackendKind::Vulkan)) {
		tcase_add_test(tc, round_trip_vulkan);
		if (have(BackendKind::OpenGL)) {
			tcase_add_test(tc, vulkan_to_gl_without_a_copy);
			tcase_add_test(tc, allow_copy_false_refuses_copies);
			tcase_add_test(tc, gl_memory_stays_in_the_shared_context);
			tcase_add_test(tc, native_memories_download_to_system_memory);
		}
	}
	if (have(BackendKind::OpenGL))
		tcase_add_test(tc, round_trip_gl);
	if (have(BackendKind::OpenCl))
		tcase_add_test(tc, round_trip_opencl);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
