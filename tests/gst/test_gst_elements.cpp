// gpuhandleupload / gpuhandledownload in real pipelines: round trips, cross-API, fences, lifetime,
// bad input.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/cpu_fence.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gl/gl.h>
#endif
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "fd_count.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::appendFrame;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using gpuhandle::test::Size;

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

std::string rawCaps(const char *format, Size size)
{
	return "video/x-raw,format=" + std::string(format) +
	       ",width=" + std::to_string(size.width) + ",height=" + std::to_string(size.height) +
	       ",framerate=30/1";
}

std::string source(const char *format, Size size, int buffers = 2)
{
	return "videotestsrc num-buffers=" + std::to_string(buffers) + " pattern=smpte ! " +
	       rawCaps(format, size);
}

constexpr const char *kSink = "appsink name=sink sync=false";

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
			const Size size = kSizes[i];
			Run reference = runPipeline(source(format, size) + " ! " + kSink);
			ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
			Run run = runPipeline(source(format, size) +
					      " ! gpuhandleupload name=up backend=" + backend +
					      " ! gpuhandledownload name=down ! " +
					      rawCaps(format, size) + " ! " + kSink);
			ck_assert_msg(run.error.empty(), "%s %s %dx%d: %s", backend, format,
				      size.width, size.height, run.error.c_str());
			ck_assert_uint_eq(run.frames, 2);
			ck_assert_msg(run.bytes == reference.bytes, "%s %s %dx%d: bytes differ%s",
				      backend, format, size.width, size.height,
				      firstDifference(run.bytes, reference.bytes).c_str());
			ck_assert_uint_eq(run.stat("up", "frames"), 2);
			ck_assert_uint_eq(run.stat("down", "frames"), 2);
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

// An appsrc pipeline feeding GpuHandle buffers made here to gpuhandledownload.
struct FedPipeline {
	GstElement *pipeline = nullptr;
	GstElement *src = nullptr;
	GstElement *sink = nullptr;
	explicit FedPipeline(const std::string &caps, const std::string &downloadProps = "")
	{
		const std::string description = "appsrc name=src format=time caps=\"" + caps +
						"\" ! gpuhandledownload name=down " +
						downloadProps + " ! " + kSink;
		GError *error = nullptr;
		pipeline = gst_parse_launch(description.c_str(), &error);
		ck_assert_msg(pipeline && !error, "%s", error ? error->message : "?");
		src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
		sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
		gst_element_set_state(pipeline, GST_STATE_PLAYING);
	}
	~FedPipeline()
	{
		gst_element_set_state(pipeline, GST_STATE_NULL);
		gst_object_unref(src);
		gst_object_unref(sink);
		ck_assert(test::releasePipeline(pipeline));
	}
	// The first error on the bus within `timeout` ("" when none).
	std::string error(GstClockTime timeout) const
	{
		GstBus *bus = gst_element_get_bus(pipeline);
		GstMessage *msg = gst_bus_timed_pop_filtered(bus, timeout, GST_MESSAGE_ERROR);
		gst_object_unref(bus);
		if (!msg)
			return {};
		GError *err = nullptr;
		gchar *debug = nullptr;
		gst_message_parse_error(msg, &err, &debug);
		std::string text = std::string(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg))) + ": " +
				   err->message + " | " + (debug ? debug : "");
		g_clear_error(&err);
		g_free(debug);
		gst_message_unref(msg);
		return text;
	}
};

constexpr int kFenceSize = 64;

// The acquire fence as the consumer sees it: `fence`, noting when a wait on it begins, so that a
// test acts once the consumer is blocked instead of after a delay it guesses.
struct WatchedFence final : SyncWaiter {
	explicit WatchedFence(std::shared_ptr<CpuFence> f) : fence(std::move(f)) {}
	std::shared_ptr<CpuFence> fence;
	std::atomic<bool> waiting{ false }; // set by each wait(); the test clears it
	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override
	{
		waiting = true;
		return fence->wait(timeout);
	}
	Result<bool> isSignaled() override { return fence->isSignaled(); }
	int pollFd() const noexcept override { return fence->pollFd(); }
};

