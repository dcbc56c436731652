// gpuhandledownload into GL, Vulkan, DMA-BUF or CUDA memory, through the path planner.
#include "gstgpuhandledownloader.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::download {

// The target's CPU-write fallback (OutputCopy::CpuWrite; GL when no route gives textures of the
// formats GStreamer's GL elements use: packed 4:2:2 and v210 live in Vulkan buffers, which GL
// imports as buffer objects): a buffer of GStreamer's own pool, written through its CPU map.
GstFlowReturn copyIntoPooled(Downloader &s, GstBuffer *inbuf, const Frame &frame,
			     const BackendRef &backend, GstBuffer **outbuf, const std::string &why)
{
	Result<GstBuffer *> pooled = s.targetAdapter->pooledBuffer(s.info);
	if (!pooled.ok()) {
		GST_ELEMENT_ERROR(s.element, RESOURCE, FAILED,
				  (_("Could not move a frame into %s."), targetName(s)),
				  ("%s: %s (after: %s)", pixelFormatName(s.format),
				   pooled.error().message().c_str(), why.c_str()));
		return GST_FLOW_ERROR;
	}
	*outbuf = *pooled;
	if (!copyFrameInto(s, inbuf, frame, backend, *outbuf, timeoutOf(s))) {
		gst_clear_buffer(outbuf);
		return GST_FLOW_ERROR;
	}
	copyMetadata(s, *outbuf, inbuf);
	GST_CAT_DEBUG_OBJECT(s.category, s.element,
			     "no %s route (%s): copied through system memory", targetName(s),
			     why.c_str());
	notePath(s, ExecutionPath::cpuCopy("no route gives this format as the target's memory"),
		 ImportRoute::CpuCopy);
	return GST_FLOW_OK;
}

