// Frame -> AV_PIX_FMT_VULKAN AVFrame: its VkImages in a new AVVkFrame with new timeline semaphores.
#include "hw_frames.h"

#if GPUHANDLE_FFMPEG_HAVE_VULKAN_H

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/vulkan_resources.h>

#include "hw_device_internal.h"
#include "hw_vulkan_internal.h"

#include <array>

extern "C" {
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::ffmpeg::detail {

namespace {

constexpr VkAccessFlags kGeneralAccess = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;

// Moves the images FFmpeg left in another layout back to GENERAL (the layout the gpuhandle
// backend that owns them expects them in), once FFmpeg's last submission on the frame is done:
// one submission (with no barrier when all are in GENERAL), its fence waited for up to
// `timeout`. It waits for no semaphore on purpose: once its fence signals, the queue has also
// finished with every earlier submission, so the frame's semaphores can be destroyed (lavapipe
// still touches a semaphore a submission waited on after that submission's fence signals).
// False when that did not finish (what it uses must then stay).
bool restoreGeneral(const VkDeviceFns &fns, const AVHWDeviceContext *device, uint32_t family,
		    const AVVkFrame &f, int planes, WaitDuration timeout)
{
	std::array<VkImageMemoryBarrier, 4> barriers{};
	uint32_t count = 0;
	for (int i = 0; i < planes; i++) {
		uint32_t owner = VK_QUEUE_FAMILY_IGNORED;
#if GPUHANDLE_FFMPEG_VK_LOCKS
		owner = f.queue_family[i];
#endif
		const bool foreign = owner != VK_QUEUE_FAMILY_IGNORED && owner != family;
		if (f.layout[i] == VK_IMAGE_LAYOUT_GENERAL && !foreign)
			continue;
		VkImageMemoryBarrier &b = barriers[count++];
		b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
		b.srcAccessMask = static_cast<VkAccessFlags>(f.access[i]);
		b.dstAccessMask = kGeneralAccess;
		b.oldLayout = f.layout[i];
		b.newLayout = VK_IMAGE_LAYOUT_GENERAL;
		// FFmpeg (6.1 and later) may have left the image owned by another family, or
		// released to VK_QUEUE_FAMILY_EXTERNAL: acquired on the family submitted to here.
		b.srcQueueFamilyIndex = foreign ? owner : VK_QUEUE_FAMILY_IGNORED;
		b.dstQueueFamilyIndex = foreign ? family : VK_QUEUE_FAMILY_IGNORED;
		b.image = f.img[i];
		b.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
	}
	VkCommandPoolCreateInfo poolInfo{};
	poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
	poolInfo.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
	poolInfo.queueFamilyIndex = family;
	VkCommandPool pool = VK_NULL_HANDLE;
	if (fns.CreateCommandPool(fns.device, &poolInfo, nullptr, &pool) != VK_SUCCESS)
		return false;
	VkFence fence = VK_NULL_HANDLE;
	VkFenceCreateInfo fenceInfo{};
	fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
	VkCommandBufferAllocateInfo bufferInfo{};
	bufferInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
	bufferInfo.commandPool = pool;
	bufferInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	bufferInfo.commandBufferCount = 1;
	VkCommandBuffer commands = VK_NULL_HANDLE;
	VkCommandBufferBeginInfo begin{};
	begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
	begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	VkResult r = fns.CreateFence(fns.device, &fenceInfo, nullptr, &fence);
	if (r == VK_SUCCESS)
		r = fns.AllocateCommandBuffers(fns.device, &bufferInfo, &commands);
	if (r == VK_SUCCESS)
		r = fns.BeginCommandBuffer(commands, &begin);
	if (r == VK_SUCCESS) {
		if (count)
			fns.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
					       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
					       nullptr, count, barriers.data());
		r = fns.EndCommandBuffer(commands);
	}
	bool done = true; // nothing pending unless the submission below succeeds
	if (r == VK_SUCCESS) {
		VkSubmitInfo submit{};
		submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submit.commandBufferCount = 1;
		submit.pCommandBuffers = &commands;
		VkQueue queue = VK_NULL_HANDLE;
		fns.GetDeviceQueue(fns.device, family, 0, &queue);
		std::shared_ptr<std::recursive_mutex> lock = deviceSubmitLock(device);
		if (lockWithin(*lock, timeout)) {
			auto *mutableDevice = const_cast<AVHWDeviceContext *>(device);
			ffmpegQueueLock(mutableDevice, family, true);
			r = fns.QueueSubmit(queue, 1, &submit, fence);
			ffmpegQueueLock(mutableDevice, family, false);
			lock->unlock();
		} else {
			r = VK_TIMEOUT;
		}
		if (r == VK_SUCCESS)
			done = fns.WaitForFences(fns.device, 1, &fence, VK_TRUE,
						 static_cast<uint64_t>(timeout.count())) ==
			       VK_SUCCESS;
	}
	if (!done)
		return false; // the pool and fence stay with the submission that still runs
	if (fence)
		fns.DestroyFence(fns.device, fence, nullptr);
	fns.DestroyCommandPool(fns.device, pool, nullptr);
	return r == VK_SUCCESS;
}

// What the AVVkFrame's buffer frees: the semaphores once FFmpeg's last submission on the frame
// (the one that signals its final sem_value) is done, and the AVVkFrame. Holds the frames
// context (and so the VkDevice) until then.
struct VkFrameOwner {
	VkDeviceFns fns;
	const AVHWDeviceContext *device = nullptr; // valid while `frames` is held
	uint32_t family = 0;
	int planes = 0;
	KeepAliveRef frames{};

	void free(AVVkFrame *f) const
	{
		VkSemaphoreWaitInfo wait{};
		wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
		wait.semaphoreCount = static_cast<uint32_t>(planes);
		wait.pSemaphores = f->sem;
		wait.pValues = f->sem_value;
		const bool idle =
			fns.WaitSemaphores(fns.device, &wait,
					   static_cast<uint64_t>(kDefaultWaitTimeout.count())) ==
				VK_SUCCESS &&
			restoreGeneral(fns, device, family, *f, planes, kDefaultWaitTimeout);
		if (idle) {
			for (int i = 0; i < planes; i++)
				fns.DestroySemaphore(fns.device, f->sem[i], nullptr);
		} else {
			// Destroying a semaphore a pending submission uses is undefined: keep them.
			av_log(nullptr, AV_LOG_WARNING,
			       "gpuhandle: FFmpeg's last submission on a wrapped Vulkan frame did not "
			       "finish in time; its semaphores are left alive.\n");
		}
		av_free(f);
	}
};

void destroySemaphores(const VkDeviceFns &fns, AVVkFrame *f, int planes)
{
	for (int i = 0; i < planes; i++)
		if (f->sem[i])
			fns.DestroySemaphore(fns.device, f->sem[i], nullptr);
	av_free(f);
}

bool imagesOn(const Frame &frame, VkDevice device)
{
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		const VulkanImage *image = frame.resource(r).get<VulkanImage>();
		if (!image || image->desc().device != static_cast<void *>(device))
			return false;
	}
	return true;
}

// A frame the planner brought to the device in other memory (buffers, after a copy from another
// device or API): copied by the device's backend into optimal images of its own, one per plane,
// left in GENERAL. The copy is done when this returns, so the source may be released at once.
Result<std::shared_ptr<HeldFrame>> copiedIntoImages(const Frame &frame,
						    const AVHWFramesContext &frames)
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
	Result<Frame> images = (*backend)->allocate(request);
	if (!images)
		return std::move(images).error();
	if (Status copied = (*backend)->copyFrame(*images, frame, kDefaultWaitTimeout); !copied)
		return std::move(copied).error();
	return std::make_shared<HeldFrame>(std::move(*images));
}

