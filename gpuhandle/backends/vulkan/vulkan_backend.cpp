// The Vulkan backend: opening its device (the host's or its own), its DeviceInfo and
// capabilities. VulkanAllocation is in vulkan_backend_alloc.cpp, map and copies in
// vulkan_backend_io.cpp, export and import in vulkan_backend_import.cpp and (DMA-BUF)
// vulkan_backend_dmabuf.cpp. libvulkan is never linked: the host's vkGetInstanceProcAddr, or
// the one of a dlopen()ed libvulkan.so.1, resolves everything.
#include <gpuhandle/backends/vulkan_sync.h>

#include "common/runtime_library.h"
#include "vulkan_backend_internal.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace gpuhandle {

using namespace vulkan;
using detail::MaybeError;

namespace {

// The extensions opened with the backend's own device, when the driver offers them.
constexpr const char *kWantedExtensions[] = {
	VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
	VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME,
	VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME,
	VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME,
	VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME,
	VK_EXT_QUEUE_FAMILY_FOREIGN_EXTENSION_NAME,
};

bool contains(const std::vector<std::string> &names, const char *name)
{
	return std::find(names.begin(), names.end(), name) != names.end();
}

Error notSupported(const char *field, const std::string &why)
{
	return Error::format(ErrorCode::NotSupported, field, "vulkan: %s", why.c_str());
}

// The loader's vkGetInstanceProcAddr from libvulkan.so.1 (never dlclose()d).
MaybeError loadLoader(VulkanDevice &state)
{
	RuntimeLibrary loader("libvulkan.so.1", "The Vulkan loader", "context");
	loader.need("vkGetInstanceProcAddr", state.getInstanceProcAddr);
	return loader.failure();
}

template<typename Pfn>
Pfn instanceFn(const VulkanDevice &state, const char *name)
{
	return reinterpret_cast<Pfn>(state.getInstanceProcAddr(state.instance, name));
}

std::vector<std::string> offeredExtensions(const VulkanDevice &state)
{
	auto enumerate = instanceFn<PFN_vkEnumerateDeviceExtensionProperties>(
		state, "vkEnumerateDeviceExtensionProperties");
	std::vector<std::string> names;
	uint32_t count = 0;
	if (!enumerate || enumerate(state.physical, nullptr, &count, nullptr) != VK_SUCCESS)
		return names;
	std::vector<VkExtensionProperties> list(count);
	if (enumerate(state.physical, nullptr, &count, list.data()) != VK_SUCCESS)
		return names;
	for (uint32_t i = 0; i < count; i++)
		names.emplace_back(list[i].extensionName);
	return names;
}

// An instance, physical device `index` and a device with one queue and every wanted extension.
MaybeError createOwnDevice(VulkanDevice &state, uint32_t index, std::vector<std::string> &enabled)
{
	if (auto e = loadLoader(state))
		return e;
	uint32_t loaderVersion = VK_API_VERSION_1_0;
	if (auto version =
		    instanceFn<PFN_vkEnumerateInstanceVersion>(state, "vkEnumerateInstanceVersion"))
		version(&loaderVersion);
	if (loaderVersion < VK_API_VERSION_1_1)
		return notSupported(
			"context",
			"the Vulkan loader offers only Vulkan 1.0; the backend needs 1.1.");
	VkApplicationInfo app{};
	app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
	app.pApplicationName = "gpuhandle";
	app.apiVersion = std::min<uint32_t>(loaderVersion, VK_API_VERSION_1_3);
	VkInstanceCreateInfo instanceInfo{};
	instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
	instanceInfo.pApplicationInfo = &app;
	auto createInstance = instanceFn<PFN_vkCreateInstance>(state, "vkCreateInstance");
	if (VkResult r = createInstance(&instanceInfo, nullptr, &state.instance); r != VK_SUCCESS) {
		state.instance = VK_NULL_HANDLE;
		return notSupported("context", "vkCreateInstance failed with VkResult " +
						       std::to_string(r) + " (no Vulkan driver?).");
	}
	state.ownsInstance = true;
	state.destroyInstance = instanceFn<PFN_vkDestroyInstance>(state, "vkDestroyInstance");

	auto enumerate =
		instanceFn<PFN_vkEnumeratePhysicalDevices>(state, "vkEnumeratePhysicalDevices");
	uint32_t count = 0;
	enumerate(state.instance, &count, nullptr);
	std::vector<VkPhysicalDevice> devices(count);
	enumerate(state.instance, &count, devices.data());
	if (index >= count)
		return notSupported("deviceIndex",
				    "device index " + std::to_string(index) +
					    " was asked for but the Vulkan driver lists " +
					    std::to_string(count) + " devices.");
	state.physical = devices[index];
	VkPhysicalDeviceProperties properties{};
	instanceFn<PFN_vkGetPhysicalDeviceProperties>(state, "vkGetPhysicalDeviceProperties")(
		state.physical, &properties);
	if (properties.apiVersion < VK_API_VERSION_1_1)
		return notSupported("deviceIndex",
				    std::string(properties.deviceName) +
					    " offers only Vulkan 1.0; the backend needs 1.1.");

	auto families = instanceFn<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
		state, "vkGetPhysicalDeviceQueueFamilyProperties");
	uint32_t familyCount = 0;
	families(state.physical, &familyCount, nullptr);
	std::vector<VkQueueFamilyProperties> familyList(familyCount);
	families(state.physical, &familyCount, familyList.data());
	std::optional<uint32_t> family;
	// Graphics or compute queues also transfer; a transfer-only family is the last choice.
	for (uint32_t i = 0; i < familyCount && !family; i++)
		if (familyList[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT))
			family = i;
	for (uint32_t i = 0; i < familyCount && !family; i++)
		if (familyList[i].queueFlags & VK_QUEUE_TRANSFER_BIT)
			family = i;
	if (!family)
		return notSupported("deviceIndex",
				    std::string(properties.deviceName) +
					    " has no queue family that can transfer.");
	state.queueFamily = *family;

