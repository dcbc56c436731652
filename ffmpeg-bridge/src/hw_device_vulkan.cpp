// AVVulkanDeviceContext <-> VulkanContext: FFmpeg devices inside a VkDevice, Contexts over them.
#include "hw_device_internal.h"

#if GPUHANDLE_FFMPEG_HAVE_VULKAN_H

#include "hw_vulkan_internal.h"
#include "runtime_library.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuhandle::ffmpeg::detail {

namespace {

// The one table (shared/vulkan_dispatch.h, through loadVulkanDeviceFunctions) of the device
// `get_proc_addr` reaches: its vkGetDeviceProcAddr first. Nothing is required here: the callers
// check what they call. Errors: NotSupported without vkGetDeviceProcAddr.
Result<std::shared_ptr<const VulkanDeviceFunctions>>
functionsOf(PFN_vkGetInstanceProcAddr getProcAddr, VkInstance instance, VkPhysicalDevice physical,
	    VkDevice device, const char *field)
{
	auto getDeviceProcAddr = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
		getProcAddr(instance, "vkGetDeviceProcAddr"));
	if (!getDeviceProcAddr)
		return Error::format(ErrorCode::NotSupported, field,
				     "The Vulkan loader resolves no vkGetDeviceProcAddr.");
	VulkanDeviceDispatch dispatch;
	dispatch.device = device;
	dispatch.getDeviceProcAddr = reinterpret_cast<void *>(getDeviceProcAddr);
	return loadVulkanDeviceFunctions(dispatch, { instance, physical,
						     reinterpret_cast<void *>(getProcAddr) });
}

// The tables of the devices the bridge has met, so that a frame's import resolves nothing:
// FFmpeg's device context has no slot of gpuhandle's. Keyed by the device's handles and loader;
// an entry is never freed (a device made again at the same handles is the same driver's, whose
// entry points these are) and is read without a lock. Past kCachedDevices devices, each call
// resolves its own table.
struct CachedFunctions {
	VkDevice device;
	VkInstance instance;
	VkPhysicalDevice physical;
	PFN_vkGetInstanceProcAddr getProcAddr;
	std::shared_ptr<const VulkanDeviceFunctions> functions;

	bool is(const AVVulkanDeviceContext &hw) const
	{
		return device == hw.act_dev && instance == hw.inst && physical == hw.phys_dev &&
		       getProcAddr == hw.get_proc_addr;
	}
};
constexpr size_t kCachedDevices = 64;
std::array<std::atomic<const CachedFunctions *>, kCachedDevices> gCachedFunctions{};
std::mutex gCachedFunctionsMutex; // serialises insertions only

std::shared_ptr<const VulkanDeviceFunctions> cachedFunctions(const AVVulkanDeviceContext &hw)
{
	for (const auto &slot : gCachedFunctions) {
		const CachedFunctions *entry = slot.load(std::memory_order_acquire);
		if (!entry)
			break;
		if (entry->is(hw))
			return entry->functions;
	}
	return nullptr;
}

void cacheFunctions(const AVVulkanDeviceContext &hw,
		    const std::shared_ptr<const VulkanDeviceFunctions> &functions)
{
	std::lock_guard<std::mutex> lock(gCachedFunctionsMutex);
	for (auto &slot : gCachedFunctions) {
		const CachedFunctions *entry = slot.load(std::memory_order_acquire);
		if (entry && entry->is(hw))
			return;
		if (!entry) {
			slot.store(new CachedFunctions{ hw.act_dev, hw.inst, hw.phys_dev,
							hw.get_proc_addr, functions },
				   std::memory_order_release);
			return;
		}
	}
}

// What an FFmpeg device made over a Context points into: FFmpeg keeps the pointers to the
// extension names and the feature chain for the device's life, so they live in the anchor of
// the Context copy that the device holds (freed with the device, after FFmpeg's own free).
struct DeviceStorage final : public KeepAlive {
	DeviceStorage() = default;
	DeviceStorage(const DeviceStorage &) = delete;
	DeviceStorage &operator=(const DeviceStorage &) = delete;
	~DeviceStorage() override = default;

	ContextRef original{}; // the caller's Context (and so its anchor)
	std::vector<std::string> instanceExtensions{};
	std::vector<std::string> deviceExtensions{};
	std::vector<const char *> instanceNames{};
	std::vector<const char *> deviceNames{};
	VkPhysicalDeviceVulkan12Features features12{};
	VkPhysicalDeviceVulkan13Features features13{};
};

