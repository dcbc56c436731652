// gpuhandledownload into memory:CUDAMemory: the template, a clear error without a driver, bytes.
#include <gst/app/gstappsink.h>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/video/video.h>

#if GPUHANDLE_GST_HAVE_CUDA
#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API 1
#endif
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#endif

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/skip_probe.h"

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

// Whether libcuda loads through GStreamer, whether it makes a CUDA context, and whether
// GStreamer's cudadownload is there too (probed in children before gst_init, see main).
bool gCudaLibrary = false;
bool gCudaDevice = false;
bool gCudaDownload = false;

// How a pipeline ended: its frames' visible bytes (strides dropped), or its first error.
struct Outcome {
	std::vector<uint8_t> bytes{};
	unsigned frames = 0;
	bool eos = false;
	std::string error{};  // the error's text
	std::string debug{};  // the error's debug string
	std::string source{}; // the name of the element that posted it
};

void appendFrame(Outcome &out, GstSample *sample)
{
	GstVideoInfo info;
	ck_assert(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
	GstVideoFrame frame;
	ck_assert(gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ));
	for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); ++p) {
		const auto *data =
			static_cast<const uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&frame, p));
		const auto stride = static_cast<size_t>(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p));
		const auto rowBytes = static_cast<size_t>(GST_VIDEO_FRAME_COMP_WIDTH(&frame, p)) *
				      static_cast<size_t>(GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, p));
		for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&frame, p); ++y) {
			const uint8_t *row = data + static_cast<size_t>(y) * stride;
			out.bytes.insert(out.bytes.end(), row, row + rowBytes);
		}
	}
	gst_video_frame_unmap(&frame);
	++out.frames;
}

// Runs `description` to EOS or its first error, within `seconds`; frames are pulled from the
// appsink called "sink" when there is one.
Outcome runPipeline(const std::string &description, int seconds = 60)
{
	Outcome out;
	GError *error = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &error);
	ck_assert_msg(pipeline && !error, "%s: %s", description.c_str(),
		      error ? error->message : "?");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	GstBus *bus = gst_element_get_bus(pipeline);
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	bool ended = false;
	while (!ended && std::chrono::steady_clock::now() < deadline) {
		if (sink) {
			if (GstSample *sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink),
									     20 * GST_MSECOND)) {
				appendFrame(out, sample);
				gst_sample_unref(sample);
				continue;
			}
		}
		GstMessage *msg = gst_bus_timed_pop_filtered(
			bus, sink ? 0 : 20 * GST_MSECOND,
			static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
		if (!msg)
			continue;
		if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
			GError *err = nullptr;
			gchar *debug = nullptr;
			gst_message_parse_error(msg, &err, &debug);
			out.error = err->message;
			out.debug = debug ? debug : "";
			out.source = GST_OBJECT_NAME(GST_MESSAGE_SRC(msg));
			g_clear_error(&err);
			g_free(debug);
		} else {
			out.eos = true;
		}
		gst_message_unref(msg);
		ended = true;
	}
	ck_assert_msg(ended, "%s: neither EOS nor an error in %d s", description.c_str(), seconds);
	gst_object_unref(bus);
	if (sink)
		gst_object_unref(sink);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	return out;
}

std::string source(const char *format, int width, int height)
{
	return "videotestsrc num-buffers=2 pattern=smpte ! video/x-raw,format=" +
	       std::string(format) + ",width=" + std::to_string(width) +
	       ",height=" + std::to_string(height) + ",framerate=30/1";
}

bool contains(const std::string &text, const char *part)
{
	return text.find(part) != std::string::npos;
}

} // namespace

// gst-inspect-1.0 lists the src template's features: CUDAMemory exactly when built with CUDA.
START_TEST(src_template_offers_cuda_memory_when_built_with_cuda)
{
	GstElementFactory *factory = gst_element_factory_find("gpuhandledownload");
	ck_assert_ptr_nonnull(factory);
	bool offered = false;
	for (const GList *l = gst_element_factory_get_static_pad_templates(factory); l;
	     l = l->next) {
		auto *tmpl = static_cast<GstStaticPadTemplate *>(l->data);
		if (tmpl->direction != GST_PAD_SRC)
			continue;
		GstCaps *caps = gst_static_caps_get(&tmpl->static_caps);
		for (guint i = 0; i < gst_caps_get_size(caps); ++i)
			if (gst_caps_features_contains(gst_caps_get_features(caps, i),
						       "memory:CUDAMemory"))
				offered = true;
		gst_caps_unref(caps);
	}
	gst_object_unref(factory);
	ck_assert_int_eq(offered, GPUHANDLE_GST_HAVE_CUDA != 0);
}
END_TEST