// A cpu RGBA frame whose bytes are written by another thread, which signals the frame's acquire
// fence only afterwards: the consumer must wait, or it reads zeros.
struct LateFrame {
	Frame fenced; // the frame with the acquire fence, handed to the pipeline
	std::shared_ptr<CpuFence> fence{};
	std::shared_ptr<WatchedFence> watched{}; // `fence` as the frame's acquire point waits on it
	std::optional<CpuMapping> mapping{};     // the producer's access, ended before the signal
};

// Whether the consumer is blocked in a wait on the late frame's fence, polled for up to 10 s
// (a bound for a hang only: the consumer gets there in milliseconds).
bool consumerWaits(const LateFrame &late)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (!late.watched->waiting && std::chrono::steady_clock::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	return late.watched->waiting;
}

LateFrame makeLateFrame(const BackendRef &cpu)
{
	AllocateRequest request{};
	request.format = PixelFormat::RGBA;
	request.width = request.height = kFenceSize;
	Result<Frame> frame = cpu->allocate(request);
	ck_assert_ok(frame);
	LateFrame late{ *frame };
	Result<CpuMapping> mapping = cpu->map(*frame, MapAccess::Write, kDefaultWaitTimeout);
	ck_assert_ok(mapping);
	for (uint32_t y = 0; y < kFenceSize; ++y)
		std::memset(mapping->data(0) + y * mapping->stride(0), 0, kFenceSize * 4);
	late.mapping.emplace(std::move(*mapping));
	auto fence = CpuFence::create();
	ck_assert_ok(fence);
	late.fence = *fence;
	late.watched = std::make_shared<WatchedFence>(late.fence);
	Result<SyncPoint> point = SyncPoint::fromWaiter(SyncKind::Cpu, late.watched);
	ck_assert_ok(point);
	late.fenced.setAcquire(*point);
	return late;
}

const std::string kFencedCaps =
	"video/x-raw(memory:GpuHandle),format=RGBA,width=" + std::to_string(kFenceSize) +
	",height=" + std::to_string(kFenceSize) + ",framerate=30/1";

START_TEST(late_fence_makes_the_consumer_wait)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	LateFrame late = makeLateFrame(*cpu);
	FedPipeline fed(kFencedCaps);
	GstBuffer *buffer = gst::bufferFromFrame(late.fenced, *cpu);
	ck_assert(buffer != nullptr);
	GST_BUFFER_PTS(buffer) = 0;
	ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(fed.src), buffer), GST_FLOW_OK);
	gst_app_src_end_of_stream(GST_APP_SRC(fed.src));
	bool blocked = false;
	std::thread producer([&late, &blocked] {
		// The 300 ms start once the consumer waits: it cannot find the fence signalled.
		blocked = consumerWaits(late);
		std::this_thread::sleep_for(std::chrono::milliseconds(300));
		for (uint32_t y = 0; y < kFenceSize; ++y)
			std::memset(late.mapping->data(0) + y * late.mapping->stride(0), 0x5a,
				    kFenceSize * 4);
		late.mapping.reset();
		late.fence->signal();
	});
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(fed.sink), 10 * GST_SECOND);
	producer.join();
	ck_assert_msg(blocked, "the consumer never waited on the fence");
	ck_assert_msg(sample != nullptr, "no frame: %s", fed.error(0).c_str());
	Run run;
	appendFrame(run, sample);
	gst_sample_unref(sample);
	ck_assert_uint_eq(run.bytes.size(), kFenceSize * kFenceSize * 4);
	for (uint8_t byte : run.bytes)
		ck_assert_uint_eq(byte, 0x5a);
	GstElement *down = gst_bin_get_by_name(GST_BIN(fed.pipeline), "down");
	GstStructure *stats = nullptr;
	g_object_get(down, "stats", &stats, nullptr);
	gst_object_unref(down);
	guint64 waits = 0, waited = 0;
	ck_assert(gst_structure_get_uint64(stats, "fence-waits", &waits));
	ck_assert(gst_structure_get_uint64(stats, "wait-time", &waited));
	gst_structure_free(stats);
	ck_assert_uint_eq(waits, 1);
	ck_assert_uint_ge(waited, 100 * GST_MSECOND);
}
END_TEST

