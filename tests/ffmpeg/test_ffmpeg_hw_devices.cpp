// CUDA and VA-API frames and devices both ways where a device exists (else each check says why it
// is skipped), CUDA descriptors over FFmpeg's own structures, and device-type errors.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>

#include <cstdint>
#include <cstdio>
#include <string>

extern "C" {
#include <libavutil/hwcontext.h>
}

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/skip_probe.h"
#include "av_frames.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

bool g_cuda = false;
bool g_vaapi = false;

// The hwctx of a device as FFmpeg's per-type struct, without its header (cuda.h, va.h): both
// begin with the native handle (AVCUDADeviceContext.cuda_ctx, AVVAAPIDeviceContext.display).
void *&firstHandleOf(AVBufferRef *device)
{
	return *static_cast<void **>(reinterpret_cast<AVHWDeviceContext *>(device->data)->hwctx);
}

bool contains(const Error &error, const char *text)
{
	return error.message().find(text) != std::string::npos;
}

// Device types gpuhandle has no Context for are named; nothing at all is NullHandle.
START_TEST(device_type_errors)
{
	ck_assert_error(contextFromHwDevice(nullptr), ErrorCode::NullHandle, "device");
	ck_assert_error(backendForHwDevice(nullptr), ErrorCode::NullHandle, "device");
	ck_assert_error(hwDeviceFromContext(nullptr), ErrorCode::NullHandle, "context");
	Result<AVBufferRef *> cpu = hwDeviceFromContext(Context::cpu());
	ck_assert_error(cpu, ErrorCode::NotSupported, "context");
	ck_assert_msg(contains(cpu.error(), "cpu"), "%s", cpu.error().message().c_str());

	AVBufferRef *drm = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_DRM);
	ck_assert_ptr_nonnull(drm);
	Result<ContextRef> fromDrm = contextFromHwDevice(drm);
	ck_assert_error(fromDrm, ErrorCode::NotSupported, "device");
	ck_assert_msg(contains(fromDrm.error(), "drm"), "%s", fromDrm.error().message().c_str());
	ck_assert_error(backendForHwDevice(drm), ErrorCode::NotSupported, "device");
	{
		HwDeviceLock noLock(drm); // a no-op outside Vulkan
	}
	av_buffer_unref(&drm);

	AVBufferRef *vdpau = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VDPAU);
	if (!vdpau) {
		std::printf("This libavutil has no VDPAU devices; that check is skipped.\n");
		return;
	}
	Result<ContextRef> fromVdpau = contextFromHwDevice(vdpau);
	ck_assert_error(fromVdpau, ErrorCode::NotSupported, "device");
	ck_assert_msg(contains(fromVdpau.error(), "vdpau"), "%s",
		      fromVdpau.error().message().c_str());
	av_buffer_unref(&vdpau);
}
END_TEST

void noFree(void *, uint8_t *)
{
	test::g_avBuffersFreed++;
}

// A CUDA frames context FFmpeg never initialised (that needs the driver): enough for
// frameFromAVFrame(), which reads its sw_format, size and CUcontext and dereferences no device
// pointer. FFmpeg frees it without calling the driver.
AVBufferRef *uninitialisedCudaFrames(AVPixelFormat format, int width, int height)
{
	AVBufferRef *device = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
	ck_assert_ptr_nonnull(device);
	firstHandleOf(device) = test::fakeHandle(0xc0de);
	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	av_buffer_unref(&device);
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
	ctx->format = AV_PIX_FMT_CUDA;
	ctx->sw_format = format;
	ctx->width = width;
	ctx->height = height;
	return frames;
}