	std::vector<std::string> offered = offeredExtensions(state);
	std::vector<const char *> names;
	for (const char *name : kWantedExtensions)
		if (contains(offered, name)) {
			names.push_back(name);
			enabled.emplace_back(name);
		}
	// synchronization2 (Vulkan 1.3) where offered: FFmpeg 6.1 and later record their barriers
	// with it on any device they are given, this one included (hwDeviceFromContext).
	VkPhysicalDeviceVulkan13Features supported13{};
	supported13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
	VkPhysicalDeviceVulkan12Features supported{};
	supported.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
	const bool v13 = properties.apiVersion >= VK_API_VERSION_1_3 &&
			 app.apiVersion >= VK_API_VERSION_1_3;
	if (v13)
		supported.pNext = &supported13;
	if (properties.apiVersion >= VK_API_VERSION_1_2 && app.apiVersion >= VK_API_VERSION_1_2) {
		VkPhysicalDeviceFeatures2 features{};
		features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
		features.pNext = &supported;
		instanceFn<PFN_vkGetPhysicalDeviceFeatures2>(state, "vkGetPhysicalDeviceFeatures2")(
			state.physical, &features);
	}
	VkPhysicalDeviceVulkan12Features wanted{};
	wanted.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
	wanted.timelineSemaphore = supported.timelineSemaphore;
	state.ext.timeline = supported.timelineSemaphore == VK_TRUE;
	VkPhysicalDeviceVulkan13Features wanted13{};
	wanted13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
	wanted13.synchronization2 = supported13.synchronization2;
	if (v13 && wanted13.synchronization2)
		wanted.pNext = &wanted13;

