// Frame -> AVFrame: host memory wrapped without a copy, other memory copied to it by the planner;
// hardware frames of a frames context through its device's backend.
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include "hw_frames.h"
#include "thread_block_cache.h"

#include <array>
#include <climits>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::ffmpeg {

namespace {

// What the buffers of one AVFrame share: the CPU mapping, with its copy of the frame (so the
// frame's anchors and memory live). When the last buffer is freed nobody can read the bytes any
// more: the mapping ends and the frame's release gate, when it was read in place, is signalled.
struct MappedFrame {
	MappedFrame(CpuMapping m, ReleaseGate r) : mapping(std::move(m)), release(std::move(r)) {}
	MappedFrame(const MappedFrame &) = delete;
	MappedFrame &operator=(const MappedFrame &) = delete;
	~MappedFrame()
	{
		if (Status ended = mapping.unmap(); !ended)
			av_log(nullptr, AV_LOG_WARNING,
			       "gpuhandle: ending the CPU mapping of a frame failed: %s\n",
			       ended.error().message().c_str());
		detail::signalRelease(release);
	}
	CpuMapping mapping;
	ReleaseGate release;
};
using MappedFrameRef = std::shared_ptr<MappedFrame>;
// av_buffer_create's free callback: one per AVBufferRef of the frame.
void dropMappedFrame(void *opaque, uint8_t *)
{
	gpuhandle::detail::deleteToBlocks(static_cast<MappedFrameRef *>(opaque));
}

using detail::AvFrameFree;

// Memory mapFrame() reads in place (no backend needed).
bool hostMappable(const Frame &frame)
{
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		const ResourceKind kind = frame.resource(r).kind();
		if (kind != ResourceKind::CpuBytes && kind != ResourceKind::CpuPlanes &&
		    kind != ResourceKind::ShmFd && kind != ResourceKind::DmaBuf)
			return false;
	}
	return true;
}

// The cpu backend the planner copies into: host memory, opened once per process.
Result<BackendRef> cpuBackend()
{
	static const Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	return cpu;
}

// Bytes of range (resource, subresource): its size where the resource knows it, else the end of
// the last row of the planes in it.
uint64_t rangeSize(const Frame &frame, const PixelFormatInfo &info, uint32_t resource,
		   uint32_t subresource)
{
	if (uint64_t size = frame.resource(resource).byteSize(subresource))
		return size;
	uint64_t end = 0;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		if (view.resource != resource || view.subresource != subresource)
			continue;
		const uint32_t rows = info.planes[p].rows(frame.height());
		const uint64_t planeEnd = view.offset + uint64_t(view.stride) * (rows - 1) +
					  info.planes[p].rowBytes(frame.width());
		end = planeEnd > end ? planeEnd : end;
	}
	return end;
}

// The frame's bytes in host memory: itself, or the planner's copy into the cpu backend.
Result<Frame> hostFrame(const Frame &frame, const AvFrameOptions &options, ExecutionPath &path)
{
	if (hostMappable(frame)) {
		path = ExecutionPath::zeroCopy();
		return frame;
	}
	Result<BackendRef> cpu = cpuBackend();
	if (!cpu)
		return std::move(cpu).error();
	ImportOptions import;
	import.source = options.source;
	import.allowCopies = options.allowCopies;
	import.timeout = options.timeout;
	Result<ImportResult> imported = importFrame(frame, **cpu, import);
	if (!imported)
		return std::move(imported).error();
	path = imported->path;
	if (!hostMappable(imported->frame))
		return Error::format(ErrorCode::Fatal, "frame",
				     "The planner's import into host memory gave %s memory, which "
				     "cannot be mapped.",
				     resourceKindName(imported->frame.resource(0).kind()));
	return std::move(imported->frame);
}

// The fd backend (DMA-BUF exports for DRM frames), opened once it opens: a failure is not kept.
Result<BackendRef> fdBackend()
{
	static std::mutex mutex;
	static BackendRef opened;
	std::lock_guard<std::mutex> guard(mutex);
	if (opened)
		return opened;
	Result<BackendRef> fd = openBackend(BackendKind::Fd);
	if (fd)
		opened = *fd;
	return fd;
}