// A CUDA AVFrame as FFmpeg's pools lay it out (av_image_fill_arrays over one allocation whose
// buf[0]->data is the CUdeviceptr), at made-up device addresses.
AVFrame *cudaAvFrame(AVBufferRef *frames, int width, int height, uint64_t base,
		     const int (&linesize)[3], const uint64_t (&offset)[3], int planes, size_t size)
{
	AVFrame *frame = av_frame_alloc();
	frame->format = AV_PIX_FMT_CUDA;
	frame->width = width;
	frame->height = height;
	frame->hw_frames_ctx = av_buffer_ref(frames);
	frame->buf[0] =
		av_buffer_create(reinterpret_cast<uint8_t *>(base), size, noFree, nullptr, 0);
	test::g_avBuffersMade++;
	for (int p = 0; p < planes; p++) {
		frame->data[p] = reinterpret_cast<uint8_t *>(base + offset[p]);
		frame->linesize[p] = linesize[p];
	}
	return frame;
}

// NV12 (one pitch) is one CudaPitched2D at the planes' offsets; YUV420P (half-pitch chroma) is
// one CudaBuffer per plane; both on the device's CUcontext; the AVFrame's buffer is held.
START_TEST(cuda_frames_become_cuda_resources)
{
	test::resetAvCounts();
	const uint64_t base = 0x7f0000000000ULL;
	{
		AVBufferRef *frames = uninitialisedCudaFrames(AV_PIX_FMT_NV12, 64, 32);
		AVFrame *av = cudaAvFrame(frames, 64, 32, base, { 256, 256, 0 }, { 0, 256 * 32, 0 },
					  2, 256 * 48);
		Result<Frame> frame = frameFromAVFrame(av);
		ck_assert_ok(frame);
		av_frame_free(&av);
		av_buffer_unref(&frames);
		ck_assert_int_eq(test::g_avBuffersFreed, 0);
		ck_assert(frame->format() == PixelFormat::NV12);
		ck_assert_uint_eq(frame->numResources(), 1);
		const CudaPitched2D *pitched = frame->resource(0).get<CudaPitched2D>();
		ck_assert_ptr_nonnull(pitched);
		ck_assert_uint_eq(pitched->desc().pointer, base);
		ck_assert_uint_eq(pitched->desc().pitch, 256);
		ck_assert_uint_eq(pitched->desc().numPlanes, 2);
		ck_assert_uint_eq(pitched->desc().planeOffsets[1], 256 * 32);
		ck_assert_uint_eq(pitched->desc().size, 256 * 48);
		ck_assert_ptr_eq(pitched->desc().context, test::fakeHandle(0xc0de));
		ck_assert_uint_eq(frame->plane(1).offset, 256 * 32);
		ck_assert_uint_eq(frame->plane(1).stride, 256);
	}
	ck_assert_int_eq(test::g_avBuffersFreed, 1);
	{
		AVBufferRef *frames = uninitialisedCudaFrames(AV_PIX_FMT_YUV420P, 64, 32);
		AVFrame *av = cudaAvFrame(frames, 64, 32, base, { 256, 128, 128 },
					  { 0, 256 * 32, 256 * 32 + 128 * 16 }, 3, 256 * 48);
		Result<Frame> frame = frameFromAVFrame(av);
		ck_assert_ok(frame);
		av_frame_free(&av);
		av_buffer_unref(&frames);
		ck_assert_uint_eq(frame->numResources(), 3);
		for (uint32_t p = 0; p < 3; p++) {
			const CudaBuffer *buffer = frame->resource(p).get<CudaBuffer>();
			ck_assert_ptr_nonnull(buffer);
			ck_assert_uint_eq(frame->plane(p).resource, p);
			ck_assert_uint_eq(frame->plane(p).stride, p == 0 ? 256 : 128);
			ck_assert_uint_eq(buffer->desc().size, p == 0 ? 256 * 32 : 128 * 16);
			ck_assert_ptr_eq(buffer->desc().context, test::fakeHandle(0xc0de));
		}
		ck_assert_uint_eq(frame->resource(2).get<CudaBuffer>()->desc().pointer,
				  base + 256 * 32 + 128 * 16);
	}
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
	{
		// A missing plane pointer is named.
		AVBufferRef *frames = uninitialisedCudaFrames(AV_PIX_FMT_NV12, 64, 32);
		AVFrame *av = cudaAvFrame(frames, 64, 32, base, { 256, 256, 0 }, { 0, 256 * 32, 0 },
					  2, 256 * 48);
		av->data[1] = nullptr;
		ck_assert_error(frameFromAVFrame(av), ErrorCode::NullHandle, "frame.data");
		av_frame_free(&av);
		av_buffer_unref(&frames);
	}
}
END_TEST

