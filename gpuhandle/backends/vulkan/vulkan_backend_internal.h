// Private to the Vulkan backend: its device state, the anchor of its allocations, the class.
#pragma once

#include "common/backend_internal.h"
#include "vulkan_memory_internal.h" // VK_NO_PROTOTYPES, <vulkan/vulkan.h>, detail::Api

#include <gpuhandle/fd_resources.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace gpuhandle::vkbackend {

inline constexpr const char *kName = "vulkan";
inline constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
						   VK_BUFFER_USAGE_TRANSFER_DST_BIT |
						   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
inline constexpr VkImageUsageFlags kImageUsage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
						 VK_IMAGE_USAGE_TRANSFER_DST_BIT |
						 VK_IMAGE_USAGE_SAMPLED_BIT;
inline constexpr VkFormatFeatureFlags kTransferFeatures = VK_FORMAT_FEATURE_TRANSFER_SRC_BIT |
							   VK_FORMAT_FEATURE_TRANSFER_DST_BIT;
inline constexpr VkExternalMemoryHandleTypeFlagBits kDmaBufHandle =
	VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT;
inline constexpr VkMemoryPropertyFlags kHostMemory = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
						     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

// Device entry points the backend uses beyond detail::Api (all core 1.0/1.1).
// clang-format off
#define GPUHANDLE_VKB_FUNCTIONS(X)                                                                 \
	X(MapMemory) X(UnmapMemory) X(FlushMappedMemoryRanges) X(InvalidateMappedMemoryRanges)     \
	X(CreateCommandPool) X(DestroyCommandPool) X(AllocateCommandBuffers)                       \
	X(FreeCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer) X(CmdCopyBuffer)           \
	X(CmdCopyImage) X(CmdCopyBufferToImage) X(CmdCopyImageToBuffer) X(CmdPipelineBarrier)     \
	X(QueueSubmit) X(CreateFence) X(DestroyFence) X(WaitForFences) X(GetFenceStatus)           \
	X(DeviceWaitIdle) X(DestroyDevice) X(GetDeviceQueue)
// clang-format on
#define GPUHANDLE_VKB_DECLARE(name) PFN_vk##name name = nullptr;
struct Functions {
	GPUHANDLE_VKB_FUNCTIONS(GPUHANDLE_VKB_DECLARE)
};
#undef GPUHANDLE_VKB_DECLARE

// The device extensions the backend uses, as enabled on its device.
struct Extensions {
	bool memoryFd = false;           // VK_KHR_external_memory_fd
	bool semaphoreFd = false;        // VK_KHR_external_semaphore_fd
	bool memoryHost = false;         // VK_EXT_external_memory_host
	bool dmaBuf = false;             // VK_EXT_external_memory_dma_buf (with memoryFd)
	bool drmModifier = false;        // VK_EXT_image_drm_format_modifier
	bool queueFamilyForeign = false; // VK_EXT_queue_family_foreign
	bool timeline = false;           // Vulkan 1.2 timelineSemaphore enabled
};

// A submission whose fence wait timed out: kept until its fence signals (or the device goes).
struct Pending {
	VkCommandBuffer commands = VK_NULL_HANDLE;
	VkFence fence = VK_NULL_HANDLE;
	std::vector<KeepAliveRef> keep{}; // what the commands read or write
};

// The device the backend works on, shared by the backend, its Context and the anchor of every
// resource it made, so frames outlive the BackendRef. Destroys what it created exactly once,
// when the last of those goes. Thread safety: the queue, the command pool and image layouts are
// used only under queueMutex.
class DeviceState final : public KeepAlive
{
public:
	DeviceState() = default;
	DeviceState(const DeviceState &) = delete;
	DeviceState &operator=(const DeviceState &) = delete;
	~DeviceState() override;

	// Records commands with `record`, submits them on the queue and waits up to `timeout` for
	// them. On Timeout the commands and `keep` stay alive until they finish.
	Status submit(const char *fn, const std::function<void(VkCommandBuffer)> &record,
		      WaitDuration timeout, std::vector<KeepAliveRef> keep = {});
	// Waits for every pending submission and frees it (the backend's destructor: a pending
	// submission keeps allocations, and so this state, alive).
	void drain();
	bool hasMemoryFlags(uint32_t type, VkMemoryPropertyFlags flags) const;

	void *library = nullptr; // dlopen()ed libvulkan.so.1, when the host gave no loader
	PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
	PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;
	PFN_vkDestroyInstance destroyInstance = nullptr;
	PFN_vkGetPhysicalDeviceFormatProperties getFormatProperties = nullptr;
	// Optional: null when the device (or instance) does not resolve them.
	PFN_vkGetPhysicalDeviceFormatProperties2 getFormatProperties2 = nullptr;
	PFN_vkGetMemoryFdPropertiesKHR getMemoryFdProperties = nullptr;
	PFN_vkGetImageMemoryRequirements2 getImageRequirements2 = nullptr;
	VkInstance instance = VK_NULL_HANDLE;
	VkPhysicalDevice physical = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;
	VkQueue queue = VK_NULL_HANDLE;
	uint32_t queueFamily = 0;
	bool ownsInstance = false;
	bool ownsDevice = false;
	VulkanDeviceDispatch dispatch{};
	VulkanPhysicalDeviceDispatch physicalDispatch{};
	detail::Api api{};
	Functions fn{};
	Extensions ext{};
	uint64_t hostPointerAlignment = 0; // minImportedHostPointerAlignment; 0 without the ext
	Uuid deviceUuid{};
	Uuid driverUuid{};
	VkPhysicalDeviceMemoryProperties memory{};
	std::mutex queueMutex;
	VkCommandPool pool = VK_NULL_HANDLE; // under queueMutex

private:
	void reclaimLocked(bool wait);

