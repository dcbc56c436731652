// Vulkan memory imported into GL on lavapipe + llvmpipe: GL reads the bytes Vulkan wrote in place,
// the UUIDs agree, a foreign UUID is refused, GL names are deleted once, and no fd leaks.
#include <gpuhandle/backends/gl_memory.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// gl2ext.h uses the GL_APIENTRY macros that gl3.h defines, so the order stays.
// clang-format off
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <GLES2/gl2ext.h>
#include <vulkan/vulkan.h>
// clang-format on

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "check_helpers.h"
#include "egl_gl_thread.h"
#include "fd_count.h"
#include "lavapipe_device.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;

namespace {

constexpr VkDeviceSize kBufferSize = 65536 + 333; // odd, and more than one page
// llvmpipe refuses buffer storage that fills the whole memory object: the allocation leaves room.
constexpr VkDeviceSize kHeadroom = 4096;

uint8_t patternAt(size_t i, uint8_t seed)
{
	return static_cast<uint8_t>((i * 13 + seed) ^ (i >> 9));
}

// A host-visible VkBuffer whose memory is exportable as an opaque fd, on a lavapipe device made
// with VK_KHR_external_memory_fd (the shared fixture's device enables no extensions; its
// instance and physical device are reused).
struct ExportedBuffer {
	test::LavapipeDevice vk;
	VkDevice device = VK_NULL_HANDLE;
	VkBuffer buffer = VK_NULL_HANDLE;
	VkDeviceMemory memory = VK_NULL_HANDLE;
	VkDeviceSize allocationSize = 0;
	uint32_t memoryType = 0;
	uint8_t *mapped = nullptr;
	Uuid deviceUuid{};
	Uuid driverUuid{};

	~ExportedBuffer()
	{
		if (memory)
			vkFreeMemory(device, memory, nullptr);
		if (buffer)
			vkDestroyBuffer(device, buffer, nullptr);
		if (device)
			vkDestroyDevice(device, nullptr);
	}

	void create()
	{
		std::string why = vk.create();
		ck_assert_msg(why.empty(), "lavapipe: %s", why.c_str());
		VkPhysicalDeviceIDProperties ids{};
		ids.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
		VkPhysicalDeviceProperties2 properties{};
		properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
		properties.pNext = &ids;
		vkGetPhysicalDeviceProperties2(vk.physical, &properties);
		std::memcpy(deviceUuid.data(), ids.deviceUUID, VK_UUID_SIZE);
		std::memcpy(driverUuid.data(), ids.driverUUID, VK_UUID_SIZE);

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
		ck_assert_int_eq(vkCreateDevice(vk.physical, &deviceInfo, nullptr, &device),
				 VK_SUCCESS);

		VkExternalMemoryBufferCreateInfo external{};
		external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
		external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
		VkBufferCreateInfo bufferInfo{};
		bufferInfo.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
		bufferInfo.pNext = &external;
		bufferInfo.size = kBufferSize;
		bufferInfo.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
				   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
		ck_assert_int_eq(vkCreateBuffer(device, &bufferInfo, nullptr, &buffer), VK_SUCCESS);

		VkMemoryRequirements requirements{};
		vkGetBufferMemoryRequirements(device, buffer, &requirements);
		VkPhysicalDeviceMemoryProperties types{};
		vkGetPhysicalDeviceMemoryProperties(vk.physical, &types);
		const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
						     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
		memoryType = UINT32_MAX;
		for (uint32_t i = 0; i < types.memoryTypeCount && memoryType == UINT32_MAX; ++i)
			if ((requirements.memoryTypeBits & (1u << i)) &&
			    (types.memoryTypes[i].propertyFlags & wanted) == wanted)
				memoryType = i;
		ck_assert_msg(memoryType != UINT32_MAX, "lavapipe has no host-visible memory type");

		VkExportMemoryAllocateInfo exportInfo{};
		exportInfo.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
		exportInfo.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
		VkMemoryAllocateInfo allocateInfo{};
		allocateInfo.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
		allocateInfo.pNext = &exportInfo;
		allocateInfo.allocationSize = requirements.size + kHeadroom;
		allocateInfo.memoryTypeIndex = memoryType;
		ck_assert_int_eq(vkAllocateMemory(device, &allocateInfo, nullptr, &memory),
				 VK_SUCCESS);
		allocationSize = allocateInfo.allocationSize;
		ck_assert_int_eq(vkBindBufferMemory(device, buffer, memory, 0), VK_SUCCESS);
		void *at = nullptr;
		ck_assert_int_eq(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &at), VK_SUCCESS);
		mapped = static_cast<uint8_t *>(at);
	}

