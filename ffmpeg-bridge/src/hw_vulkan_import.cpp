// AV_PIX_FMT_VULKAN AVFrame -> Frame: the AVVkFrame's images or their memory, moved to GENERAL.
#include "hw_frames.h"

#if GPUHANDLE_FFMPEG_HAVE_VULKAN_H

#include <gpuhandle/backends/vulkan_sync.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/vulkan_resources.h>

#include "hw_device_internal.h"
#include "hw_vulkan_internal.h"

#include <array>
#include <cinttypes>

extern "C" {
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::ffmpeg::detail {

namespace {

constexpr VkAccessFlags kGeneralAccess = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
constexpr VkExternalMemoryHandleTypeFlagBits kOpaqueFd =
	VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

// The command pool and fence of one submission. Choice: a pool per call, freed once the fence
// signals, waited for (bounded by the import's timeout) only when the Frame's last copy goes.
// So frameFromAVFrame() never blocks on the GPU (the acquire point carries completion), and no
// per-device registry has to outlive FFmpeg devices whose free we cannot hook; by the time a
// Frame is dropped its consumers have waited for the acquire point, so the wait is immediate.
class Submission final
{
public:
	Submission(const VkDeviceFns &fns, WaitDuration timeout) : fns_(fns), timeout_(timeout) {}
	Submission(const Submission &) = delete;
	Submission &operator=(const Submission &) = delete;
	~Submission()
	{
		if (fence && submitted) {
			const auto ns =
				static_cast<uint64_t>(timeout_.count() > 0 ? timeout_.count() : 0);
			if (VkResult r = fns_.WaitForFences(fns_.device, 1, &fence, VK_TRUE, ns);
			    r != VK_SUCCESS) {
				// Still running (or the device is lost): freeing would be
				// undefined.
				av_log(nullptr, AV_LOG_WARNING,
				       "gpuhandle: a Vulkan frame's layout submission did not finish "
				       "(%s); its command pool is left allocated.\n",
				       vkResultText(r).c_str());
				return;
			}
		}
		if (fence)
			fns_.DestroyFence(fns_.device, fence, nullptr);
		if (pool)
			fns_.DestroyCommandPool(fns_.device, pool, nullptr);
	}

	VkCommandPool pool = VK_NULL_HANDLE;
	VkFence fence = VK_NULL_HANDLE;
	bool submitted = false;

private:
	VkDeviceFns fns_;
	WaitDuration timeout_;
};

// What every resource and the acquire point of the Frame hold: the submission (freed first, while
// the device is still held), the exported fds, then the AVFrame's buffers and frames context.
struct VkFrameAnchor final : public KeepAlive {
	std::shared_ptr<AvBuffersAnchor> buffers{};
	std::array<UniqueFd, 4> fds{};
	std::unique_ptr<Submission> submission{};
};

// The size FFmpeg gave plane `plane`'s image (get_plane_wh: chroma planes of planar YUV are
// subsampled, rounding up).
void planeExtent(const AVHWFramesContext &frames, int plane, uint32_t &width, uint32_t &height)
{
	const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(frames.sw_format);
	width = static_cast<uint32_t>(frames.width);
	height = static_cast<uint32_t>(frames.height);
	if (plane == 0 || plane == 3 || (desc->flags & AV_PIX_FMT_FLAG_RGB) ||
	    !(desc->flags & AV_PIX_FMT_FLAG_PLANAR))
		return;
	width = (width + (1u << desc->log2_chroma_w) - 1) >> desc->log2_chroma_w;
	height = (height + (1u << desc->log2_chroma_h) - 1) >> desc->log2_chroma_h;
}

// Whether FFmpeg allocated the frames' memory exportable as an opaque fd: it asks the same
// question (try_export_flags) with the device's VK_KHR_external_memory_fd.
Status checkExportable(const VkDeviceFns &fns, const AVHWFramesContext &frames,
		       const AVVulkanDeviceContext &hw, const AVVulkanFramesContext &fhw)
{
	if (!hasDeviceExtension(hw, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) ||
	    !fns.GetMemoryFdKHR)
		return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
			     "The FFmpeg Vulkan device was made without VK_KHR_external_memory_fd, "
			     "so FFmpeg allocated no exportable memory.");
	if (fhw.tiling == VK_IMAGE_TILING_DRM_FORMAT_MODIFIER_EXT)
		return Error(
			ErrorCode::NotSupported, "options.exportVulkanMemory",
			"The frames use DRM-modifier tiling, whose modifier and plane layout an "
			"opaque fd does not carry.");
#if GPUHANDLE_FFMPEG_VK_CONTIGUOUS
	if (fhw.flags & AV_VK_FRAME_FLAG_CONTIGUOUS_MEMORY)
		return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
			     "The frames context allocates all planes in one VkDeviceMemory "
			     "(AV_VK_FRAME_FLAG_CONTIGUOUS_MEMORY): one opaque fd per plane image "
			     "cannot describe memory shared between planes.");
#endif
	if (!fns.GetPhysicalDeviceImageFormatProperties2)
		return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
			     "The loader resolves no vkGetPhysicalDeviceImageFormatProperties2 to "
			     "check that the memory is exportable.");
	VkPhysicalDeviceExternalImageFormatInfo external{};
	external.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO;
	external.handleType = kOpaqueFd;
	VkPhysicalDeviceImageFormatInfo2 info{};
	info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2;
	info.pNext = &external;
	info.format = av_vkfmt_from_pixfmt(frames.sw_format)[0];
	info.type = VK_IMAGE_TYPE_2D;
	info.tiling = fhw.tiling;
	info.usage = static_cast<VkImageUsageFlags>(fhw.usage);
	info.flags = VK_IMAGE_CREATE_ALIAS_BIT;
	VkExternalImageFormatProperties answer{};
	answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES;
	VkImageFormatProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2;
	properties.pNext = &answer;
	const VkResult r =
		fns.GetPhysicalDeviceImageFormatProperties2(fns.physical, &info, &properties);
	if (r != VK_SUCCESS || !(answer.externalMemoryProperties.externalMemoryFeatures &
				 VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
		return Error::format(
			ErrorCode::NotSupported, "options.exportVulkanMemory",
			"The driver cannot export these images' memory as an opaque fd "
			"(%s), so FFmpeg allocated it unexportable.",
			vkResultText(r).c_str());
	return {};
}

// The memory of image `i` exported as an opaque fd, with what an importer rebuilds it from.
Result<VulkanMemoryFd> exportPlane(const VkDeviceFns &fns, const AVHWFramesContext &frames,
				   const AVVulkanFramesContext &fhw, const AVVkFrame &f, int i,
				   const VkDeviceUuids &uuids,
				   const std::shared_ptr<VkFrameAnchor> &anchor)
{
	for (int j = 0; j < i; j++)
		if (f.mem[j] == f.mem[i])
			return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
				     "Two plane images share one VkDeviceMemory: one opaque fd per "
				     "plane cannot describe it.");
	if (f.offset[i] != 0)
		return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
			     "A plane image is bound at an offset into its memory.");
	VkMemoryDedicatedRequirements dedicated{};
	dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS;
	VkMemoryRequirements2 requirements{};
	requirements.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2;
	requirements.pNext = &dedicated;
	VkImageMemoryRequirementsInfo2 which{};
	which.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_REQUIREMENTS_INFO_2;
	which.image = f.img[i];
	fns.GetImageMemoryRequirements2(fns.device, &which, &requirements);
	// FFmpeg's alloc_mem: the first allowed type with the wanted property whose heap is large
	// enough (the spec orders types best first).
	VkPhysicalDeviceMemoryProperties memory{};
	fns.GetPhysicalDeviceMemoryProperties(fns.physical, &memory);
	const VkMemoryPropertyFlags wanted = f.tiling == VK_IMAGE_TILING_LINEAR
						     ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT
						     : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	int type = -1;
	for (uint32_t t = 0; t < memory.memoryTypeCount && type < 0; t++)
		if ((requirements.memoryRequirements.memoryTypeBits & (1u << t)) &&
		    (memory.memoryTypes[t].propertyFlags & wanted) == wanted &&
		    f.size[i] <= memory.memoryHeaps[memory.memoryTypes[t].heapIndex].size)
			type = static_cast<int>(t);
	if (type < 0)
		return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
			     "No memory type matches the one FFmpeg chose for the plane image.");
	VkMemoryGetFdInfoKHR get{};
	get.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
	get.memory = f.mem[i];
	get.handleType = kOpaqueFd;
	int fd = -1;
	if (VkResult r = fns.GetMemoryFdKHR(fns.device, &get, &fd); r != VK_SUCCESS || fd < 0)
		return Error::format(
			ErrorCode::NotSupported, "options.exportVulkanMemory",
			"vkGetMemoryFdKHR refused the plane image's memory (%s): it was "
			"not allocated exportable.",
			vkResultText(r).c_str());
	// The anchor owns the fd (closed once, with the anchor) and the AVFrame's buffers: while
	// the export is used, FFmpeg's pool cannot hand the frame out again.
	anchor->fds[static_cast<size_t>(i)] = UniqueFd(fd);
	VulkanMemoryFdDesc desc;
	desc.fd = SharedFd::borrow(fd, anchor);
	VulkanExportDesc &x = desc.exportDesc;
	x.allocationSize = f.size[i];
	x.memoryTypeIndex = static_cast<uint32_t>(type);
	x.dedicated = dedicated.prefersDedicatedAllocation || dedicated.requiresDedicatedAllocation;
	x.format = static_cast<uint32_t>(av_vkfmt_from_pixfmt(frames.sw_format)[i]);
	planeExtent(frames, i, x.width, x.height);
	x.depth = 1;
	x.tiling = static_cast<uint32_t>(f.tiling);
	x.usage = static_cast<uint32_t>(fhw.usage);
	desc.deviceUuid = uuids.device;
	desc.driverUuid = uuids.driver;
	return VulkanMemoryFd::create(std::move(desc));
}

