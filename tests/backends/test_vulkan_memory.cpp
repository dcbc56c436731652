// Vulkan memory on lavapipe: buffers and linear images exported as opaque fds, imported into a
// second VkDevice, read back byte for byte; host bytes imported in place; anchors, device checks,
// bad fds and fd leaks.
#include <gpuhandle/backends/vulkan_memory.h>

#include "fd_count.h"
#include "lavapipe_device.h"
#include "skip_probe.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

using namespace gpuhandle;

namespace {

constexpr uint32_t kHostMemory = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr uint32_t kBufferUsage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
				  VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr uint32_t kImageUsage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;

// A device on the fixture's physical device with VK_KHR_external_memory_fd, which the fixture's
// own device does not enable (and VK_EXT_external_memory_host when asked). Two of these stand for
// the exporting and the importing process.
class MemoryDevice
{
public:
	explicit MemoryDevice(const test::LavapipeDevice &vk, bool hostMemory = false) : vk_(vk)
	{
		float priority = 1.0f;
		VkDeviceQueueCreateInfo queueInfo{};
		queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		queueInfo.queueCount = 1;
		queueInfo.pQueuePriorities = &priority;
		const char *extensions[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
					     VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME };
		VkDeviceCreateInfo info{};
		info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
		info.queueCreateInfoCount = 1;
		info.pQueueCreateInfos = &queueInfo;
		info.enabledExtensionCount = hostMemory ? 2 : 1;
		info.ppEnabledExtensionNames = extensions;
		ck_assert_int_eq(vkCreateDevice(vk.physical, &info, nullptr, &device), VK_SUCCESS);
	}
	MemoryDevice(const MemoryDevice &) = delete;
	MemoryDevice &operator=(const MemoryDevice &) = delete;
	~MemoryDevice() { vkDestroyDevice(device, nullptr); }

	VulkanDeviceDispatch dispatch() const
	{
		VulkanDeviceDispatch d;
		d.device = device;
		d.getDeviceProcAddr = reinterpret_cast<void *>(&vkGetDeviceProcAddr);
		// The queue a new linear image is moved to GENERAL on, ready for host writes.
		VkQueue queue = VK_NULL_HANDLE;
		vkGetDeviceQueue(device, 0, 0, &queue);
		d.queue = queue;
		d.queueFamily = 0;
		return d;
	}
	VulkanPhysicalDeviceDispatch physical() const { return vk_.physicalDispatch(); }

	// Maps the whole allocation, hands it to `use`, unmaps.
	template<typename Use>
	void mapped(const VulkanBoundMemory &bound, Use use) const
	{
		auto memory = reinterpret_cast<VkDeviceMemory>(bound.memory);
		void *data = nullptr;
		ck_assert_int_eq(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &data),
				 VK_SUCCESS);
		use(static_cast<uint8_t *>(data));
		vkUnmapMemory(device, memory);
	}

	VkSubresourceLayout layoutOf(const VulkanBoundMemory &bound) const
	{
		const VulkanImage *image = bound.native.get<VulkanImage>();
		ck_assert_ptr_nonnull(image);
		VkImageSubresource subresource{ VK_IMAGE_ASPECT_COLOR_BIT, 0, 0 };
		VkSubresourceLayout layout{};
		vkGetImageSubresourceLayout(device, reinterpret_cast<VkImage>(image->desc().image),
					    &subresource, &layout);
		ck_assert_uint_eq(layout.rowPitch, image->desc().rowPitch);
		return layout;
	}

	VkDevice device = VK_NULL_HANDLE;

private:
	const test::LavapipeDevice &vk_;
};

uint8_t patternAt(uint64_t i, uint8_t seed)
{
	return static_cast<uint8_t>((i * 131u + (i >> 8) * 7u + seed) & 0xff);
}

Uuid deviceUuidOf(VkPhysicalDevice physical)
{
	VkPhysicalDeviceIDProperties id{};
	id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &id;
	vkGetPhysicalDeviceProperties2(physical, &properties);
	Uuid uuid{};
	std::memcpy(uuid.data(), id.deviceUUID, uuid.size());
	return uuid;
}