// The loader's vkGetInstanceProcAddr, from libvulkan.so.1 (never dlclose()d: RuntimeLibrary).
Status loaderEntry(PFN_vkGetInstanceProcAddr &entry)
{
	RuntimeLibrary loader(
		"libvulkan.so.1",
		"The Vulkan context names no vkGetInstanceProcAddr, and the Vulkan loader",
		"context.getInstanceProcAddr");
	loader.need("vkGetInstanceProcAddr", entry);
	if (loader.failure())
		return *loader.failure();
	return {};
}

// Whether the device can use timeline semaphores, which FFmpeg's frames need (every AVVkFrame
// submission waits and signals them): the physical device offers the feature and the device
// resolves the calls. Whether the host enabled the feature is not in a VulkanContext; a device
// that resolves the calls of a 1.2 device is taken to have it (as the gpuhandle backend does).
bool timelineUsable(const VkDeviceFns &fns)
{
	auto features2 = fns.GetPhysicalDeviceFeatures2;
	if (!features2 || !fns.GetSemaphoreCounterValue || !fns.WaitSemaphores)
		return false;
	VkPhysicalDeviceTimelineSemaphoreFeatures timeline{};
	timeline.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
	VkPhysicalDeviceFeatures2 features{};
	features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	features.pNext = &timeline;
	features2(fns.physical, &features);
	return timeline.timelineSemaphore == VK_TRUE;
}

#if GPUHANDLE_FFMPEG_VK_LOCK_QUEUE
// FFmpeg's queue lock calls the host's lock of the queue, so that FFmpeg's submissions and the
// host's exclude each other (the device holds the Context, and so the lock, until it is freed).
void lockHostQueue(AVHWDeviceContext *device, uint32_t, uint32_t)
{
	const auto *context = static_cast<const ContextRef *>(device->user_opaque);
	if (context && *context)
		if (Result<const VulkanContext *> vk = (*context)->vulkan(); vk && (*vk)->queueLock)
			(*vk)->queueLock(true);
}
void unlockHostQueue(AVHWDeviceContext *device, uint32_t, uint32_t)
{
	const auto *context = static_cast<const ContextRef *>(device->user_opaque);
	if (context && *context)
		if (Result<const VulkanContext *> vk = (*context)->vulkan(); vk && (*vk)->queueLock)
			(*vk)->queueLock(false);
}
#endif

} // namespace

Result<std::shared_ptr<const VulkanDeviceFunctions>>
loadDeviceFunctions(const AVHWDeviceContext &device)
{
	const auto *hw = static_cast<const AVVulkanDeviceContext *>(device.hwctx);
	if (!hw->get_proc_addr || !hw->act_dev)
		return Error(ErrorCode::NotSupported, "device",
			     "The FFmpeg Vulkan device has no get_proc_addr or no VkDevice (was it "
			     "initialised?).");
	if (std::shared_ptr<const VulkanDeviceFunctions> cached = cachedFunctions(*hw))
		return cached;
	Result<std::shared_ptr<const VulkanDeviceFunctions>> functions =
		functionsOf(hw->get_proc_addr, hw->inst, hw->phys_dev, hw->act_dev, "device");
	if (!functions)
		return functions;
	const VkDeviceFns &fns = (*functions)->table;
	const char *missing = !fns.GetPhysicalDeviceProperties2 ? "vkGetPhysicalDeviceProperties2"
			      : !fns.GetDeviceQueue             ? "vkGetDeviceQueue"
			      : !fns.CreateCommandPool          ? "vkCreateCommandPool"
			      : !fns.QueueSubmit                ? "vkQueueSubmit"
								: nullptr;
	if (missing)
		return Error::format(ErrorCode::NotSupported, "device",
				     "The FFmpeg Vulkan device resolves no %s.", missing);
	cacheFunctions(*hw, *functions);
	return functions;
}

VkDeviceUuids deviceUuidsOf(const VkDeviceFns &fns)
{
	VkPhysicalDeviceIDProperties id{};
	id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &id;
	fns.GetPhysicalDeviceProperties2(fns.physical, &properties);
	VkDeviceUuids uuids;
	std::memcpy(uuids.device.data(), id.deviceUUID, VK_UUID_SIZE);
	std::memcpy(uuids.driver.data(), id.driverUUID, VK_UUID_SIZE);
	return uuids;
}

bool hasDeviceExtension(const AVVulkanDeviceContext &hw, const char *name)
{
	for (int i = 0; i < hw.nb_enabled_dev_extensions; i++)
		if (hw.enabled_dev_extensions[i] &&
		    std::strcmp(hw.enabled_dev_extensions[i], name) == 0)
			return true;
	return false;
}