	void write(uint8_t seed) const
	{
		for (size_t i = 0; i < kBufferSize; ++i)
			mapped[i] = patternAt(i, seed);
	}

	// A new opaque fd of the memory, wrapped with the device's UUIDs (or the ones given).
	VulkanMemoryFd exportFd(std::optional<Uuid> deviceId, std::optional<Uuid> driverId) const
	{
		auto getFd = reinterpret_cast<PFN_vkGetMemoryFdKHR>(
			vkGetDeviceProcAddr(device, "vkGetMemoryFdKHR"));
		ck_assert_ptr_nonnull(reinterpret_cast<void *>(getFd));
		VkMemoryGetFdInfoKHR info{};
		info.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
		info.memory = memory;
		info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
		int fd = -1;
		ck_assert_int_eq(getFd(device, &info, &fd), VK_SUCCESS);
		VulkanExportDesc exported{};
		exported.allocationSize = allocationSize;
		exported.memoryTypeIndex = memoryType;
		exported.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
				 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
		auto made = VulkanMemoryFd::create(
			{ SharedFd(UniqueFd(fd)), exported, deviceId, driverId });
		ck_assert_ok(made);
		return made.value();
	}

	VulkanMemoryFd exportFd() const { return exportFd(deviceUuid, driverUuid); }
};

// Each test runs in a forked child and starts its own GL thread there.
test::EglGlThread *g_gl = nullptr;

void setUp()
{
	g_gl = new test::EglGlThread();
	std::string why = g_gl->start();
	ck_assert_msg(why.empty(), "%s", why.c_str());
}

void tearDown()
{
	delete g_gl;
	g_gl = nullptr;
}

// The bytes GL reads from `buffer`, on the GL thread. Storage from glBufferStorageMemEXT has no
// map flags, so it cannot be mapped, and GLES has no glGetBufferSubData: GL copies it into a
// mappable staging buffer (glCopyBufferSubData reads the imported memory itself), mapped here.
std::vector<uint8_t> glRead(GLuint buffer, size_t size)
{
	std::vector<uint8_t> bytes(size, 0);
	GLenum error = GL_NO_ERROR;
	g_gl->run([&] {
		GLuint staging = 0;
		glGenBuffers(1, &staging);
		glBindBuffer(GL_COPY_WRITE_BUFFER, staging);
		glBufferData(GL_COPY_WRITE_BUFFER, static_cast<GLsizeiptr>(size), nullptr,
			     GL_STREAM_READ);
		glBindBuffer(GL_COPY_READ_BUFFER, buffer);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0,
				    static_cast<GLsizeiptr>(size));
		const void *at = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0,
						  static_cast<GLsizeiptr>(size), GL_MAP_READ_BIT);
		if (at) {
			std::memcpy(bytes.data(), at, size);
			glUnmapBuffer(GL_COPY_WRITE_BUFFER);
		}
		error = glGetError();
		glBindBuffer(GL_COPY_READ_BUFFER, 0);
		glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
		glDeleteBuffers(1, &staging);
	});
	ck_assert_msg(error == GL_NO_ERROR, "reading GL buffer %u failed with GL error 0x%x",
		      buffer, error);
	return bytes;
}

