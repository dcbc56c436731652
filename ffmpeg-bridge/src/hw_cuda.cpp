// CUDA AVFrames <-> Frames: data[] device pointers as a CudaPitched2D or one CudaBuffer per plane.
#include "hw_cuda_api.h"
#include "hw_frames.h"

#if GPUHANDLE_FFMPEG_CUDA
#include <gpuhandle/cuda_resources.h>

#include "runtime_library.h"

#include <array>
#include <climits>
#include <optional>
#endif

namespace gpuhandle::ffmpeg::detail {

#if GPUHANDLE_FFMPEG_CUDA

namespace {

constexpr const char *kLibrary = "libcuda.so.1";

struct LoadedApi {
	CudaApi api{};
	std::optional<Error> failure{};
};

LoadedApi loadApi()
{
	LoadedApi loaded;
	RuntimeLibrary library(kLibrary, "The CUDA driver", "driver");
	library.need("cuInit", loaded.api.init);
	library.need("cuCtxPushCurrent_v2", loaded.api.ctxPushCurrent);
	library.need("cuCtxPopCurrent_v2", loaded.api.ctxPopCurrent);
	library.need("cuCtxGetDevice", loaded.api.ctxGetDevice);
	library.need("cuDeviceGetUuid", loaded.api.deviceGetUuid);
	library.need("cuDeviceGetPCIBusId", loaded.api.deviceGetPciBusId);
	loaded.failure = library.failure();
	return loaded;
}

// The buffer of `frame` whose bytes hold device address `pointer` (FFmpeg's CUDA pools give
// AVBufferRefs whose data is the CUdeviceptr); null when none does.
const AVBufferRef *allocationOf(const AVFrame *frame, uint64_t pointer)
{
	for (const AVBufferRef *buffer : frame->buf) {
		if (!buffer)
			continue;
		const auto base = reinterpret_cast<uint64_t>(buffer->data);
		if (pointer >= base && pointer - base < buffer->size)
			return buffer;
	}
	return nullptr;
}

// The device pointer and CUcontext of a CUDA resource; WrongKind for any other kind.
Result<std::pair<uint64_t, void *>> cudaPointerOf(const Resource &resource)
{
	if (const CudaPitched2D *pitched = resource.get<CudaPitched2D>())
		return std::make_pair(pitched->desc().pointer, pitched->desc().context);
	Result<const CudaBuffer *> buffer = resource.as<CudaBuffer>();
	if (!buffer)
		return std::move(buffer).error();
	return std::make_pair((*buffer)->desc().pointer, (*buffer)->desc().context);
}

} // namespace

Result<const CudaApi *> cudaApi()
{
	static const LoadedApi loaded = loadApi();
	if (loaded.failure)
		return *loaded.failure;
	return &loaded.api;
}

Result<Frame> frameFromCudaAVFrame(const HwImport &in)
{
	const AVHWFramesContext &frames = *framesOf(in.frame);
	const auto *device = static_cast<const AVCUDADeviceContext *>(frames.device_ctx->hwctx);
	void *context = device->cuda_ctx;
	const PixelFormatInfo &info = **pixelFormatInfo(in.format);
	const uint32_t n = info.numPlanes;
	std::array<uint64_t, 4> pointers{};
	std::array<const AVBufferRef *, 4> holders{};
	bool oneAllocation = true;
	for (uint32_t p = 0; p < n; p++) {
		pointers[p] = reinterpret_cast<uint64_t>(in.frame->data[p]);
		if (!pointers[p])
			return Error::format(ErrorCode::NullHandle, "frame.data",
					     "Plane %u of the CUDA AVFrame has no device pointer.",
					     p);
		if (in.frame->linesize[p] <= 0)
			return Error::format(ErrorCode::NotSupported, "frame.linesize",
					     "Plane %u of the CUDA AVFrame has a linesize of %d.",
					     p, in.frame->linesize[p]);
		holders[p] = allocationOf(in.frame, pointers[p]);
		oneAllocation = oneAllocation && holders[p] && holders[p] == holders[0] &&
				in.frame->linesize[p] == in.frame->linesize[0] &&
				(p == 0 || pointers[p] > pointers[p - 1]);
	}
	if (oneAllocation) {
		// NV12, P010 from FFmpeg's pools: planes at offsets of one pitched allocation.
		CudaPitched2DDesc desc;
		const auto base = reinterpret_cast<uint64_t>(holders[0]->data);
		desc.pointer = base;
		desc.pitch = static_cast<uint32_t>(in.frame->linesize[0]);
		desc.numPlanes = n;
		for (uint32_t p = 0; p < n; p++)
			desc.planeOffsets[p] = pointers[p] - base;
		desc.size = holders[0]->size;
		desc.context = context;
		desc.anchor = in.anchor;
		Result<CudaPitched2D> pitched = CudaPitched2D::create(std::move(desc));
		if (!pitched)
			return std::move(pitched).error();
		return Frame::wrap(in.format, in.width, in.height, in.colorimetry,
				   Resource(std::move(*pitched)));
	}
	// Planes of different pitches (yuv420p) or allocations: one buffer per plane, as long as
	// its rows, bounded by the allocation that holds it when one does.
	FrameDesc desc;
	desc.format = in.format;
	desc.width = in.width;
	desc.height = in.height;
	desc.colorimetry = in.colorimetry;
	desc.numResources = desc.numPlanes = n;
	for (uint32_t p = 0; p < n; p++) {
		const auto stride = static_cast<uint32_t>(in.frame->linesize[p]);
		uint64_t size = uint64_t(stride) * info.planes[p].rows(in.height);
		if (holders[p]) {
			const uint64_t left = reinterpret_cast<uint64_t>(holders[p]->data) +
					      holders[p]->size - pointers[p];
			size = size < left ? size : left;
		}
		Result<CudaBuffer> buffer =
			CudaBuffer::create({ pointers[p], size, context, {}, in.anchor });
		if (!buffer)
			return std::move(buffer).error();
		desc.resources[p] = std::move(*buffer);
		desc.planes[p] = PlaneView{ p, 0, 0, stride };
	}
	return Frame::create(std::move(desc));
}

Status wrapCudaAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames, AVFrame *out)
{
	const Frame &frame = held->frame;
	const AVHWFramesContext &frames = *framesOf(hwFrames);
	const auto *device = static_cast<const AVCUDADeviceContext *>(frames.device_ctx->hwctx);
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		Result<std::pair<uint64_t, void *>> pointer =
			cudaPointerOf(frame.resource(view.resource));
		if (!pointer)
			return std::move(pointer).error();
		// Null: the context current where it was made, which the caller vouches for.
		if (pointer->second && pointer->second != static_cast<void *>(device->cuda_ctx))
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"Plane %u's device memory belongs to CUcontext %p, not "
				"to the frames context's %p.",
				p, pointer->second, static_cast<void *>(device->cuda_ctx));
		if (view.stride == 0 || view.stride > INT_MAX)
			return Error::format(ErrorCode::NotSupported, "frame",
					     "Plane %u of the CUDA frame has no usable pitch (%u).",
					     p, view.stride);
		out->data[p] = reinterpret_cast<uint8_t *>(pointer->first + view.offset);
		out->linesize[p] = static_cast<int>(view.stride);
	}
	// FFmpeg's CUDA frames keep their CUdeviceptr in buf[0]->data, as its pools do.
	const Resource &first = frame.resource(frame.plane(0).resource);
	const uint64_t base = cudaPointerOf(first)->first;
	out->buf[0] = bufferHolding(held, reinterpret_cast<uint8_t *>(base), first.byteSize());
	if (!out->buf[0])
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_create() failed.");
	out->format = AV_PIX_FMT_CUDA;
	out->hw_frames_ctx = av_buffer_ref(hwFrames);
	if (!out->hw_frames_ctx)
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	return {};
}

#else

Result<Frame> frameFromCudaAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame",
		     "libgpuhandle-ffmpeg was built without CUDA headers (the Toolkit's cuda.h "
		     "or ffnvcodec's dynlink_cuda.h), so CUDA frames cannot be described.");
}

Status wrapCudaAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "options.hwFrames",
		     "libgpuhandle-ffmpeg was built without CUDA headers (the Toolkit's cuda.h "
		     "or ffnvcodec's dynlink_cuda.h), so it makes no CUDA frames.");
}

#endif

} // namespace gpuhandle::ffmpeg::detail