int imagesPerFrame(const AVVulkanFramesContext &fhw, int planes)
{
#if GPUHANDLE_FFMPEG_VK_LOCKS
	if (planes > 1 && fhw.format[0] != VK_FORMAT_UNDEFINED &&
	    fhw.format[1] == VK_FORMAT_UNDEFINED)
		return 1;
#else
	(void)fhw;
#endif
	return planes;
}

Status requestVulkanPlaneImages(AVHWFramesContext &frames)
{
#if GPUHANDLE_FFMPEG_VK_LOCKS // FFmpeg 6.1+: multi-planar images unless told otherwise
	auto *fhw = static_cast<AVVulkanFramesContext *>(frames.hwctx);
	fhw->flags = static_cast<AVVkFrameFlags>(fhw->flags | AV_VK_FRAME_FLAG_DISABLE_MULTIPLANE);
#else
	(void)frames;
#endif
	return {};
}

int transferQueueFamily(const AVVulkanDeviceContext &hw)
{
#if GPUHANDLE_FFMPEG_VK_QF
	// Graphics and compute families can transfer whether or not they say so.
	constexpr VkQueueFlags kAny = VK_QUEUE_TRANSFER_BIT | VK_QUEUE_GRAPHICS_BIT |
				      VK_QUEUE_COMPUTE_BIT;
	for (const VkQueueFlags wanted : { static_cast<VkQueueFlags>(VK_QUEUE_TRANSFER_BIT), kAny })
		for (int i = 0; i < hw.nb_qf; i++)
			if (hw.qf[i].num > 0 &&
			    (static_cast<VkQueueFlags>(hw.qf[i].flags) & wanted))
				return hw.qf[i].idx;
	return -1;
#else
	return hw.queue_family_tx_index;
#endif
}

// lock_queue is deprecated (FF_API_VULKAN_SYNC_QUEUES) from lavu 60 but FFmpeg still takes it
// around its submissions: gpuhandle's must take it too, so the warning is silenced here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
void ffmpegQueueLock(AVHWDeviceContext *device, uint32_t family, bool take)
{
#if GPUHANDLE_FFMPEG_VK_LOCK_QUEUE
	const auto *hw = static_cast<const AVVulkanDeviceContext *>(device->hwctx);
	if (take && hw->lock_queue)
		hw->lock_queue(device, family, 0);
	else if (!take && hw->unlock_queue)
		hw->unlock_queue(device, family, 0);
#else
	static_cast<void>(device);
	static_cast<void>(family);
	static_cast<void>(take);
#endif
}
#pragma GCC diagnostic pop

std::string vkResultText(VkResult result)
{
	return "VkResult " + std::to_string(static_cast<int>(result));
}

