// gpuhandledownload into GL, Vulkan, DMA-BUF or CUDA memory, through the path planner.
#include "gstgpuhandledownload.h"

#define GST_CAT_DEFAULT gst_gpu_handle_download_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace gpuhandle::gst::download {

#if GPUHANDLE_GST_HAVE_GL
// The fallback into GL when no route gives textures of the formats GStreamer's GL elements use
// (packed 4:2:2 and v210 live in Vulkan buffers, which GL imports as buffer objects): a GLMemory
// buffer of GStreamer's GL pool, written through its CPU map; GStreamer uploads it on unmap.
GstFlowReturn copyIntoGl(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
			 const BackendRef &backend, GstBuffer **outbuf, const std::string &why)
{
	DownloadState &s = stateOf(trans);
	if (!s.glPool) {
		GstCaps *caps = gst_video_info_to_caps(&s.info);
		gst_caps_set_features(caps, 0, gst_caps_features_new("memory:GLMemory", nullptr));
		gst_caps_set_simple(caps, "texture-target", G_TYPE_STRING, "2D", nullptr);
		s.glPool = gst_gl_buffer_pool_new(s.glContext);
		GstStructure *config = gst_buffer_pool_get_config(s.glPool);
		gst_buffer_pool_config_set_params(
			config, caps, static_cast<guint>(GST_VIDEO_INFO_SIZE(&s.info)), 1, 0);
		gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
		gst_caps_unref(caps);
		if (!gst_buffer_pool_set_config(s.glPool, config) ||
		    !gst_buffer_pool_set_active(s.glPool, TRUE)) {
			gst_clear_object(&s.glPool);
			GST_ELEMENT_ERROR(trans, RESOURCE, FAILED,
					  (_("Could not move a frame into %s."),
					   targetName(s.target)),
					  ("GStreamer's GL pool did not start for %s (after: %s)",
					   pixelFormatName(s.format), why.c_str()));
			return GST_FLOW_ERROR;
		}
	}
	GstFlowReturn ret = gst_buffer_pool_acquire_buffer(s.glPool, outbuf, nullptr);
	if (ret != GST_FLOW_OK)
		return ret;
	if (!copyFrameInto(trans, inbuf, frame, backend, *outbuf, timeoutOf(s))) {
		gst_clear_buffer(outbuf);
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, *outbuf, inbuf);
	GST_DEBUG_OBJECT(trans, "no texture route (%s): copied through system memory", why.c_str());
	notePath(trans, ExecutionPath::cpuCopy("no route gives GL textures of this format"),
		 ImportRoute::CpuCopy);
	return GST_FLOW_OK;
}
#endif