START_TEST(fence_that_never_signals_is_an_element_error)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	LateFrame late = makeLateFrame(*cpu);
	FedPipeline fed(kFencedCaps, "timeout=300000000");
	GstBuffer *buffer = gst::bufferFromFrame(late.fenced, *cpu);
	GST_BUFFER_PTS(buffer) = 0;
	const auto started = std::chrono::steady_clock::now();
	ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(fed.src), buffer), GST_FLOW_OK);
	const std::string error = fed.error(30 * GST_SECOND);
	const auto took = std::chrono::steady_clock::now() - started;
	ck_assert_msg(error.find("down: ") == 0, "expected gpuhandledownload's error, got '%s'",
		      error.c_str());
	ck_assert_msg(error.find("fence") != std::string::npos, "%s", error.c_str());
	ck_assert(took >= std::chrono::milliseconds(250));
	// Its own 300 ms, not the default timeout (10 s): the bus was watched for 30 s.
	ck_assert(took < kDefaultWaitTimeout);
}
END_TEST

// A wait on a fence that is late ends at once when the pipeline flushes or goes to NULL: no state
// change waits for the fence's timeout.
START_TEST(flush_and_state_change_interrupt_a_fence_wait)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	LateFrame late = makeLateFrame(*cpu);
	auto fed = std::make_unique<FedPipeline>(kFencedCaps, "timeout=10000000000");
	GstBuffer *buffer = gst::bufferFromFrame(late.fenced, *cpu);
	GST_BUFFER_PTS(buffer) = 0;
	ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(fed->src), gst_buffer_ref(buffer)),
			 GST_FLOW_OK);
	ck_assert_msg(consumerWaits(late), "the download never waited on the fence");
	GstElement *down = gst_bin_get_by_name(GST_BIN(fed->pipeline), "down");
	GstPad *sinkPad = gst_element_get_static_pad(down, "sink");
	ck_assert(gst_pad_send_event(sinkPad, gst_event_new_flush_start()));
	// FLUSH_STOP takes the stream lock: it returns once the streaming thread left its wait.
	ck_assert(gst_pad_send_event(sinkPad, gst_event_new_flush_stop(TRUE)));
	// The flush ended the wait: nothing came out, and no error (a wait that sat out its 10 s
	// timeout would have posted one before FLUSH_STOP returned).
	ck_assert_string_eq(fed->error(0), ""); // a temporary: kept alive by the macro
	// A second wait, ended by the state change to NULL.
	GstSegment segment;
	gst_segment_init(&segment, GST_FORMAT_TIME);
	ck_assert(gst_pad_send_event(sinkPad, gst_event_new_segment(&segment)));
	late.watched->waiting = false;
	GstFlowReturn pushed = GST_FLOW_OK;
	std::thread pusher([&] { pushed = gst_pad_chain(sinkPad, buffer); });
	const bool blocked = consumerWaits(late);
	gst_element_set_state(fed->pipeline, GST_STATE_NULL);
	pusher.join();
	ck_assert_msg(blocked, "the second push never waited on the fence");
	// Interrupted: FLUSHING, not the ERROR of a wait that sat out its 10 s timeout.
	ck_assert_msg(pushed == GST_FLOW_FLUSHING, "the interrupted push returned %s",
		      gst_flow_get_name(pushed));
	gst_object_unref(sinkPad);
	gst_object_unref(down);
	fed.reset();
	late.fence->signal();
}
END_TEST

