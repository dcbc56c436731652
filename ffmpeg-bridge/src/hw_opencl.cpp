// OPENCL AVFrames <-> Frames: one OpenClMem per plane over the cl_mem images in data[].
#include "hw_frames.h"
#include "hw_opencl_api.h"

#if GPUHANDLE_FFMPEG_HAVE_OPENCL_H
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/opencl_resources.h>

#include "runtime_library.h"

#include <memory>
#include <optional>

extern "C" {
#include <libavutil/hwcontext_opencl.h>
}
#endif

namespace gpuhandle::ffmpeg::detail {

#if GPUHANDLE_FFMPEG_HAVE_OPENCL_H

namespace {

constexpr const char *kLibrary = "libOpenCL.so.1";

struct LoadedApi {
	OpenClApi api{};
	std::optional<Error> failure{};
};

LoadedApi loadApi()
{
	LoadedApi loaded;
	RuntimeLibrary library(kLibrary, "The OpenCL ICD loader", "opencl");
	library.need("clGetMemObjectInfo", loaded.api.getMemObjectInfo);
	library.need("clGetDeviceInfo", loaded.api.getDeviceInfo);
	library.need("clCreateCommandQueue", loaded.api.createCommandQueue);
	library.need("clReleaseCommandQueue", loaded.api.releaseCommandQueue);
	loaded.failure = library.failure();
	return loaded;
}

// What an imported frame's resources hold: the AVFrame's buffers and, when FFmpeg's own queue
// is hidden, the backend whose queue the resources name.
class OpenClFrameAnchor final : public KeepAlive
{
public:
	OpenClFrameAnchor(std::shared_ptr<AvBuffersAnchor> buffers, BackendRef backend)
		: buffers_(std::move(buffers)), backend_(std::move(backend))
	{
	}

private:
	std::shared_ptr<AvBuffersAnchor> buffers_;
	BackendRef backend_;
};

// The queue that last wrote the frame's images: the frames context's, else the device's. A
// device FFmpeg created keeps its queue private: then the queue of backendForHwDevice(),
// which `backend` receives (FFmpeg finishes its own work before handing frames on).
Result<cl_command_queue> queueOf(const AVHWFramesContext &frames, BackendRef &backend)
{
	const auto *framesCtx = static_cast<const AVOpenCLFramesContext *>(frames.hwctx);
	if (framesCtx && framesCtx->command_queue)
		return framesCtx->command_queue;
	const auto *device = static_cast<const AVOpenCLDeviceContext *>(frames.device_ctx->hwctx);
	if (device->command_queue)
		return device->command_queue;
	Result<BackendRef> opened = backendForHwDevice(frames.device_ref);
	if (!opened)
		return std::move(opened).error();
	Result<const OpenClContext *> context = (*opened)->context()->opencl();
	if (!context)
		return std::move(context).error();
	backend = std::move(*opened);
	return static_cast<cl_command_queue>((*context)->queue);
}

// The images FFmpeg's transfers need: `frame`'s buffers copied on the device into images of
// the device's backend (a frame of buffer storage, say). Errors: those of allocate and copy.
Result<Frame> imagesOf(const Frame &frame, const AVHWFramesContext &frames)
{
	Result<BackendRef> backend = backendForHwDevice(frames.device_ref);
	if (!backend)
		return std::move(backend).error();
	AllocateRequest request;
	request.format = frame.format();
	request.width = frame.width();
	request.height = frame.height();
	request.colorimetry = frame.colorimetry();
	request.storage = FrameStorage::OptimalImage;
	request.exportable = false;
	Result<Frame> images = (*backend)->allocate(request);
	if (!images)
		return std::move(images).error();
	// copyFrame takes frames of the backend object: another one on the same cl_context (an
	// earlier backendForHwDevice() since freed) imported this frame.
	Result<Frame> source = (*backend)->holds(frame)
				       ? Result<Frame>(frame)
				       : (*backend)->importFrame(frame, ImportRoute::Direct);
	if (!source)
		return std::move(source).error();
	if (Status copied = (*backend)->copyFrame(*images, *source, kDefaultWaitTimeout); !copied)
		return std::move(copied).error();
	return images;
}

// True when `frame` is one 2D image per plane in `context`, false when it is not made of images
// (buffers), an error when it is not OpenCL memory of that context.
Result<bool> imagesInContext(const OpenClApi &api, const Frame &frame, cl_context context)
{
	if (frame.numResources() != frame.numPlanes())
		return false;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		Result<const OpenClMem *> mem = frame.resource(view.resource).as<OpenClMem>();
		if (!mem)
			return std::move(mem).error();
		if (view.resource != p || view.offset != 0)
			return false;
		auto clMem = static_cast<cl_mem>((*mem)->desc().mem);
		cl_mem_object_type type = 0;
		cl_context memContext = nullptr;
		cl_int error =
			api.getMemObjectInfo(clMem, CL_MEM_TYPE, sizeof type, &type, nullptr);
		if (error == CL_SUCCESS)
			error = api.getMemObjectInfo(clMem, CL_MEM_CONTEXT, sizeof memContext,
						     &memContext, nullptr);
		if (error != CL_SUCCESS)
			return Error::format(
				ErrorCode::Backend, "frame",
				"clGetMemObjectInfo on plane %u's cl_mem failed with %d.", p,
				error);
		if (memContext != context)
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"Plane %u's cl_mem belongs to another cl_context than the "
				"frames context's device.",
				p);
		if (type != CL_MEM_OBJECT_IMAGE2D)
			return false;
	}
	return true;
}

} // namespace

