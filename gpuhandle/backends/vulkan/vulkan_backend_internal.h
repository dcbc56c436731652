// Private to the Vulkan backend: its device state, the anchor of its allocations, the class.
#pragma once

#include <gpuhandle/context.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/sync_waiter.h>

#include "common/backend_internal.h"
#include "common/pending_work.h"
#include "vulkan_memory_internal.h" // VK_NO_PROTOTYPES, <vulkan/vulkan.h>, detail::Api

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace gpuhandle::vulkan {

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

// A submission whose fence wait timed out: kept until its fence signals (or the device goes),
// with what its commands read or write: Allocations (never a DeviceUser: see there), which hold
// the VulkanDevice.
struct PendingSubmit {
	VkCommandBuffer commands = VK_NULL_HANDLE;
	VkFence fence = VK_NULL_HANDLE;
};

// The device the backend works on, held by every VulkanAllocation (and so by every frame the
// backend made, which may outlive the BackendRef) and by the DeviceUser of the backend, its Context
// and its frames. Destroys what it created exactly once, when the last of those goes. Thread
// safety: the queue, the command pool and image layouts are used only under queueMutex. The queue:
// on the backend's own device nobody else submits on it. On a host's device it is the queue the
// host gave in VulkanContext, and Vulkan requires external synchronisation of vkQueueSubmit on one
// queue; queueMutex covers only the backend's own submissions (map() of optimal images,
// copyFrame(), exportFrame() of images), and VulkanContext::queueLock, when the host gives one, is
// taken around each of them (GStreamer's gst_vulkan_queue_submit_lock). Without it the host must
// not submit on that queue while one of those calls runs.
class VulkanDevice final : public KeepAlive
{
public:
	VulkanDevice() = default;
	VulkanDevice(const VulkanDevice &) = delete;
	VulkanDevice &operator=(const VulkanDevice &) = delete;
	~VulkanDevice() override;

	// Records commands with `record`, submits them on the queue and waits up to `timeout` for
	// them. `submitted` (when set) runs under queueMutex once vkQueueSubmit succeeded: the
	// place to update what the commands change (image layouts), which a failed submit must not.
	// On Timeout the commands and `keep` stay alive until they finish (reclaimed by later
	// submits and by drain()). `keep` must not hold a DeviceUser of this state.
	Status submit(const char *fn, const std::function<void(VkCommandBuffer)> &record,
		      const std::function<void()> &submitted, WaitDuration timeout,
		      std::vector<KeepAliveRef> keep = {});
	// Waits up to `budget` for every pending submission and frees it; true when none is left.
	// What is left is reported on stderr and stays (leaked on purpose rather than waited on
	// without end): its commands may still use the memory its `keep` holds.
	bool drain(WaitDuration budget);
	bool hasMemoryFlags(uint32_t type, VkMemoryPropertyFlags flags) const;

	// First, so destroyed last: the host's Context when the backend opened inside one, which
	// keeps the host's device (through its anchor) alive until every native object above has
	// been destroyed, that is until the last frame of the backend goes.
	ContextRef hostContext{};
	PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
	PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;
	PFN_vkDestroyInstance destroyInstance = nullptr;
	VkInstance instance = VK_NULL_HANDLE;
	VkPhysicalDevice physical = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;
	VkQueue queue = VK_NULL_HANDLE;
	uint32_t queueFamily = 0;
	bool ownsInstance = false;
	bool ownsDevice = false;
	VulkanDeviceDispatch dispatch{};
	VulkanPhysicalDeviceDispatch physicalDispatch{};
	detail::Api api{}; // every device and instance entry point, resolved once at open
	Extensions ext{};
	uint64_t hostPointerAlignment = 0; // minImportedHostPointerAlignment; 0 without the ext
	Uuid deviceUuid{};
	Uuid driverUuid{};
	VkPhysicalDeviceMemoryProperties memory{};
	std::mutex queueMutex;
	std::function<void(bool lock)> queueLock{}; // the host's, around each vkQueueSubmit
	VkCommandPool pool = VK_NULL_HANDLE;        // under queueMutex

private:
	// Frees the pending submissions whose fences signalled, waiting for them until `deadline`
	// when it is set; queueMutex held (the command pool). Returns what their commands kept, for
	// the caller to release once it has unlocked queueMutex (an anchor's release may reach back
	// into this state).
	std::vector<KeepAliveRef> reclaimLocked(const Deadline *deadline);

	PendingWork<PendingSubmit> pending_{}; // reclaimed under queueMutex
};

// The state as used from outside: held by the backend, its Context (own device), its frames'
// resource anchors and open mappings, never by a pending submission. Pending submissions hold
// Allocations, which hold the state, which holds them: the last user breaks that cycle by
// draining the queue (bounded by kDefaultWaitTimeout) when it goes.
class DeviceUser final : public KeepAlive
{
public:
	explicit DeviceUser(std::shared_ptr<VulkanDevice> s) : state(std::move(s)) {}
	DeviceUser(const DeviceUser &) = delete;
	DeviceUser &operator=(const DeviceUser &) = delete;
	~DeviceUser() override { state->drain(kDefaultWaitTimeout); }

	const std::shared_ptr<VulkanDevice> state;
};

// The anchor of every VulkanBuffer and VulkanImage the backend hands out: the bound object and
// its memory (through `bound`), its export, what imported memory came from, and the device
// state, released in that order after the persistent mapping is undone.
class VulkanAllocation final : public KeepAlive
{
public:
	explicit VulkanAllocation(std::shared_ptr<VulkanDevice> s) : state(std::move(s)) {}
	VulkanAllocation(const VulkanAllocation &) = delete;
	VulkanAllocation &operator=(const VulkanAllocation &) = delete;
	~VulkanAllocation() override;

	// The memory mapped once for the allocation's lifetime (host-visible types only).
	Result<uint8_t *> mapped(const char *fn);

	std::shared_ptr<VulkanDevice> state; // first: destroyed last
	BudgetReservation charge{};          // an allocation's charge (a frame's first plane)
	Resource source{};                   // what imported memory lives in (kept alive)
	Resource bound{};                    // the detail::BoundObject-anchored buffer or image
	std::optional<VulkanMemoryFd> exported{};
	// What the memory was allocated exportable as.
	VkExternalMemoryHandleTypeFlags handleTypes = 0;
	VkDeviceMemory memory = VK_NULL_HANDLE;
	uint64_t allocationSize = 0;
	uint32_t memoryTypeIndex = 0;
	VkBuffer buffer = VK_NULL_HANDLE;
	uint64_t bufferSize = 0;
	VkImage image = VK_NULL_HANDLE;
	// 1, or the planes of a multi-planar image (a host's: plane i is the aspect
	// VK_IMAGE_ASPECT_PLANE_i_BIT, sized and typed by the frame's plane; width, height and
	// planeFormat are then its first plane's).
	uint32_t imagePlanes = 1;
	bool optimal = false;
	PlaneFormat planeFormat = PlaneFormat::R8;
	uint32_t width = 0; // image extent in texels
	uint32_t height = 0;
	uint64_t imageOffset = 0; // of a linear image's subresource in its memory
	uint32_t rowPitch = 0;
	// The layout the image is in once every submitted command has run; changed only after a
	// successful vkQueueSubmit. Under state->queueMutex.
	VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;
	// An image shared with another API or device (exported, or imported from an opaque fd or a
	// DMA-BUF): VK_QUEUE_FAMILY_EXTERNAL or _FOREIGN_EXT, else VK_QUEUE_FAMILY_IGNORED. It
	// stays in GENERAL (the convention for shared images), and every use acquires it from that
	// family first, which keeps what the other side wrote, and releases it back after.
	// Under state->queueMutex.
	uint32_t externalFamily = VK_QUEUE_FAMILY_IGNORED;
	// A view made for one call over an image or buffer of the backend's VkDevice that no
	// gpuhandle backend allocated (a host's, such as GStreamer's): it owns nothing, has no
	// memory to map (map() copies through a staging buffer), and an image is taken to be in
	// GENERAL with the host's work on it submitted before (see foreignView()).
	bool foreign = false;

private:
	std::mutex mapMutex_;
	uint8_t *mapped_ = nullptr;
};

// The anchor of the VulkanBuffers and VulkanImages handed out: their allocation, and a user of
// the state (released after the allocation).
class ResourceAnchor final : public KeepAlive
{
public:
	ResourceAnchor(std::shared_ptr<DeviceUser> u, std::shared_ptr<VulkanAllocation> a)
		: user(std::move(u)), allocation(std::move(a))
	{
	}

	const std::shared_ptr<DeviceUser> user;
	const std::shared_ptr<VulkanAllocation> allocation;
};

// The allocation anchoring a VulkanBuffer or VulkanImage of the backend, or null for any other
// resource.
std::shared_ptr<VulkanAllocation> allocationOf(const Resource &resource);
// Whether `resource` is a VulkanImage or VulkanBuffer on `device` that no gpuhandle Vulkan
// backend allocated or imported (a host's own image or buffer).
bool isForeign(const Resource &resource, VkDevice device);
// A foreign view (VulkanAllocation::foreign) over resource `index` of `frame`, which isForeign() on
// `state`'s device: a buffer as it is, an image as the one plane of the frame that it holds
// (its plane format and size come from the frame's format). It keeps the resource (and so its
// anchor) alive. NotSupported for an image holding several planes or at an offset.
Result<std::shared_ptr<VulkanAllocation>> foreignView(const std::shared_ptr<VulkanDevice> &state,
						      const Frame &frame, uint32_t index);

// The allocations behind a frame's resources for map() and copyFrame(): the backend's own, and
// foreign views made for the call (which only `held` holds: no anchor of the frame does).
struct FrameAllocations {
	std::array<VulkanAllocation *, 4> at{};
	std::array<std::shared_ptr<VulkanAllocation>, 4> held{};

	// Appends what commands on the frame keep alive while they may run: the allocations, never
	// a resource anchor (a pending submission must not hold a DeviceUser: see there).
	void keep(uint32_t numResources, std::vector<KeepAliveRef> &out) const;
};

// An image barrier into GENERAL (from `from`), optionally moving the image between families.
VkImageMemoryBarrier generalBarrier(const VulkanAllocation &a, VkImageLayout from,
				    uint32_t srcFamily, uint32_t dstFamily, VkAccessFlags srcAccess,
				    VkAccessFlags dstAccess);
// The buffer or image of `allocation->bound`, anchored by a ResourceAnchor of `user`.
Result<Resource> anchoredResource(const std::shared_ptr<DeviceUser> &user,
				  std::shared_ptr<VulkanAllocation> allocation);

// Thread safety and the host's queue: see VulkanDevice. On a host's device, the host must not
// submit on the VkQueue it gave while map() of an optimal image or of a foreign resource,
// copyFrame() or exportFrame() of an image runs on another thread. Frames over the host's own
// images and buffers of this VkDevice (foreign: the host keeps them alive through their anchors)
// are held (holds(), the Direct route), mapped through a staging copy and copied from or into;
// they are not exported (their memory was not made exportable): the planner copies them into
// this backend's exportable memory first.
class VulkanBackend final : public Backend
{
public:
	VulkanBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context,
		      std::shared_ptr<DeviceUser> user)
		: Backend(std::move(info), std::move(caps), std::move(context)),
		  user_(std::move(user)), state_(user_->state)
	{
	}

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Result<Frame> allocate(const AllocateRequest &request) override;
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override;
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override;
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;
	bool holds(const Frame &frame) const override;
	std::vector<uint64_t> dmaBufImportModifiers(PixelFormat format) const override;
	Result<SyncPoint> exportFence(const SyncPoint &point) override;

private:
	// The allocation of each resource of a frame of this backend, or WrongKind.
	Result<std::array<VulkanAllocation *, 4>> allocationsOf(const Frame &frame,
								const char *operation) const;
	// allocationsOf, where foreign resources of this VkDevice get foreign views (see
	// VulkanAllocation::foreign): WrongKind for resources of other devices, APIs or backends.
	Result<FrameAllocations> accessOf(const Frame &frame, const char *operation) const;
	Result<std::shared_ptr<VulkanAllocation>> allocateImage(PlaneFormat format, uint32_t width,
								uint32_t height, bool optimal,
								bool exportable);
	Result<std::shared_ptr<VulkanAllocation>> allocateBuffer(uint64_t size, bool exportable);
	Result<Frame> importOpaqueFd(const Frame &frame);
	Result<Frame> importHostPointer(const Frame &frame);
	Result<Frame> importDmaBuf(const Frame &frame);
	Result<std::shared_ptr<VulkanAllocation>> importDmaBufObject(const DmaBufObject &object,
								     const Resource &source);
	Result<std::shared_ptr<VulkanAllocation>>
	importDmaBufImage(const Frame &frame, uint32_t plane, const DmaBufDesc &dmabuf);
	Result<Frame> exportDmaBuf(const Frame &frame,
				   const std::array<VulkanAllocation *, 4> &allocations);
	// Hands the frame's images to `family` (VK_QUEUE_FAMILY_EXTERNAL or _FOREIGN_EXT) before
	// their first export: moved to GENERAL (so that no later transition from UNDEFINED lets the
	// driver discard what the other side writes) and released to that family.
	Status shareImages(const Frame &frame, const std::array<VulkanAllocation *, 4> &allocations,
			   uint32_t family);
	// Takes imported images (shared with an exporter, externalFamily set) on this device's
	// queue family before anyone uses them: acquired from that family in GENERAL (which keeps
	// what the exporter wrote), so that the frame leaves importFrame() in the state every
	// Vulkan consumer on this device assumes of an image it is handed (GStreamer's barrier
	// state, AVVkFrame's layout[]): GENERAL, owned by this queue family. Waited for.
	Status acquireImported(const std::vector<VulkanAllocation *> &images,
			       std::vector<KeepAliveRef> keep);

	std::shared_ptr<DeviceUser> user_;
	std::shared_ptr<VulkanDevice> state_;
};