// The target's GPU copy (OutputCopy::GpuCopy; CUDAMemory, as GStreamer 1.22 cannot wrap the CUDA
// backend's frame): copied on the GPU into a buffer of GStreamer's own pool. The path counted is
// the planner's when it copied already, else this GPU copy.
GstFlowReturn copyIntoTargetPool(Downloader &s, GstBuffer *inbuf, const ImportResult &imported,
				 GstBuffer **outbuf)
{
	if (!allowCopyOf(s)) {
		GST_ELEMENT_ERROR(s.element, CORE, NEGOTIATION,
				  (_("No zero-copy path into %s, and allow-copy is false."),
				   targetName(s)),
				  ("%s", s.target->copyReason));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	Result<GstBuffer *> out =
		s.targetAdapter->gpuCopyOf(imported.frame, s.targetBackend, s.info, timeoutOf(s));
	if (!out.ok()) {
		if (out.error().code() == ErrorCode::Timeout)
			GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, BUSY,
						(_("A frame's fence did not signal in time.")),
						out.error());
		else
			GST_ELEMENT_ERROR(
				s.element, RESOURCE, FAILED,
				(_("Could not move a frame into %s."), targetName(s)),
				("imported by %s, then the copy into GStreamer's %s pool failed: %s",
				 importRouteName(imported.route), s.target->name,
				 out.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	copyMetadata(s, *out, inbuf);
	if (imported.path.isCopy())
		notePath(s, imported.path, imported.route);
	else
		notePath(s, ExecutionPath::gpuCopy(s.target->copyReason), ImportRoute::GpuCopy);
	*outbuf = *out;
	return GST_FLOW_OK;
}

// `frame` as the target's GstMemory, when its resources already are the target API's objects
// on the target's device (textures of the GL context's share group, images of the Vulkan device,
// DMA-BUFs); `exporter` may export it first. Errors: WrongKind / DeviceMismatch /
// FormatMismatch from the conversion.
Result<GstBuffer *> wrapAsTarget(Downloader &s, const Frame &frame, WaitDuration timeout,
				 const BackendRef &exporter = {})
{
	return s.targetAdapter->bufferFromFrame(frame, s.info, timeout, exporter);
}

// The frame's fence goes on with the output instead of being waited here: the target's queue
// imports it (the planner carries it), or the target's buffers carry a sync meta that
// downstream asked for.
bool fenceStaysOnGpu(const Downloader &s, const SyncPoint &acquire)
{
	if (acquire.isNoop() || !s.targetBackend)
		return false;
	if (s.target->syncMetaOutput && s.downstreamSyncMeta)
		return true;
	const std::vector<SyncKind> &imports = s.targetBackend->capabilities().fenceImports;
	return std::find(imports.begin(), imports.end(), acquire.kind()) != imports.end();
}

// Into a device memory (GL, Vulkan, DMA-BUF, CUDA): the planner imports the frame into the
// target's backend (zero-copy where a route exists), then the result is wrapped as the target's
// GstMemory, or copied into GStreamer's own pool where the target's adapter has one.
GstFlowReturn toDevice(Downloader &s, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf)
{
	// Consumers of DMA-BUFs and of GStreamer's GL and Vulkan memories read at once and know
	// nothing of gpuhandle's fences: the acquire point is waited here, in slices that a flush
	// ends, unless the wait can stay on the GPU (the target's queue imports the fence, which
	// the planner then carries) or downstream waits on the sync meta itself (DMA-BUFs).
	if (!fenceStaysOnGpu(s, frame.acquire())) {
		if (GstFlowReturn ret = flowOf(waitAcquire(s, frame, timeoutOf(s)));
		    ret != GST_FLOW_OK)
			return ret;
	}
	const OutputCopy copy = s.target->outputCopy;
	// Memory of the target API on its device already (GStreamer's own textures from glupload,
	// or images of the shared Vulkan device): wrapped as it is. Not tried for a target that
	// never wraps (GpuCopy).
	// Tried once per input backend and negotiation: a frame that is not the target's memory
	// would make (and drop) an error per frame. The planner's Direct route still wraps it.
	const void *source = backend ? static_cast<const void *>(backend.get()) : &s;
	std::optional<Result<GstBuffer *>> direct;
	if (source != s.noDirectWrapFrom && copy != OutputCopy::GpuCopy) {
		direct = wrapAsTarget(s, frame, timeoutOf(s));
		if (!direct->ok()) {
			GST_CAT_LOG_OBJECT(s.category, s.element, "not %s as it is: %s",
					   targetName(s), direct->error().message().c_str());
			s.noDirectWrapFrom = source;
		}
	}
	if (direct && direct->ok()) {
		keepInputAlive(**direct, inbuf);
		copyMetadata(s, **direct, inbuf);
		notePath(s, ExecutionPath::zeroCopy(), ImportRoute::Direct);
		*outbuf = **direct;
		return GST_FLOW_OK;
	}
	ImportOptions options{};
	options.source = backend;
	options.allowCopies = allowCopyOf(s);
	options.copyStorage = s.target->storage;
	options.timeout = timeoutOf(s);
	Result<ImportResult> imported = importFrame(frame, *s.targetBackend, options);
	if (!imported.ok()) {
		const Error &why = imported.error();
		if (why.code() == ErrorCode::Timeout) {
			GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, BUSY,
						(_("A frame's fence did not signal in time.")),
						why);
			return GST_FLOW_ERROR;
		}
		if (endsThePlan(why)) { // the device is lost: no copy either
			GPUHANDLE_ELEMENT_ERROR(
				s.element, RESOURCE, FAILED,
				(_("Could not move a frame into %s."), targetName(s)), why);
			return GST_FLOW_ERROR;
		}
		if (copy == OutputCopy::CpuWrite && options.allowCopies)
			return copyIntoPooled(s, inbuf, frame, backend, outbuf, why.message());
		if (!options.allowCopies) {
			GST_ELEMENT_ERROR(s.element, CORE, NEGOTIATION,
					  (_("No zero-copy path into %s, and allow-copy is false."),
					   targetName(s)),
					  ("%s", why.message().c_str()));
			return GST_FLOW_NOT_NEGOTIATED;
		}
		GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, FAILED,
					(_("Could not move a frame into %s."), targetName(s)), why);
		return GST_FLOW_ERROR;
	}
	if (imported->fence == FenceTransfer::CpuWait)
		s.stats.countFenceWait(imported->fenceWait);
	if (copy == OutputCopy::GpuCopy)
		return copyIntoTargetPool(s, inbuf, *imported, outbuf);
	Result<GstBuffer *> out =
		wrapAsTarget(s, imported->frame, options.timeout, s.targetBackend);
	if (!out.ok() && copy == OutputCopy::CpuWrite && options.allowCopies &&
	    !endsThePlan(out.error()))
		return copyIntoPooled(s, inbuf, frame, backend, outbuf, out.error().message());
	if (!out.ok() && !options.allowCopies) {
		GST_ELEMENT_ERROR(s.element, CORE, NEGOTIATION,
				  (_("No zero-copy path into %s, and allow-copy is false."),
				   targetName(s)),
				  ("imported by %s, but not usable as %s: %s",
				   importRouteName(imported->route), targetName(s),
				   out.error().message().c_str()));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (!out.ok()) {
		const Error why = Error::format(out.error().code(), out.error().field(),
						"imported by %s (%s), but not usable as %s: %s",
						importRouteName(imported->route),
						executionPathKindName(imported->path.kind()),
						targetName(s), out.error().message().c_str());
		GPUHANDLE_ELEMENT_ERROR(s.element, RESOURCE, FAILED,
					(_("Could not move a frame into %s."), targetName(s)), why);
		return GST_FLOW_ERROR;
	}
	if (imported->path.kind() == ExecutionPath::Kind::ZeroCopy)
		keepInputAlive(*out, inbuf); // the output aliases the input's (maybe pooled) memory
	copyMetadata(s, *out, inbuf);
	notePath(s, imported->path, imported->route);
	*outbuf = *out;
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::download
