// Benchmark 6: layout and format-table queries, gpuhandle against gst_video_info_set_format and
// av_image_fill_arrays, for the same formats and sizes (their answers are checked to agree).
#include <gpuhandle/layout.h>
#include <gpuhandle/pixel_format.h>

#include "core_timing.h"

#include <gst/video/video.h>
extern "C" {
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
}

#include <array>
#include <cstdio>

using namespace gpuhandle;
using namespace gpuhandle::bench;

namespace {

struct FormatCase {
	PixelFormat format;
	GstVideoFormat gst;
	AVPixelFormat av;
	const char *name;
};
constexpr std::array<FormatCase, 5> kFormats{ {
	{ PixelFormat::NV12, GST_VIDEO_FORMAT_NV12, AV_PIX_FMT_NV12, "nv12" },
	{ PixelFormat::P010LE, GST_VIDEO_FORMAT_P010_10LE, AV_PIX_FMT_P010LE, "p010" },
	{ PixelFormat::YUV420P, GST_VIDEO_FORMAT_I420, AV_PIX_FMT_YUV420P, "yuv420p" },
	{ PixelFormat::YUV444P, GST_VIDEO_FORMAT_Y444, AV_PIX_FMT_YUV444P, "yuv444p" },
	{ PixelFormat::RGBA, GST_VIDEO_FORMAT_RGBA, AV_PIX_FMT_RGBA, "rgba" },
} };
struct Size {
	uint32_t width, height;
};
// Common sizes and an odd one (rounding of subsampled planes).
constexpr std::array<Size, 4> kSizes{
	{ { 640, 360 }, { 1920, 1080 }, { 3840, 2160 }, { 1279, 719 } }
};
constexpr int kFfmpegAlign = 32;

// Keeps results observable, so that no call is optimised away.
volatile uint64_t g_sink = 0;

// Whether gpuhandle's layouts equal the libraries' for this format at every size (the
// comparison is only fair when all three compute the same thing).
bool sameAnswers(const FormatCase &f)
{
	bool same = true;
	for (Size s : kSizes) {
		auto gh = computeLayout(f.format, s.width, s.height, LayoutPolicy::GStreamer);
		GstVideoInfo info;
		if (!gh.ok() || !gst_video_info_set_format(&info, f.gst, s.width, s.height))
			return false;
		for (uint32_t p = 0; p < gh->numPlanes; p++)
			same &= gh->planes[p].stride == uint32_t(info.stride[p]) &&
				gh->planes[p].offset == info.offset[p];
		same &= gh->size == info.size;
		auto ff = computeLayout(f.format, s.width, s.height, LayoutPolicy::FFmpeg,
					kFfmpegAlign);
		uint8_t *data[4] = {};
		int linesize[4] = {};
		static uint8_t base[1];
		int size = av_image_fill_arrays(data, linesize, base, f.av, int(s.width),
						int(s.height), kFfmpegAlign);
		if (!ff.ok() || size < 0)
			return false;
		for (uint32_t p = 0; p < ff->numPlanes; p++)
			same &= ff->planes[p].stride == uint32_t(linesize[p]) &&
				ff->planes[p].offset == uint64_t(data[p] - base);
		same &= ff->size == uint64_t(size);
		if (!same)
			std::fprintf(stderr, "layout of %s %ux%u differs from the libraries'\n",
				     f.name, s.width, s.height);
	}
	return same;
}

} // namespace

int main(int argc, char **argv)
{
	Options options = parseOptions(argc, argv);
	gst_init(nullptr, nullptr);
	Report out("gpuhandle-bench-layout: layout and format-table queries (issue 8, target 6)",
		   options);
	const int n = options.iterations(2000000, 20000);
	bool ok = true;
	for (const FormatCase &f : kFormats) {
		ok = sameAnswers(f) && ok;
		size_t i = 0;
		auto next = [&i]() { return kSizes[i++ % kSizes.size()]; };
		// GStreamer policy against GstVideoInfo.
		const double gst = nsPerCallMedian(n, [&] {
			Size s = next();
			GstVideoInfo info;
			g_sink = g_sink +
				 gst_video_info_set_format(&info, f.gst, s.width, s.height) +
				 info.size;
		});
		const double ghGst = nsPerCallMedian(n, [&] {
			Size s = next();
			auto layout =
				computeLayout(f.format, s.width, s.height, LayoutPolicy::GStreamer);
			g_sink = g_sink + layout.ok() + layout->size;
		});
		out.add({ std::string("layout/gstreamer/") + f.name, "gst_video_info_set_format",
			  gst, ghGst, "ns", 1.0, "4 sizes, 640x360 to 3840x2160 and 1279x719" });
		// FFmpeg policy against av_image_fill_arrays (and, in the note, fill_linesizes
		// alone).
		uint8_t *data[4];
		int linesize[4];
		static uint8_t base[1];
		const double ff = nsPerCallMedian(n, [&] {
			Size s = next();
			g_sink = g_sink + uint64_t(av_image_fill_arrays(data, linesize, base, f.av,
									int(s.width), int(s.height),
									kFfmpegAlign));
		});
		const double ffLines = nsPerCallMedian(n, [&] {
			Size s = next();
			g_sink = g_sink +
				 uint64_t(av_image_fill_linesizes(linesize, f.av, int(s.width))) +
				 uint64_t(linesize[0]);
		});
		const double ghFf = nsPerCallMedian(n, [&] {
			Size s = next();
			auto layout = computeLayout(f.format, s.width, s.height,
						    LayoutPolicy::FFmpeg, kFfmpegAlign);
			g_sink = g_sink + layout.ok() + layout->size;
		});
		char note[96];
		std::snprintf(note, sizeof note, "align %d; av_image_fill_linesizes alone %.1f ns",
			      kFfmpegAlign, ffLines);
		out.add({ std::string("layout/ffmpeg/") + f.name, "av_image_fill_arrays", ff, ghFf,
			  "ns", 1.0, note });
	}
	// Format tables: the per-format description each library keeps.
	size_t i = 0;
	auto nextFormat = [&i]() -> const FormatCase & { return kFormats[i++ % kFormats.size()]; };
	const double gstInfo = nsPerCallMedian(n, [&] {
		g_sink = g_sink + gst_video_format_get_info(nextFormat().gst)->n_planes;
	});
	const double avInfo = nsPerCallMedian(n, [&] {
		g_sink = g_sink + av_pix_fmt_desc_get(nextFormat().av)->nb_components;
	});
	const double ghInfo = nsPerCallMedian(n, [&] {
		g_sink = g_sink + findPixelFormatInfo(nextFormat().format)->numPlanes;
	});
	const double ghInfoResult = nsPerCallMedian(n, [&] {
		auto info = pixelFormatInfo(nextFormat().format);
		g_sink = g_sink + info.ok() + (*info)->numPlanes;
	});
	char infoNote[96];
	std::snprintf(infoNote, sizeof infoNote,
		      "findPixelFormatInfo over 5 formats; pixelFormatInfo (Result) %.1f ns",
		      ghInfoResult);
	out.add({ "table/format-info/gstreamer", "gst_video_format_get_info", gstInfo, ghInfo, "ns",
		  1.0, infoNote });
	out.add({ "table/format-info/ffmpeg", "av_pix_fmt_desc_get", avInfo, ghInfo, "ns", 1.0,
		  infoNote });
	int status = out.finish();
	if (!ok)
		std::fprintf(stderr,
			     "gpuhandle-bench-layout: layouts differ from the libraries'\n");
	return ok ? status : 1;
}