// The frame in the memory of the frames context's device: itself when it is already there
// (Direct), else the planner's import into that device's backend (or, for DRM, the fd
// backend's DMA-BUF). `target` gets the backend it went through: the caller holds it while
// wrapping, so that the wrap's backendForHwDevice() finds the same one rather than reopening it.
Result<Frame> deviceFrame(const Frame &frame, const AvFrameOptions &options,
			  const AVHWFramesContext &frames, ExecutionPath &path, BackendRef &target)
{
	if (frames.device_ctx->type == AV_HWDEVICE_TYPE_DRM) {
		bool dmaBuf = frame.numResources() > 0;
		for (uint32_t r = 0; r < frame.numResources(); r++)
			dmaBuf = dmaBuf && frame.resource(r).kind() == ResourceKind::DmaBuf;
		if (dmaBuf) {
			path = ExecutionPath::zeroCopy();
			return frame;
		}
		Result<BackendRef> fd = fdBackend();
		if (!fd)
			return std::move(fd).error();
		target = std::move(*fd);
	} else {
		Result<BackendRef> backend = backendForHwDevice(frames.device_ref);
		if (!backend)
			return std::move(backend).error();
		target = std::move(*backend);
	}
	ImportOptions import;
	import.source = options.source;
	import.allowCopies = options.allowCopies;
	import.timeout = options.timeout;
	Result<ImportResult> imported = importFrame(frame, *target, import);
	if (!imported)
		return std::move(imported).error();
	path = imported->path;
	return std::move(imported->frame);
}

using WrapFn = Status (*)(const std::shared_ptr<detail::HeldFrame> &, AVBufferRef *, AVFrame *);

// The wrapper of the frames context's device type; null with `why` set for other types.
WrapFn wrapperOf(const AVHWFramesContext &frames, Error &why)
{
	switch (frames.device_ctx->type) {
	case AV_HWDEVICE_TYPE_VULKAN: return &detail::wrapVulkanAVFrame;
	case AV_HWDEVICE_TYPE_CUDA: return &detail::wrapCudaAVFrame;
	case AV_HWDEVICE_TYPE_OPENCL: return &detail::wrapOpenClAVFrame;
	case AV_HWDEVICE_TYPE_DRM: return &detail::wrapDrmAVFrame;
	default: {
		const char *name = av_hwdevice_get_type_name(frames.device_ctx->type);
		why = Error::format(ErrorCode::NotSupported, "options.hwFrames",
				    "gpuhandle makes no %s frames (it makes vulkan, cuda, opencl "
				    "and drm frames).",
				    name ? name : "unknown");
		return nullptr;
	}
	}
}

// avFrameFromFrame() into options.hwFrames; `out` has format, size, colour and properties.
Result<AVFrame *> hwAvFrameFromFrame(const Frame &frame, const AvFrameOptions &options,
				     ExecutionPath *path, AVPixelFormat swFormat,
				     std::unique_ptr<AVFrame, AvFrameFree> out)
{
	if (!options.hwFrames->data)
		return Error(ErrorCode::NullHandle, "options.hwFrames",
			     "The frames context is empty.");
	const AVHWFramesContext &frames = *detail::framesOf(options.hwFrames);
	if (frames.sw_format != swFormat)
		return Error::format(ErrorCode::InvalidArgument, "options.hwFrames",
				     "The frames context holds %s frames, the frame is %s.",
				     avPixelFormatName(frames.sw_format).c_str(),
				     avPixelFormatName(swFormat).c_str());
	if (static_cast<int64_t>(frame.width()) > frames.width ||
	    static_cast<int64_t>(frame.height()) > frames.height)
		return Error::format(ErrorCode::InvalidArgument, "options.hwFrames",
				     "The frames context is %dx%d, smaller than the %ux%u frame.",
				     frames.width, frames.height, frame.width(), frame.height());
	Error why(ErrorCode::NotSupported, "options.hwFrames", "");
	const WrapFn wrap = wrapperOf(frames, why);
	if (!wrap)
		return why;
	ExecutionPath taken;
	BackendRef target;
	Result<Frame> onDevice = deviceFrame(frame, options, frames, taken, target);
	if (!onDevice)
		return std::move(onDevice).error();
	// FFmpeg's hardware frames carry no gpuhandle fence: whatever reads them next starts at
	// once, so the frame must be complete first.
	if (Status waited = onDevice->acquire().wait(options.timeout); !waited)
		return std::move(waited).error();
	onDevice->setAcquire(SyncPoint::noop());
	if (taken.isCopy())
		onDevice->setRelease(ReleaseGate{}); // the source's gate: signalled below
	auto held = std::make_shared<detail::HeldFrame>(std::move(*onDevice));
	if (Status wrapped = wrap(held, options.hwFrames, out.get()); !wrapped)
		return std::move(wrapped).error();
	if (held->copiedBecause && !taken.isCopy())
		taken = ExecutionPath::gpuCopy(held->copiedBecause);
	// The copy no longer reads the source: its producer may have it back now (only once the
	// wrap succeeded, so that a failed call leaves the caller's frame as it was).
	if (taken.isCopy() && !frame.release().isNone()) {
		if (Status signalled = frame.release().signal(); !signalled)
			return std::move(signalled).error();
	}
	if (!out->hw_frames_ctx) {
		out->hw_frames_ctx = av_buffer_ref(options.hwFrames);
		if (!out->hw_frames_ctx)
			return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	}
	if (path)
		*path = taken;
	return out.release();
}

} // namespace

