// CUDA, OpenCL and VA-API AVHWDeviceContexts <-> gpuhandle Contexts over the same native objects.
#include "hw_cuda_api.h"
#include "hw_device_internal.h"
#include "hw_opencl_api.h"

#include <cstring>
#include <optional>
#include <string>

#if GPUHANDLE_FFMPEG_HAVE_OPENCL_H
extern "C" {
#include <libavutil/hwcontext_opencl.h>
}
#endif
#if GPUHANDLE_FFMPEG_HAVE_VA_H
extern "C" {
#include <libavutil/hwcontext_vaapi.h>
}
#endif

namespace gpuhandle::ffmpeg::detail {

namespace {

[[maybe_unused]] const AVHWDeviceContext *deviceOf(const AVBufferRef *device)
{
	return reinterpret_cast<const AVHWDeviceContext *>(device->data);
}

[[maybe_unused]] Error builtWithout(const char *field, const char *api, const char *header)
{
	return Error::format(ErrorCode::NotSupported, field,
			     "libgpuhandle-ffmpeg was built without %s headers (%s), so it has no "
			     "%s devices.",
			     api, header, api);
}

[[maybe_unused]] Error allocFailed()
{
	return Error(ErrorCode::OutOfMemory, "context", "av_hwdevice_ctx_alloc() failed.");
}

} // namespace

// CUDA --------------------------------------------------------------------------------------

#if GPUHANDLE_FFMPEG_CUDA

namespace {

// The device ordinal, UUID and PCI address of `context`'s device (cuCtxGetDevice with the
// context pushed on this thread, and popped again).
Status describeCudaDevice(CUcontext context, CudaContext &out)
{
	Result<const CudaApi *> loaded = cudaApi();
	if (!loaded)
		return std::move(loaded).error();
	const CudaApi &cu = **loaded;
	CUresult result = cu.init(0);
	if (result == CUDA_SUCCESS)
		result = cu.ctxPushCurrent(context);
	if (result != CUDA_SUCCESS)
		return Error::format(ErrorCode::Backend, "device",
				     "The FFmpeg CUDA device's CUcontext could not be made current "
				     "(CUresult %d).",
				     static_cast<int>(result));
	CUdevice device = 0;
	result = cu.ctxGetDevice(&device);
	CUcontext popped = nullptr;
	(void)cu.ctxPopCurrent(&popped);
	if (result != CUDA_SUCCESS)
		return Error::format(
			ErrorCode::Backend, "device",
			"cuCtxGetDevice failed on the FFmpeg CUDA device (CUresult %d).",
			static_cast<int>(result));
	// A CUdevice is its ordinal.
	out.ordinal = static_cast<int32_t>(device);
	CUuuid uuid{};
	if (cu.deviceGetUuid(&uuid, device) == CUDA_SUCCESS) {
		Uuid bytes{};
		std::memcpy(bytes.data(), uuid.bytes, bytes.size());
		out.uuid = bytes;
	}
	char bus[32] = {};
	if (cu.deviceGetPciBusId(bus, sizeof bus, device) == CUDA_SUCCESS) {
		if (Result<PciBusId> parsed = PciBusId::parse(bus))
			out.pciBusId = *parsed;
	}
	return {};
}

} // namespace

Result<AVBufferRef *> cudaDeviceFromContext(const ContextRef &context)
{
	Result<const CudaContext *> cuda = context->cuda();
	if (!cuda)
		return std::move(cuda).error();
	AVBufferRef *device = allocHwDeviceHolding(AV_HWDEVICE_TYPE_CUDA, context);
	if (!device)
		return allocFailed();
	auto *hwctx = static_cast<AVCUDADeviceContext *>(
		reinterpret_cast<AVHWDeviceContext *>(device->data)->hwctx);
	hwctx->cuda_ctx = static_cast<CUcontext>((*cuda)->context);
	hwctx->stream = static_cast<CUstream>((*cuda)->stream);
	if (Status init = initHwDevice(device, "CUDA context"); !init)
		return std::move(init).error();
	return device;
}

Result<ContextRef> contextFromCudaDevice(const AVBufferRef *device)
{
	const auto *hwctx = static_cast<const AVCUDADeviceContext *>(deviceOf(device)->hwctx);
	CudaContext cuda;
	cuda.context = hwctx->cuda_ctx;
	cuda.stream = hwctx->stream;
	if (Status described = describeCudaDevice(hwctx->cuda_ctx, cuda); !described)
		return std::move(described).error();
	KeepAliveRef anchor = holdAvBuffer(device);
	if (!anchor)
		return Error(ErrorCode::OutOfMemory, "device", "av_buffer_ref() failed.");
	return Context::create(std::move(cuda), std::move(anchor));
}

#else

Result<AVBufferRef *> cudaDeviceFromContext(const ContextRef &)
{
	return builtWithout("context", "CUDA", "cuda.h or ffnvcodec's dynlink_cuda.h");
}

Result<ContextRef> contextFromCudaDevice(const AVBufferRef *)
{
	return builtWithout("device", "CUDA", "cuda.h or ffnvcodec's dynlink_cuda.h");
}

#endif

// OpenCL ------------------------------------------------------------------------------------

#if GPUHANDLE_FFMPEG_HAVE_OPENCL_H

namespace {

// The anchor of a Context made from an FFmpeg OpenCL device: the device (which holds the
// cl_context) and the command queue made for the Context.
class OpenClDeviceAnchor final : public KeepAlive
{
public:
	OpenClDeviceAnchor(KeepAliveRef device, const OpenClApi &api, cl_command_queue queue)
		: device_(std::move(device)), api_(api), queue_(queue)
	{
	}
	OpenClDeviceAnchor(const OpenClDeviceAnchor &) = delete;
	OpenClDeviceAnchor &operator=(const OpenClDeviceAnchor &) = delete;
	~OpenClDeviceAnchor() override { api_.releaseCommandQueue(queue_); }

private:
	KeepAliveRef device_;
	const OpenClApi &api_;
	cl_command_queue queue_;
};

// CL_DEVICE_UUID_KHR where the device lists cl_khr_device_uuid.
std::optional<Uuid> openClDeviceUuid(const OpenClApi &api, cl_device_id device)
{
	size_t size = 0;
	if (api.getDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS)
		return std::nullopt;
	std::string extensions(size, '\0');
	if (api.getDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr) !=
		    CL_SUCCESS ||
	    extensions.find("cl_khr_device_uuid") == std::string::npos)
		return std::nullopt;
	// CL_DEVICE_UUID_KHR (cl_ext.h), 16 bytes: spelled out for headers older than the query.
	constexpr cl_device_info kDeviceUuid = 0x106A;
	Uuid uuid{};
	if (api.getDeviceInfo(device, kDeviceUuid, uuid.size(), uuid.data(), nullptr) != CL_SUCCESS)
		return std::nullopt;
	return uuid;
}

} // namespace

