// Vulkan semaphore waits and fd exports through the host's VkDevice and vkGetDeviceProcAddr.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/sync_point.h>

#include <cstdint>
#include <memory>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// A device's entry points, resolved once by loadVulkanDeviceFunctions (opaque here). A
// VulkanDeviceDispatch that carries them makes each call look nothing up.
class VulkanDeviceFunctions;

// The host's device, borrowed as FFmpeg's AVVulkanDeviceContext lends it: gpuhandle never links
// libvulkan, it resolves every device function through `getDeviceProcAddr`. The device must stay
// valid while any point imported with it lives (pass an owner that keeps it alive).
struct VulkanDeviceDispatch {
	void *device = nullptr;            // VkDevice
	void *getDeviceProcAddr = nullptr; // PFN_vkGetDeviceProcAddr
	// Binary semaphores only: the queue that a wait on the semaphore is submitted to, and its
	// family. VkQueue is externally synchronised: during importVulkanSemaphore() of a binary
	// semaphore the host must not use the queue on another thread, or must pass lockQueue and
	// unlockQueue, which are called around the one vkQueueSubmit (FFmpeg's lock_queue shape).
	void *queue = nullptr; // VkQueue
	// The index of `queue`'s family, passed to lockQueue and unlockQueue.
	uint32_t queueFamily = 0;
	// Called with queueLockUserData on the calling thread just before that submission; set
	// both lockQueue and unlockQueue, or neither.
	void (*lockQueue)(void *userData, uint32_t queueFamily) = nullptr;
	// Called right after the submission returns, whether it succeeded or not.
	void (*unlockQueue)(void *userData, uint32_t queueFamily) = nullptr;
	// Passed to lockQueue and unlockQueue as userData; gpuhandle never reads it.
	void *queueLockUserData = nullptr;
	// The device's entry points, loaded once (loadVulkanDeviceFunctions) by a caller that
	// imports every frame; null: each call resolves what it uses.
	std::shared_ptr<const VulkanDeviceFunctions> functions{};
};

// The instance-level side, needed only to ask what the driver can export.
struct VulkanPhysicalDeviceDispatch {
	void *instance = nullptr;            // VkInstance
	void *physicalDevice = nullptr;      // VkPhysicalDevice
	void *getInstanceProcAddr = nullptr; // PFN_vkGetInstanceProcAddr
};

// Resolves `device`'s entry points (and, when given, its instance's) once, for as long as the
// device lives. Errors: NullHandle for a missing device or getDeviceProcAddr.
GPUHANDLE_INTEROP_API Result<std::shared_ptr<const VulkanDeviceFunctions>>
loadVulkanDeviceFunctions(const VulkanDeviceDispatch &device,
			  const VulkanPhysicalDeviceDispatch &physical = {});

// Stable numbers.
enum class VulkanSemaphoreFdType : uint8_t {
	SyncFd = 0,   // VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT (binary semaphores only)
	OpaqueFd = 1, // VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT
};

// A waitable point over a semaphore: timeline semaphores wait with vkWaitSemaphores and poll with
// vkGetSemaphoreCounterValue; their pollFd() (WaiterThread, GLib sources) is an eventfd made at its
// first call, written by one of at most 16 process-wide threads blocked in a one-semaphore
// vkWaitSemaphores for the point (none under Khronos's validation layer, whose versions before
// 1.3.259 block other threads through a host wait; beyond 16, -1 and those waiters poll). A point
// dropped unreached while watched returns at once when it has an owner (the thread keeps a copy
// until it lets go, within 50 ms), else only once the thread no longer waits on the semaphore
// (up to 50 ms). A binary semaphore's signal is consumed at once by a queue
// submission that signals a private VkFence, which the point then waits on (see the .cpp).
// `owner` (the host's device, the semaphore's pool) is released exactly once, after the last copy.
GPUHANDLE_INTEROP_API Result<SyncPoint> importVulkanSemaphore(const VulkanSemaphoreSync &raw,
							      const VulkanDeviceDispatch &dispatch,
							      KeepAliveRef owner = {});
// Imports a raw carrier (SyncPoint::create(VulkanSemaphoreSync{...}, nullptr, anchor)); the
// result also keeps the carrier's anchor alive. A point that already has a waiter is returned as
// is.
GPUHANDLE_INTEROP_API Result<SyncPoint> importVulkanSemaphore(const SyncPoint &carrier,
							      const VulkanDeviceDispatch &dispatch,
							      KeepAliveRef owner = {});

// Whether the driver can export a semaphore of `kind` as `type` (VkExternalSemaphoreProperties
// lists it as exportable). Errors only for bad input or a missing entry point.
GPUHANDLE_INTEROP_API Result<bool>
vulkanCanExportSemaphoreFd(const VulkanPhysicalDeviceDispatch &physical, VulkanSemaphoreKind kind,
			   VulkanSemaphoreFdType type);
// Exports the semaphore with vkGetSemaphoreFdKHR, attempted only where the query above says
// exportable: otherwise NotSupported with the reason. The semaphore must have been created with
// VkExportSemaphoreCreateInfo naming `type`, and the device with VK_KHR_external_semaphore_fd.
GPUHANDLE_INTEROP_API Result<SharedFd>
exportVulkanSemaphoreFd(const VulkanSemaphoreSync &raw, const VulkanDeviceDispatch &dispatch,
			const VulkanPhysicalDeviceDispatch &physical, VulkanSemaphoreFdType type);

} // namespace gpuhandle