// Caps change mid-stream (size and format): the elements renegotiate (new pool, new layout) and
// every frame still arrives intact.
START_TEST(caps_change_renegotiates)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time ! gpuhandleupload backend=memfd name=up ! "
		"gpuhandledownload ! appsink name=sink sync=false",
		&error);
	ck_assert(pipeline && !error);
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	struct Step {
		const char *format;
		Size size;
	};
	const Step steps[] = { { "NV12", { 64, 48 } },
			       { "I420", { 33, 17 } },
			       { "RGBA", { 320, 240 } } };
	guint64 pts = 0;
	for (const Step &step : steps) {
		GstCaps *caps = gst_caps_from_string(rawCaps(step.format, step.size).c_str());
		gst_app_src_set_caps(GST_APP_SRC(src), caps);
		GstVideoInfo info;
		ck_assert(gst_video_info_from_caps(&info, caps));
		gst_caps_unref(caps);
		for (int i = 0; i < 2; ++i) {
			GstBuffer *frame = gst_buffer_new_allocate(
				nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
			GstMapInfo map;
			gst_buffer_map(frame, &map, GST_MAP_WRITE);
			for (gsize b = 0; b < map.size; ++b)
				map.data[b] = static_cast<guint8>(b * 7 + i);
			gst_buffer_unmap(frame, &map);
			GST_BUFFER_PTS(frame) = pts++ * GST_MSECOND;
			ck_assert_int_eq(gst_app_src_push_buffer(GST_APP_SRC(src),
								 gst_buffer_ref(frame)),
					 GST_FLOW_OK);
			GstSample *sample =
				gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
			ck_assert_msg(sample != nullptr, "no frame for %s", step.format);
			Run got, want;
			appendFrame(got, sample);
			GstSample *expected = gst_sample_new(frame, gst_sample_get_caps(sample),
							     nullptr, nullptr);
			appendFrame(want, expected);
			ck_assert_msg(got.bytes == want.bytes, "%s %dx%d: bytes differ%s",
				      step.format, step.size.width, step.size.height,
				      firstDifference(got.bytes, want.bytes).c_str());
			gst_sample_unref(expected);
			gst_sample_unref(sample);
			gst_buffer_unref(frame);
		}
	}
	GstElement *up = gst_bin_get_by_name(GST_BIN(pipeline), "up");
	GstStructure *stats = nullptr;
	g_object_get(up, "stats", &stats, nullptr);
	guint64 frames = 0;
	ck_assert(gst_structure_get_uint64(stats, "frames", &frames));
	ck_assert_uint_eq(frames, 6);
	gst_structure_free(stats);
	gst_object_unref(up);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(src);
	gst_object_unref(sink);
	ck_assert(test::releasePipeline(pipeline));
}
END_TEST

// memory:DMABuf out: memfd frames leave as DMA-BUFs where the kernel makes them (udmabuf), with
// the same bytes; without /dev/udmabuf (and no GPU exporter) the element says why it cannot.
START_TEST(dmabuf_out_or_a_clear_error)
{
	const Size size{ 64, 48 };
	Run reference = runPipeline(source("NV12", size) + " ! " + kSink);
	Run run = runPipeline(source("NV12", size) +
			      " ! gpuhandleupload backend=memfd ! gpuhandledownload name=down ! "
			      "video/x-raw(memory:DMABuf) ! " +
			      kSink);
	if (access("/dev/udmabuf", R_OK | W_OK) == 0) {
		ck_assert_msg(run.error.empty(), "%s", run.error.c_str());
		ck_assert_msg(run.bytes == reference.bytes, "bytes differ%s",
			      firstDifference(run.bytes, reference.bytes).c_str());
	} else {
		std::printf("No /dev/udmabuf here: checking the error instead of DMA-BUF bytes.\n");
		ck_assert_msg(run.error.find("DMABuf") != std::string::npos &&
				      run.error.find("DMA-BUF") != std::string::npos,
			      "expected an error naming DMABuf and why, got '%s'",
			      run.error.c_str());
	}
}
END_TEST

