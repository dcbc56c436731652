// The OpenGL backend's imports: Vulkan (lavapipe) memory as opaque fds, and refused bad input.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/vulkan_memory.h>
#include <gpuhandle/layout.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/wait.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

// clang-format off
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
// clang-format on

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "backend_probe.h"
#include "gl_backend_fixture.h"
#include "fd_count.h"
// clang-format on

using namespace gpuhandle;
using namespace gpuhandle::test;

START_TEST(bad_input_is_refused)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	{
		AllocateRequest zero{ PixelFormat::NV12, 0, 16, {}, FrameStorage::Buffer, 0, true };
		ck_assert_error(gl->allocate(zero), ErrorCode::ZeroSize, "width");
		AllocateRequest unknown{ PixelFormat::Unknown, 16, 16,  {},
					 FrameStorage::Buffer, 0,  true };
		ck_assert_error(gl->allocate(unknown), ErrorCode::NotSupported, "format");
		AllocateRequest storage{
			PixelFormat::NV12, 16, 16, {}, static_cast<FrameStorage>(7), 0, true
		};
		ck_assert_error(gl->allocate(storage), ErrorCode::InvalidArgument, "storage");
		AllocateRequest align{
			PixelFormat::NV12, 16, 16, {}, FrameStorage::Buffer, 3, true
		};
		ck_assert_error(gl->allocate(align), ErrorCode::InvalidArgument, "strideAlign");

		// A memfd frame (CPU memory): another backend's, and no dma-buf.
		auto layout = computeLayout(PixelFormat::RGBA, 16, 16);
		auto shm = ShmFd::create(
			{ SharedFd(test::makeMemfd(layout->size)), 0, layout->size, 0 });
		ck_assert_ok(shm);
		auto memfd = Frame::wrap(PixelFormat::RGBA, 16, 16, {}, Resource(*shm));
		ck_assert_ok(memfd);
		ck_assert(!gl->holds(*memfd));
		ck_assert_error(gl->map(*memfd, MapAccess::Read, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		Frame own = allocate(*gl, PixelFormat::RGBA, 16, 16, FrameStorage::Buffer);
		ck_assert_error(gl->copyFrame(own, *memfd, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(gl->exportFrame(*memfd, ResourceKind::DmaBuf), ErrorCode::WrongKind,
				"frame");
		ck_assert_error(gl->exportFrame(own, ResourceKind::DmaBuf), ErrorCode::NotSupported,
				"kind");
		ck_assert_error(gl->importFrame(*memfd, ImportRoute::Direct),
				ErrorCode::NotSupported, "route");
		ck_assert_error(gl->importFrame(*memfd, ImportRoute::OpaqueFd),
				ErrorCode::WrongKind, "frame");
		// The DMA-BUF route, where EGL imports DMA-BUFs (llvmpipe from Mesa 24), takes
		// only DmaBuf resources; elsewhere the route itself is refused.
		const std::vector<ImportRoute> &routes = gl->capabilities().routes;
		if (std::find(routes.begin(), routes.end(), ImportRoute::DmaBuf) != routes.end())
			ck_assert_error(gl->importFrame(*memfd, ImportRoute::DmaBuf),
					ErrorCode::WrongKind, "frame");
		else
			ck_assert_error(gl->importFrame(*memfd, ImportRoute::DmaBuf),
					ErrorCode::NotSupported, "route");
		ck_assert_error(gl->importFrame(*memfd, ImportRoute::HostPointer),
				ErrorCode::NotSupported, "route");
		auto direct = gl->importFrame(own, ImportRoute::Direct);
		ck_assert_ok(direct);
		ck_assert(direct->resource(0).get<GlBuffer>()->desc().name ==
			  own.resource(0).get<GlBuffer>()->desc().name);

		Frame other = allocate(*gl, PixelFormat::RGBA, 16, 8, FrameStorage::Buffer);
		ck_assert_error(gl->copyFrame(own, other, kDefaultWaitTimeout),
				ErrorCode::FormatMismatch, "frame");
		ck_assert_error(gl->map(own, static_cast<MapAccess>(0), kDefaultWaitTimeout),
				ErrorCode::InvalidArgument, "access");

		// Opening with a context of another backend, or a GL context without an executor.
		BackendOpenOptions cpu;
		cpu.context = Context::cpu();
		ck_assert_error(openBackend(BackendKind::OpenGL, cpu), ErrorCode::InvalidArgument,
				"context");
		BackendOpenOptions noExecutor;
		noExecutor.context = gl->context();
		ck_assert_error(openBackend(BackendKind::OpenGL, noExecutor),
				ErrorCode::InvalidArgument, "glExecutor");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

namespace {

// libvulkan through dlopen: this test links EGL and GLES only.
struct VulkanLoader {
	void *library = nullptr;
	PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
	PFN_vkGetDeviceProcAddr getDeviceProcAddr = nullptr;
	PFN_vkCreateInstance createInstance = nullptr;
	PFN_vkDestroyInstance destroyInstance = nullptr;
	PFN_vkEnumeratePhysicalDevices enumeratePhysicalDevices = nullptr;
	PFN_vkGetPhysicalDeviceProperties2 getProperties2 = nullptr;
	PFN_vkCreateDevice createDevice = nullptr;
	PFN_vkDestroyDevice destroyDevice = nullptr;
	PFN_vkMapMemory mapMemory = nullptr;
};

// A lavapipe instance and device with VK_KHR_external_memory_fd whose allocations GL imports.
struct VulkanExporter {
	VulkanLoader vk{};
	VkInstance instance = VK_NULL_HANDLE;
	VkPhysicalDevice physical = VK_NULL_HANDLE;
	VkDevice device = VK_NULL_HANDLE;
	Uuid deviceUuid{};
	Uuid driverUuid{};

	// Empty on success, else why lavapipe is not usable.
	std::string create()
	{
		// lavapipe, unless the caller named another driver
		const char *icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
		if (!std::getenv("VK_ICD_FILENAMES") && access(icd, R_OK) == 0)
			setenv("VK_ICD_FILENAMES", icd, 1);
		vk.library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!vk.library)
			return "libvulkan.so.1 did not load";
		vk.getInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(
			dlsym(vk.library, "vkGetInstanceProcAddr"));
		if (!vk.getInstanceProcAddr)
			return "libvulkan has no vkGetInstanceProcAddr";
		vk.createInstance = reinterpret_cast<PFN_vkCreateInstance>(
			vk.getInstanceProcAddr(nullptr, "vkCreateInstance"));
		VkApplicationInfo app{};
		app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
		app.apiVersion = VK_API_VERSION_1_2;
		VkInstanceCreateInfo instanceInfo{};
		instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
		instanceInfo.pApplicationInfo = &app;
		if (!vk.createInstance ||
		    vk.createInstance(&instanceInfo, nullptr, &instance) != VK_SUCCESS)
			return "vkCreateInstance failed";
		auto get = [this](auto &f, const char *name) {
			f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(
				vk.getInstanceProcAddr(instance, name));
		};
		get(vk.destroyInstance, "vkDestroyInstance");
		get(vk.enumeratePhysicalDevices, "vkEnumeratePhysicalDevices");
		get(vk.getProperties2, "vkGetPhysicalDeviceProperties2");
		get(vk.createDevice, "vkCreateDevice");
		get(vk.getDeviceProcAddr, "vkGetDeviceProcAddr");
		uint32_t count = 0;
		vk.enumeratePhysicalDevices(instance, &count, nullptr);
		std::vector<VkPhysicalDevice> devices(count);
		vk.enumeratePhysicalDevices(instance, &count, devices.data());
		for (VkPhysicalDevice candidate : devices) {
			VkPhysicalDeviceIDProperties ids{};
			ids.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
			VkPhysicalDeviceProperties2 properties{};
			properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
			properties.pNext = &ids;
			vk.getProperties2(candidate, &properties);
			if (!std::strstr(properties.properties.deviceName, "llvmpipe"))
				continue;
			physical = candidate;
			std::memcpy(deviceUuid.data(), ids.deviceUUID, VK_UUID_SIZE);
			std::memcpy(driverUuid.data(), ids.driverUUID, VK_UUID_SIZE);
		}
		if (!physical)
			return "no lavapipe device among " + std::to_string(count);
		float priority = 1.0f;
		VkDeviceQueueCreateInfo queueInfo{};
		queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		queueInfo.queueCount = 1;
		queueInfo.pQueuePriorities = &priority;
		const char *extensions[] = { VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME };
		VkDeviceCreateInfo deviceInfo{};
		deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
		deviceInfo.queueCreateInfoCount = 1;
		deviceInfo.pQueueCreateInfos = &queueInfo;
		deviceInfo.enabledExtensionCount = 1;
		deviceInfo.ppEnabledExtensionNames = extensions;
		if (vk.createDevice(physical, &deviceInfo, nullptr, &device) != VK_SUCCESS)
			return "vkCreateDevice with VK_KHR_external_memory_fd failed";
		vk.destroyDevice = reinterpret_cast<PFN_vkDestroyDevice>(
			vk.getDeviceProcAddr(device, "vkDestroyDevice"));
		vk.mapMemory = reinterpret_cast<PFN_vkMapMemory>(
			vk.getDeviceProcAddr(device, "vkMapMemory"));
		return {};
	}

	VulkanExporter() = default;
	VulkanExporter(const VulkanExporter &) = delete;
	VulkanExporter &operator=(const VulkanExporter &) = delete;
	~VulkanExporter()
	{
		if (device)
			vk.destroyDevice(device, nullptr);
		if (instance)
			vk.destroyInstance(instance, nullptr);
		if (vk.library)
			dlclose(vk.library);
	}

	// With the queue: a new linear image is moved to GENERAL there, ready for host writes.
	VulkanDeviceDispatch dispatch() const
	{
		VulkanDeviceDispatch d;
		d.device = device;
		d.getDeviceProcAddr = reinterpret_cast<void *>(vk.getDeviceProcAddr);
		auto getQueue = reinterpret_cast<PFN_vkGetDeviceQueue>(
			vk.getDeviceProcAddr(device, "vkGetDeviceQueue"));
		VkQueue queue = VK_NULL_HANDLE;
		getQueue(device, 0, 0, &queue);
		d.queue = queue;
		return d;
	}

	VulkanPhysicalDeviceDispatch physicalDispatch() const
	{
		return { instance, physical, reinterpret_cast<void *>(vk.getInstanceProcAddr) };
	}

	uint8_t *map(const VulkanBoundMemory &bound) const
	{
		void *at = nullptr;
		ck_assert_int_eq(vk.mapMemory(device,
					      reinterpret_cast<VkDeviceMemory>(bound.memory), 0,
					      VK_WHOLE_SIZE, 0, &at),
				 VK_SUCCESS);
		return static_cast<uint8_t *>(at);
	}
};

// Each Vulkan test makes its own (Check forks each test, and a device must not cross a fork).
void makeExporter(VulkanExporter &vk)
{
	std::string why = vk.create();
	ck_assert_msg(why.empty(), "lavapipe: %s", why.c_str());
}

constexpr uint32_t kHostMemory = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr uint32_t kUsage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// A frame over one exported Vulkan buffer, laid out as `layout` (the allocation leaves headroom:
// llvmpipe refuses GL storage that fills the whole memory object).
struct VulkanBufferFrame {
	VulkanExportedMemory memory;
	Frame frame;
	uint8_t *mapped = nullptr;
};

VulkanBufferFrame vulkanBufferFrame(const VulkanExporter &vk, PixelFormat format, uint32_t w,
				    uint32_t h, uint64_t headroom = 4096)
{
	auto layout = computeLayout(format, w, h, LayoutPolicy::StrideAlign, 64);
	ck_assert_ok(layout);
	auto memory = allocateExportableVulkanBuffer(vk.dispatch(), vk.physicalDispatch(),
						     layout->size + headroom, kUsage, kHostMemory);
	ck_assert_ok(memory);
	FrameDesc desc;
	desc.format = format;
	desc.width = w;
	desc.height = h;
	desc.numResources = 1;
	desc.resources[0] = memory->exported;
	desc.numPlanes = layout->numPlanes;
	for (uint32_t i = 0; i < layout->numPlanes; ++i)
		desc.planes[i] =
			PlaneView{ 0, 0, layout->planes[i].offset, layout->planes[i].stride };
	auto frame = Frame::create(desc);
	ck_assert_ok(frame);
	return { *memory, *frame, vk.map(memory->bound) };
}

// Writes the pattern through pointers to each plane of a CPU view of `frame` (Vulkan mappings at
// the frame's offsets).
void writeRaw(const std::array<uint8_t *, 4> &planes, const Frame &frame, uint8_t seed)
{
	fillRows(frame, seed, [&](uint32_t p, uint32_t y) {
		return planes[p] + y * uint64_t(frame.plane(p).stride);
	});
}

} // namespace

START_TEST(vulkan_buffers_import_as_gl_buffers)
{
	BackendRef gl = openGl();
	VulkanExporter vk;
	makeExporter(vk);
	ck_assert(gl->deviceInfo().id.uuid == vk.deviceUuid); // lavapipe and llvmpipe agree
	int fdsBefore = test::openFdCount();
	for (PixelFormat format : kFormats) {
		VulkanBufferFrame source = vulkanBufferFrame(vk, format, 33, 17);
		const PixelFormatInfo *info = *pixelFormatInfo(format);
		std::array<uint8_t *, 4> planes{};
		for (uint32_t p = 0; p < info->numPlanes; ++p)
			planes[p] = source.mapped + source.frame.plane(p).offset;
		writeRaw(planes, source.frame, 11);
		auto imported = gl->importFrame(source.frame, ImportRoute::OpaqueFd);
		ck_assert_ok(imported);
		ck_assert(gl->holds(*imported));
		ck_assert(imported->resource(0).kind() == ResourceKind::GlBuffer);
		checkPatternOk(*gl, *imported, 11);
		// Zero-copy both ways: Vulkan's next write is what GL reads, GL's write what Vulkan
		// reads.
		writeRaw(planes, source.frame, 12);
		checkPatternOk(*gl, *imported, 12);
		writePatternOk(*gl, *imported, 13);
		auto copy = allocate(*gl, format, 33, 17, FrameStorage::OptimalImage);
		ck_assert_ok(gl->copyFrame(copy, *imported, kDefaultWaitTimeout));
		checkPatternOk(*gl, copy, 13);
		for (uint32_t p = 0; p < info->numPlanes; ++p)
			ck_assert_int_eq(planes[p][0], patternByte(13, p, 0, 0));
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(vulkan_images_import_as_gl_textures)
{
	BackendRef gl = openGl();
	VulkanExporter vk;
	makeExporter(vk);
	int fdsBefore = test::openFdCount();
	for (PixelFormat format : { PixelFormat::RGBA, PixelFormat::NV12, PixelFormat::BGRA }) {
		const PixelFormatInfo *info = *pixelFormatInfo(format);
		FrameDesc desc;
		desc.format = format;
		desc.width = 33;
		desc.height = 17;
		desc.numResources = info->numPlanes;
		desc.numPlanes = info->numPlanes;
		std::vector<VulkanExportedMemory> images;
		std::array<uint8_t *, 4> planes{};
		for (uint32_t p = 0; p < info->numPlanes; ++p) {
			const PlaneInfo &plane = info->planes[p];
			auto image = allocateExportableVulkanImage(
				vk.dispatch(), vk.physicalDispatch(), plane.format,
				plane.rowTexels(33), plane.rows(17),
				VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_SAMPLED_BIT,
				kHostMemory);
			ck_assert_ok(image);
			images.push_back(*image);
			desc.resources[p] = image->exported;
			desc.planes[p] = PlaneView{
				p, 0, 0, image->bound.native.get<VulkanImage>()->desc().rowPitch
			};
			planes[p] = vk.map(image->bound);
		}
		auto frame = Frame::create(desc);
		ck_assert_ok(frame);
		writeRaw(planes, *frame, 5);
		auto imported = gl->importFrame(*frame, ImportRoute::OpaqueFd);
		ck_assert_ok(imported);
		ck_assert(imported->resource(0).kind() == ResourceKind::GlTexture);
		checkPatternOk(*gl, *imported, 5);
		writeRaw(planes, *frame, 6);
		checkPatternOk(*gl, *imported, 6);
		writePatternOk(*gl, *imported, 7); // GL writes into the Vulkan image's memory
		for (uint32_t p = 0; p < info->numPlanes; ++p)
			ck_assert_int_eq(planes[p][frame->plane(p).stride + 1],
					 patternByte(7, p, 1, 1));
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(vulkan_imports_refuse_bad_input)
{
	BackendRef gl = openGl();
	VulkanExporter vk;
	makeExporter(vk);
	int fdsBefore = test::openFdCount();
	{
		VulkanBufferFrame source = vulkanBufferFrame(vk, PixelFormat::NV12, 33, 17);
		const VulkanMemoryFdDesc &good = source.memory.exported.desc();
		for (int which = 0; which < 2; ++which) {
			VulkanMemoryFdDesc foreign = good;
			(which ? foreign.driverUuid : foreign.deviceUuid) = test::uuidOf(1);
			auto memory = VulkanMemoryFd::create(foreign);
			ck_assert_ok(memory);
			std::array<Resource, 1> resources{ Resource(*memory) };
			auto frame = Frame::create([&] {
				FrameDesc d = source.frame.desc();
				d.resources[0] = resources[0];
				return d;
			}());
			ck_assert_ok(frame);
			ck_assert_error(gl->importFrame(*frame, ImportRoute::OpaqueFd),
					ErrorCode::DeviceMismatch,
					which ? "memory.driverUuid" : "memory.deviceUuid");
		}
		// A frame that needs the whole allocation imports where the driver allows it, or is
		// refused naming the limit. Asking is what makes llvmpipe raise GL_OUT_OF_MEMORY,
		// so not under GL debug output (--setup validation), which would count it against
		// us.
		if (std::getenv("GPUHANDLE_GL_DEBUG")) {
			std::printf("not asked under GL debug output: a frame filling its whole "
				    "Vulkan allocation (the driver's refusal is a GL error)\n");
		} else {
			VulkanBufferFrame tight =
				vulkanBufferFrame(vk, PixelFormat::RGBA, 64, 16, 0);
			auto whole = gl->importFrame(tight.frame, ImportRoute::OpaqueFd);
			if (!whole.ok())
				ck_assert_error(whole, ErrorCode::NotSupported, "size");
			std::printf("A frame filling its whole %llu-byte Vulkan allocation: %s\n",
				    static_cast<unsigned long long>(
					    tight.memory.exported.desc().exportDesc.allocationSize),
				    whole.ok() ? "imported" : whole.error().message().c_str());
		}
		// A closed fd never becomes a resource.
		int closed = test::makeMemfd(4096).release();
		close(closed);
		ck_assert(!VulkanMemoryFd::create(
				   { SharedFd::borrow(closed, {}), good.exportDesc, {}, {} })
				   .ok());
		// An imported frame is the backend's own: Direct takes it as it is, the rest copy
		// it.
		auto imported = gl->importFrame(source.frame, ImportRoute::OpaqueFd);
		ck_assert_ok(imported);
		ck_assert_ok(gl->importFrame(*imported, ImportRoute::Direct));
		ck_assert_error(gl->importFrame(source.frame, ImportRoute::Direct),
				ErrorCode::NotSupported, "route");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

Suite *glImportSuite(bool withVulkan)
{
	Suite *s = suite_create("gl-backend-import");
	TCase *tc = tcase_create("gl-backend-import");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bad_input_is_refused);
	if (!withVulkan) {
		std::printf(
			"lavapipe with VK_KHR_external_memory_fd is not here: the Vulkan imports are not tested.\n");
		suite_add_tcase(s, tc);
		return s;
	}
	tcase_add_test(tc, vulkan_buffers_import_as_gl_buffers);
	tcase_add_test(tc, vulkan_images_import_as_gl_textures);
	tcase_add_test(tc, vulkan_imports_refuse_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int main()
{
	int probed = test::probeBackend(BackendKind::OpenGL);
	if (probed != 0)
		return probed;
	// Whether lavapipe exports memory, asked in a child so that no driver thread crosses a
	// fork.
	pid_t child = fork();
	if (child == 0) {
		VulkanExporter vk;
		_exit(vk.create().empty() ? 0 : 1);
	}
	int status = 1;
	bool vulkan = child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0;
	return test::runSuite(glImportSuite(vulkan));
}