#if GPUHANDLE_GST_HAVE_CUDA
// Into CUDAMemory: GStreamer 1.22 cannot wrap the CUDA backend's frame, so it is copied on the
// GPU into a buffer of GStreamer's CUDA pool (made on first use). The path counted is the
// planner's when it copied already, else this GPU copy.
GstFlowReturn copyIntoCuda(GstBaseTransform *trans, GstBuffer *inbuf, const ImportResult &imported,
			   GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	if (!allowCopyOf(s)) {
		GST_ELEMENT_ERROR(
			trans, CORE, NEGOTIATION,
			(_("No zero-copy path into %s, and allow-copy is false."),
			 targetName(s.target)),
			("GStreamer 1.22 cannot wrap foreign device memory as CUDAMemory; "
			 "frames are copied into its CUDA pool"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (!s.cudaPool) {
		Result<GstBufferPool *> pool = cudaBufferPoolFor(s.cudaContext, s.info);
		if (!pool.ok()) {
			GST_ELEMENT_ERROR(trans, RESOURCE, FAILED,
					  (_("Could not move a frame into %s."),
					   targetName(s.target)),
					  ("%s", pool.error().message().c_str()));
			return GST_FLOW_ERROR;
		}
		s.cudaPool = *pool;
	}
	Result<GstBuffer *> out =
		cudaBufferCopyOf(imported.frame, s.targetBackend, s.cudaPool, s.info, timeoutOf(s));
	if (!out.ok()) {
		if (out.error().code() == ErrorCode::Timeout)
			GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, BUSY,
						(_("A frame's fence did not signal in time.")),
						out.error());
		else
			GST_ELEMENT_ERROR(
				trans, RESOURCE, FAILED,
				(_("Could not move a frame into %s."), targetName(s.target)),
				("imported by %s, then the copy into GStreamer's CUDA pool "
				 "failed: %s",
				 importRouteName(imported.route), out.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	copyMetadata(trans, *out, inbuf);
	if (imported.path.isCopy())
		notePath(trans, imported.path, imported.route);
	else
		notePath(trans,
			 ExecutionPath::gpuCopy("copied into GStreamer's CUDA pool (1.22 wraps no "
						"foreign device memory)"),
			 ImportRoute::GpuCopy);
	*outbuf = *out;
	return GST_FLOW_OK;
}
#endif

// `frame` as the target's GstMemory, when its resources already are the target API's objects
// on the target's device (textures of the GL context's share group, images of the Vulkan device,
// DMA-BUFs). Errors: WrongKind / DeviceMismatch / FormatMismatch from the conversion.
Result<GstBuffer *> wrapAsTarget(GstBaseTransform *trans, const Frame &frame, WaitDuration timeout)
{
	DownloadState &s = stateOf(trans);
	(void)timeout;
	switch (s.target) {
	case Target::Gl:
#if GPUHANDLE_GST_HAVE_GL
		return glBufferFromFrame(frame, s.glContext, s.info, timeout);
#else
		break;
#endif
	case Target::Vulkan:
#if GPUHANDLE_GST_HAVE_VULKAN
		return vulkanBufferFromFrame(frame, s.vkDevice, s.info, timeout);
#else
		break;
#endif
	case Target::DmaBuf: return fdBufferFromFrame(frame);
	case Target::Cuda:
		return Error(
			ErrorCode::NotSupported, "target",
			"GStreamer 1.22 makes CUDAMemory only over what it allocates: frames are "
			"copied into its CUDA pool");
	case Target::System: break;
	}
	return Error::format(ErrorCode::NotSupported, "target", "%s is not built in",
			     targetName(s.target));
}

bool fenceStaysOnGpu(const DownloadState &s, const SyncPoint &acquire)
{
	if (acquire.isNoop() || !s.targetBackend)
		return false;
	if (s.target == Target::DmaBuf && s.downstreamSyncMeta)
		return true;
	const std::vector<SyncKind> &imports = s.targetBackend->capabilities().fenceImports;
	return std::find(imports.begin(), imports.end(), acquire.kind()) != imports.end();
}

// Into GL, Vulkan or DMA-BUF memory: the planner imports the frame into the target's backend
// (zero-copy where a route exists), then the result is wrapped as the target's GstMemory.
GstFlowReturn toDevice(GstBaseTransform *trans, GstBuffer *inbuf, const Frame &frame,
		       const BackendRef &backend, GstBuffer **outbuf)
{
	DownloadState &s = stateOf(trans);
	// Consumers of DMA-BUFs and of GStreamer's GL and Vulkan memories read at once and know
	// nothing of gpuhandle's fences: the acquire point is waited here, in slices that a flush
	// ends, unless the wait can stay on the GPU (the target's queue imports the fence, which
	// the planner then carries) or downstream waits on the sync meta itself (DMA-BUFs).
	if (!fenceStaysOnGpu(s, frame.acquire())) {
		if (GstFlowReturn ret = flowOf(waitAcquire(trans, frame, timeoutOf(s)));
		    ret != GST_FLOW_OK)
			return ret;
	}
	// Memory of the target API on its device already (GStreamer's own textures from glupload,
	// or images of the shared Vulkan device): wrapped as it is.
	// Tried once per input backend and negotiation: a frame that is not the target's memory
	// would make (and drop) an error per frame. The planner's Direct route still wraps it.
	const void *source = backend ? static_cast<const void *>(backend.get()) : &s;
	std::optional<Result<GstBuffer *>> direct;
	if (source != s.noDirectWrapFrom) {
		direct = wrapAsTarget(trans, frame, timeoutOf(s));
		if (!direct->ok()) {
			GST_LOG_OBJECT(trans, "not %s as it is: %s", targetName(s.target),
				       direct->error().message().c_str());
			s.noDirectWrapFrom = source;
		}
	}
	if (direct && direct->ok()) {
		keepInputAlive(**direct, inbuf);
		copyMetadata(trans, **direct, inbuf);
		notePath(trans, ExecutionPath::zeroCopy(), ImportRoute::Direct);
		*outbuf = **direct;
		return GST_FLOW_OK;
	}
	ImportOptions options{};
	options.source = backend;
	options.allowCopies = allowCopyOf(s);
	options.copyStorage = s.target == Target::DmaBuf || s.target == Target::Cuda
				      ? FrameStorage::Buffer
				      : FrameStorage::OptimalImage;
	options.timeout = timeoutOf(s);
	Result<ImportResult> imported = importFrame(frame, *s.targetBackend, options);
	if (!imported.ok()) {
		const Error &why = imported.error();
		if (why.code() == ErrorCode::Timeout) {
			GPUHANDLE_ELEMENT_ERROR(trans, RESOURCE, BUSY,
						(_("A frame's fence did not signal in time.")),
						why);
			return GST_FLOW_ERROR;
		}
		if (endsThePlan(why)) { // the device is lost: no copy either
			GPUHANDLE_ELEMENT_ERROR(
				trans, RESOURCE, FAILED,
				(_("Could not move a frame into %s."), targetName(s.target)), why);
			return GST_FLOW_ERROR;
		}
#if GPUHANDLE_GST_HAVE_GL
		if (s.target == Target::Gl && options.allowCopies)
			return copyIntoGl(trans, inbuf, frame, backend, outbuf, why.message());
#endif
		if (!options.allowCopies) {
			GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
					  (_("No zero-copy path into %s, and allow-copy is false."),
					   targetName(s.target)),
					  ("%s", why.message().c_str()));
			return GST_FLOW_NOT_NEGOTIATED;
		}
		GPUHANDLE_ELEMENT_ERROR(
			trans, RESOURCE, FAILED,
			(_("Could not move a frame into %s."), targetName(s.target)), why);
		return GST_FLOW_ERROR;
	}
	if (imported->fence == FenceTransfer::CpuWait)
		s.stats.countFenceWait(imported->fenceWait);
#if GPUHANDLE_GST_HAVE_CUDA
	if (s.target == Target::Cuda)
		return copyIntoCuda(trans, inbuf, *imported, outbuf);
#endif
	Result<GstBuffer *> out = wrapAsTarget(trans, imported->frame, options.timeout);
	if (!out.ok() && s.target == Target::DmaBuf) {
		// memfd frames leave as DMA-BUFs where the kernel can make them (udmabuf).
		Result<Frame> exported =
			s.targetBackend->exportFrame(imported->frame, ResourceKind::DmaBuf);
		out = exported.ok() ? wrapAsTarget(trans, *exported, options.timeout)
				    : Result<GstBuffer *>(exported.error());
	}
#if GPUHANDLE_GST_HAVE_GL
	if (!out.ok() && s.target == Target::Gl && options.allowCopies && !endsThePlan(out.error()))
		return copyIntoGl(trans, inbuf, frame, backend, outbuf, out.error().message());
#endif
	if (!out.ok() && !options.allowCopies) {
		GST_ELEMENT_ERROR(trans, CORE, NEGOTIATION,
				  (_("No zero-copy path into %s, and allow-copy is false."),
				   targetName(s.target)),
				  ("imported by %s, but not usable as %s: %s",
				   importRouteName(imported->route), targetName(s.target),
				   out.error().message().c_str()));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	if (!out.ok()) {
		const Error why = Error::format(out.error().code(), out.error().field(),
						"imported by %s (%s), but not usable as %s: %s",
						importRouteName(imported->route),
						executionPathKindName(imported->path.kind()),
						targetName(s.target),
						out.error().message().c_str());
		GPUHANDLE_ELEMENT_ERROR(
			trans, RESOURCE, FAILED,
			(_("Could not move a frame into %s."), targetName(s.target)), why);
		return GST_FLOW_ERROR;
	}
	if (imported->path.kind() == ExecutionPath::Kind::ZeroCopy)
		keepInputAlive(*out, inbuf); // the output aliases the input's (maybe pooled) memory
	copyMetadata(trans, *out, inbuf);
	notePath(trans, imported->path, imported->route);
	*outbuf = *out;
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::download