// Whether the frame is one multi-planar VkImage of `device` holding its `planes` planes as
// aspects, as a multi-planar frames context's AVVkFrames are.
bool isMultiPlanarImage(const Frame &frame, VkDevice device, int planes)
{
	if (frame.numResources() != 1 || frame.numPlanes() != static_cast<uint32_t>(planes))
		return false;
	const VulkanImage *image = frame.resource(0).get<VulkanImage>();
	if (!image || image->desc().device != static_cast<void *>(device) ||
	    image->desc().planes != static_cast<uint32_t>(planes))
		return false;
	for (uint32_t p = 0; p < frame.numPlanes(); p++)
		if (frame.plane(p).subresource != p || frame.plane(p).offset != 0)
			return false;
	return true;
}

// A frame in other images (one per plane) for a frames context of multi-planar images: copied
// into a frame of FFmpeg's own pool (its layout, memory and semaphores are FFmpeg's), which
// `out` then holds. The copy is done when this returns.
Status copiedIntoPoolFrame(const Frame &frame, AVBufferRef *hwFrames, AVFrame *out)
{
	std::unique_ptr<AVFrame, AvFrameFree> pooled(av_frame_alloc());
	if (!pooled)
		return Error(ErrorCode::OutOfMemory, "frame", "av_frame_alloc() failed.");
	if (int err = av_hwframe_get_buffer(hwFrames, pooled.get(), 0); err < 0)
		return Error::format(ErrorCode::Backend, "options.hwFrames",
				     "av_hwframe_get_buffer() failed: %s.",
				     avErrorText(err).c_str());
	// The frame's size within the pool's (possibly larger) images.
	pooled->width = static_cast<int>(frame.width());
	pooled->height = static_cast<int>(frame.height());
	Result<BackendRef> backend = backendForHwDevice(framesOf(hwFrames)->device_ref);
	if (!backend)
		return std::move(backend).error();
	{
		Result<Frame> target = frameFromAVFrame(pooled.get());
		if (!target) // its acquire point (the move to GENERAL) is waited for by the copy
			return std::move(target).error();
		if (Status copied = (*backend)->copyFrame(*target, frame, kDefaultWaitTimeout);
		    !copied)
			return Error::format(copied.error().code(), "frame",
					     "Copying the frame into a multi-planar frame of the "
					     "frames context failed: %s",
					     copied.error().message().c_str());
	}
	out->format = AV_PIX_FMT_VULKAN;
	out->data[0] = pooled->data[0];
	out->buf[0] = pooled->buf[0];
	pooled->buf[0] = nullptr;
	out->hw_frames_ctx = pooled->hw_frames_ctx;
	pooled->hw_frames_ctx = nullptr;
	return {};
}

} // namespace

