// OPENCL AVFrames on PoCL: FFmpeg uploads read through gpuhandle, gpuhandle frames downloaded by
// FFmpeg, and devices both ways (FFmpeg inside gpuhandle's context, gpuhandle inside FFmpeg's).
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>

#include <cstdio>
#include <string>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_opencl.h>
}

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/skip_probe.h"
#include "av_frames.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

struct Case {
	PixelFormat format;
	int width;
	int height;
};
constexpr Case kCases[] = { { PixelFormat::YUV420P, 64, 48 },
			    { PixelFormat::NV12, 33, 18 },
			    { PixelFormat::YUV420P, 1920, 1080 } };

// An OPENCL frames context of `format` on `device`; null (and why printed) when FFmpeg cannot
// make images of its planes on this device.
AVBufferRef *openClFrames(AVBufferRef *device, PixelFormat format, int width, int height)
{
	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	ck_assert_ptr_nonnull(frames);
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
	ctx->format = AV_PIX_FMT_OPENCL;
	ctx->sw_format = toAvPixelFormat(format).value();
	ctx->width = width;
	ctx->height = height;
	int ret = av_hwframe_ctx_init(frames);
	if (ret >= 0) {
		// Its pool makes the images only now: the device may take no image of a plane.
		AVFrame *probe = av_frame_alloc();
		ret = av_hwframe_get_buffer(frames, probe, 0);
		av_frame_free(&probe);
	}
	if (ret < 0) {
		std::printf("FFmpeg makes no OPENCL %s %dx%d frames here (%d); case not run\n",
			    pixelFormatName(format), width, height, ret);
		av_buffer_unref(&frames);
	}
	return frames;
}

AVBufferRef *ffmpegDevice()
{
	AVBufferRef *device = nullptr;
	ck_assert_int_ge(
		av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_OPENCL, nullptr, nullptr, 0), 0);
	return device;
}

BackendRef openOpenCl()
{
	Result<BackendRef> backend = openBackend(BackendKind::OpenCl);
	ck_assert_ok(backend);
	return *backend;
}

// FFmpeg uploads a software frame (av_hwframe_transfer_data); the OPENCL AVFrame becomes one
// OpenClMem per plane, which the device's backend and the planner (into host memory) read back
// with the uploaded bytes, after the AVFrame is gone.
START_TEST(ffmpeg_uploads_read_back_through_gpuhandle)
{
	test::resetAvCounts();
	AVBufferRef *device = ffmpegDevice();
	Result<BackendRef> backend = backendForHwDevice(device);
	ck_assert_ok(backend);
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	uint32_t seed = 5;
	for (const Case &c : kCases) {
		AVBufferRef *frames = openClFrames(device, c.format, c.width, c.height);
		if (!frames)
			continue;
		AVFrame *sw =
			test::countedAvFrame(toAvPixelFormat(c.format).value(), c.width, c.height);
		ck_assert_ptr_nonnull(sw);
		Frame like = frameFromAVFrame(sw).value();
		test::fillAvFrame(sw, like, seed);
		AVFrame *hw = av_frame_alloc();
		ck_assert_int_ge(av_hwframe_get_buffer(frames, hw, 0), 0);
		ck_assert_int_ge(av_hwframe_transfer_data(hw, sw, 0), 0);
		Result<Frame> frame = frameFromAVFrame(hw);
		ck_assert_ok(frame);
		av_frame_free(&hw);
		av_buffer_unref(&frames);
		ck_assert(frame->format() == c.format);
		ck_assert_uint_eq(frame->numResources(), frame->numPlanes());
		for (uint32_t p = 0; p < frame->numResources(); p++)
			ck_assert(frame->resource(p).kind() == ResourceKind::OpenClMem);

		// Direct into the backend on FFmpeg's device, then mapped.
		Result<ImportResult> direct = importFrame(*frame, **backend);
		ck_assert_ok(direct);
		ck_assert(direct->path == ExecutionPath::zeroCopy());
		test::checkPatternOk(**backend, direct->frame, seed);
		// Through the planner into host memory, from the backend's frame.
		ImportOptions options;
		options.source = *backend;
		Result<ImportResult> host = importFrame(direct->frame, **cpu, options);
		ck_assert_ok(host);
		CpuMapping mapping = mapFrame(host->frame, MapAccess::Read).value();
		test::checkPatternOk(mapping, *frame, seed);
		ck_assert_ok(mapping.unmap());
		av_frame_free(&sw);
		seed++;
	}
	av_buffer_unref(&device);
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}
END_TEST