// A buffer (x.format 0, of x.allocationSize bytes) or an image of `x` bound to its own memory of
// a type with `wanted` properties (else any allowed type), exported as an opaque fd into
// `*exported` when it is not null. Exportable memory of a buffer or linear image is also
// DMA-BUF-exportable where the device has VK_EXT_external_memory_dma_buf and says both handle
// types export together; `*handleTypes` (when not null) gets the types it was allocated with.
// `owner` is kept alive by the object. Fills x.allocationSize, memoryTypeIndex and dedicated.
Result<std::shared_ptr<detail::BoundObject>>
createObject(const VulkanDevice &state, KeepAliveRef owner, VulkanExportDesc &x,
	     VkMemoryPropertyFlags wanted, std::optional<VulkanMemoryFd> *exported,
	     VkExternalMemoryHandleTypeFlags *handleTypes = nullptr);
// The DRM modifiers DMA-BUF import takes on this device: LINEAR (as buffers) and, with
// VK_EXT_image_drm_format_modifier, those the driver offers with transfer support for a
// one-memory-plane image of some plane format (imported as an image per plane).
std::vector<uint64_t> dmaBufModifiers(const VulkanDevice &state);
// Whether buffers this device allocates can be exported as DMA-BUFs (alongside the opaque fd):
// the driver may import DMA-BUFs only (Mesa 25's lavapipe does).
bool exportsDmaBufBuffers(const VulkanDevice &state);
// Wraps a detail::BoundObject-anchored `bound` as a VulkanAllocation (filling handles and sizes).
Result<std::shared_ptr<VulkanAllocation>> adoptBound(const std::shared_ptr<VulkanDevice> &state,
						     VulkanBoundMemory bound);

} // namespace gpuhandle::vulkan
