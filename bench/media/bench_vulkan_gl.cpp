// Benchmark 4: a Vulkan frame into an OpenGL texture (lavapipe + llvmpipe): gpuhandle's zero-copy
// import versus GStreamer's vulkandownload ! glupload and FFmpeg's hwdownload + a GL upload.
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/ffmpeg/frame.h>

#include "bench_common.h"
#include "pad_chain.h"

#include <gst/gl/gl.h>
#include <gst/video/video.h>
#include <gst/vulkan/vulkan.h>

extern "C" {
#include <libavutil/hwcontext.h>
}

#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace gpuhandle;
using gpuhandle::bench::Options;
using gpuhandle::bench::Report;
using gpuhandle::bench::media::Chain;
using BenchResult = gpuhandle::bench::Result;

namespace {

constexpr uint32_t kWidth = 1920;
constexpr uint32_t kHeight = 1080;
constexpr WaitDuration kTimeout = std::chrono::seconds(5);

// What each side measured: ns per frame (median of rounds), or why it could not run.
struct Figure {
	std::vector<double> ns{};
	std::string error{};
	std::string detail{};
};

// gpuhandle: a Vulkan frame imported into the GL backend (an opaque fd, GL_EXT_memory_object):
// the texture GL gets is the Vulkan image's memory. Each iteration imports and releases.
struct Gpuhandle {
	BackendRef vk, gl;
	std::optional<Frame> frame{};
	std::string error{};
	std::string detail{};

	Gpuhandle()
	{
		Result<BackendRef> v = openBackend(BackendKind::Vulkan);
		Result<BackendRef> g = openBackend(BackendKind::OpenGL);
		if (!v.ok() || !g.ok()) {
			error = !v.ok() ? v.error().message() : g.error().message();
			return;
		}
		vk = *v;
		gl = *g;
		AllocateRequest request;
		request.format = PixelFormat::NV12;
		request.width = kWidth;
		request.height = kHeight;
		// Images (GL textures on the other side) where Vulkan has them for NV12, else a
		// buffer.
		for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::Buffer }) {
			request.storage = storage;
			if (!vk->supportsFormat(request.format, storage))
				continue;
			Result<Frame> allocated = vk->allocate(request);
			if (allocated.ok()) {
				frame = *allocated;
				detail = frameStorageName(storage);
				return;
			}
		}
		error = "the Vulkan backend allocated no NV12 frame";
	}

	// One import; false (error set) unless it is the zero-copy route into GL.
	bool once()
	{
		ImportOptions options;
		options.source = vk;
		options.allowCopies = false;
		options.timeout = kTimeout;
		Result<ImportResult> imported = importFrame(*frame, *gl, options);
		if (!imported.ok()) {
			error = imported.error().message();
			return false;
		}
		if (imported->path.kind() != ExecutionPath::Kind::ZeroCopy) {
			error = std::string("not zero-copy: ") +
				executionPathKindName(imported->path.kind());
			return false;
		}
		const ResourceKind kind = imported->frame.resource(0).kind();
		if (kind != ResourceKind::GlTexture && kind != ResourceKind::GlBuffer) {
			error = "the import holds no GL object";
			return false;
		}
		return true;
	}
};

// GStreamer: NV12 pushed through vulkanupload ! vulkandownload ! glupload, and through
// vulkanupload alone; the difference is what taking the Vulkan frame to GL costs. The sink maps
// each GLMemory for GL, which does the upload glupload defers.
// GST_MAP_GL lies past GstMapFlags' named values, as GStreamer defines it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
constexpr GstMapFlags kGlRead = static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_GL);
#pragma GCC diagnostic pop

void mapForGl(GstElement *, GstBuffer *buffer, GstPad *, gpointer)
{
	for (guint i = 0; i < gst_buffer_n_memory(buffer); i++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		GstMapInfo map;
		if (gst_is_gl_memory(mem) && gst_memory_map(mem, &map, kGlRead))
			gst_memory_unmap(mem, &map);
	}
}

// Waits until the Vulkan device of the chain's first element is idle: GStreamer 1.22's
// vulkanupload never waits for its last copy, so the validation layer saw its pool's images and
// buffers destroyed while that copy was pending (VUID-vkDestroyImage-image-01000).
void waitForVulkanIdle(const Chain &chain)
{
	GstQuery *query = gst_query_new_context(GST_VULKAN_DEVICE_CONTEXT_TYPE_STR);
	GstContext *context = nullptr;
	GstVulkanDevice *device = nullptr;
	if (gst_pad_peer_query(chain.src, query)) {
		gst_query_parse_context(query, &context);
		if (context && gst_context_get_vulkan_device(context, &device) && device) {
			auto idle = reinterpret_cast<PFN_vkDeviceWaitIdle>(
				gst_vulkan_device_get_proc_address(device, "vkDeviceWaitIdle"));
			if (idle)
				idle(device->device);
			gst_object_unref(device);
		}
	}
	gst_query_unref(query);
}