// A gpuhandle OpenCL frame (images, or a buffer copied into images on the device) becomes an
// OPENCL AVFrame of a frames context on FFmpeg's device made inside the backend's context;
// FFmpeg downloads the bytes; the release gate opens when FFmpeg frees the frame.
START_TEST(gpuhandle_frames_download_through_ffmpeg)
{
	test::resetAvCounts();
	BackendRef backend = openOpenCl();
	Result<AVBufferRef *> device = hwDeviceFromContext(backend->context());
	ck_assert_ok(device);
	uint32_t seed = 40;
	for (const Case &c : kCases) {
		for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::Buffer }) {
			// A buffer reaches FFmpeg as images too (copied on the device).
			if (!backend->supportsFormat(c.format, storage) ||
			    !backend->supportsFormat(c.format, FrameStorage::OptimalImage)) {
				std::printf("opencl: no %s %s frames; case not run\n",
					    pixelFormatName(c.format), frameStorageName(storage));
				continue;
			}
			AVBufferRef *frames = openClFrames(*device, c.format, c.width, c.height);
			if (!frames)
				continue;
			Result<Frame> frame = backend->allocate({ c.format,
								  static_cast<uint32_t>(c.width),
								  static_cast<uint32_t>(c.height),
								  {},
								  storage,
								  0,
								  false });
			ck_assert_ok(frame);
			test::writePatternOk(*backend, *frame, seed);
			ReleaseGate gate = ReleaseGate::create().value();
			frame->setRelease(gate);
			AvFrameOptions options;
			options.hwFrames = frames;
			options.source = backend;
			Result<AVFrame *> hw = avFrameFromFrame(*frame, options);
			ck_assert_ok(hw);
			ck_assert_int_eq((*hw)->format, AV_PIX_FMT_OPENCL);
			ck_assert_ptr_nonnull((*hw)->hw_frames_ctx);
			if (storage == FrameStorage::OptimalImage) {
				// Its own images, not a copy.
				ck_assert_ptr_eq((*hw)->data[0],
						 frame->resource(0).get<OpenClMem>()->desc().mem);
				ck_assert(!gate.isSignaled());
			}
			AVFrame *sw = av_frame_alloc();
			ck_assert_int_ge(av_hwframe_transfer_data(sw, *hw, 0), 0);
			ck_assert_int_eq(sw->format, toAvPixelFormat(c.format).value());
			const std::string checked = test::checkAvFrame(sw, *frame, seed);
			ck_assert_msg(checked.empty(), "%s %s: %s", pixelFormatName(c.format),
				      frameStorageName(storage), checked.c_str());
			AVFrame *freed = *hw;
			av_frame_free(&freed);
			ck_assert(gate.isSignaled());
			av_frame_free(&sw);
			av_buffer_unref(&frames);
			seed++;
		}
	}
	av_buffer_unref(&*device);
}
END_TEST

// FFmpeg's device inside gpuhandle's context shares its cl_context and device; gpuhandle's
// Context of an FFmpeg device names the same ones, and the device id matches; one backend per
// device is shared.
START_TEST(devices_both_ways)
{
	BackendRef backend = openOpenCl();
	const OpenClContext &own = *backend->context()->opencl().value();
	Result<AVBufferRef *> inside = hwDeviceFromContext(backend->context());
	ck_assert_ok(inside);
	const auto *hwctx = static_cast<const AVOpenCLDeviceContext *>(
		reinterpret_cast<const AVHWDeviceContext *>((*inside)->data)->hwctx);
	ck_assert_ptr_eq(hwctx->context, own.context);
	ck_assert_ptr_eq(hwctx->device_id, own.device);
	ck_assert_ptr_eq(hwctx->command_queue, own.queue);

	Result<ContextRef> back = contextFromHwDevice(*inside);
	ck_assert_ok(back);
	ck_assert((*back)->backend() == BackendKind::OpenCl);
	const OpenClContext &cl = *(*back)->opencl().value();
	ck_assert_ptr_eq(cl.context, own.context);
	ck_assert_ptr_eq(cl.device, own.device);
	ck_assert_ptr_nonnull(cl.queue);
	ck_assert((*back)->deviceId() == backend->context()->deviceId());

	Result<BackendRef> shared = backendForHwDevice(*inside);
	ck_assert_ok(shared);
	ck_assert((*shared)->kind() == BackendKind::OpenCl);
	ck_assert(sameDevice((*shared)->deviceId(), backend->deviceId()) != DeviceMatch::Different);
	Result<BackendRef> again = backendForHwDevice(*inside);
	ck_assert_ok(again);
	ck_assert_ptr_eq(again->get(), shared->get());
	av_buffer_unref(&*inside);

	// A device FFmpeg made itself: gpuhandle works inside it.
	AVBufferRef *made = ffmpegDevice();
	Result<ContextRef> theirs = contextFromHwDevice(made);
	ck_assert_ok(theirs);
	const auto *madeCtx = static_cast<const AVOpenCLDeviceContext *>(
		reinterpret_cast<const AVHWDeviceContext *>(made->data)->hwctx);
	ck_assert_ptr_eq((*theirs)->opencl().value()->context, madeCtx->context);
	Result<BackendRef> inTheirs = backendForHwDevice(made);
	ck_assert_ok(inTheirs);
	ck_assert(sameDevice((*inTheirs)->deviceId(), backend->deviceId()) !=
		  DeviceMatch::Different);
	// The Context holds the device: it outlives the caller's reference.
	av_buffer_unref(&made);
	ck_assert_ptr_nonnull((*theirs)->opencl().value()->context);
}
END_TEST

std::string probe()
{
	Result<BackendRef> backend = openBackend(BackendKind::OpenCl);
	if (!backend)
		return "the OpenCL backend did not open: " + backend.error().message();
	AVBufferRef *device = nullptr;
	const int ret =
		av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_OPENCL, nullptr, nullptr, 0);
	if (ret < 0)
		return "FFmpeg made no OpenCL device (av_hwdevice_ctx_create: " +
		       std::to_string(ret) + "; libavutil built without OpenCL?)";
	av_buffer_unref(&device);
	return {};
}

} // namespace

int main()
{
	// In a child, so that no driver thread exists when Check forks each test.
	if (const int probed = test::probeInChild(probe); probed != 0)
		return probed;
	Suite *suite = suite_create("ffmpeg-opencl");
	TCase *tc = tcase_create("opencl");
	tcase_set_timeout(tc, 150);
	tcase_add_test(tc, ffmpeg_uploads_read_back_through_gpuhandle);
	tcase_add_test(tc, gpuhandle_frames_download_through_ffmpeg);
	tcase_add_test(tc, devices_both_ways);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