// On a real CUDA device: FFmpeg uploads read back through the backend inside FFmpeg's device,
// backend frames downloaded by FFmpeg, and the devices both ways.
START_TEST(cuda_frames_and_devices_both_ways)
{
	AVBufferRef *device = nullptr;
	ck_assert_int_ge(
		av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_CUDA, nullptr, nullptr, 0), 0);
	Result<ContextRef> context = contextFromHwDevice(device);
	ck_assert_ok(context);
	const CudaContext &cuda = *(*context)->cuda().value();
	ck_assert_ptr_eq(cuda.context, firstHandleOf(device));
	ck_assert_int_ge(cuda.ordinal, 0);
	ck_assert(cuda.uuid.has_value());
	Result<BackendRef> backend = backendForHwDevice(device);
	ck_assert_ok(backend);
	Result<AVBufferRef *> inside = hwDeviceFromContext((*backend)->context());
	ck_assert_ok(inside);
	ck_assert_ptr_eq(firstHandleOf(*inside), cuda.context);
	av_buffer_unref(&*inside);

	uint32_t seed = 60;
	for (PixelFormat format : { PixelFormat::NV12, PixelFormat::YUV420P }) {
		AVBufferRef *frames = av_hwframe_ctx_alloc(device);
		auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
		ctx->format = AV_PIX_FMT_CUDA;
		ctx->sw_format = toAvPixelFormat(format).value();
		ctx->width = 320;
		ctx->height = 240;
		ck_assert_int_ge(av_hwframe_ctx_init(frames), 0);
		// Up through FFmpeg, read through gpuhandle.
		AVFrame *sw = test::countedAvFrame(ctx->sw_format, 320, 240);
		Frame like = frameFromAVFrame(sw).value();
		test::fillAvFrame(sw, like, seed);
		AVFrame *hw = av_frame_alloc();
		ck_assert_int_ge(av_hwframe_get_buffer(frames, hw, 0), 0);
		ck_assert_int_ge(av_hwframe_transfer_data(hw, sw, 0), 0);
		Result<Frame> frame = frameFromAVFrame(hw);
		ck_assert_ok(frame);
		av_frame_free(&hw);
		Result<ImportResult> direct = importFrame(*frame, **backend);
		ck_assert_ok(direct);
		test::checkPatternOk(**backend, direct->frame, seed);
		// Down: a backend frame into FFmpeg's frames context.
		Result<Frame> own = (*backend)->allocate(
			{ format, 320, 240, {}, FrameStorage::Buffer, 0, false });
		ck_assert_ok(own);
		test::writePatternOk(**backend, *own, seed + 1);
		AvFrameOptions options;
		options.hwFrames = frames;
		options.source = *backend;
		Result<AVFrame *> wrapped = avFrameFromFrame(*own, options);
		ck_assert_ok(wrapped);
		ck_assert_int_eq((*wrapped)->format, AV_PIX_FMT_CUDA);
		AVFrame *down = av_frame_alloc();
		ck_assert_int_ge(av_hwframe_transfer_data(down, *wrapped, 0), 0);
		const std::string checked = test::checkAvFrame(down, *own, seed + 1);
		ck_assert_msg(checked.empty(), "%s", checked.c_str());
		av_frame_free(&down);
		av_frame_free(&*wrapped);
		av_frame_free(&sw);
		av_buffer_unref(&frames);
		seed += 2;
	}
	av_buffer_unref(&device);
}
END_TEST