Status wrapVulkanAVFrame(const std::shared_ptr<HeldFrame> &given, AVBufferRef *hwFrames,
			 AVFrame *out)
{
	const AVHWFramesContext &frames = *framesOf(hwFrames);
	const auto &hw = *static_cast<const AVVulkanDeviceContext *>(frames.device_ctx->hwctx);
	Result<std::shared_ptr<const VulkanDeviceFunctions>> functions =
		loadDeviceFunctions(*frames.device_ctx);
	if (!functions)
		return std::move(functions).error();
	const VkDeviceFns *fns = &(*functions)->table;
	std::shared_ptr<HeldFrame> held = given;
	if (!imagesOn(held->frame, fns->device)) {
		Result<std::shared_ptr<HeldFrame>> copied = copiedIntoImages(held->frame, frames);
		if (!copied)
			return Error::format(copied.error().code(), "frame",
					     "The frame is not in VkImages of the frames context's "
					     "device and copying it into some failed: %s",
					     copied.error().message().c_str());
		held = std::move(*copied);
	}
	if (!fns->CreateSemaphore || !fns->DestroySemaphore || !fns->WaitSemaphores ||
	    !fns->CreateFence || !fns->AllocateCommandBuffers || transferQueueFamily(hw) < 0)
		return Error(ErrorCode::NotSupported, "options.hwFrames",
			     "The FFmpeg Vulkan device lacks timeline semaphores or a transfer "
			     "queue.");
	const Frame &frame = held->frame;
	const int planes = av_pix_fmt_count_planes(frames.sw_format);
	const auto &fhw = *static_cast<const AVVulkanFramesContext *>(frames.hwctx);
	const int images = imagesPerFrame(fhw, planes);
	if (images == 1 && planes > 1 && !isMultiPlanarImage(frame, fns->device, planes)) {
		given->copiedBecause = "the frames context holds multi-planar images; the frame "
				       "has one image per plane";
		return copiedIntoPoolFrame(frame, hwFrames, out);
	}
	if (planes < 1 || planes > 4 || frame.numPlanes() != static_cast<uint32_t>(planes) ||
	    frame.numResources() != static_cast<uint32_t>(images))
		return Error::format(ErrorCode::NotSupported, "frame",
				     "The frames context's AVVkFrames have %d VkImages for %d "
				     "planes: the frame has %u resources for %u planes.",
				     images, planes, frame.numResources(), frame.numPlanes());
	std::array<const VulkanImageDesc *, 4> descs{};
	for (int i = 0; i < images; i++) {
		const auto p = static_cast<uint32_t>(i);
		const VulkanImage *image = frame.resource(p).get<VulkanImage>();
		if (!image || image->desc().device != static_cast<void *>(fns->device))
			return Error::format(ErrorCode::WrongKind, "frame",
					     "Resource %u is %s, not a VkImage of the frames "
					     "context's VkDevice.",
					     p,
					     image ? "a VkImage of another VkDevice"
						   : resourceKindName(frame.resource(p).kind()));
		const PlaneView &view = frame.plane(p);
		if (images > 1 && (view.resource != p || view.subresource != 0 || view.offset != 0))
			return Error::format(ErrorCode::NotSupported, "frame",
					     "Plane %u is not the whole of image %u.", p, p);
		descs[p] = &image->desc();
		if ((descs[p]->rowPitch != 0) != (descs[0]->rowPitch != 0))
			return Error(ErrorCode::NotSupported, "frame",
				     "The frame mixes linear and optimal images; an AVVkFrame has "
				     "one tiling.");
	}
	const bool linear = images > 1 ? descs[0]->rowPitch != 0 : frame.plane(0).stride != 0;

	AVVkFrame *f = av_vk_frame_alloc();
	if (!f)
		return Error(ErrorCode::OutOfMemory, "frame", "av_vk_frame_alloc() failed.");
	f->tiling = linear ? VK_IMAGE_TILING_LINEAR : VK_IMAGE_TILING_OPTIMAL;
	// flags 0 (no memory properties known): FFmpeg does not try to map the images.
	f->flags = static_cast<VkMemoryPropertyFlagBits>(0);
	VkSemaphoreTypeCreateInfo type{};
	type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
	type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
	type.initialValue = 0;
	VkSemaphoreCreateInfo semaphoreInfo{};
	semaphoreInfo.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
	semaphoreInfo.pNext = &type;
	for (int i = 0; i < images; i++) {
		f->img[i] = reinterpret_cast<VkImage>(descs[static_cast<size_t>(i)]->image);
		// A VulkanImage does not expose its VkDeviceMemory: FFmpeg cannot map these frames
		// (av_hwframe_map) or export them (to DRM, CUDA); transfers and filters work.
		f->mem[i] = VK_NULL_HANDLE;
		f->size[i] = 0;
		f->layout[i] = VK_IMAGE_LAYOUT_GENERAL;
		f->access[i] = static_cast<VkAccessFlagBits>(kGeneralAccess);
		f->sem_value[i] = 0;
#if GPUHANDLE_FFMPEG_VK_LOCKS
		f->queue_family[i] = VK_QUEUE_FAMILY_IGNORED;
#endif
		if (VkResult r =
			    fns->CreateSemaphore(fns->device, &semaphoreInfo, nullptr, &f->sem[i]);
		    r != VK_SUCCESS) {
			f->sem[i] = VK_NULL_HANDLE;
			destroySemaphores(*fns, f, images);
			return Error::format(ErrorCode::Backend, "frame",
					     "vkCreateSemaphore (timeline) failed: %s.",
					     vkResultText(r).c_str());
		}
	}
	// The owner's reference keeps the VkDevice until the semaphores are destroyed: without it
	// (out of memory) the AVVkFrame could outlive the device its free uses.
	KeepAliveRef framesHeld = holdAvBuffer(hwFrames);
	if (!framesHeld) {
		destroySemaphores(*fns, f, images);
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_ref() failed.");
	}
	VkFrameOwner owner{ *fns, frames.device_ctx, static_cast<uint32_t>(transferQueueFamily(hw)),
			    images, std::move(framesHeld) };
	auto *data = reinterpret_cast<uint8_t *>(f);
	AVBufferRef *buffer = bufferHolding(held, data, sizeof(AVVkFrame), [owner](uint8_t *freed) {
		owner.free(reinterpret_cast<AVVkFrame *>(freed));
	});
	if (!buffer) {
		destroySemaphores(*fns, f, images);
		return Error(ErrorCode::OutOfMemory, "frame", "av_buffer_create() failed.");
	}
	out->format = AV_PIX_FMT_VULKAN;
	out->data[0] = data;
	out->buf[0] = buffer;
	return {};
}

} // namespace gpuhandle::ffmpeg::detail

#else // !GPUHANDLE_FFMPEG_HAVE_VULKAN_H

namespace gpuhandle::ffmpeg::detail {

Status wrapVulkanAVFrame(const std::shared_ptr<HeldFrame> &, AVBufferRef *, AVFrame *)
{
	return Error(ErrorCode::NotSupported, "options.hwFrames",
		     "libgpuhandle-ffmpeg was built without Vulkan headers (vulkan.h), so it "
		     "cannot make AVVkFrames.");
}

} // namespace gpuhandle::ffmpeg::detail

#endif