// The open fd count once it is at most `limit`, or after 10 s.
int settledFdCount(int limit)
{
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	int count = test::openFdCount();
	while (count > limit && std::chrono::steady_clock::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		count = test::openFdCount();
	}
	return count;
}

// The application holds a buffer after the pipeline is gone: it still maps, with the right
// bytes, and freeing it closes every fd the pipeline opened.
void bufferOutlivesPipeline(const char *backend)
{
	const Size size{ 160, 120 };
	Run reference = runPipeline(source("NV12", size, 1) + " ! " + kSink);
	{
		Run warmup = runPipeline(source("NV12", size, 1) +
					 " ! gpuhandleupload backend=" + backend + " ! " + kSink);
	}
	const int fdsBefore = test::openFdCount();
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		(source("NV12", size, 1) + " ! gpuhandleupload backend=" + backend + " ! " + kSink)
			.c_str(),
		&error);
	ck_assert(pipeline && !error);
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 30 * GST_SECOND);
	ck_assert(sample != nullptr);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(sink);
	ck_assert(test::releasePipeline(pipeline));
	// Only the sample's buffer is left: its memories hold the frame and the device.
	GstCaps *caps = gst_caps_from_string(rawCaps("NV12", size).c_str());
	GstSample *plain = gst_sample_new(gst_sample_get_buffer(sample), caps, nullptr, nullptr);
	gst_caps_unref(caps);
	gst_sample_unref(sample);
	Run run;
	appendFrame(run, plain);
	gst_sample_unref(plain);
	ck_assert_msg(run.bytes == reference.bytes, "%s: bytes differ after the pipeline went",
		      backend);
	// No growth. Mesa's threads close a device's fds a little after it is destroyed (the
	// warm-up's, and this run's), so the count may settle late; a leak never settles.
	ck_assert_int_le(settledFdCount(fdsBefore), fdsBefore);
}

START_TEST(buffer_outlives_pipeline_memfd)
{
	bufferOutlivesPipeline("memfd");
	ck_assert(true);
}
END_TEST

START_TEST(buffer_outlives_pipeline_vulkan)
{
	bufferOutlivesPipeline("vulkan");
	ck_assert(true);
}
END_TEST

