// The OpenGL backend on llvmpipe (surfaceless EGL): allocate, map, copy, Vulkan (lavapipe) imports.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/vulkan_memory.h>
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/layout.h>

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
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
// clang-format on

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "check_helpers.h"
#include "egl_gl_thread.h"
#include "fd_count.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;

namespace {

BackendRef openGl()
{
	auto opened = openBackend(BackendKind::OpenGL);
	ck_assert_ok(opened);
	return *opened;
}

uint8_t patternAt(uint32_t plane, uint32_t row, uint64_t column, uint8_t seed)
{
	return static_cast<uint8_t>((column * 7 + row * 31 + plane * 101 + seed) ^ (column >> 8));
}

// Writes the pattern into every row of every plane of a mapping (only the row bytes: padding
// between rows is not part of the picture).
void writePattern(const CpuMapping &mapping, const Frame &frame, uint8_t seed)
{
	const PixelFormatInfo *info = *pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info->numPlanes; ++p)
		for (uint32_t y = 0; y < info->planes[p].rows(frame.height()); ++y)
			for (uint64_t x = 0; x < info->planes[p].rowBytes(frame.width()); ++x)
				mapping.data(p)[y * uint64_t(mapping.stride(p)) + x] =
					patternAt(p, y, x, seed);
}

void expectPattern(const CpuMapping &mapping, const Frame &frame, uint8_t seed)
{
	const PixelFormatInfo *info = *pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info->numPlanes; ++p)
		for (uint32_t y = 0; y < info->planes[p].rows(frame.height()); ++y) {
			const uint8_t *row = mapping.data(p) + y * uint64_t(mapping.stride(p));
			for (uint64_t x = 0; x < info->planes[p].rowBytes(frame.width()); ++x)
				if (row[x] != patternAt(p, y, x, seed))
					ck_abort_msg(
						"%s %ux%u plane %u row %u byte %llu: read 0x%x, wrote 0x%x",
						pixelFormatName(frame.format()), frame.width(),
						frame.height(), p, y,
						static_cast<unsigned long long>(x), row[x],
						patternAt(p, y, x, seed));
		}
}

void writeFrame(Backend &backend, const Frame &frame, uint8_t seed)
{
	auto mapping = backend.map(frame, MapAccess::Write, kDefaultWaitTimeout);
	ck_assert_ok(mapping);
	writePattern(*mapping, frame, seed);
	ck_assert_ok(mapping->unmap());
}

void expectFrame(Backend &backend, const Frame &frame, uint8_t seed)
{
	auto mapping = backend.map(frame, MapAccess::Read, kDefaultWaitTimeout);
	ck_assert_ok(mapping);
	expectPattern(*mapping, frame, seed);
}

Frame allocate(Backend &backend, PixelFormat format, uint32_t width, uint32_t height,
	       FrameStorage storage)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	request.storage = storage;
	auto frame = backend.allocate(request);
	ck_assert_ok(frame);
	return *frame;
}

constexpr PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::P010LE,
				     PixelFormat::RGBA, PixelFormat::V210,    PixelFormat::BGRA };

} // namespace