void expectPattern(const std::vector<uint8_t> &bytes, uint8_t seed)
{
	for (size_t i = 0; i < bytes.size(); ++i)
		ck_assert_msg(bytes[i] == patternAt(i, seed),
			      "byte %zu: GL read 0x%x, Vulkan wrote 0x%x", i, bytes[i],
			      patternAt(i, seed));
}

} // namespace

START_TEST(gl_reads_the_bytes_vulkan_wrote_in_place)
{
	ExportedBuffer vk;
	vk.create();
	int fdsBefore = test::openFdCount();
	GLuint name = 0;
	{
		vk.write(1);
		auto imported = importVulkanMemoryIntoGl(vk.exportFd(), g_gl->blocking(),
							 g_gl->context, kBufferSize);
		ck_assert_ok(imported);
		const GlBuffer *buffer = imported->get<GlBuffer>();
		ck_assert_ptr_nonnull(buffer);
		ck_assert_uint_eq(buffer->desc().size, kBufferSize);
		ck_assert_uint_eq(buffer->desc().target, GL_COPY_READ_BUFFER);
		ck_assert_ptr_eq(buffer->desc().context, g_gl->context);
		name = buffer->desc().name;
		expectPattern(glRead(name, kBufferSize), 1);
		// Zero-copy: a later Vulkan write is what GL reads next, with no copy in between.
		vk.write(77);
		expectPattern(glRead(name, kBufferSize), 77);
		bool isBuffer = false;
		g_gl->run([&] { isBuffer = glIsBuffer(name) == GL_TRUE; });
		ck_assert(isBuffer);
	}
	// The last copy deleted the buffer (and its memory object, which closed GL's fd).
	bool isBuffer = true;
	g_gl->run([&] { isBuffer = glIsBuffer(name) == GL_TRUE; });
	ck_assert(!isBuffer);
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(gl_and_vulkan_report_the_same_uuids)
{
	ExportedBuffer vk;
	vk.create();
	Uuid glDevice{};
	Uuid glDriver{};
	GLint devices = 0;
	g_gl->run([&] {
		auto geti = reinterpret_cast<PFNGLGETUNSIGNEDBYTEI_VEXTPROC>(
			eglGetProcAddress("glGetUnsignedBytei_vEXT"));
		auto get = reinterpret_cast<PFNGLGETUNSIGNEDBYTEVEXTPROC>(
			eglGetProcAddress("glGetUnsignedBytevEXT"));
		glGetIntegerv(GL_NUM_DEVICE_UUIDS_EXT, &devices);
		geti(GL_DEVICE_UUID_EXT, 0, glDevice.data());
		get(GL_DRIVER_UUID_EXT, glDriver.data());
	});
	ck_assert_int_ge(devices, 1);
	ck_assert(glDevice == vk.deviceUuid);
	ck_assert(glDriver == vk.driverUuid);
}
END_TEST

START_TEST(a_foreign_uuid_is_refused_and_nothing_leaks)
{
	ExportedBuffer vk;
	vk.create();
	int fdsBefore = test::openFdCount();
	{
		auto device = importVulkanMemoryIntoGl(vk.exportFd(test::uuidOf(1), vk.driverUuid),
						       g_gl->blocking(), g_gl->context,
						       kBufferSize);
		ck_assert_error(device, ErrorCode::DeviceMismatch, "memory.deviceUuid");
		auto driver = importVulkanMemoryIntoGl(vk.exportFd(vk.deviceUuid, test::uuidOf(9)),
						       g_gl->blocking(), g_gl->context,
						       kBufferSize);
		ck_assert_error(driver, ErrorCode::DeviceMismatch, "memory.driverUuid");
		// Without UUIDs in the export nothing can be checked, and the import goes ahead.
		vk.write(5);
		auto unchecked = importVulkanMemoryIntoGl(vk.exportFd(std::nullopt, std::nullopt),
							  g_gl->posting(), g_gl->context,
							  kBufferSize);
		ck_assert_ok(unchecked);
		expectPattern(glRead(unchecked->get<GlBuffer>()->desc().name, kBufferSize), 5);
	}
	g_gl->run([] {}); // the posted delete ran
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// llvmpipe refuses storage that fills the whole memory object (GL_OUT_OF_MEMORY); a driver that
// takes it is fine too. A refusal names the size and leaves no fd or memory object behind.
START_TEST(the_whole_allocation_imports_or_fails_cleanly)
{
	ExportedBuffer vk;
	vk.create();
	int fdsBefore = test::openFdCount();
	{
		auto whole = importVulkanMemoryIntoGl(vk.exportFd(), g_gl->blocking(),
						      g_gl->context, vk.allocationSize);
		if (!whole.ok())
			ck_assert_error(whole, ErrorCode::Backend, "size");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(invalid_input_is_refused)
{
	ExportedBuffer vk;
	vk.create();
	int fdsBefore = test::openFdCount();
	{
		VulkanMemoryFd memory = vk.exportFd();
		ck_assert_error(importVulkanMemoryIntoGl(memory, nullptr, g_gl->context,
							 kBufferSize),
				ErrorCode::NullHandle, "executor");
		ck_assert_error(importVulkanMemoryIntoGl(memory, g_gl->blocking(), nullptr,
							 kBufferSize),
				ErrorCode::NullHandle, "glContext");
		ck_assert_error(importVulkanMemoryIntoGl(memory, g_gl->blocking(), g_gl->context,
							 0),
				ErrorCode::ZeroSize, "size");
		ck_assert_error(importVulkanMemoryIntoGl(memory, g_gl->blocking(), g_gl->context,
							 vk.allocationSize + 1),
				ErrorCode::OutOfRange, "size");
		ck_assert_error(importVulkanMemoryIntoGl(memory, g_gl->blocking(), g_gl->context,
							 kBufferSize, 0x1234),
				ErrorCode::InvalidArgument, "target");
		// An image export is not a buffer.
		VulkanMemoryFdDesc image = memory.desc();
		image.exportDesc.format = VK_FORMAT_R8G8B8A8_UNORM;
		image.exportDesc.width = 16;
		image.exportDesc.height = 16;
		image.exportDesc.tiling = VK_IMAGE_TILING_LINEAR;
		auto imageMemory = VulkanMemoryFd::create(image);
		ck_assert_ok(imageMemory);
		ck_assert_error(importVulkanMemoryIntoGl(imageMemory.value(), g_gl->blocking(),
							 g_gl->context, kBufferSize),
				ErrorCode::WrongKind, "memory");
		// A context that is not the one current on the executor's thread.
		int other = 0;
		ck_assert_error(importVulkanMemoryIntoGl(memory, g_gl->blocking(), &other,
							 kBufferSize),
				ErrorCode::InvalidState, "executor");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

int main()
{
	// Skips (exit 77) when lavapipe or surfaceless EGL is not here.
	int probed = test::probeInChild([] {
		test::nameLavapipeIcd();
		test::LavapipeDevice vk;
		std::string why = vk.create();
		if (!why.empty())
			return "lavapipe: " + why;
		test::EglGlThread gl;
		why = gl.start();
		if (!why.empty())
			return why;
		const char *extensions = nullptr;
		gl.run([&extensions] {
			extensions = reinterpret_cast<const char *>(glGetString(GL_EXTENSIONS));
		});
		if (!test::hasExtension(extensions, "GL_EXT_memory_object_fd"))
			return std::string("the GL context does not offer GL_EXT_memory_object_fd");
		return std::string();
	});
	if (probed != 0)
		return probed;
	test::nameLavapipeIcd();
	Suite *s = suite_create("gl-memory");
	TCase *tc = tcase_create("gl-memory");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setUp, tearDown);
	tcase_add_test(tc, gl_reads_the_bytes_vulkan_wrote_in_place);
	tcase_add_test(tc, gl_and_vulkan_report_the_same_uuids);
	tcase_add_test(tc, a_foreign_uuid_is_refused_and_nothing_leaks);
	tcase_add_test(tc, the_whole_allocation_imports_or_fails_cleanly);
	tcase_add_test(tc, invalid_input_is_refused);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