struct GstPath {
	Chain *full = nullptr;
	Chain *uploadOnly = nullptr;
	GstBuffer *fullBuffer = nullptr;
	GstBuffer *uploadBuffer = nullptr;
	std::string error{};

	GstPath()
	{
		GstVideoInfo info;
		gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, kWidth, kHeight);
		GST_VIDEO_INFO_FPS_N(&info) = 30;
		GST_VIDEO_INFO_FPS_D(&info) = 1;
		GstCaps *caps = gst_video_info_to_caps(&info);
		const std::string sink =
			"fakesink name=sink sync=false async=false enable-last-sample=false";
		full = new Chain("vulkanupload name=first ! video/x-raw(memory:VulkanImage) ! "
				 "vulkandownload ! glupload ! "
				 "video/x-raw(memory:GLMemory) ! " +
					 sink + " signal-handoffs=true",
				 caps);
		uploadOnly = new Chain(
			"vulkanupload name=first ! video/x-raw(memory:VulkanImage) ! " + sink,
			caps);
		if (!full->error.empty() || !uploadOnly->error.empty()) {
			gst_caps_unref(caps);
			error = full->error.empty() ? uploadOnly->error : full->error;
			return;
		}
		// Each chain's vulkanupload has a Vulkan device of its own, and its pool's memory.
		fullBuffer = full->allocate(caps, GST_VIDEO_INFO_SIZE(&info), 0x60);
		uploadBuffer = uploadOnly->allocate(caps, GST_VIDEO_INFO_SIZE(&info), 0x60);
		gst_caps_unref(caps);
		GstElement *fakesink = gst_bin_get_by_name(GST_BIN(full->pipeline), "sink");
		g_signal_connect(fakesink, "handoff", G_CALLBACK(mapForGl), nullptr);
		gst_object_unref(fakesink);
	}
	~GstPath()
	{
		if (fullBuffer)
			gst_buffer_unref(fullBuffer);
		if (uploadBuffer)
			gst_buffer_unref(uploadBuffer);
		for (const Chain *chain : { full, uploadOnly })
			if (chain && chain->src)
				waitForVulkanIdle(*chain);
		delete full;
		delete uploadOnly;
	}
	GstPath(const GstPath &) = delete;
	GstPath &operator=(const GstPath &) = delete;
};

// FFmpeg: av_hwframe_transfer_data from a Vulkan frame to a software frame (hwdownload), then
// the GL backend's upload into an NV12 texture frame allocated once (glTexSubImage2D inside).
struct FfmpegPath {
	AVBufferRef *device = nullptr;
	AVBufferRef *frames = nullptr;
	AVFrame *hw = nullptr;
	AVFrame *sw = nullptr;
	BackendRef gl;
	std::optional<Frame> texture{};
	std::string error{};

	explicit FfmpegPath(const BackendRef &glBackend) : gl(glBackend)
	{
		if (av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VULKAN, nullptr, nullptr, 0) <
		    0) {
			error = "FFmpeg opened no Vulkan device";
			return;
		}
		frames = av_hwframe_ctx_alloc(device);
		auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
		ctx->format = AV_PIX_FMT_VULKAN;
		ctx->sw_format = AV_PIX_FMT_NV12;
		ctx->width = kWidth;
		ctx->height = kHeight;
		hw = av_frame_alloc();
		sw = av_frame_alloc();
		if (av_hwframe_ctx_init(frames) < 0 || av_hwframe_get_buffer(frames, hw, 0) < 0) {
			error = "FFmpeg made no NV12 Vulkan frame";
			return;
		}
		AllocateRequest request;
		request.format = PixelFormat::NV12;
		request.width = kWidth;
		request.height = kHeight;
		request.storage = FrameStorage::OptimalImage;
		if (!gl->supportsFormat(request.format, request.storage))
			request.storage = FrameStorage::Buffer;
		Result<Frame> allocated = gl->allocate(request);
		if (!allocated.ok()) {
			error = allocated.error().message();
			return;
		}
		texture = *allocated;
	}
	~FfmpegPath()
	{
		av_frame_free(&sw);
		av_frame_free(&hw);
		av_buffer_unref(&frames);
		av_buffer_unref(&device);
	}
	FfmpegPath(const FfmpegPath &) = delete;
	FfmpegPath &operator=(const FfmpegPath &) = delete;

	bool once()
	{
		av_frame_unref(sw);
		if (av_hwframe_transfer_data(sw, hw, 0) < 0) {
			error = "av_hwframe_transfer_data failed";
			return false;
		}
		Result<CpuMapping> dst = gl->map(*texture, MapAccess::Write, kTimeout);
		if (!dst.ok()) {
			error = dst.error().message();
			return false;
		}
		for (uint32_t p = 0; p < 2; p++) {
			const uint32_t rows = p == 0 ? kHeight : kHeight / 2;
			for (uint32_t y = 0; y < rows; y++)
				std::memcpy(dst->data(p) + size_t(y) * dst->stride(p),
					    sw->data[p] + size_t(y) * size_t(sw->linesize[p]),
					    kWidth);
		}
		Status done = dst->unmap(); // the upload into the texture
		if (!done.ok()) {
			error = done.error().message();
			return false;
		}
		return true;
	}
};

} // namespace