// Without a usable CUDA driver, asking for CUDAMemory is an element error of gpuhandledownload
// that names CUDA and why; with one, the same pipeline runs to EOS.
START_TEST(cuda_memory_without_a_driver_is_a_clear_error)
{
	const Outcome out = runPipeline(source("NV12", 64, 48) +
					" ! gpuhandleupload backend=memfd ! gpuhandledownload "
					"name=down ! video/x-raw(memory:CUDAMemory) ! fakesink");
	if (gCudaDevice) {
		ck_assert_msg(out.eos, "with CUDA: %s | %s", out.error.c_str(), out.debug.c_str());
		return;
	}
	ck_assert_msg(!out.eos, "CUDAMemory was produced without a CUDA device");
	ck_assert_string_eq(out.source, "down");
	ck_assert_msg(contains(out.error, "CUDA"), "error: %s", out.error.c_str());
	// Why: no driver library, or (with one) no usable device.
	ck_assert_msg(gCudaLibrary
			      ? contains(out.debug, "device") || contains(out.debug, "CUDA")
			      : contains(out.debug, "libcuda") && contains(out.debug, "driver"),
		      "debug: %s", out.debug.c_str());
}
END_TEST

// memfd frames into CUDAMemory (copied on the GPU into GStreamer's CUDA pool), then back
// through cudadownload: the same visible bytes as the pipeline without gpuhandle.
START_TEST(memfd_to_cuda_memory_keeps_the_bytes)
{
	struct Case {
		const char *format;
		int width, height;
	};
	const Case cases[] = { { "NV12", 33, 17 },
			       { "I420", 64, 48 },
			       { "RGBA", 1920, 1080 },
			       { "NV12", 1920, 1080 },
			       { "P010_10LE", 320, 240 } };
	for (const Case &c : cases) {
		const std::string src = source(c.format, c.width, c.height);
		const Outcome plain = runPipeline(src + " ! appsink name=sink sync=false");
		const Outcome cuda = runPipeline(
			src +
			" ! gpuhandleupload backend=memfd ! gpuhandledownload ! "
			"video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw,format=" +
			c.format + " ! appsink name=sink sync=false");
		ck_assert_msg(cuda.error.empty(), "%s %dx%d: %s | %s", c.format, c.width, c.height,
			      cuda.error.c_str(), cuda.debug.c_str());
		ck_assert_uint_eq(plain.frames, 2);
		ck_assert_uint_eq(cuda.frames, plain.frames);
		ck_assert_msg(cuda.bytes == plain.bytes, "%s %dx%d: the bytes differ", c.format,
			      c.width, c.height);
	}
}
END_TEST

namespace {

#if GPUHANDLE_GST_HAVE_CUDA
std::string probeCudaLibrary()
{
	gst_init(nullptr, nullptr);
	return gst_cuda_load_library()
		       ? std::string()
		       : "GStreamer's CUDA library could not load libcuda (no NVIDIA "
			 "driver here)";
}

std::string probeCudaDevice()
{
	gst_init(nullptr, nullptr);
	if (!gst_cuda_load_library())
		return "GStreamer's CUDA library could not load libcuda (no NVIDIA driver here)";
	GstCudaContext *context = gst_cuda_context_new(0);
	if (!context)
		return "GStreamer could not make a CUDA context on device 0 (no CUDA device)";
	gst_object_unref(context);
	return {};
}

std::string probeCudaDownload()
{
	gst_init(nullptr, nullptr);
	GstElementFactory *download = gst_element_factory_find("cudadownload");
	if (!download)
		return "GStreamer's cudadownload (nvcodec plugin) is not installed";
	gst_object_unref(download);
	return {};
}
#endif

} // namespace

int main(int argc, char **argv)
{
#if GPUHANDLE_GST_HAVE_CUDA
	// Probes in children, so that no driver thread exists when Check forks each test.
	gCudaLibrary = test::probeInChild(probeCudaLibrary) == 0;
	gCudaDevice = gCudaLibrary && test::probeInChild(probeCudaDevice) == 0;
	gCudaDownload = gCudaDevice && test::probeInChild(probeCudaDownload) == 0;
	if (!gCudaDownload)
		std::printf("memfd_to_cuda_memory_keeps_the_bytes is skipped (the reason is "
			    "above).\n");
#endif
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-elements-cuda");
	TCase *tc = tcase_create("gst-elements-cuda");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, src_template_offers_cuda_memory_when_built_with_cuda);
	if (GPUHANDLE_GST_HAVE_CUDA)
		tcase_add_test(tc, cuda_memory_without_a_driver_is_a_clear_error);
	if (gCudaDownload)
		tcase_add_test(tc, memfd_to_cuda_memory_keeps_the_bytes);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