Result<AVBufferRef *> vulkanDeviceFromContext(const ContextRef &context)
{
	Result<const VulkanContext *> native = context->vulkan();
	if (!native)
		return std::move(native).error();
	const VulkanContext &vk = **native;
	if (!vk.instance || !vk.physicalDevice || !vk.device)
		return Error(
			ErrorCode::NullHandle, "context",
			"The Vulkan context lacks its VkInstance, VkPhysicalDevice or VkDevice.");
	if (vk.enabledDeviceExtensions.empty())
		return Error(ErrorCode::NotSupported, "context.enabledDeviceExtensions",
			     "The Vulkan context does not list its enabled device extensions; "
			     "FFmpeg needs them (it uses external memory and host imports only "
			     "where they are listed) and cannot find them out itself.");
	if (vk.queueFamilyIndex > static_cast<uint32_t>(INT32_MAX))
		return Error(ErrorCode::OutOfRange, "context.queueFamilyIndex",
			     "The queue family index does not fit FFmpeg's int.");

	auto storage = std::make_shared<DeviceStorage>();
	storage->original = context;
	PFN_vkGetInstanceProcAddr entry =
		reinterpret_cast<PFN_vkGetInstanceProcAddr>(vk.getInstanceProcAddr);
	if (!entry)
		if (Status loaded = loaderEntry(entry); !loaded)
			return std::move(loaded).error();
	storage->instanceExtensions = vk.enabledInstanceExtensions;
	storage->deviceExtensions = vk.enabledDeviceExtensions;
	for (const std::string &name : storage->instanceExtensions)
		storage->instanceNames.push_back(name.c_str());
	for (const std::string &name : storage->deviceExtensions)
		storage->deviceNames.push_back(name.c_str());

	Result<std::shared_ptr<const VulkanDeviceFunctions>> functions =
		functionsOf(entry, static_cast<VkInstance>(vk.instance),
			    static_cast<VkPhysicalDevice>(vk.physicalDevice),
			    static_cast<VkDevice>(vk.device), "context.getInstanceProcAddr");
	if (!functions)
		return std::move(functions).error();
	const VkDeviceFns &fns = (*functions)->table;
	if (!timelineUsable(fns))
		return Error(ErrorCode::NotSupported, "context.device",
			     "The Vulkan device has no timeline semaphores (Vulkan 1.2 "
			     "timelineSemaphore), which every FFmpeg Vulkan frame uses.");
#if GPUHANDLE_FFMPEG_VK_LOCKS
	// FFmpeg 6.1 and later record synchronization2 barriers and submissions through the core
	// entry points, unchecked: a device without them would crash FFmpeg's first transfer.
	const bool sync2 = fns.CmdPipelineBarrier2 && fns.QueueSubmit2;
	if (!sync2)
		return Error(ErrorCode::NotSupported, "context.device",
			     "The Vulkan device resolves no vkCmdPipelineBarrier2 and "
			     "vkQueueSubmit2 (Vulkan 1.3 with synchronization2), which FFmpeg 6.1 "
			     "and later record every Vulkan frame's barriers with.");
	storage->features13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
	storage->features13.synchronization2 = VK_TRUE;
	storage->features12.pNext = &storage->features13;
#endif
	// What is known of the features the device was created with: timeline semaphores (and
	// synchronization2, above).
	storage->features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
	storage->features12.timelineSemaphore = VK_TRUE;

	// The device holds a copy of the Context whose anchor is the storage (which holds the
	// caller's Context): dropped by the device's free callback, after FFmpeg's own free.
	Result<ContextRef> held = Context::create(vk, storage);
	if (!held)
		return std::move(held).error();
	AVBufferRef *device = allocHwDeviceHolding(AV_HWDEVICE_TYPE_VULKAN, *held);
	if (!device)
		return Error(ErrorCode::OutOfMemory, "context", "av_hwdevice_ctx_alloc() failed.");
	auto *ctx = reinterpret_cast<AVHWDeviceContext *>(device->data);
	auto *hw = static_cast<AVVulkanDeviceContext *>(ctx->hwctx);
	hw->get_proc_addr = entry;
	hw->inst = fns.instance;
	hw->phys_dev = fns.physical;
	hw->act_dev = fns.device;
	hw->device_features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	hw->device_features.pNext = &storage->features12;
	hw->enabled_inst_extensions =
		storage->instanceNames.empty() ? nullptr : storage->instanceNames.data();
	hw->nb_enabled_inst_extensions = static_cast<int>(storage->instanceNames.size());
	hw->enabled_dev_extensions = storage->deviceNames.data();
	hw->nb_enabled_dev_extensions = static_cast<int>(storage->deviceNames.size());
	// One family does everything gpuhandle's device does: FFmpeg's graphics, transfer and
	// compute work all go to queue 0 of it. Video queues: none (the family need not have them).
	const int family = static_cast<int>(vk.queueFamilyIndex);
#if GPUHANDLE_FFMPEG_VK_QF
	hw->qf[0].idx = family;
	hw->qf[0].num = 1;
	hw->qf[0].flags = static_cast<VkQueueFlagBits>(
		VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT);
	hw->nb_qf = 1;
#else
	hw->queue_family_index = family;
	hw->nb_graphics_queues = 1;
	hw->queue_family_tx_index = family;
	hw->nb_tx_queues = 1;
	hw->queue_family_comp_index = family;
	hw->nb_comp_queues = 1;
	hw->queue_family_encode_index = -1;
	hw->nb_encode_queues = 0;
	hw->queue_family_decode_index = -1;
	hw->nb_decode_queues = 0;
#endif
#if GPUHANDLE_FFMPEG_VK_LOCK_QUEUE
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" // see ffmpegQueueLock()
	if (vk.queueLock) {
		hw->lock_queue = lockHostQueue;
		hw->unlock_queue = unlockHostQueue;
	}
#pragma GCC diagnostic pop
#endif
	if (Status initialised = initHwDevice(device, "Vulkan context"); !initialised)
		return std::move(initialised).error();
	return device;
}