START_TEST(buffer_bytes_cross_devices)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk), b(vk);
	const uint64_t size = 65536 + 13; // odd, so that the allocation rounds up
	auto made = allocateExportableVulkanBuffer(a.dispatch(), a.physical(), size, kBufferUsage,
						   kHostMemory);
	ck_assert_ok(made);
	const VulkanExportDesc &x = made->exported.desc().exportDesc;
	ck_assert_uint_ge(x.allocationSize, size);
	ck_assert_uint_eq(x.format, 0);
	ck_assert_uint_eq(x.usage, kBufferUsage);
	ck_assert(!made->exported.isImage());
	ck_assert(made->exported.desc().deviceUuid == deviceUuidOf(vk.physical));
	ck_assert(made->exported.desc().driverUuid.has_value());
	ck_assert_ptr_nonnull(made->bound.native.get<VulkanBuffer>());
	a.mapped(made->bound, [&](uint8_t *p) {
		for (uint64_t i = 0; i < size; i++)
			p[i] = patternAt(i, 3);
	});

	auto imported = importVulkanMemoryFd(b.dispatch(), b.physical(), made->exported);
	ck_assert_ok(imported);
	const VulkanBuffer *buffer = imported->native.get<VulkanBuffer>();
	ck_assert_ptr_nonnull(buffer);
	ck_assert_ptr_eq(buffer->desc().device, b.device);
	ck_assert_uint_eq(imported->allocationSize, x.allocationSize);
	// The exporter's objects go first: the imported memory holds the pages on its own.
	made.value().bound = {};
	uint64_t wrong = 0;
	b.mapped(*imported, [&](const uint8_t *p) {
		for (uint64_t i = 0; i < size; i++)
			wrong += p[i] != patternAt(i, 3);
	});
	ck_assert_uint_eq(wrong, 0);
}
END_TEST

// Linear images of three plane formats at an odd size, compared row by row through each
// device's own subresource layout.
START_TEST(image_bytes_cross_devices)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk), b(vk);
	const PlaneFormat formats[] = { PlaneFormat::RGBA8, PlaneFormat::R8, PlaneFormat::RG8 };
	const uint32_t width = 37, height = 19;
	for (PlaneFormat format : formats) {
		auto made = allocateExportableVulkanImage(a.dispatch(), a.physical(), format, width,
							  height, kImageUsage, kHostMemory);
		ck_assert_ok(made);
		const VulkanExportDesc &x = made->exported.desc().exportDesc;
		ck_assert(made->exported.isImage());
		ck_assert(x.dedicated);
		ck_assert_uint_eq(x.tiling, VK_IMAGE_TILING_LINEAR);
		ck_assert_uint_eq(x.width, width);
		ck_assert_uint_eq(x.height, height);
		const uint64_t rowBytes = uint64_t{ width } * bytesPerTexel(format);
		VkSubresourceLayout from = a.layoutOf(made->bound);
		a.mapped(made->bound, [&](uint8_t *p) {
			for (uint64_t y = 0; y < height; y++)
				for (uint64_t i = 0; i < rowBytes; i++)
					p[from.offset + y * from.rowPitch + i] =
						patternAt(y * rowBytes + i, 9);
		});

		auto imported = importVulkanMemoryFd(b.dispatch(), b.physical(), made->exported);
		ck_assert_ok(imported);
		ck_assert_ptr_nonnull(imported->native.get<VulkanImage>());
		VkSubresourceLayout to = b.layoutOf(*imported);
		uint64_t wrong = 0;
		b.mapped(*imported, [&](const uint8_t *p) {
			for (uint64_t y = 0; y < height; y++)
				for (uint64_t i = 0; i < rowBytes; i++)
					wrong += p[to.offset + y * to.rowPitch + i] !=
						 patternAt(y * rowBytes + i, 9);
		});
		ck_assert_msg(wrong == 0, "%s: %llu bytes differ", planeFormatName(format),
			      static_cast<unsigned long long>(wrong));
	}
}
END_TEST

int g_released = 0;

START_TEST(anchors_release_the_owner_once)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk), b(vk);
	g_released = 0;
	auto owner = makeKeepAlive([](void *) { g_released++; }, nullptr);
	auto made = allocateExportableVulkanBuffer(a.dispatch(), a.physical(), 4096, kBufferUsage,
						   kHostMemory, owner);
	ck_assert_ok(made);
	auto imported = importVulkanMemoryFd(b.dispatch(), b.physical(), made->exported, owner);
	ck_assert_ok(imported);
	owner.reset();
	Resource copy = made->bound.native;
	made.value().bound = {};
	ck_assert_int_eq(g_released, 0); // `copy` and the import still hold it
	copy = {};
	ck_assert_int_eq(g_released, 0); // the import's anchor holds it
	Resource importedCopy = imported->native;
	imported.value() = {};
	ck_assert_int_eq(g_released, 0);
	importedCopy = {};
	ck_assert_int_eq(g_released, 1);
}
END_TEST

