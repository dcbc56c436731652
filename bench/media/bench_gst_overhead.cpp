// Benchmark 2: GStreamer per-buffer overhead of gpuhandleupload ! gpuhandledownload vs identity.
// One buffer is pushed again and again from a pad of ours straight into each chain (no
// streaming thread, no queue), so the figure is what the two elements cost per buffer.
#include "bench_common.h"
#include "pad_chain.h"

#include <cstdio>
#include <string>
#include <vector>

#include <gst/video/video.h>

using namespace gpuhandle::bench;
using gpuhandle::bench::media::Chain;

namespace {

const std::string kSink = "fakesink sync=false async=false enable-last-sample=false";

struct Size {
	int width;
	int height;
};

// The two chains side by side, interleaved in rounds; the median round of each.
bool measure(Report &report, const Options &options, Size size)
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, static_cast<guint>(size.width),
				  static_cast<guint>(size.height));
	GST_VIDEO_INFO_FPS_N(&info) = 30;
	GST_VIDEO_INFO_FPS_D(&info) = 1;
	GstCaps *caps = gst_video_info_to_caps(&info);
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	gst_buffer_memset(buffer, 0, 0x80, GST_VIDEO_INFO_SIZE(&info));
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12,
				       info.width, info.height, info.finfo->n_planes, info.offset,
				       info.stride);

	Chain base("identity name=first silent=true ! identity silent=true ! " + kSink, caps);
	Chain ours("gpuhandleupload name=first backend=cpu ! gpuhandledownload ! " + kSink, caps);
	gst_caps_unref(caps);
	const std::string label = std::to_string(size.width) + "x" + std::to_string(size.height);
	bool ok = base.error.empty() && ours.error.empty();
	const int perRound = options.iterations(20000, 200);
	const int rounds = options.iterations(15, 2);
	std::vector<double> baseNs, oursNs;
	// Warm-up: negotiation and allocation happen on the first buffers.
	ok = ok && base.push(buffer, perRound / 10 + 1) && ours.push(buffer, perRound / 10 + 1);
	uint64_t baseAllocs = 0, oursAllocs = 0;
	for (int r = 0; ok && r < rounds; r++) {
		uint64_t allocs = heapAllocations();
		auto start = Clock::now();
		ok = base.push(buffer, perRound);
		baseNs.push_back(nsSince(start) / perRound);
		baseAllocs += heapAllocations() - allocs;
		allocs = heapAllocations();
		start = Clock::now();
		ok = ok && ours.push(buffer, perRound);
		oursNs.push_back(nsSince(start) / perRound);
		oursAllocs += heapAllocations() - allocs;
	}
	gst_buffer_unref(buffer);
	if (!ok) {
		std::fprintf(stderr, "gst-overhead %s: %s%s\n", label.c_str(), base.error.c_str(),
			     ours.error.c_str());
		return false;
	}
	const double pushes = double(rounds) * perRound;
	Result r;
	r.name = "gst-overhead/NV12/" + label;
	r.baseline = "identity ! identity ! fakesink";
	r.baselineValue = statsOf(baseNs).median;
	r.value = statsOf(oursNs).median;
	r.unit = "ns";
	// Issue 21: at most 1.5 times identity ! identity, flat in frame size.
	r.targetRatio = 1.5;
	char note[200];
	std::snprintf(note, sizeof note,
		      "gpuhandle: gpuhandleupload backend=cpu ! gpuhandledownload ! fakesink; "
		      "heap allocations per buffer: %.1f (baseline %.1f)",
		      double(oursAllocs) / pushes, double(baseAllocs) / pushes);
	r.note = note;
	report.add(std::move(r));
	return true;
}