Result<AVBufferRef *> openClDeviceFromContext(const ContextRef &context)
{
	Result<const OpenClContext *> cl = context->opencl();
	if (!cl)
		return std::move(cl).error();
	AVBufferRef *device = allocHwDeviceHolding(AV_HWDEVICE_TYPE_OPENCL, context);
	if (!device)
		return allocFailed();
	auto *hwctx = static_cast<AVOpenCLDeviceContext *>(
		reinterpret_cast<AVHWDeviceContext *>(device->data)->hwctx);
	hwctx->device_id = static_cast<cl_device_id>((*cl)->device);
	hwctx->context = static_cast<cl_context>((*cl)->context);
	// FFmpeg retains the queue it is given (and releases it when the device goes); the
	// cl_context is the Context's, which the device holds.
	hwctx->command_queue = static_cast<cl_command_queue>((*cl)->queue);
	if (Status init = initHwDevice(device, "OpenCL context"); !init)
		return std::move(init).error();
	return device;
}

Result<ContextRef> contextFromOpenClDevice(const AVBufferRef *device)
{
	Result<const OpenClApi *> api = openClApi();
	if (!api)
		return std::move(api).error();
	const auto *hwctx = static_cast<const AVOpenCLDeviceContext *>(deviceOf(device)->hwctx);
	KeepAliveRef held = holdAvBuffer(device);
	if (!held)
		return Error(ErrorCode::OutOfMemory, "device", "av_buffer_ref() failed.");
	// A queue of the Context's own, in order: FFmpeg's may be private, and gpuhandle's work
	// should not be serialised behind FFmpeg's filters.
	cl_int error = CL_SUCCESS;
	cl_command_queue queue =
		(*api)->createCommandQueue(hwctx->context, hwctx->device_id, 0, &error);
	if (!queue)
		return Error::format(ErrorCode::Backend, "device",
				     "clCreateCommandQueue on the FFmpeg OpenCL device failed "
				     "with %d.",
				     error);
	auto anchor = std::make_shared<OpenClDeviceAnchor>(std::move(held), **api, queue);
	OpenClContext cl;
	cl.context = hwctx->context;
	cl.queue = queue;
	cl.device = hwctx->device_id;
	cl.deviceUuid = openClDeviceUuid(**api, hwctx->device_id);
	return Context::create(std::move(cl), std::move(anchor));
}

#else

Result<AVBufferRef *> openClDeviceFromContext(const ContextRef &)
{
	return builtWithout("context", "OpenCL", "CL/cl.h");
}

Result<ContextRef> contextFromOpenClDevice(const AVBufferRef *)
{
	return builtWithout("device", "OpenCL", "CL/cl.h");
}

#endif

// VA-API ------------------------------------------------------------------------------------

#if GPUHANDLE_FFMPEG_HAVE_VA_H

Result<AVBufferRef *> vaapiDeviceFromContext(const ContextRef &context)
{
	Result<const VaApiContext *> va = context->vaapi();
	if (!va)
		return std::move(va).error();
	AVBufferRef *device = allocHwDeviceHolding(AV_HWDEVICE_TYPE_VAAPI, context);
	if (!device)
		return allocFailed();
	auto *hwctx = static_cast<AVVAAPIDeviceContext *>(
		reinterpret_cast<AVHWDeviceContext *>(device->data)->hwctx);
	// FFmpeg terminates only displays it opened itself: this one stays the Context's.
	hwctx->display = static_cast<VADisplay>((*va)->display);
	if (Status init = initHwDevice(device, "VA display"); !init)
		return std::move(init).error();
	return device;
}

Result<ContextRef> contextFromVaapiDevice(const AVBufferRef *device)
{
	const auto *hwctx = static_cast<const AVVAAPIDeviceContext *>(deviceOf(device)->hwctx);
	KeepAliveRef anchor = holdAvBuffer(device);
	if (!anchor)
		return Error(ErrorCode::OutOfMemory, "device", "av_buffer_ref() failed.");
	VaApiContext va;
	va.display = hwctx->display;
	// The render node stays unknown: FFmpeg keeps the DRM fd it opened private, and a
	// VADisplay does not say which node it was opened on.
	return Context::create(std::move(va), std::move(anchor));
}

#else

Result<AVBufferRef *> vaapiDeviceFromContext(const ContextRef &)
{
	return builtWithout("context", "VA-API", "va/va.h");
}

Result<ContextRef> contextFromVaapiDevice(const AVBufferRef *)
{
	return builtWithout("device", "VA-API", "va/va.h");
}

#endif

} // namespace gpuhandle::ffmpeg::detail