	std::vector<Pending> pending_; // under queueMutex
};

// The anchor of every VulkanBuffer and VulkanImage the backend hands out: the bound object and
// its memory (through `bound`), its export, what imported memory came from, and the device
// state, released in that order after the persistent mapping is undone.
class Allocation final : public KeepAlive
{
public:
	explicit Allocation(std::shared_ptr<DeviceState> s) : state(std::move(s)) {}
	Allocation(const Allocation &) = delete;
	Allocation &operator=(const Allocation &) = delete;
	~Allocation() override;

	// The memory mapped once for the allocation's lifetime (host-visible types only).
	Result<uint8_t *> mapped(const char *fn);

	std::shared_ptr<DeviceState> state; // first: destroyed last
	Resource source{};                  // what imported memory lives in (kept alive)
	Resource bound{};                   // the detail::BoundObject-anchored buffer or image
	std::optional<VulkanMemoryFd> exported{};
	VkExternalMemoryHandleTypeFlags handleTypes = 0; // what the memory was allocated exportable as
	VkDeviceMemory memory = VK_NULL_HANDLE;
	uint64_t allocationSize = 0;
	uint32_t memoryTypeIndex = 0;
	VkBuffer buffer = VK_NULL_HANDLE;
	uint64_t bufferSize = 0;
	VkImage image = VK_NULL_HANDLE;
	bool optimal = false;
	PlaneFormat planeFormat = PlaneFormat::R8;
	uint32_t width = 0; // image extent in texels
	uint32_t height = 0;
	uint64_t imageOffset = 0; // of a linear image's subresource in its memory
	uint32_t rowPitch = 0;
	VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED; // under state->queueMutex
	// An image imported from a DMA-BUF: its first use acquires it from the foreign (or
	// external) queue family, which keeps the producer's contents. Under state->queueMutex.
	bool foreign = false;

private:
	std::mutex mapMutex_;
	uint8_t *mapped_ = nullptr;
};

// The allocation anchoring a VulkanBuffer or VulkanImage, or null for any other resource.
Allocation *allocationOf(const Resource &resource);
// The buffer or image of `allocation->bound`, anchored by `allocation`.
Result<Resource> anchoredResource(std::shared_ptr<Allocation> allocation);

class VulkanBackend final : public Backend
{
public:
	VulkanBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context,
		      std::shared_ptr<DeviceState> state)
		: Backend(std::move(info), std::move(caps), std::move(context)),
		  state_(std::move(state))
	{
	}
	~VulkanBackend() override { state_->drain(); }

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Result<Frame> allocate(const AllocateRequest &request) override;
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override;
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override;
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;
	bool holds(const Frame &frame) const override;
	Result<SyncPoint> exportFence(const SyncPoint &point) override;

private:
	// The allocation of each resource of a frame of this backend, or WrongKind.
	Result<std::array<Allocation *, 4>> allocationsOf(const Frame &frame,
							   const char *operation) const;
	Result<std::shared_ptr<Allocation>> allocateImage(PlaneFormat format, uint32_t width,
							  uint32_t height, bool optimal,
							  bool exportable);
	Result<std::shared_ptr<Allocation>> allocateBuffer(uint64_t size, bool exportable);
	Result<Frame> importOpaqueFd(const Frame &frame);
	Result<Frame> importHostPointer(const Frame &frame);
	Result<Frame> importDmaBuf(const Frame &frame);
	Result<std::shared_ptr<Allocation>> importDmaBufObject(const DmaBufObject &object,
							       const Resource &source);
	Result<std::shared_ptr<Allocation>> importDmaBufImage(const Frame &frame, uint32_t plane,
							      const DmaBufDesc &dmabuf);
	Result<Frame> exportDmaBuf(const Frame &frame, const std::array<Allocation *, 4> &allocations);

	std::shared_ptr<DeviceState> state_;
};

// A buffer (x.format 0, of x.allocationSize bytes) or an image of `x` bound to its own memory of
// a type with `wanted` properties (else any allowed type), exported as an opaque fd into
// `*exported` when it is not null. Exportable memory of a buffer or linear image is also
// DMA-BUF-exportable where the device has VK_EXT_external_memory_dma_buf and says both handle
// types export together; `*handleTypes` (when not null) gets the types it was allocated with.
// `owner` is kept alive by the object. Fills x.allocationSize, memoryTypeIndex and dedicated.
Result<std::shared_ptr<detail::BoundObject>>
createObject(const DeviceState &state, KeepAliveRef owner, VulkanExportDesc &x,
	     VkMemoryPropertyFlags wanted, std::optional<VulkanMemoryFd> *exported,
	     VkExternalMemoryHandleTypeFlags *handleTypes = nullptr);
// The DRM modifiers DMA-BUF import takes on this device: LINEAR (as buffers) and, with
// VK_EXT_image_drm_format_modifier, those the driver offers with transfer support for a
// one-memory-plane image of some plane format (imported as an image per plane).
std::vector<uint64_t> dmaBufModifiers(const DeviceState &state);
// Wraps a detail::BoundObject-anchored `bound` as an Allocation (filling handles and sizes).
Result<std::shared_ptr<Allocation>> adoptBound(const std::shared_ptr<DeviceState> &state,
					       VulkanBoundMemory bound);

} // namespace gpuhandle::vkbackend