Result<const OpenClApi *> openClApi()
{
	static const LoadedApi loaded = loadApi();
	if (loaded.failure)
		return *loaded.failure;
	return &loaded.api;
}

Result<Frame> frameFromOpenClAVFrame(const HwImport &in)
{
	const AVHWFramesContext &frames = *framesOf(in.frame);
	BackendRef backend;
	Result<cl_command_queue> queue = queueOf(frames, backend);
	if (!queue)
		return std::move(queue).error();
	KeepAliveRef anchor = in.anchor;
	if (backend)
		anchor = std::make_shared<OpenClFrameAnchor>(in.anchor, std::move(backend));
	const PixelFormatInfo &info = **pixelFormatInfo(in.format);
	FrameDesc desc;
	desc.format = in.format;
	desc.width = in.width;
	desc.height = in.height;
	desc.colorimetry = in.colorimetry;
	desc.numResources = desc.numPlanes = info.numPlanes;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		if (!in.frame->data[p])
			return Error::format(ErrorCode::NullHandle, "frame.data",
					     "Plane %u of the OPENCL AVFrame has no cl_mem.", p);
		Result<OpenClMem> mem = OpenClMem::create({ in.frame->data[p], *queue, 0, anchor });
		if (!mem)
			return std::move(mem).error();
		desc.resources[p] = std::move(*mem);
		// Images: no stride outside a mapping.
		desc.planes[p] = PlaneView{ p, 0, 0, 0 };
	}
	return Frame::create(std::move(desc));
}

Status wrapOpenClAVFrame(const std::shared_ptr<HeldFrame> &held, AVBufferRef *hwFrames,
			 AVFrame *out)
{
	Result<const OpenClApi *> api = openClApi();
	if (!api)
		return std::move(api).error();
	const AVHWFramesContext &frames = *framesOf(hwFrames);
	const auto *device = static_cast<const AVOpenCLDeviceContext *>(frames.device_ctx->hwctx);
	Result<bool> images = imagesInContext(**api, held->frame, device->context);
	if (!images)
		return std::move(images).error();
	std::shared_ptr<HeldFrame> wrapped = held;
	if (!*images) {
		// FFmpeg reads and writes OpenCL frames as images (clEnqueueReadImage): buffers are
		// copied into images on the device; the source is released when `held` goes.
		Result<Frame> copy = imagesOf(held->frame, frames);
		if (!copy)
			return Error::format(
				copy.error().code(), "frame",
				"FFmpeg's OpenCL frames are images, one per plane; the "
				"frame is not, and copying it into images failed: %s",
				copy.error().message().c_str());
		copy->setRelease(ReleaseGate{});
		// data[p] is read from resource p below: the copy must be one image per plane too.
		Result<bool> copied = imagesInContext(**api, *copy, device->context);
		if (!copied)
			return std::move(copied).error();
		if (!*copied)
			return Error(
				ErrorCode::NotSupported, "frame",
				"The OpenCL backend's images of the frame are not one 2D image "
				"per plane, as FFmpeg's OpenCL frames are.");
		wrapped = std::make_shared<HeldFrame>(std::move(*copy));
	}
	const Frame &frame = wrapped->frame;
	for (uint32_t p = 0; p < frame.numPlanes(); p++)
		out->data[p] =
			static_cast<uint8_t *>(frame.resource(p).get<OpenClMem>()->desc().mem);
	// The buffer holds the frame (and so its cl_mems); FFmpeg never reads through its data.
	out->buf[0] = bufferHolding(wrapped, out->data[0], 0);
	if (!out->buf[0])
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_create() failed.");
	out->format = AV_PIX_FMT_OPENCL;
	out->hw_frames_ctx = av_buffer_ref(hwFrames);
	if (!out->hw_frames_ctx)
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	return {};
}

#else

Result<Frame> frameFromOpenClAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame",
		     "libgpuhandle-ffmpeg was built without OpenCL headers (CL/cl.h), so OPENCL "
		     "frames cannot be described.");
}

Status wrapOpenClAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "options.hwFrames",
		     "libgpuhandle-ffmpeg was built without OpenCL headers (CL/cl.h), so it "
		     "makes no OPENCL frames.");
}

#endif

} // namespace gpuhandle::ffmpeg::detail