// Records and submits the barrier of each of the `planes` images to GENERAL (one multi-planar
// image has one barrier, of all its planes), waiting for sem[i] at
// sem_value[i] and signalling sem_value[i] + 1, then updates the AVVkFrame. `release`: the
// images go to VK_QUEUE_FAMILY_EXTERNAL (another device or API reads the exported memory), as
// FFmpeg's own export does. `signalled` gets sem[0]'s new value, read while the frame is locked:
// once it is unlocked another thread may submit on the frame and raise sem_value again.
Status submitToGeneral(const VkDeviceFns &fns, AVHWFramesContext &frames, AVVkFrame &f, int planes,
		       uint32_t family, bool release, Submission &s, WaitDuration timeout,
		       uint64_t &signalled)
{
	VkCommandPoolCreateInfo poolInfo{};
	poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
	poolInfo.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
	poolInfo.queueFamilyIndex = family;
	if (VkResult r = fns.CreateCommandPool(fns.device, &poolInfo, nullptr, &s.pool);
	    r != VK_SUCCESS) {
		s.pool = VK_NULL_HANDLE;
		return Error::format(ErrorCode::Backend, "frame", "vkCreateCommandPool: %s.",
				     vkResultText(r).c_str());
	}
	VkFenceCreateInfo fenceInfo{};
	fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
	if (VkResult r = fns.CreateFence(fns.device, &fenceInfo, nullptr, &s.fence);
	    r != VK_SUCCESS) {
		s.fence = VK_NULL_HANDLE;
		return Error::format(ErrorCode::Backend, "frame", "vkCreateFence: %s.",
				     vkResultText(r).c_str());
	}
	VkCommandBufferAllocateInfo bufferInfo{};
	bufferInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
	bufferInfo.commandPool = s.pool;
	bufferInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
	bufferInfo.commandBufferCount = 1;
	VkCommandBuffer commands = VK_NULL_HANDLE;
	if (VkResult r = fns.AllocateCommandBuffers(fns.device, &bufferInfo, &commands);
	    r != VK_SUCCESS)
		return Error::format(ErrorCode::Backend, "frame", "vkAllocateCommandBuffers: %s.",
				     vkResultText(r).c_str());

	auto *device = frames.device_ctx;
	std::shared_ptr<std::recursive_mutex> lock = deviceSubmitLock(device);
	if (!lockWithin(*lock, timeout))
		return Error(ErrorCode::Timeout, "frame",
			     "The FFmpeg Vulkan device's submit lock stayed taken for the whole "
			     "timeout.");
	std::lock_guard<std::recursive_mutex> held(*lock, std::adopt_lock);
#if GPUHANDLE_FFMPEG_VK_LOCKS
	auto *fhw = static_cast<AVVulkanFramesContext *>(frames.hwctx);
	if (fhw->lock_frame)
		fhw->lock_frame(&frames, &f);
#endif
	std::array<VkImageMemoryBarrier, 4> barriers{};
	std::array<uint64_t, 4> waits{}, signals{};
	std::array<VkPipelineStageFlags, 4> stages{};
	for (int i = 0; i < planes; i++) {
		VkImageMemoryBarrier &b = barriers[static_cast<size_t>(i)];
		b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
		b.srcAccessMask = static_cast<VkAccessFlags>(f.access[i]);
		b.dstAccessMask = kGeneralAccess;
		b.oldLayout = f.layout[i];
		b.newLayout = VK_IMAGE_LAYOUT_GENERAL;
		uint32_t owner = VK_QUEUE_FAMILY_IGNORED;
#if GPUHANDLE_FFMPEG_VK_LOCKS
		owner = f.queue_family[i];
#endif
		// Exported memory is read by another device or API, which acquires the image from
		// VK_QUEUE_FAMILY_EXTERNAL (as gpuhandle's backends do); FFmpeg 5.1 itself releases
		// an image the same way before its own exports and never acquires it back.
		if (release) {
			b.srcQueueFamilyIndex = owner == VK_QUEUE_FAMILY_IGNORED ? family : owner;
			b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
		} else {
			b.srcQueueFamilyIndex = owner;
			b.dstQueueFamilyIndex = owner == VK_QUEUE_FAMILY_IGNORED ? owner : family;
		}
		b.image = f.img[i];
		b.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 };
		waits[static_cast<size_t>(i)] = f.sem_value[i];
		signals[static_cast<size_t>(i)] = f.sem_value[i] + 1;
		stages[static_cast<size_t>(i)] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	}
	// A release to VK_QUEUE_FAMILY_EXTERNAL changes no layout on this device until an acquire
	// here (the validation layer, like the spec, performs a transfer's layout change as part of
	// the acquire, and FFmpeg never acquires its images back): so the move to GENERAL is a
	// barrier of its own, and the release that follows keeps GENERAL. FFmpeg's next use of the
	// pooled frame then starts from the GENERAL that layout[] says.
	std::array<VkImageMemoryBarrier, 4> releases{};
	if (release) {
		for (int i = 0; i < planes; i++) {
			VkImageMemoryBarrier &b = barriers[static_cast<size_t>(i)];
			VkImageMemoryBarrier &r = releases[static_cast<size_t>(i)];
			r = b;
			r.srcAccessMask = kGeneralAccess;
			r.dstAccessMask = 0;
			r.oldLayout = VK_IMAGE_LAYOUT_GENERAL;
			b.dstQueueFamilyIndex = b.srcQueueFamilyIndex == family
							? VK_QUEUE_FAMILY_IGNORED
							// Acquired here first when FFmpeg's frame
							// is another family's.
							: family;
			b.srcQueueFamilyIndex = b.srcQueueFamilyIndex == family
							? VK_QUEUE_FAMILY_IGNORED
							: b.srcQueueFamilyIndex;
			r.srcQueueFamilyIndex = family;
		}
	}
	VkCommandBufferBeginInfo begin{};
	begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
	begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
	VkResult r = fns.BeginCommandBuffer(commands, &begin);
	if (r == VK_SUCCESS) {
		fns.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
				       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
				       nullptr, static_cast<uint32_t>(planes), barriers.data());
		if (release)
			fns.CmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
					       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0,
					       nullptr, static_cast<uint32_t>(planes),
					       releases.data());
		r = fns.EndCommandBuffer(commands);
	}
	if (r == VK_SUCCESS) {
		VkTimelineSemaphoreSubmitInfo timeline{};
		timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
		timeline.waitSemaphoreValueCount = static_cast<uint32_t>(planes);
		timeline.pWaitSemaphoreValues = waits.data();
		timeline.signalSemaphoreValueCount = static_cast<uint32_t>(planes);
		timeline.pSignalSemaphoreValues = signals.data();
		VkSubmitInfo submit{};
		submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
		submit.pNext = &timeline;
		submit.waitSemaphoreCount = static_cast<uint32_t>(planes);
		submit.pWaitSemaphores = f.sem;
		submit.pWaitDstStageMask = stages.data();
		submit.commandBufferCount = 1;
		submit.pCommandBuffers = &commands;
		submit.signalSemaphoreCount = static_cast<uint32_t>(planes);
		submit.pSignalSemaphores = f.sem;
		VkQueue queue = VK_NULL_HANDLE;
		fns.GetDeviceQueue(fns.device, family, 0, &queue);
		ffmpegQueueLock(device, family, true);
		r = fns.QueueSubmit(queue, 1, &submit, s.fence);
		ffmpegQueueLock(device, family, false);
	}
	if (r == VK_SUCCESS) {
		s.submitted = true;
		signalled = signals[0];
		for (int i = 0; i < planes; i++) {
			f.layout[i] = VK_IMAGE_LAYOUT_GENERAL;
			f.access[i] = static_cast<VkAccessFlagBits>(kGeneralAccess);
			f.sem_value[i]++;
#if GPUHANDLE_FFMPEG_VK_LOCKS
			f.queue_family[i] =
				release ? VK_QUEUE_FAMILY_EXTERNAL
					: barriers[static_cast<size_t>(i)].dstQueueFamilyIndex;
#endif
		}
	}