// Heap allocations per buffer through gpuhandleupload backend=B ! gpuhandledownload for each
// backend this machine has (target: none in steady state); the input comes from the pool the
// upload proposes, as a source element's would. A backend that cannot run here is left out.
void measurePathAllocations(Report &report, const Options &options)
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 640, 360);
	GST_VIDEO_INFO_FPS_N(&info) = 30;
	GST_VIDEO_INFO_FPS_D(&info) = 1;
	GstCaps *caps = gst_video_info_to_caps(&info);
	const int warmUp = options.iterations(200, 20);
	const int counted = options.iterations(2000, 20);
	// Per buffer: allocations outside the drivers (gpuhandle's, GStreamer's, GLib's), the
	// drivers' own (Mesa, PoCL: not ours to remove), nanoseconds.
	struct Figures {
		double allocs = 0;
		double driverAllocs = 0;
		double ns = 0;
	};
	auto perBuffer = [&](Chain &chain, GstBuffer *buffer, Figures &f) {
		if (!chain.push(buffer, warmUp))
			return false;
		countDriverAllocations(true); // the drivers are loaded now
		const uint64_t before = heapAllocations(), driverBefore = foreignHeapAllocations();
		const auto start = Clock::now();
		const bool ok = chain.push(buffer, counted);
		f.ns = nsSince(start) / counted;
		const uint64_t driver = foreignHeapAllocations() - driverBefore;
		f.allocs = double(heapAllocations() - before - driver) / counted;
		f.driverAllocs = double(driver) / counted;
		countDriverAllocations(false);
		return ok;
	};
	Chain base("identity name=first silent=true ! identity silent=true ! " + kSink, caps);
	GstBuffer *plain = base.allocate(caps, GST_VIDEO_INFO_SIZE(&info), 0x80);
	Figures baseFigures;
	const bool baseOk = base.error.empty() && perBuffer(base, plain, baseFigures);
	gst_buffer_unref(plain);
	for (const char *backend : { "cpu", "memfd", "vulkan", "gl", "opencl" }) {
		const std::string chain = std::string("gpuhandleupload name=first backend=") +
					  backend + " ! gpuhandledownload ! " + kSink;
		Chain ours(chain, caps);
		Figures f;
		bool ok = baseOk && ours.error.empty();
		if (ok) {
			GstBuffer *buffer = ours.allocate(caps, GST_VIDEO_INFO_SIZE(&info), 0x80);
			ok = perBuffer(ours, buffer, f);
			gst_buffer_unref(buffer);
		}
		if (!ok) {
			std::printf("  gst-path/%s: not run here (%s%s)\n", backend,
				    base.error.c_str(), ours.error.c_str());
			continue;
		}
		Result r;
		r.name = std::string("gst-path/NV12/640x360/") + backend + "/allocs";
		r.baseline = "heap allocations per buffer outside the GPU drivers, identity ! "
			     "identity ! fakesink";
		r.baselineValue = baseFigures.allocs;
		r.value = f.allocs;
		r.unit = "al";
		r.maxValue = kNoAllocations;
		char note[320];
		std::snprintf(note, sizeof note,
			      "gpuhandle: gpuhandleupload backend=%s ! gpuhandledownload ! "
			      "fakesink; the driver's own allocations (Mesa, PoCL, lavapipe) "
			      "besides: %.1f per buffer; %.1f us per buffer, its copies included "
			      "(identity %.2f us)",
			      backend, f.driverAllocs, f.ns / 1000, baseFigures.ns / 1000);
		r.note = note;
		report.add(std::move(r));
	}
	gst_caps_unref(caps);
}

} // namespace

int main(int argc, char **argv)
{
	const Options options = parseOptions(argc, argv);
	gst_init(nullptr, nullptr);
	GstElementFactory *factory = gst_element_factory_find("gpuhandleupload");
	if (!factory) {
		std::printf("SKIP: the gpuhandle plugin is not found (GST_PLUGIN_PATH)\n");
		return 77;
	}
	gst_object_unref(factory);
	Report report("GStreamer per-buffer overhead (bench 2)", options);
	bool ok = true;
	for (Size size : { Size{ 640, 360 }, Size{ 3840, 2160 } })
		ok = measure(report, options, size) && ok;
	measurePathAllocations(report, options);
	const int status = report.finish();
	return ok ? status : 1;
}