	float priority = 1.0f;
	VkDeviceQueueCreateInfo queueInfo{};
	queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
	queueInfo.queueFamilyIndex = state.queueFamily;
	queueInfo.queueCount = 1;
	queueInfo.pQueuePriorities = &priority;
	VkDeviceCreateInfo deviceInfo{};
	deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
	deviceInfo.pNext = (state.ext.timeline || wanted.pNext) ? &wanted : nullptr;
	deviceInfo.queueCreateInfoCount = 1;
	deviceInfo.pQueueCreateInfos = &queueInfo;
	deviceInfo.enabledExtensionCount = static_cast<uint32_t>(names.size());
	deviceInfo.ppEnabledExtensionNames = names.data();
	auto createDevice = instanceFn<PFN_vkCreateDevice>(state, "vkCreateDevice");
	if (VkResult r = createDevice(state.physical, &deviceInfo, nullptr, &state.device);
	    r != VK_SUCCESS) {
		state.device = VK_NULL_HANDLE;
		return notSupported("deviceIndex", "vkCreateDevice failed with VkResult " +
							   std::to_string(r) + " on " +
							   properties.deviceName + ".");
	}
	state.ownsDevice = true;
	return std::nullopt;
}

// The host's device: its handles, and the extensions it says it enabled (or, when it does not
// say, those whose entry points the device resolves). The state keeps `context` (and so the
// host's device, through its anchor) until the last of its objects is gone.
MaybeError adoptHostDevice(VulkanDevice &state, const ContextRef &context,
			   const VulkanContext &host, std::vector<std::string> &enabled)
{
	state.hostContext = context;
	if (host.getInstanceProcAddr)
		state.getInstanceProcAddr =
			reinterpret_cast<PFN_vkGetInstanceProcAddr>(host.getInstanceProcAddr);
	else if (auto e = loadLoader(state))
		return e;
	state.instance = static_cast<VkInstance>(host.instance);
	state.physical = static_cast<VkPhysicalDevice>(host.physicalDevice);
	state.device = static_cast<VkDevice>(host.device);
	// The host's queue, as every backend opened in a host's context takes it
	// (Context::queue), and the host's lock of it.
	Result<ExternalQueue> queue = context->queue();
	if (!queue.ok())
		return std::move(queue).error();
	const VulkanQueue &hostQueue = **queue->vulkan();
	state.queue = static_cast<VkQueue>(hostQueue.queue);
	state.queueFamily = hostQueue.familyIndex;
	state.queueLock = host.queueLock;
	enabled = host.enabledDeviceExtensions;
	return std::nullopt;
}