Result<AVFrame *> avFrameFromFrame(const Frame &frame, const AvFrameOptions &options,
				   ExecutionPath *path)
{
	Result<AVPixelFormat> format = toAvPixelFormat(frame.format());
	if (!format)
		return std::move(format).error();
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	const int avPlanes = av_pix_fmt_count_planes(*format);
	if (avPlanes != info.numPlanes || frame.numPlanes() != info.numPlanes)
		return Error::format(ErrorCode::FormatMismatch, "frame.planes",
				     "The %s frame has %u planes; the format has %u in gpuhandle "
				     "and %d in this libavutil.",
				     info.name, frame.numPlanes(), info.numPlanes, avPlanes);
	if (frame.width() > INT_MAX || frame.height() > INT_MAX)
		return Error::format(ErrorCode::OutOfRange, "frame.width",
				     "A %ux%u frame does not fit an AVFrame's int sizes.",
				     frame.width(), frame.height());

	// The AVFrame's own fields first: a bad property fails before anything is mapped, and so
	// before the release gate could be signalled.
	std::unique_ptr<AVFrame, AvFrameFree> out(av_frame_alloc());
	if (!out)
		return Error::format(ErrorCode::OutOfMemory, "frame", "av_frame_alloc() failed.");
	out->format = *format;
	out->width = static_cast<int>(frame.width());
	out->height = static_cast<int>(frame.height());
	setColorimetry(out.get(), frame.colorimetry());
	if (options.properties) {
		if (Status applied = applyFrameProperties(out.get(), *options.properties); !applied)
			return std::move(applied).error();
	}
	if (options.hwFrames)
		return hwAvFrameFromFrame(frame, options, path, *format, std::move(out));

	ExecutionPath taken;
	Result<Frame> host = hostFrame(frame, options, taken);
	if (!host)
		return std::move(host).error();
	// Waits for the acquire point: software AVFrame consumers read as soon as they get it.
	Result<CpuMapping> mapped = mapFrame(*host, MapAccess::Read, options.timeout);
	if (!mapped)
		return std::move(mapped).error();
	for (uint32_t p = 0; p < info.numPlanes; p++)
		if (mapped->stride(p) == 0 || mapped->stride(p) > INT_MAX)
			return Error::format(
				ErrorCode::NotSupported, "frame.planes",
				"Plane %u of the %s frame has no usable CPU stride (%u).", p,
				info.name, mapped->stride(p));
	// A copy no longer reads the source: its producer may have it back now.
	ReleaseGate release = frame.release();
	if (taken.isCopy() && !release.isNone()) {
		if (Status signalled = release.signal(); !signalled)
			return std::move(signalled).error();
		release = ReleaseGate{};
	}
	auto holder = std::allocate_shared<MappedFrame>(
		gpuhandle::detail::ThreadRecyclingAllocator<MappedFrame>{}, std::move(*mapped),
		std::move(release));
	const CpuMapping &mapping = holder->mapping;

	// One AVBufferRef per host range (a resource, or a plane of a CpuPlanes resource), so that
	// av_frame_get_plane_buffer() finds the buffer of every plane.
	std::array<std::array<int, 4>, 4> bufferOf{};
	for (auto &row : bufferOf)
		row.fill(-1);
	int buffers = 0;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const PlaneView &view = host->plane(p);
		out->data[p] = mapping.data(p);
		out->linesize[p] = static_cast<int>(mapping.stride(p));
		if (bufferOf[view.resource][view.subresource] >= 0)
			continue;
		// Made and dropped per frame: each buffer's reference, like the holder, comes
		// from the thread's block lists.
		auto *ref = gpuhandle::detail::newFromBlocks<MappedFrameRef>(holder);
		uint8_t *base = mapping.data(p) - view.offset;
		AVBufferRef *buffer = av_buffer_create(
			base, rangeSize(*host, info, view.resource, view.subresource),
			dropMappedFrame, ref, AV_BUFFER_FLAG_READONLY);
		if (!buffer) {
			dropMappedFrame(ref, nullptr);
			return Error::format(ErrorCode::OutOfMemory, "frame",
					     "av_buffer_create() failed.");
		}
		out->buf[buffers] = buffer;
		bufferOf[view.resource][view.subresource] = buffers++;
	}
	if (path)
		*path = taken;
	return out.release();
}

} // namespace gpuhandle::ffmpeg