START_TEST(another_device_or_driver_is_refused)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk);
	auto made = allocateExportableVulkanBuffer(a.dispatch(), a.physical(), 4096, kBufferUsage);
	ck_assert_ok(made);
	VulkanMemoryFdDesc desc = made->exported.desc();
	desc.deviceUuid->at(0) ^= 0xff;
	auto otherDevice = VulkanMemoryFd::create(desc).value();
	ck_assert_error(importVulkanMemoryFd(a.dispatch(), a.physical(), otherDevice),
			ErrorCode::DeviceMismatch, "deviceUuid");
	desc = made->exported.desc();
	desc.driverUuid->at(15) ^= 0x01;
	auto otherDriver = VulkanMemoryFd::create(desc).value();
	ck_assert_error(importVulkanMemoryFd(a.dispatch(), a.physical(), otherDriver),
			ErrorCode::DeviceMismatch, "driverUuid");
	desc = made->exported.desc();
	desc.deviceUuid.reset();
	auto unknown = VulkanMemoryFd::create(desc).value();
	ck_assert_error(importVulkanMemoryFd(a.dispatch(), a.physical(), unknown),
			ErrorCode::InvalidArgument, "deviceUuid");
}
END_TEST

START_TEST(bad_fds_and_input_are_refused)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk);
	auto made = allocateExportableVulkanBuffer(a.dispatch(), a.physical(), 4096, kBufferUsage);
	ck_assert_ok(made);
	VulkanMemoryFdDesc desc = made->exported.desc();
	desc.fd = SharedFd();
	ck_assert_error(VulkanMemoryFd::create(desc), ErrorCode::BadFd, "fd");
	int closed = -1;
	{
		UniqueFd memfd = test::makeMemfd(4096);
		closed = memfd.get();
	}
	desc.fd = SharedFd::borrow(closed, {});
	ck_assert_error(VulkanMemoryFd::create(desc), ErrorCode::BadFd, "fd");

	// A memory type the rebuilt buffer cannot use is caught before the driver sees the fd.
	desc = made->exported.desc();
	desc.exportDesc.memoryTypeIndex = 31;
	auto badType = VulkanMemoryFd::create(desc).value();
	ck_assert_error(importVulkanMemoryFd(a.dispatch(), a.physical(), badType),
			ErrorCode::InvalidArgument, "exportDesc.memoryTypeIndex");

	ck_assert_error(allocateExportableVulkanBuffer(a.dispatch(), a.physical(), 0, kBufferUsage),
			ErrorCode::ZeroSize, "size");
	VulkanDeviceDispatch noDevice = a.dispatch();
	noDevice.device = nullptr;
	ck_assert_error(allocateExportableVulkanBuffer(noDevice, a.physical(), 64, kBufferUsage),
			ErrorCode::NullHandle, "device");
	// The fixture's own device lacks VK_KHR_external_memory_fd.
	ck_assert_error(allocateExportableVulkanBuffer(vk.dispatch(), vk.physicalDispatch(), 64,
						       kBufferUsage),
			ErrorCode::NotSupported, "getDeviceProcAddr");
	ck_assert_error(allocateExportableVulkanImage(a.dispatch(), a.physical(),
						      PlaneFormat::RGBA8, 1u << 30, 4, kImageUsage),
			ErrorCode::OutOfRange, "width");
}
END_TEST

START_TEST(no_fd_leaks)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk), b(vk);
	// Warm up: the driver may keep what it opens for the device's lifetime.
	{
		auto made = allocateExportableVulkanBuffer(a.dispatch(), a.physical(), 4096,
							   kBufferUsage, kHostMemory);
		ck_assert_ok(made);
		ck_assert_ok(importVulkanMemoryFd(b.dispatch(), b.physical(), made->exported));
	}
	int before = test::openFdCount();
	for (int i = 0; i < 20; i++) {
		auto buffer = allocateExportableVulkanBuffer(a.dispatch(), a.physical(), 8192,
							     kBufferUsage, kHostMemory);
		ck_assert_ok(buffer);
		ck_assert_ok(importVulkanMemoryFd(b.dispatch(), b.physical(), buffer->exported));
		auto image = allocateExportableVulkanImage(a.dispatch(), a.physical(),
							   PlaneFormat::RGBA8, 16, 16, kImageUsage,
							   kHostMemory);
		ck_assert_ok(image);
		ck_assert_ok(importVulkanMemoryFd(b.dispatch(), b.physical(), image->exported));
		VulkanMemoryFdDesc desc = buffer->exported.desc();
		desc.deviceUuid->at(0) ^= 0xff;
		ck_assert(!importVulkanMemoryFd(b.dispatch(), b.physical(),
						VulkanMemoryFd::create(desc).value())
				   .ok());
	}
	ck_assert_int_eq(test::openFdCount(), before);
}
END_TEST

uint64_t hostPointerAlignment(VkPhysicalDevice physical)
{
	VkPhysicalDeviceExternalMemoryHostPropertiesEXT host{};
	host.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_MEMORY_HOST_PROPERTIES_EXT;
	VkPhysicalDeviceProperties2 properties{};
	properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	properties.pNext = &host;
	vkGetPhysicalDeviceProperties2(physical, &properties);
	return host.minImportedHostPointerAlignment;
}

void freeAndCount(void *data)
{
	std::free(data);
	g_released++;
}