void findExtensions(VulkanDevice &state, std::vector<std::string> &enabled, bool told)
{
	auto resolves = [&](const char *fn) {
		return state.getDeviceProcAddr(state.device, fn) != nullptr;
	};
	if (!told) {
		// Extensions without entry points (dma_buf, queue_family_foreign) cannot be
		// detected: without the host's word they are taken as not enabled.
		const std::pair<const char *, const char *> probes[] = {
			{ VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, "vkGetMemoryFdKHR" },
			{ VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME, "vkGetSemaphoreFdKHR" },
			{ VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME,
			  "vkGetMemoryHostPointerPropertiesEXT" },
			{ VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME,
			  "vkGetImageDrmFormatModifierPropertiesEXT" },
		};
		for (const auto &[name, fn] : probes)
			if (resolves(fn))
				enabled.emplace_back(name);
		state.ext.timeline = resolves("vkGetSemaphoreCounterValue");
	}
	state.ext.memoryFd = contains(enabled, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
	state.ext.semaphoreFd = contains(enabled, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
	state.ext.memoryHost = contains(enabled, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
	// DMA-BUF fds go through VK_KHR_external_memory_fd's calls, which the extension requires.
	state.ext.dmaBuf = contains(enabled, VK_EXT_EXTERNAL_MEMORY_DMA_BUF_EXTENSION_NAME) &&
			   state.ext.memoryFd;
	state.ext.drmModifier = contains(enabled, VK_EXT_IMAGE_DRM_FORMAT_MODIFIER_EXTENSION_NAME);
	state.ext.queueFamilyForeign =
		contains(enabled, VK_EXT_QUEUE_FAMILY_FOREIGN_EXTENSION_NAME);
	if (told)
		state.ext.timeline = resolves("vkGetSemaphoreCounterValue");
}

// Entry points, the queue and a command pool: what every later call needs.
MaybeError prepareDevice(VulkanDevice &state)
{
	state.getDeviceProcAddr = instanceFn<PFN_vkGetDeviceProcAddr>(state, "vkGetDeviceProcAddr");
	if (!state.getDeviceProcAddr)
		return notSupported("getInstanceProcAddr",
				    "the loader has no vkGetDeviceProcAddr.");
	state.dispatch.device = state.device;
	state.dispatch.getDeviceProcAddr = reinterpret_cast<void *>(state.getDeviceProcAddr);
	state.physicalDispatch = { state.instance, state.physical,
				   reinterpret_cast<void *>(state.getInstanceProcAddr) };
	if (auto e = detail::loadApi("openVulkanBackend", state.dispatch, state.physicalDispatch,
				     state.api))
		return e;
	if (!state.queue)
		state.api.GetDeviceQueue(state.device, state.queueFamily, 0, &state.queue);
	VkCommandPoolCreateInfo poolInfo{};
	poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
	poolInfo.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
	poolInfo.queueFamilyIndex = state.queueFamily;
	if (VkResult r = state.api.CreateCommandPool(state.device, &poolInfo, nullptr, &state.pool);
	    r != VK_SUCCESS) {
		state.pool = VK_NULL_HANDLE;
		return detail::vulkanError("openVulkanBackend", "vkCreateCommandPool", r);
	}
	state.api.GetPhysicalDeviceMemoryProperties(state.physical, &state.memory);
	return std::nullopt;
}

// DeviceInfo and the context's identities from the physical device's properties.
DeviceInfo describe(VulkanDevice &state, VulkanContext &context)
{
	const std::vector<std::string> offered = offeredExtensions(state);
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	VkPhysicalDeviceIDProperties id{};
	id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
	properties.pNext = &id;
	VkPhysicalDeviceDriverProperties driver{};
	driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
	VkPhysicalDevicePCIBusInfoPropertiesEXT pci{};
	pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
	VkPhysicalDeviceDrmPropertiesEXT drm{};
	drm.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRM_PROPERTIES_EXT;
	VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{};
	host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
	auto chain = [&](auto &next) {
		next.pNext = properties.pNext;
		properties.pNext = &next;
	};
	VkPhysicalDeviceProperties plain{};
	instanceFn<PFN_vkGetPhysicalDeviceProperties>(state, "vkGetPhysicalDeviceProperties")(
		state.physical, &plain);
	const bool hasDriver = plain.apiVersion >= VK_API_VERSION_1_2 ||
			       contains(offered, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
	const bool hasPci = contains(offered, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
	const bool hasDrm = contains(offered, VK_EXT_PHYSICAL_DEVICE_DRM_EXTENSION_NAME);
	const bool hasHost = contains(offered, VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME);
	if (hasDriver)
		chain(driver);
	if (hasPci)
		chain(pci);
	if (hasDrm)
		chain(drm);
	if (hasHost)
		chain(host);
	state.api.GetPhysicalDeviceProperties2(state.physical, &properties);
	const VkPhysicalDeviceProperties &p = properties.properties;

	DeviceInfo info;
	info.backend = BackendKind::Vulkan;
	info.name = p.deviceName;
	std::memcpy(state.deviceUuid.data(), id.deviceUUID, VK_UUID_SIZE);
	std::memcpy(state.driverUuid.data(), id.driverUUID, VK_UUID_SIZE);
	info.id.uuid = state.deviceUuid;
	context.deviceUuid = state.deviceUuid;
	context.driverUuid = state.driverUuid;
	if (hasPci)
		if (auto bus = PciBusId::create(pci.pciDomain, pci.pciBus, pci.pciDevice,
						pci.pciFunction))
			info.id.pciBusId = context.pciBusId = *bus;
	if (hasDrm && drm.hasRender)
		info.id.drmRenderNode = context.renderNode =
			DrmNode{ static_cast<uint32_t>(drm.renderMajor),
				 static_cast<uint32_t>(drm.renderMinor) };
	if (hasDrm && drm.hasPrimary)
		info.id.drmPrimaryNode = DrmNode{ static_cast<uint32_t>(drm.primaryMajor),
						  static_cast<uint32_t>(drm.primaryMinor) };
	info.vendorId = p.vendorID;
	if (p.vendorID < 0x10000)
		info.pciDeviceId = p.deviceID;
	if (hasDriver && driver.driverInfo[0])
		info.driverVersion = driver.driverInfo;
	else
		info.driverVersion = std::to_string(VK_API_VERSION_MAJOR(p.driverVersion)) + "." +
				     std::to_string(VK_API_VERSION_MINOR(p.driverVersion)) + "." +
				     std::to_string(VK_API_VERSION_PATCH(p.driverVersion));
	info.isIntegrated = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ||
			    p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
	info.isSoftware = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
			  isSoftwareRendererName(info.name);
	if (!info.isIntegrated)
		for (uint32_t i = 0; i < state.memory.memoryHeapCount; i++)
			if (state.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
				info.dedicatedMemoryBytes += state.memory.memoryHeaps[i].size;
	if (state.ext.memoryHost)
		state.hostPointerAlignment = host.minImportedHostPointerAlignment;
	return info;
}

BackendCapabilities capabilitiesOf(const VulkanDevice &state)
{
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::VulkanBuffer, ResourceKind::VulkanImage };
	caps.storages = { FrameStorage::Buffer, FrameStorage::LinearImage,
			  FrameStorage::OptimalImage };
	caps.routes = { ImportRoute::Direct };
	if (state.ext.memoryFd) {
		caps.exports.push_back(ResourceKind::VulkanMemoryFd);
		caps.imports.push_back(ResourceKind::VulkanMemoryFd);
		caps.routes.push_back(ImportRoute::OpaqueFd);
	}
	if (state.ext.dmaBuf && state.api.GetMemoryFdPropertiesKHR) {
		// Buffers and linear images export LINEAR DMA-BUFs where the driver can; imports
		// take LINEAR as buffers and, with VK_EXT_image_drm_format_modifier, the driver's
		// modifiers as images.
		if (exportsDmaBufBuffers(state))
			caps.exports.push_back(ResourceKind::DmaBuf);
		caps.imports.push_back(ResourceKind::DmaBuf);
		caps.routes.push_back(ImportRoute::DmaBuf);
		caps.drmModifiers = dmaBufModifiers(state);
	}
	if (state.ext.memoryHost && state.hostPointerAlignment) {
		caps.imports.push_back(ResourceKind::CpuBytes);
		caps.imports.push_back(ResourceKind::CpuPlanes);
		caps.routes.push_back(ImportRoute::HostPointer);
	}
	caps.fenceImports = { SyncKind::VulkanSemaphore };
	if (state.ext.semaphoreFd) {
		// exportFence() gives a binary semaphore's SYNC_FD: only where the driver makes
		// one.
		Result<bool> exports = vulkanCanExportSemaphoreFd(state.physicalDispatch,
								  VulkanSemaphoreKind::Binary,
								  VulkanSemaphoreFdType::SyncFd);
		if (exports.ok() && *exports)
			caps.fenceExports = { SyncKind::VulkanSemaphore };
		VkPhysicalDeviceExternalSemaphoreInfo query{
			VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO, nullptr,
			VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT
		};
		VkExternalSemaphoreProperties answer{};
		answer.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
		auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceExternalSemaphoreProperties>(
			state.getInstanceProcAddr(
				state.instance, "vkGetPhysicalDeviceExternalSemaphoreProperties"));
		if (get) {
			get(state.physical, &query, &answer);
			if (answer.externalSemaphoreFeatures &
			    VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT)
				caps.fenceImports.push_back(SyncKind::FenceFd);
		}
	}
	caps.cpuMap = true;
	caps.gpuCopy = true;
	return caps;
}

} // namespace

namespace vulkan {

VulkanDevice::~VulkanDevice()
{
	// Pending submissions here kept nothing of this state (else it would live on); their
	// commands may still run, so what they use stays if they do not finish in time (drain()
	// says so on stderr): the pool, the device and the host's Context, leaked on purpose.
	if (device && pool && !drain(kDefaultWaitTimeout)) {
		static_cast<void>(new ContextRef(std::move(hostContext)));
		return;
	}
	if (device && pool)
		api.DestroyCommandPool(device, pool, nullptr);
	if (ownsDevice && device) {
		// Entry points are missing when opening failed before they were loaded (the loader
		// may even have had no vkGetDeviceProcAddr); the instance-level query dispatches
		// device functions too.
		PFN_vkVoidFunction fallback = nullptr;
		if (!api.DestroyDevice && getDeviceProcAddr)
			fallback = getDeviceProcAddr(device, "vkDestroyDevice");
		if (!api.DestroyDevice && !fallback && getInstanceProcAddr)
			fallback = getInstanceProcAddr(instance, "vkDestroyDevice");
		if (api.DeviceWaitIdle)
			api.DeviceWaitIdle(device);
		if (api.DestroyDevice)
			api.DestroyDevice(device, nullptr);
		else if (fallback)
			reinterpret_cast<PFN_vkDestroyDevice>(fallback)(device, nullptr);
	}
	if (ownsInstance && instance && destroyInstance)
		destroyInstance(instance, nullptr);
	// The loader stays loaded (RuntimeLibrary's rule): a dlclose() here, on whichever thread
	// let the last frame go, unloaded the ICD under its own threads now and then.
}

bool VulkanDevice::hasMemoryFlags(uint32_t type, VkMemoryPropertyFlags flags) const
{
	return type < memory.memoryTypeCount &&
	       (memory.memoryTypes[type].propertyFlags & flags) == flags;
}

} // namespace vulkan

Result<BackendRef> openVulkanBackend(const BackendOpenOptions &options)
{
	auto state = std::make_shared<VulkanDevice>();
	std::vector<std::string> enabled;
	bool told = true;
	if (options.context) {
		Result<const VulkanContext *> host = options.context->vulkan();
		if (!host)
			return Error::format(
				ErrorCode::InvalidArgument, "context",
				"vulkan: the context is a %s context, not a Vulkan one.",
				backendKindName(options.context->backend()));
		told = !(*host)->enabledDeviceExtensions.empty();
		if (auto e = adoptHostDevice(*state, options.context, **host, enabled))
			return std::move(*e);
	} else if (auto e = createOwnDevice(*state, options.deviceIndex, enabled)) {
		return std::move(*e);
	}
	if (auto e = prepareDevice(*state))
		return std::move(*e);
	findExtensions(*state, enabled, told);
	VulkanContext native;
	DeviceInfo info = describe(*state, native);
	BackendCapabilities caps = capabilitiesOf(*state);
	auto user = std::make_shared<DeviceUser>(state);
	ContextRef context = options.context;
	if (!context) {
		native.instance = state->instance;
		native.physicalDevice = state->physical;
		native.device = state->device;
		native.queue = state->queue;
		native.queueFamilyIndex = state->queueFamily;
		native.getInstanceProcAddr = reinterpret_cast<void *>(state->getInstanceProcAddr);
		native.enabledDeviceExtensions = enabled;
		auto made = Context::create(std::move(native), user);
		if (!made)
			return std::move(made).error();
		context = std::move(*made);
	}
	return BackendRef(std::make_shared<VulkanBackend>(std::move(info), std::move(caps),
							  std::move(context), std::move(user)));
}

} // namespace gpuhandle
