// Benchmark 3: GstBuffer -> AVFrame -> GstBuffer through the bridge vs the copies done today.
// Baseline: gst_video_frame_map + av_image_copy into an av_frame_get_buffer frame, and back
// into a new GstBuffer the same way. gpuhandle: avFrameFromGstBuffer + gstBufferFromAVFrame.
#include <gpuhandle/ffmpeg/gst_buffer.h>

#include "bench_common.h"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
}

#include <cstring>
#include <string>
#include <vector>

using namespace gpuhandle::bench;

namespace {

struct Case {
	GstVideoFormat gst;
	AVPixelFormat av;
	const char *name;
	int width;
	int height;
};

// The copy people write today; returns the new buffer (null on failure).
GstBuffer *copyRoundTrip(GstBuffer *in, const GstVideoInfo &info, AVPixelFormat av)
{
	GstVideoFrame src;
	if (!gst_video_frame_map(&src, &info, in, GST_MAP_READ))
		return nullptr;
	AVFrame *frame = av_frame_alloc();
	frame->format = av;
	frame->width = GST_VIDEO_INFO_WIDTH(&info);
	frame->height = GST_VIDEO_INFO_HEIGHT(&info);
	const uint8_t *srcData[4]{};
	int srcStrides[4]{};
	for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&src); p++) {
		srcData[p] = static_cast<const uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&src, p));
		srcStrides[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&src, p);
	}
	if (av_frame_get_buffer(frame, 0) < 0) {
		gst_video_frame_unmap(&src);
		av_frame_free(&frame);
		return nullptr;
	}
	av_image_copy(frame->data, frame->linesize, srcData, srcStrides, av, frame->width,
		      frame->height);
	gst_video_frame_unmap(&src);
	// ... and back into a new GstBuffer.
	GstBuffer *out = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	GstVideoFrame dst;
	if (!gst_video_frame_map(&dst, &info, out, GST_MAP_WRITE)) {
		av_frame_free(&frame);
		gst_buffer_unref(out);
		return nullptr;
	}
	uint8_t *dstData[4]{};
	int dstStrides[4]{};
	for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&dst); p++) {
		dstData[p] = static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&dst, p));
		dstStrides[p] = GST_VIDEO_FRAME_PLANE_STRIDE(&dst, p);
	}
	av_image_copy(dstData, dstStrides, const_cast<const uint8_t **>(frame->data),
		      frame->linesize, av, frame->width, frame->height);
	gst_video_frame_unmap(&dst);
	av_frame_free(&frame);
	return out;
}

// Through the bridge, without a copy; returns the new buffer (null on failure).
GstBuffer *bridgeRoundTrip(GstBuffer *in, const GstVideoInfo &info, std::string *error)
{
	gpuhandle::Result<AVFrame *> frame = gpuhandle::ffmpeg::avFrameFromGstBuffer(in, info);
	if (!frame.ok()) {
		if (error)
			*error = frame.error().message();
		return nullptr;
	}
	gpuhandle::Result<GstBuffer *> out = gpuhandle::ffmpeg::gstBufferFromAVFrame(*frame);
	AVFrame *f = *frame;
	av_frame_free(&f);
	if (!out.ok()) {
		if (error)
			*error = out.error().message();
		return nullptr;
	}
	return *out;
}

// Whether `out` holds the same pixels as `in` (each plane's visible rows).
bool samePixels(GstBuffer *in, GstBuffer *out, const GstVideoInfo &info)
{
	GstVideoFrame a, b;
	if (!gst_video_frame_map(&a, &info, in, GST_MAP_READ))
		return false;
	if (!gst_video_frame_map(&b, &info, out, GST_MAP_READ)) {
		gst_video_frame_unmap(&a);
		return false;
	}
	bool same = true;
	for (guint p = 0; same && p < GST_VIDEO_FRAME_N_PLANES(&a); p++) {
		const auto rowBytes = static_cast<size_t>(GST_VIDEO_FRAME_COMP_WIDTH(&a, p) *
							  GST_VIDEO_FRAME_COMP_PSTRIDE(&a, p));
		for (int y = 0; same && y < GST_VIDEO_FRAME_COMP_HEIGHT(&a, p); y++)
			same = std::memcmp(static_cast<const uint8_t *>(
						   GST_VIDEO_FRAME_PLANE_DATA(&a, p)) +
						   y * GST_VIDEO_FRAME_PLANE_STRIDE(&a, p),
					   static_cast<const uint8_t *>(
						   GST_VIDEO_FRAME_PLANE_DATA(&b, p)) +
						   y * GST_VIDEO_FRAME_PLANE_STRIDE(&b, p),
					   rowBytes) == 0;
	}
	gst_video_frame_unmap(&b);
	gst_video_frame_unmap(&a);
	return same;
}