// Host bytes wrapped in place: read through the device's mapping, written back through it and
// seen by the host; misaligned input refused; the bytes' anchor outlives the buffer, once.
START_TEST(host_memory_imported_in_place)
{
	LAVAPIPE(vk);
	MemoryDevice a(vk, true);
	const uint64_t alignment = hostPointerAlignment(vk.physical);
	ck_assert_uint_gt(alignment, 0);
	const uint64_t size = 4 * alignment;
	g_released = 0;
	auto *host = static_cast<uint8_t *>(std::aligned_alloc(alignment, size));
	ck_assert_ptr_nonnull(host);
	for (uint64_t i = 0; i < size; i++)
		host[i] = patternAt(i, 5);
	std::optional<CpuBytes> bytes =
		CpuBytes::create({ host, size, makeKeepAlive(freeAndCount, host) }).value();

	auto imported =
		importHostMemoryIntoVulkan(a.dispatch(), a.physical(), *bytes, kBufferUsage);
	ck_assert_ok(imported);
	ck_assert_ptr_nonnull(imported->native.get<VulkanBuffer>());
	ck_assert_uint_eq(imported->allocationSize, size);
	uint64_t wrong = 0;
	a.mapped(*imported, [&](uint8_t *p) {
		for (uint64_t i = 0; i < size; i++)
			wrong += p[i] != patternAt(i, 5);
		p[size - 1] = static_cast<uint8_t>(~patternAt(size - 1, 5));
	});
	ck_assert_uint_eq(wrong, 0);
	ck_assert_uint_eq(host[size - 1], static_cast<uint8_t>(~patternAt(size - 1, 5)));

	auto shifted = CpuBytes::create({ host + 1, size - alignment, {} }).value();
	ck_assert_error(importHostMemoryIntoVulkan(a.dispatch(), a.physical(), shifted,
						   kBufferUsage),
			ErrorCode::InvalidArgument, "data");
	auto ragged = CpuBytes::create({ host, size - 1, {} }).value();
	ck_assert_error(importHostMemoryIntoVulkan(a.dispatch(), a.physical(), ragged,
						   kBufferUsage),
			ErrorCode::InvalidArgument, "size");
	// A device without the extension says which one it lacks.
	MemoryDevice plain(vk);
	ck_assert_error(importHostMemoryIntoVulkan(plain.dispatch(), plain.physical(), *bytes,
						   kBufferUsage),
			ErrorCode::NotSupported, "getDeviceProcAddr");

	int before = test::openFdCount();
	for (int i = 0; i < 20; i++)
		ck_assert_ok(importHostMemoryIntoVulkan(a.dispatch(), a.physical(), *bytes,
							kBufferUsage));
	ck_assert_int_eq(test::openFdCount(), before);

	// The caller lets go; the imported buffer still holds the bytes.
	bytes.reset();
	ck_assert_int_eq(g_released, 0);
	Resource copy = imported->native;
	imported.value() = {};
	ck_assert_int_eq(g_released, 0);
	copy = {};
	ck_assert_int_eq(g_released, 1);
}
END_TEST

// Empty when lavapipe can export and import opaque-fd memory, else why not.
std::string probe()
{
	auto vk = std::make_unique<test::LavapipeDevice>();
	std::string why = vk->create();
	if (!why.empty() && test::nameLavapipeIcd()) {
		vk = std::make_unique<test::LavapipeDevice>();
		why = vk->create();
	}
	if (!why.empty())
		return "Mesa lavapipe is not usable: " + why;
	uint32_t count = 0;
	vkEnumerateDeviceExtensionProperties(vk->physical, nullptr, &count, nullptr);
	std::vector<VkExtensionProperties> extensions(count);
	vkEnumerateDeviceExtensionProperties(vk->physical, nullptr, &count, extensions.data());
	for (const VkExtensionProperties &e : extensions)
		if (std::strcmp(e.extensionName, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) == 0)
			return {};
	return "lavapipe does not offer VK_KHR_external_memory_fd";
}

} // namespace

int main()
{
	// The probe runs in a child so that no driver thread exists when Check forks each test;
	// naming lavapipe's ICD there must be repeated here.
	int status = test::probeInChild(probe);
	if (status != 0)
		return status;
	test::nameLavapipeIcd();
	Suite *s = suite_create("vulkan-memory");
	TCase *tc = tcase_create("vulkan-memory");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, buffer_bytes_cross_devices);
	tcase_add_test(tc, image_bytes_cross_devices);
	tcase_add_test(tc, anchors_release_the_owner_once);
	tcase_add_test(tc, another_device_or_driver_is_refused);
	tcase_add_test(tc, bad_fds_and_input_are_refused);
	tcase_add_test(tc, no_fd_leaks);
	tcase_add_test(tc, host_memory_imported_in_place);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