// On a real VA-API device: the display both ways; an uploaded surface becomes a DmaBuf (its
// bytes compared where the driver's modifier is linear).
START_TEST(vaapi_frames_and_devices_both_ways)
{
	AVBufferRef *device = nullptr;
	ck_assert_int_ge(
		av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, nullptr, nullptr, 0), 0);
	Result<ContextRef> context = contextFromHwDevice(device);
	ck_assert_ok(context);
	ck_assert_ptr_eq((*context)->vaapi().value()->display, firstHandleOf(device));
	Result<AVBufferRef *> inside = hwDeviceFromContext(*context);
	ck_assert_ok(inside);
	ck_assert_ptr_eq(firstHandleOf(*inside), firstHandleOf(device));
	av_buffer_unref(&*inside);

	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
	ctx->format = AV_PIX_FMT_VAAPI;
	ctx->sw_format = AV_PIX_FMT_NV12;
	ctx->width = 320;
	ctx->height = 240;
	ck_assert_int_ge(av_hwframe_ctx_init(frames), 0);
	AVFrame *sw = test::countedAvFrame(AV_PIX_FMT_NV12, 320, 240);
	Frame like = frameFromAVFrame(sw).value();
	test::fillAvFrame(sw, like, 70);
	AVFrame *hw = av_frame_alloc();
	ck_assert_int_ge(av_hwframe_get_buffer(frames, hw, 0), 0);
	ck_assert_int_ge(av_hwframe_transfer_data(hw, sw, 0), 0);
	Result<Frame> frame = frameFromAVFrame(hw);
	av_frame_free(&hw);
	if (!frame && frame.error().code() == ErrorCode::Backend) {
		std::printf("The VA-API driver does not export surfaces (%s); the frame check is "
			    "skipped.\n",
			    frame.error().message().c_str());
	} else {
		ck_assert_ok(frame);
		const DmaBuf *dmaBuf = frame->resource(0).get<DmaBuf>();
		ck_assert_ptr_nonnull(dmaBuf);
		ck_assert(frame->format() == PixelFormat::NV12);
		if (dmaBuf->desc().modifier == kDrmModifierLinear) {
			CpuMapping mapping = mapFrame(*frame, MapAccess::Read).value();
			test::checkPatternOk(mapping, *frame, 70);
			ck_assert_ok(mapping.unmap());
		} else {
			std::printf("The surface's modifier is 0x%llx (not linear): bytes not "
				    "compared.\n",
				    static_cast<unsigned long long>(dmaBuf->desc().modifier));
		}
	}
	av_frame_free(&sw);
	av_buffer_unref(&frames);
	av_buffer_unref(&device);
}
END_TEST

std::string probeDevice(AVHWDeviceType type)
{
	AVBufferRef *device = nullptr;
	const int ret = av_hwdevice_ctx_create(&device, type, nullptr, nullptr, 0);
	if (ret < 0)
		return std::string("FFmpeg opened no ") + av_hwdevice_get_type_name(type) +
		       " device (av_hwdevice_ctx_create: " + std::to_string(ret) + ")";
	av_buffer_unref(&device);
	return {};
}

} // namespace

int main()
{
	// In children, so that no driver thread exists when Check forks each test; each prints
	// why its checks are skipped.
	g_cuda = test::probeInChild([] { return probeDevice(AV_HWDEVICE_TYPE_CUDA); }) == 0;
	g_vaapi = test::probeInChild([] { return probeDevice(AV_HWDEVICE_TYPE_VAAPI); }) == 0;
	Suite *suite = suite_create("ffmpeg-hw-devices");
	TCase *tc = tcase_create("devices");
	tcase_set_timeout(tc, 100);
	tcase_add_test(tc, device_type_errors);
	tcase_add_test(tc, cuda_frames_become_cuda_resources);
	if (g_cuda)
		tcase_add_test(tc, cuda_frames_and_devices_both_ways);
	else
		std::printf("The CUDA device checks are skipped (the reason is above).\n");
	if (g_vaapi)
		tcase_add_test(tc, vaapi_frames_and_devices_both_ways);
	else
		std::printf("The VA-API device checks are skipped (the reason is above).\n");
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