bool measure(Report &report, const Options &options, const Case &c)
{
	GstVideoInfo info;
	gst_video_info_init(&info);
	gst_video_info_set_format(&info, c.gst, static_cast<guint>(c.width),
				  static_cast<guint>(c.height));
	// A decoder-like buffer: allocated once, filled with a pattern.
	GstBuffer *in = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	{
		GstMapInfo map;
		gst_buffer_map(in, &map, GST_MAP_WRITE);
		for (gsize i = 0; i < map.size; i++)
			map.data[i] = static_cast<guint8>(i * 7 + i / 4099);
		gst_buffer_unmap(in, &map);
	}
	const std::string label = std::string(c.name) + "/" + std::to_string(c.width) + "x" +
				  std::to_string(c.height);
	std::string error;
	GstBuffer *check = bridgeRoundTrip(in, info, &error);
	GstBuffer *checkCopy = copyRoundTrip(in, info, c.av);
	const bool ok = check && checkCopy && samePixels(in, check, info) &&
			samePixels(in, checkCopy, info);
	if (check)
		gst_buffer_unref(check);
	if (checkCopy)
		gst_buffer_unref(checkCopy);
	if (!ok) {
		std::fprintf(stderr, "gst-ffmpeg %s: round trip failed or changed pixels%s%s\n",
			     label.c_str(), error.empty() ? "" : ": ", error.c_str());
		gst_buffer_unref(in);
		return false;
	}
	const int rounds = options.iterations(9, 2);
	const int copies = options.iterations(c.width > 1920 ? 20 : 60, 2);
	const int bridged = options.iterations(5000, 20);
	std::vector<double> copyNs, bridgeNs;
	// FFmpeg's own allocations apart: its API allocates per frame by design (av_frame_alloc,
	// av_buffer_create, av_buffer_ref), whoever calls it.
	uint64_t bridgeAllocs = 0, ffmpegAllocs = 0;
	for (int r = 0; r < rounds; r++) {
		copyNs.push_back(nsPerCall(copies, [&] {
			gst_buffer_unref(copyRoundTrip(in, info, c.av));
		}));
		countAllocationsFrom({ "libavutil", "libavcodec" });
		const uint64_t before = heapAllocations(), ffmpegBefore = foreignHeapAllocations();
		bridgeNs.push_back(nsPerCall(bridged, [&] {
			gst_buffer_unref(bridgeRoundTrip(in, info, nullptr));
		}));
		const uint64_t ffmpeg = foreignHeapAllocations() - ffmpegBefore;
		bridgeAllocs += heapAllocations() - before - ffmpeg;
		ffmpegAllocs += ffmpeg;
		countAllocationsFrom({});
	}
	gst_buffer_unref(in);
	Result r;
	r.name = "gst-ffmpeg/" + label;
	r.baseline = "gst_video_frame_map + av_image_copy into av_frame_get_buffer, and back";
	r.baselineValue = statsOf(copyNs).median;
	r.value = statsOf(bridgeNs).median;
	r.targetRatio = c.width > 1920 ? 0.01 : 0;
	const double trips = double(rounds) * (bridged + bridged / 10 + 1);
	char note[200];
	std::snprintf(note, sizeof note,
		      "gpuhandle: avFrameFromGstBuffer + gstBufferFromAVFrame (no copy, pixels "
		      "checked)");
	r.note = note;
	report.add(std::move(r));
	Result allocs;
	allocs.name = "gst-ffmpeg/" + label + "/allocs";
	allocs.baseline = "heap allocations per round trip outside FFmpeg's own functions";
	allocs.baselineValue = 0;
	allocs.value = double(bridgeAllocs) / trips;
	allocs.unit = "al";
	allocs.maxValue = kNoAllocations;
	std::snprintf(note, sizeof note,
		      "FFmpeg's own besides: %.1f per round trip (av_frame_alloc, "
		      "av_buffer_create, av_buffer_ref: its API allocates per frame)",
		      double(ffmpegAllocs) / trips);
	allocs.note = note;
	report.add(std::move(allocs));
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	const Options options = parseOptions(argc, argv);
	gst_init(nullptr, nullptr);
	Report report("GStreamer <-> FFmpeg round trip (bench 3)", options);
	const Case cases[] = {
		{ GST_VIDEO_FORMAT_NV12, AV_PIX_FMT_NV12, "NV12", 1920, 1080 },
		{ GST_VIDEO_FORMAT_NV12, AV_PIX_FMT_NV12, "NV12", 3840, 2160 },
		{ GST_VIDEO_FORMAT_I420, AV_PIX_FMT_YUV420P, "I420", 1920, 1080 },
		{ GST_VIDEO_FORMAT_I420, AV_PIX_FMT_YUV420P, "I420", 3840, 2160 },
	};
	bool ok = true;
	for (const Case &c : cases)
		ok = measure(report, options, c) && ok;
	const int status = report.finish();
	return ok ? status : 1;
}