Result<ContextRef> contextFromVulkanDevice(const AVBufferRef *device)
{
	const auto *ctx = reinterpret_cast<const AVHWDeviceContext *>(device->data);
	const auto *hw = static_cast<const AVVulkanDeviceContext *>(ctx->hwctx);
	Result<std::shared_ptr<const VulkanDeviceFunctions>> functions = loadDeviceFunctions(*ctx);
	if (!functions)
		return std::move(functions).error();
	const VkDeviceFns *fns = &(*functions)->table;
	const int transfer = transferQueueFamily(*hw);
	if (transfer < 0)
		return Error(ErrorCode::NotSupported, "device",
			     "The FFmpeg Vulkan device has no transfer queue family.");
	VulkanContext vk;
	vk.instance = hw->inst;
	vk.physicalDevice = hw->phys_dev;
	vk.device = hw->act_dev;
	vk.queueFamilyIndex = static_cast<uint32_t>(transfer);
	VkQueue queue = VK_NULL_HANDLE;
	fns->GetDeviceQueue(hw->act_dev, vk.queueFamilyIndex, 0, &queue);
	vk.queue = queue;
	vk.getInstanceProcAddr = reinterpret_cast<void *>(hw->get_proc_addr);
	for (int i = 0; i < hw->nb_enabled_inst_extensions; i++)
		vk.enabledInstanceExtensions.emplace_back(hw->enabled_inst_extensions[i]);
	for (int i = 0; i < hw->nb_enabled_dev_extensions; i++)
		vk.enabledDeviceExtensions.emplace_back(hw->enabled_dev_extensions[i]);
	const VkDeviceUuids uuids = deviceUuidsOf(*fns);
	vk.deviceUuid = uuids.device;
	vk.driverUuid = uuids.driver;
	// gpuhandle's submissions on FFmpeg's queue take the lock HwDeviceLock takes (FFmpeg 5.1
	// takes none itself) and, where FFmpeg has one, FFmpeg's own queue lock. The Context
	// holds the device, so `ctx` stays valid while the lock can be called.
	std::shared_ptr<std::recursive_mutex> lock = deviceSubmitLock(ctx);
	const uint32_t family = vk.queueFamilyIndex;
	auto *mutableCtx = const_cast<AVHWDeviceContext *>(ctx);
	// Bounded like every wait: a lock not taken within kDefaultWaitTimeout (a thread holding
	// HwDeviceLock that never lets go) is logged and the submission goes ahead without it
	// rather than hanging; `skipped` remembers it so that the matching release unlocks nothing.
	vk.queueLock = [lock, mutableCtx, family](bool take) {
		thread_local int skipped = 0;
		if (take) {
			if (!lockWithin(*lock, kDefaultWaitTimeout)) {
				skipped++;
				av_log(nullptr, AV_LOG_WARNING,
				       "gpuhandle: the FFmpeg Vulkan device's submit lock was not "
				       "free within the timeout; submitting without it.\n");
			}
			ffmpegQueueLock(mutableCtx, family, true);
		} else {
			ffmpegQueueLock(mutableCtx, family, false);
			if (skipped > 0)
				skipped--;
			else
				lock->unlock();
		}
	};
	// The Context must hold the device: queueLock above calls into `ctx`.
	KeepAliveRef held = holdAvBuffer(device);
	if (!held)
		return Error(ErrorCode::OutOfMemory, "device", "av_buffer_ref() failed.");
	return Context::create(std::move(vk), std::move(held));
}

} // namespace gpuhandle::ffmpeg::detail

#else // !GPUHANDLE_FFMPEG_HAVE_VULKAN_H

namespace gpuhandle::ffmpeg::detail {

Result<AVBufferRef *> vulkanDeviceFromContext(const ContextRef &)
{
	return Error(ErrorCode::NotSupported, "context",
		     "libgpuhandle-ffmpeg was built without Vulkan headers (vulkan.h), which "
		     "hwcontext_vulkan.h needs.");
}

Status requestVulkanPlaneImages(AVHWFramesContext &)
{
	return Error(ErrorCode::NotSupported, "hwFrames",
		     "libgpuhandle-ffmpeg was built without Vulkan headers (vulkan.h), which "
		     "hwcontext_vulkan.h needs.");
}

Result<ContextRef> contextFromVulkanDevice(const AVBufferRef *)
{
	return Error(ErrorCode::NotSupported, "device",
		     "libgpuhandle-ffmpeg was built without Vulkan headers (vulkan.h), which "
		     "hwcontext_vulkan.h needs.");
}

} // namespace gpuhandle::ffmpeg::detail

#endif