START_TEST(opens_and_reports_the_device)
{
	int fdsBefore = test::openFdCount();
	{
		BackendRef gl = openGl();
		const DeviceInfo &info = gl->deviceInfo();
		ck_assert(gl->kind() == BackendKind::OpenGL);
		ck_assert_msg(info.name.find("llvmpipe") != std::string::npos, "renderer %s",
			      info.name.c_str());
		ck_assert(info.isSoftware);
		ck_assert(!info.driverVersion.empty());
		ck_assert(info.id.uuid.has_value()); // llvmpipe offers GL_EXT_memory_object
		const BackendCapabilities &caps = gl->capabilities();
		ck_assert_uint_eq(caps.allocates.size(), 2);
		ck_assert(caps.cpuMap && caps.gpuCopy);
		ck_assert(caps.routes.front() == ImportRoute::Direct);
		ck_assert_uint_eq(caps.storages.size(), 3);
		ck_assert(caps.fenceExports == std::vector<SyncKind>{ SyncKind::GlSync });
		ck_assert(gl->context() && gl->context()->backend() == BackendKind::OpenGL);
		ck_assert_ptr_nonnull((*gl->context()->opengl())->context);
		ck_assert((*gl->context()->opengl())->deviceUuid == info.id.uuid);
		ck_assert(gl->supportsFormat(PixelFormat::NV12, FrameStorage::OptimalImage));
		ck_assert(gl->supportsFormat(PixelFormat::V210, FrameStorage::Buffer));
		ck_assert(!gl->supportedFormats(FrameStorage::LinearImage).empty());
	}
	// The GL thread joined and the display was terminated: nothing stays open.
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(buffers_and_textures_round_trip)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	for (FrameStorage storage :
	     { FrameStorage::Buffer, FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (PixelFormat format : kFormats)
			for (auto [w, h] : { std::pair{ 33u, 17u }, std::pair{ 1u, 1u } }) {
				Frame frame = allocate(*gl, format, w, h, storage);
				ck_assert(gl->holds(frame));
				ResourceKind kind = storage == FrameStorage::Buffer
							    ? ResourceKind::GlBuffer
							    : ResourceKind::GlTexture;
				ck_assert(frame.resource(0).kind() == kind);
				writeFrame(*gl, frame, static_cast<uint8_t>(w + h));
				expectFrame(*gl, frame, static_cast<uint8_t>(w + h));
			}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(a_4k_buffer_and_texture_round_trip)
{
	BackendRef gl = openGl();
	Frame buffer = allocate(*gl, PixelFormat::NV12, 3840, 2160, FrameStorage::Buffer);
	writeFrame(*gl, buffer, 9);
	expectFrame(*gl, buffer, 9);
	Frame texture = allocate(*gl, PixelFormat::P010LE, 3840, 2160, FrameStorage::OptimalImage);
	ck_assert_ok(gl->copyFrame(
		texture, allocate(*gl, PixelFormat::P010LE, 3840, 2160, FrameStorage::Buffer),
		kDefaultWaitTimeout));
	writeFrame(*gl, texture, 4);
	expectFrame(*gl, texture, 4);
}
END_TEST

START_TEST(copies_between_buffers_and_textures)
{
	BackendRef gl = openGl();
	for (PixelFormat format : kFormats) {
		Frame a = allocate(*gl, format, 33, 17, FrameStorage::Buffer);
		Frame b = allocate(*gl, format, 33, 17, FrameStorage::OptimalImage);
		Frame c = allocate(*gl, format, 33, 17, FrameStorage::LinearImage);
		AllocateRequest wide{ format, 33, 17, {}, FrameStorage::Buffer, 256, true };
		auto d = gl->allocate(wide); // other strides: copied row by row
		ck_assert_ok(d);
		writeFrame(*gl, a, 3);
		ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));  // buffer -> texture
		ck_assert_ok(gl->copyFrame(c, b, kDefaultWaitTimeout));  // texture -> texture
		ck_assert_ok(gl->copyFrame(*d, c, kDefaultWaitTimeout)); // texture -> buffer
		expectFrame(*gl, b, 3);
		expectFrame(*gl, c, 3);
		expectFrame(*gl, *d, 3);
		writeFrame(*gl, *d, 8);
		ck_assert_ok(gl->copyFrame(a, *d, kDefaultWaitTimeout)); // buffer -> buffer
		expectFrame(*gl, a, 8);
	}
}
END_TEST

START_TEST(frames_outlive_the_backend)
{
	int fdsBefore = test::openFdCount();
	{
		Frame frame =
			allocate(*openGl(), PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
		BackendRef again = openGl(); // another backend's frame is not this one's
		ck_assert(!again->holds(frame));
		ck_assert_error(again->map(frame, MapAccess::Read, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert(frame.resource(0).get<GlTexture>()->desc().name != 0);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

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

// map() and copyFrame() wait for the frame's acquire point first, bounded by the timeout.
START_TEST(map_and_copy_wait_for_the_acquire_point)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	{
		Frame frame = allocate(*gl, PixelFormat::NV12, 33, 17, FrameStorage::Buffer);
		Frame other = allocate(*gl, PixelFormat::NV12, 33, 17, FrameStorage::Buffer);
		writeFrame(*gl, frame, 1);
		auto fence = CpuFence::create();
		ck_assert_ok(fence);
		frame.setAcquire((*fence)->point());
		auto early = gl->map(frame, MapAccess::Read, std::chrono::milliseconds(20));
		ck_assert_msg(!early.ok() && early.error().code() == ErrorCode::Timeout,
			      "map did not time out");
		Status copied = gl->copyFrame(other, frame, std::chrono::milliseconds(20));
		ck_assert_msg(!copied.ok() && copied.error().code() == ErrorCode::Timeout,
			      "copy did not time out");
		(*fence)->signal();
		expectFrame(*gl, frame, 1);
		ck_assert_ok(gl->copyFrame(other, frame, kDefaultWaitTimeout));
		expectFrame(*gl, other, 1);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A host's GLES 3 context on its own thread: the backend works through the host's executor.
START_TEST(works_inside_a_host_context)
{
	test::EglGlThread host;
	std::string why = host.start();
	ck_assert_msg(why.empty(), "%s", why.c_str());
	auto context = Context::create(
		GlContext{ host.display, host.context, {}, GlFlavour::Egl, {}, {} });
	ck_assert_ok(context);
	for (GlExecutor executor : { host.blocking(), host.posting() }) {
		BackendOpenOptions options;
		options.context = *context;
		options.glExecutor = executor;
		auto opened = openBackend(BackendKind::OpenGL, options);
		ck_assert_ok(opened);
		BackendRef gl = *opened;
		ck_assert(gl->context() == *context);
		ck_assert(gl->deviceInfo().id.uuid.has_value());
		for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::OptimalImage }) {
			Frame a = allocate(*gl, PixelFormat::RGBA, 33, 17, storage);
			writeFrame(*gl, a, 21);
			expectFrame(*gl, a, 21);
			Frame b = allocate(*gl, PixelFormat::RGBA, 33, 17, storage);
			ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));
			expectFrame(*gl, b, 21);
		}
	}
	// A context that is not current where the executor runs the work.
	auto wrong = Context::create(GlContext{ host.display, &host, {}, GlFlavour::Egl, {}, {} });
	ck_assert_ok(wrong);
	BackendOpenOptions options;
	options.context = *wrong;
	options.glExecutor = host.blocking();
	ck_assert_error(openBackend(BackendKind::OpenGL, options), ErrorCode::InvalidState,
			"executor");
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

	VulkanDeviceDispatch dispatch() const
	{
		VulkanDeviceDispatch d;
		d.device = device;
		d.getDeviceProcAddr = reinterpret_cast<void *>(vk.getDeviceProcAddr);
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

// Pointers to each plane of a CPU view of `frame` (Vulkan mappings at the frame's offsets).
void writeRaw(const std::array<uint8_t *, 4> &planes, const Frame &frame, uint8_t seed)
{
	const PixelFormatInfo *info = *pixelFormatInfo(frame.format());
	for (uint32_t p = 0; p < info->numPlanes; ++p)
		for (uint32_t y = 0; y < info->planes[p].rows(frame.height()); ++y)
			for (uint64_t x = 0; x < info->planes[p].rowBytes(frame.width()); ++x)
				planes[p][y * uint64_t(frame.plane(p).stride) + x] =
					patternAt(p, y, x, seed);
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
		expectFrame(*gl, *imported, 11);
		// Zero-copy both ways: Vulkan's next write is what GL reads, GL's write what Vulkan
		// reads.
		writeRaw(planes, source.frame, 12);
		expectFrame(*gl, *imported, 12);
		writeFrame(*gl, *imported, 13);
		auto copy = allocate(*gl, format, 33, 17, FrameStorage::OptimalImage);
		ck_assert_ok(gl->copyFrame(copy, *imported, kDefaultWaitTimeout));
		expectFrame(*gl, copy, 13);
		for (uint32_t p = 0; p < info->numPlanes; ++p)
			ck_assert_int_eq(planes[p][0], patternAt(p, 0, 0, 13));
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
		expectFrame(*gl, *imported, 5);
		writeRaw(planes, *frame, 6);
		expectFrame(*gl, *imported, 6);
		writeFrame(*gl, *imported, 7); // GL writes into the Vulkan image's memory
		for (uint32_t p = 0; p < info->numPlanes; ++p)
			ck_assert_int_eq(planes[p][frame->plane(p).stride + 1],
					 patternAt(p, 1, 1, 7));
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
		// refused naming the limit.
		VulkanBufferFrame tight = vulkanBufferFrame(vk, PixelFormat::RGBA, 64, 16, 0);
		auto whole = gl->importFrame(tight.frame, ImportRoute::OpaqueFd);
		if (!whole.ok())
			ck_assert_error(whole, ErrorCode::NotSupported, "size");
		std::printf("A frame filling its whole %llu-byte Vulkan allocation: %s\n",
			    static_cast<unsigned long long>(
				    tight.memory.exported.desc().exportDesc.allocationSize),
			    whole.ok() ? "imported" : whole.error().message().c_str());
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

Suite *glSuite(bool withVulkan)
{
	Suite *s = suite_create("gl-backend");
	TCase *tc = tcase_create("gl-backend");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, opens_and_reports_the_device);
	tcase_add_test(tc, buffers_and_textures_round_trip);
	tcase_add_test(tc, a_4k_buffer_and_texture_round_trip);
	tcase_add_test(tc, copies_between_buffers_and_textures);
	tcase_add_test(tc, frames_outlive_the_backend);
	tcase_add_test(tc, bad_input_is_refused);
	tcase_add_test(tc, map_and_copy_wait_for_the_acquire_point);
	tcase_add_test(tc, works_inside_a_host_context);
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
	int probed = test::probeInChild([] {
		auto opened = openBackend(BackendKind::OpenGL);
		return opened.ok() ? std::string() : opened.error().message();
	});
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
	return test::runSuite(glSuite(vulkan));
}