START_TEST(fd_count_stable_over_10000_frames)
{
	const int frames = static_cast<int>(test::scaledCount(10000)); // 1,000 in slow runtimes
	const std::string description = source("I420", { 64, 48 }, frames) +
					" ! gpuhandleupload name=up backend=memfd"
					" ! gpuhandledownload name=down ! " +
					kSink;
	{
		Run warmup = runPipeline(source("I420", { 64, 48 }, 10) +
					 " ! gpuhandleupload backend=memfd ! gpuhandledownload ! " +
					 kSink);
	}
	const int fdsBefore = test::openFdCount();
	{
		Run run = runPipeline(description, nullptr, 240);
		ck_assert_msg(run.error.empty(), "%s", run.error.c_str());
		ck_assert_uint_eq(run.frames, frames);
		ck_assert_uint_eq(run.stat("up", "frames"), frames);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Caps that fix a format gpuhandle has no entry for. Linked in gst-launch syntax, the link fails
// naming the caps; set at run time (appsrc), negotiation fails and gpuhandleupload's warning
// names the format (the source's error alone says only "not-negotiated").
START_TEST(unsupported_format_fails_negotiation_with_a_clear_message)
{
	GError *error = nullptr;
	GstElement *linked = gst_parse_launch(
		"videotestsrc num-buffers=1 ! video/x-raw,format=RGB15,width=64,height=48 ! "
		"gpuhandleupload name=up ! gpuhandledownload ! fakesink",
		&error);
	ck_assert_msg(error && std::strstr(error->message, "RGB15"), "%s",
		      error ? error->message : "linked");
	g_clear_error(&error);
	gst_clear_object(&linked);
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time caps=\"video/x-raw,format=RGB15,width=64,height=48,"
		"framerate=30/1\" ! gpuhandleupload name=up ! gpuhandledownload ! fakesink",
		&error);
	ck_assert(pipeline && !error);
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBuffer *frame = gst_buffer_new_allocate(nullptr, 64 * 48 * 2, nullptr);
	GST_BUFFER_PTS(frame) = 0;
	gst_app_src_push_buffer(GST_APP_SRC(src), frame);
	gst_object_unref(src);
	GstBus *bus = gst_element_get_bus(pipeline);
	std::string warning;
	bool failed = false;
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (!failed && std::chrono::steady_clock::now() < deadline) {
		GstMessage *msg = gst_bus_timed_pop_filtered(
			bus, 100 * GST_MSECOND,
			static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING));
		if (!msg)
			continue;
		GError *err = nullptr;
		gchar *debug = nullptr;
		if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_WARNING) {
			gst_message_parse_warning(msg, &err, &debug);
			if (g_str_equal(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), "up"))
				warning = err->message;
		} else {
			gst_message_parse_error(msg, &err, &debug);
			failed = true;
		}
		g_clear_error(&err);
		g_free(debug);
		gst_message_unref(msg);
	}
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	ck_assert(test::releasePipeline(pipeline));
	ck_assert_msg(failed, "the pipeline did not fail");
	ck_assert_msg(warning.find("RGB15") != std::string::npos &&
			      warning.find("not supported by gpuhandle") != std::string::npos,
		      "warning: '%s'", warning.c_str());
}
END_TEST

START_TEST(wrong_size_buffer_is_an_element_error)
{
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time caps=\"video/x-raw,format=RGBA,width=64,height=64,"
		"framerate=30/1\" ! gpuhandleupload name=up ! gpuhandledownload ! fakesink",
		&error);
	ck_assert(pipeline && !error);
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBuffer *small = gst_buffer_new_allocate(nullptr, 100, nullptr);
	GST_BUFFER_PTS(small) = 0;
	gst_app_src_push_buffer(GST_APP_SRC(src), small);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
	ck_assert_msg(msg != nullptr, "no error for a 100-byte 64x64 RGBA buffer");
	ck_assert_str_eq(GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), "up");
	GError *err = nullptr;
	gchar *debug = nullptr;
	gst_message_parse_error(msg, &err, &debug);
	ck_assert(g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT));
	ck_assert_msg(debug && std::strlen(debug) > 0, "no debug string");
	g_clear_error(&err);
	g_free(debug);
	gst_message_unref(msg);
	gst_object_unref(bus);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(src);
	ck_assert(test::releasePipeline(pipeline));
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
	tcase_add_test(tc, memfd_path_counts_one_copy);
	tcase_add_test(tc, late_fence_makes_the_consumer_wait);
	tcase_add_test(tc, fence_that_never_signals_is_an_element_error);
	tcase_add_test(tc, flush_and_state_change_interrupt_a_fence_wait);
	tcase_add_test(tc, caps_change_renegotiates);
	tcase_add_test(tc, dmabuf_out_or_a_clear_error);
	tcase_add_test(tc, buffer_outlives_pipeline_memfd);
	tcase_add_test(tc, fd_count_stable_over_10000_frames);
	tcase_add_test(tc, wrong_size_buffer_is_an_element_error);
	tcase_add_test(tc, unsupported_format_fails_negotiation_with_a_clear_message);
	tcase_add_test(tc, round_trip_cpu);
	tcase_add_test(tc, round_trip_memfd);
	auto have = [](BackendKind kind) { return gHave[static_cast<size_t>(kind)]; };
	if (have(BackendKind::Vulkan)) {
		tcase_add_test(tc, buffer_outlives_pipeline_vulkan);
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