int main(int argc, char **argv)
{
	const Options options = gpuhandle::bench::parseOptions(argc, argv);
	gst_init(nullptr, nullptr);
	Gpuhandle ours;
	if (!ours.error.empty()) {
		std::printf("SKIP: no Vulkan and GL backends here: %s\n", ours.error.c_str());
		return 77;
	}
	if (!ours.once()) {
		std::printf("SKIP: no zero-copy import of Vulkan frames into GL here: %s\n",
			    ours.error.c_str());
		return 77;
	}
	// A baseline whose elements or device are missing here is reported as not run; one that
	// fails after it started fails the benchmark.
	GstPath gst;
	FfmpegPath ff(ours.gl);
	const bool gstHere = gst.error.empty();
	const bool ffHere = ff.error.empty();
	Report report("Vulkan -> GL at 1920x1080 NV12 (bench 4)", options);
	const int rounds = options.iterations(9, 2);
	const int imports = options.iterations(200, 3);
	const int copies = options.iterations(20, 2);
	std::vector<double> oursNs, gstFullNs, gstUploadNs, ffNs;
	bool ok = true;
	bool gstOk = gstHere && gst.full->push(gst.fullBuffer, 3) &&
		     gst.uploadOnly->push(gst.uploadBuffer, 3);
	bool ffOk = ffHere && ff.once();
	for (int r = 0; ok && r < rounds; r++) {
		oursNs.push_back(
			gpuhandle::bench::nsPerCall(imports, [&] { ok = ours.once() && ok; }));
		if (gstOk) {
			auto start = gpuhandle::bench::Clock::now();
			gstOk = gst.full->push(gst.fullBuffer, copies);
			gstFullNs.push_back(gpuhandle::bench::nsSince(start) / copies);
			start = gpuhandle::bench::Clock::now();
			gstOk = gstOk && gst.uploadOnly->push(gst.uploadBuffer, copies);
			gstUploadNs.push_back(gpuhandle::bench::nsSince(start) / copies);
		}
		if (ffOk)
			ffNs.push_back(gpuhandle::bench::nsPerCall(copies, [&] {
				ffOk = ff.once() && ffOk;
			}));
	}
	if (!ok) {
		std::fprintf(stderr, "gpuhandle's Vulkan -> GL import failed: %s\n",
			     ours.error.c_str());
		return 1;
	}
	const double value = gpuhandle::bench::statsOf(oursNs).median;
	const std::string how = "gpuhandle: importFrame Vulkan " + ours.detail +
				" -> GL, ZeroCopy (opaque fd), per frame import and release";
	if (gstOk) {
		const double full = gpuhandle::bench::statsOf(gstFullNs).median;
		const double upload = gpuhandle::bench::statsOf(gstUploadNs).median;
		BenchResult r;
		r.name = "vulkan-to-gl/gstreamer/NV12/1920x1080";
		r.baseline =
			"vulkandownload ! glupload (+ GL map): vulkanupload ! vulkandownload ! "
			"glupload minus vulkanupload alone";
		r.baselineValue = full > upload ? full - upload : full;
		r.value = value;
		r.targetRatio = 0.2;
		char note[160];
		std::snprintf(note, sizeof note,
			      "%s; whole pipeline %.0f ns, vulkanupload alone %.0f ns", how.c_str(),
			      full, upload);
		r.note = note;
		report.add(std::move(r));
	} else {
		std::printf("  GStreamer baseline not run: %s\n",
			    gstHere ? (gst.full->error + gst.uploadOnly->error).c_str()
				    : gst.error.c_str());
	}
	if (ffOk) {
		BenchResult r;
		r.name = "vulkan-to-gl/ffmpeg/NV12/1920x1080";
		r.baseline = "av_hwframe_transfer_data (hwdownload) + GL upload (glTexSubImage2D)";
		r.baselineValue = gpuhandle::bench::statsOf(ffNs).median;
		r.value = value;
		r.targetRatio = 0.2;
		r.note = how;
		report.add(std::move(r));
	} else {
		std::printf("  FFmpeg baseline not run: %s\n", ff.error.c_str());
	}
	const int status = report.finish();
	return (gstOk || !gstHere) && (ffOk || !ffHere) ? status : 1;
}
