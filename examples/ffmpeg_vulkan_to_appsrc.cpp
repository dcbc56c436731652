// Example: FFmpeg's Vulkan frames pushed into a GStreamer appsrc without a copy.
//
// FFmpeg hardware frames (AV_PIX_FMT_VULKAN, as a Vulkan decoder or hwupload gives them) go to
// GStreamer: frameFromAVFrame describes the VkImages as a Frame (FFmpeg's semaphore becomes its
// acquire point) and bufferFromFrame wraps it as a memory:GpuHandle GstBuffer, with no copy.
// gpuhandledownload waits for the acquire point and reads the images into system memory (the one
// copy, a cpu-copy in its `stats`); the appsink checks every byte. Look at pushFrame(): the
// three calls that cross from FFmpeg to GStreamer. Exits 77 without a Vulkan device here.
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>

#include <cstdio>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

extern "C" {
#include <libavutil/hwcontext.h>
}

using namespace gpuhandle;

namespace {

constexpr int kWidth = 320, kHeight = 240, kFrames = 5;

// Writes (`write`) or checks the test pattern of frame n in two NV12 planes; false on a wrong byte.
bool pattern(uint8_t *const planes[2], const int strides[2], int n, bool write)
{
	bool same = true;
	for (int plane = 0; plane < 2; ++plane)
		for (int y = 0; y < (plane ? kHeight / 2 : kHeight); ++y)
			for (int x = 0; x < kWidth; ++x) {
				uint8_t &byte = planes[plane][y * strides[plane] + x];
				const auto want =
					static_cast<uint8_t>(n * 37 + plane * 101 + x * 3 + y * 7);
				byte = write ? want : byte;
				same = same && byte == want;
			}
	return same;
}

// One NV12 picture: made in system memory, uploaded by FFmpeg into a frame of `frames`.
AVFrame *uploadedFrame(AVBufferRef *frames, int n, AVFrame **software)
{
	AVFrame *sw = av_frame_alloc(), *hw = av_frame_alloc();
	if (sw) {
		sw->format = AV_PIX_FMT_NV12;
		sw->width = kWidth;
		sw->height = kHeight;
	}
	if (!sw || !hw || av_frame_get_buffer(sw, 0) < 0 ||
	    av_hwframe_get_buffer(frames, hw, 0) < 0) {
		av_frame_free(&sw);
		av_frame_free(&hw);
		return nullptr;
	}
	pattern(sw->data, sw->linesize, n, true);
	const auto *ctx = reinterpret_cast<const AVHWFramesContext *>(frames->data);
	ffmpeg::HwDeviceLock lock(ctx->device_ref); // FFmpeg 5.1 submits without a queue lock
	if (av_hwframe_transfer_data(hw, sw, 0) < 0)
		av_frame_free(&hw);
	// FFmpeg 5.1 uploads from the software frame's pages asynchronously: keep them until then.
	*software = sw;
	return hw;
}

// FFmpeg -> gpuhandle Frame -> GstBuffer, pushed into appsrc (which takes the buffer).
bool pushFrame(GstAppSrc *appsrc, AVFrame *hw, int n)
{
	// 1. The AVFrame as a Frame: VkImages on FFmpeg's device, acquire point = FFmpeg's upload.
	Result<Frame> frame = ffmpeg::frameFromAVFrame(hw);
	// 2. The gpuhandle backend working inside FFmpeg's VkDevice maps or exports the images.
	const auto *ctx = reinterpret_cast<const AVHWFramesContext *>(hw->hw_frames_ctx->data);
	Result<BackendRef> backend = ffmpeg::backendForHwDevice(ctx->device_ref);
	if (!frame || !backend) {
		std::fprintf(stderr, "%s\n",
			     (!frame ? frame.error() : backend.error()).message().c_str());
		return false;
	}
	// 3. A GstBuffer of memory:GpuHandle over the Frame (it holds the AVFrame's buffers).
	Result<GstVideoInfo> info = gst::videoInfoOf(*frame); // for the caps
	GstBuffer *buffer = info ? gst::bufferFromFrame(*frame, *backend, true) : nullptr;
	if (!buffer)
		return false;
	if (n == 0) { // the caps: the frame's video info, in memory:GpuHandle
		GstCaps *caps = gst_video_info_to_caps(&*info);
		gst_caps_set_features(caps, 0,
				      gst_caps_features_new(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE,
							    nullptr));
		gst_app_src_set_caps(appsrc, caps);
		gst_caps_unref(caps);
		std::printf("each frame: %s over %u %s resources\n",
			    pixelFormatName(frame->format()), frame->numResources(),
			    resourceKindName(frame->resource(0).kind()));
	}
	GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(n) * 40 * GST_MSECOND;
	GST_BUFFER_DURATION(buffer) = 40 * GST_MSECOND;
	return gst_app_src_push_buffer(appsrc, buffer) == GST_FLOW_OK;
}

// The bytes appsink received for frame n, against the pattern (strides may differ).
bool checkSample(GstSample *sample, int n)
{
	GstVideoInfo info;
	GstVideoFrame mapped;
	if (!sample || !gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) ||
	    !gst_video_frame_map(&mapped, &info, gst_sample_get_buffer(sample), GST_MAP_READ))
		return false;
	uint8_t *planes[2] = { static_cast<uint8_t *>(mapped.data[0]),
			       static_cast<uint8_t *>(mapped.data[1]) };
	const bool same = pattern(planes, mapped.info.stride, n, false);
	gst_video_frame_unmap(&mapped);
	return same;
}

} // namespace

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	AVBufferRef *device = nullptr;
	if (av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VULKAN, nullptr, nullptr, 0) < 0) {
		std::printf("SKIP: FFmpeg could not create a Vulkan device here\n");
		return 77;
	}
	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
	ctx->format = AV_PIX_FMT_VULKAN;
	ctx->sw_format = AV_PIX_FMT_NV12;
	ctx->width = kWidth;
	ctx->height = kHeight;
	GstElement *pipeline = gst_parse_launch(
		"appsrc name=src format=time ! gpuhandledownload name=download ! video/x-raw,format=NV12 ! "
		"appsink name=sink sync=false",
		nullptr);
	if (av_hwframe_ctx_init(frames) < 0 || !pipeline) {
		std::fprintf(stderr, "no Vulkan NV12 frames context, or no gpuhandledownload\n");
		return 1;
	}
	GstElement *src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	gst_element_set_state(pipeline, GST_STATE_PLAYING);

	int good = 0;
	for (int n = 0; n < kFrames; ++n) {
		AVFrame *sw = nullptr;
		AVFrame *hw = uploadedFrame(frames, n, &sw);
		const bool pushed = hw && pushFrame(GST_APP_SRC(src), hw, n);
		av_frame_free(&hw); // the GstBuffer keeps FFmpeg's buffers alive on its own
		// appsink: gpuhandledownload waited for the upload's semaphore and read the images.
		GstSample *sample =
			pushed ? gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)
			       : nullptr;
		good += checkSample(sample, n);
		if (sample)
			gst_sample_unref(sample);
		av_frame_free(&sw);
	}
	gst_app_src_end_of_stream(GST_APP_SRC(src));
	GstElement *download = gst_bin_get_by_name(GST_BIN(pipeline), "download");
	GstStructure *stats = nullptr; // frames, and how each reached system memory
	g_object_get(download, "stats", &stats, nullptr);
	gchar *text = gst_structure_to_string(stats);
	std::printf("gpuhandledownload: %s\n", text);
	g_free(text);
	gst_structure_free(stats);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	for (GstElement *element : { download, src, sink, pipeline })
		gst_object_unref(element);
	av_buffer_unref(&frames);
	av_buffer_unref(&device);
	gst_deinit(); // optional; lets GStreamer's leaks tracer check that nothing is left
	std::printf("%d of %d frames arrived byte-identical\n%s\n", good, kFrames,
		    good == kFrames ? "OK" : "FAILED");
	return good == kFrames ? 0 : 1;
}