#if GPUHANDLE_FFMPEG_VK_LOCKS
	if (fhw->unlock_frame)
		fhw->unlock_frame(&frames, &f);
#endif
	if (r != VK_SUCCESS)
		return Error::format(ErrorCode::Backend, "frame",
				     "Moving the AVVkFrame's images to GENERAL failed (%s).",
				     vkResultText(r).c_str());
	return {};
}

} // namespace

Result<Frame> frameFromVulkanAVFrame(const HwImport &in)
{
	auto &frames = *reinterpret_cast<AVHWFramesContext *>(in.frame->hw_frames_ctx->data);
	const auto &hw = *static_cast<const AVVulkanDeviceContext *>(frames.device_ctx->hwctx);
	const auto &fhw = *static_cast<const AVVulkanFramesContext *>(frames.hwctx);
	auto &f = *reinterpret_cast<AVVkFrame *>(in.frame->data[0]);
	Result<std::shared_ptr<const VulkanDeviceFunctions>> functions =
		loadDeviceFunctions(*frames.device_ctx);
	if (!functions)
		return std::move(functions).error();
	const VkDeviceFns *fns = &(*functions)->table;
	const int planes = av_pix_fmt_count_planes(frames.sw_format);
	const PixelFormatInfo &info = **pixelFormatInfo(in.format);
	if (planes < 1 || planes > 4 || static_cast<uint32_t>(planes) != info.numPlanes ||
	    !av_vkfmt_from_pixfmt(frames.sw_format))
		return Error::format(
			ErrorCode::FormatMismatch, "frame.hw_frames_ctx",
			"The frames' sw_format has %d planes and no Vulkan layout gpuhandle's %s "
			"(%u planes) matches.",
			planes, info.name, info.numPlanes);
	const int images = imagesPerFrame(fhw, planes);
	for (int i = 0; i < images; i++)
		if (!f.img[i] || !f.sem[i])
			return Error::format(
				ErrorCode::InvalidArgument, "frame.data",
				"The AVVkFrame has no image or semaphore %d of its %d.", i, images);
	if (images == 1 && planes > 1 && in.options.exportVulkanMemory)
		return Error(ErrorCode::NotSupported, "options.exportVulkanMemory",
			     "The frames are multi-planar VkImages (FFmpeg 6.1+'s default); "
			     "gpuhandle exports the memory of one image per plane as opaque fds "
			     "(make the frames context with AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE).");
	const int transfer = transferQueueFamily(hw);
	if (transfer < 0)
		return Error(ErrorCode::NotSupported, "frame.hw_frames_ctx",
			     "The FFmpeg Vulkan device has no transfer queue family.");
	if (!fns->WaitSemaphores || !fns->GetSemaphoreCounterValue || !fns->CreateFence ||
	    !fns->AllocateCommandBuffers || !fns->CmdPipelineBarrier ||
	    !fns->GetImageMemoryRequirements2 || !fns->GetImageSubresourceLayout ||
	    !fns->GetPhysicalDeviceMemoryProperties)
		return Error(ErrorCode::NotSupported, "frame.hw_frames_ctx",
			     "The FFmpeg Vulkan device lacks an entry point the import needs "
			     "(timeline semaphores, Vulkan 1.1 memory requirements).");
	const bool exporting = in.options.exportVulkanMemory;
	if (exporting)
		if (Status exportable = checkExportable(*fns, frames, hw, fhw); !exportable)
			return std::move(exportable).error();
	const VkDeviceUuids uuids = deviceUuidsOf(*fns);
	auto anchor = std::make_shared<VkFrameAnchor>();
	anchor->buffers = in.anchor;
	anchor->submission = std::make_unique<Submission>(*fns, in.options.timeout);

	FrameDesc desc;
	desc.format = in.format;
	desc.width = in.width;
	desc.height = in.height;
	desc.colorimetry = in.colorimetry;
	desc.numResources = static_cast<uint32_t>(images);
	desc.numPlanes = static_cast<uint32_t>(planes);
	// The memory is exported before the submission: a refusal then leaves the AVVkFrame as it
	// was (no semaphore value spent).
	for (int i = 0; i < planes; i++) {
		const auto p = static_cast<uint32_t>(i);
		// Plane i: image i, or aspect PLANE_i of the one multi-planar image.
		const int image = images == 1 ? 0 : i;
		const VkImageAspectFlags aspect =
			vulkanPlaneAspect(images == 1 ? static_cast<uint32_t>(planes) : 1, p);
		uint32_t rowPitch = 0;
		if (f.tiling == VK_IMAGE_TILING_LINEAR) {
			VkImageSubresource sub{ aspect, 0, 0 };
			VkSubresourceLayout layout{};
			fns->GetImageSubresourceLayout(fns->device, f.img[image], &sub, &layout);
			if (layout.rowPitch > UINT32_MAX || (images > 1 && layout.offset != 0))
				return Error(
					ErrorCode::NotSupported, "frame.data",
					"A linear plane image's row pitch or offset is not one "
					"gpuhandle describes.");
			rowPitch = static_cast<uint32_t>(layout.rowPitch);
		}
		if (images == 1 && planes > 1) {
			// The plane's pitch is the view's; the image's offsets are its aspects'.
			desc.planes[p] = PlaneView{ 0, p, 0, rowPitch };
			if (p > 0)
				continue;
		} else {
			desc.planes[p] = PlaneView{ p, 0, 0, rowPitch };
		}
		if (exporting) {
			Result<VulkanMemoryFd> memory =
				exportPlane(*fns, frames, fhw, f, i, uuids, anchor);
			if (!memory)
				return std::move(memory).error();
			desc.resources[p] = Resource(std::move(*memory));
			continue;
		}
		VulkanImageDesc made;
		made.image = reinterpret_cast<uint64_t>(f.img[image]);
		made.device = fns->device;
		made.deviceUuid = uuids.device;
		made.rowPitch = images == 1 && planes > 1 ? 0 : rowPitch;
		made.planes = images == 1 ? static_cast<uint32_t>(planes) : 1;
		made.anchor = anchor;
		Result<VulkanImage> resource = VulkanImage::create(std::move(made));
		if (!resource)
			return std::move(resource).error();
		desc.resources[p] = Resource(std::move(*resource));
	}
	const auto family = static_cast<uint32_t>(transfer);
	uint64_t signalled = 0;
	if (Status moved = submitToGeneral(*fns, frames, f, images, family, exporting,
					   *anchor->submission, in.options.timeout, signalled);
	    !moved)
		return std::move(moved).error();
	// Every image's semaphore is signalled by the one submission, after all its commands:
	// sem[0] reaching its value says that the work on every image is done (the other semaphores
	// may reach theirs an instant later; Vulkan does not signal a batch's semaphores at once).
	VulkanDeviceDispatch dispatch;
	dispatch.device = fns->device;
	dispatch.getDeviceProcAddr = reinterpret_cast<void *>(fns->getDeviceProcAddr);
	dispatch.functions = *functions; // resolved once above: the import looks nothing up
	VulkanSemaphoreSync raw;
	raw.semaphore = reinterpret_cast<uint64_t>(f.sem[0]);
	raw.kind = VulkanSemaphoreKind::Timeline;
	raw.value = signalled;
	raw.device = fns->device;
	Result<SyncPoint> acquire = importVulkanSemaphore(raw, dispatch, anchor);
	if (!acquire)
		return std::move(acquire).error();
	desc.acquire = std::move(*acquire);
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle::ffmpeg::detail

#else // !GPUHANDLE_FFMPEG_HAVE_VULKAN_H

namespace gpuhandle::ffmpeg::detail {

Result<Frame> frameFromVulkanAVFrame(const HwImport &)
{
	return Error(ErrorCode::NotSupported, "frame",
		     "libgpuhandle-ffmpeg was built without Vulkan headers (vulkan.h), so it "
		     "cannot read AVVkFrames.");
}

} // namespace gpuhandle::ffmpeg::detail

#endif
