// libplacebo (7+) as a consumer of gpuhandle's Vulkan frames: one host device shared by the
// Vulkan backend and pl_vulkan_import, each plane wrapped with pl_vulkan_wrap, handed over with
// pl_vulkan_release_ex (the frame's own semaphore, or none when its work is done) and taken back
// with pl_vulkan_hold_ex (a timeline semaphore gpuhandle then waits on), the bytes checked on
// both sides: libplacebo's copies and renderings of gpuhandle's frames, gpuhandle's reads of what
// libplacebo wrote.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/vulkan_sync.h>
#include <gpuhandle/format_mappings.h>

#include "frame_pattern.h"
#include "lavapipe_device.h"
#include "skip_probe.h"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <libplacebo/renderer.h>
#include <libplacebo/vulkan.h>
#include <vulkan/vulkan.h>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;

namespace {

constexpr WaitDuration kTimeout = std::chrono::seconds(10);

// The host: a lavapipe device with every feature it has (libplacebo requires Vulkan 1.2's
// timeline semaphores and host query reset, and uses synchronization2 where enabled), one queue
// that gpuhandle and libplacebo share under one lock, and both wrapped around it.
class Host
{
public:
	Host() = default;
	Host(const Host &) = delete;
	Host &operator=(const Host &) = delete;
	~Host()
	{
		if (vk_)
			pl_vulkan_destroy(&vk_);
		if (log_)
			pl_log_destroy(&log_);
		backend_.reset();
		if (device_)
			vkDestroyDevice(device_, nullptr);
		if (instance_)
			vkDestroyInstance(instance_, nullptr);
	}

	// Empty on success, else why the host cannot be made.
	std::string create()
	{
		VkApplicationInfo app{};
		app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
		app.apiVersion = VK_API_VERSION_1_3;
		VkInstanceCreateInfo instanceInfo{};
		instanceInfo.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
		instanceInfo.pApplicationInfo = &app;
		// libplacebo labels its command buffers with VK_EXT_debug_utils wherever the entry
		// point resolves (a layer such as the validation layer provides it): enabled when
		// the instance has it, so that those calls are valid.
		uint32_t available = 0;
		vkEnumerateInstanceExtensionProperties(nullptr, &available, nullptr);
		std::vector<VkExtensionProperties> extensions(available);
		vkEnumerateInstanceExtensionProperties(nullptr, &available, extensions.data());
		const char *debugUtils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
		for (const VkExtensionProperties &e : extensions)
			if (std::strcmp(e.extensionName, debugUtils) == 0) {
				instanceInfo.enabledExtensionCount = 1;
				instanceInfo.ppEnabledExtensionNames = &debugUtils;
			}
		if (VkResult r = vkCreateInstance(&instanceInfo, nullptr, &instance_);
		    r != VK_SUCCESS)
			return "vkCreateInstance failed (" + std::to_string(r) + ")";
		uint32_t count = 0;
		vkEnumeratePhysicalDevices(instance_, &count, nullptr);
		std::vector<VkPhysicalDevice> devices(count);
		vkEnumeratePhysicalDevices(instance_, &count, devices.data());
		for (VkPhysicalDevice candidate : devices) {
			VkPhysicalDeviceProperties properties{};
			vkGetPhysicalDeviceProperties(candidate, &properties);
			if (std::strstr(properties.deviceName, "llvmpipe") &&
			    properties.apiVersion >= PL_VK_MIN_VERSION)
				physical_ = candidate;
		}
		if (!physical_)
			return "no lavapipe device with the Vulkan version libplacebo needs among " +
			       std::to_string(count);
		float priority = 1.0f;
		VkDeviceQueueCreateInfo queueInfo{};
		queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
		// Family 0: lavapipe's one, graphics, compute and transfer.
		queueInfo.queueCount = 1;
		queueInfo.pQueuePriorities = &priority;
		// Every Vulkan 1.1-1.3 feature the device has (as FFmpeg enables them):
		// libplacebo's required ones (timeline semaphores, host query reset) and the ones
		// it uses where present (synchronization2), told to libplacebo through
		// import.features.
		features11_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
		features12_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
		features13_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
		features_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
		features_.pNext = &features11_;
		features11_.pNext = &features12_;
		features12_.pNext = &features13_;
		vkGetPhysicalDeviceFeatures2(physical_, &features_);
		if (!features12_.timelineSemaphore || !features12_.hostQueryReset)
			return "lavapipe lacks timeline semaphores or host query reset";
		VkDeviceCreateInfo deviceInfo{};
		deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
		deviceInfo.pNext = &features_;
		deviceInfo.queueCreateInfoCount = 1;
		deviceInfo.pQueueCreateInfos = &queueInfo;
		if (VkResult r = vkCreateDevice(physical_, &deviceInfo, nullptr, &device_);
		    r != VK_SUCCESS)
			return "vkCreateDevice with libplacebo's required features failed (" +
			       std::to_string(r) + ")";
		VkQueue queue = VK_NULL_HANDLE;
		vkGetDeviceQueue(device_, 0, 0, &queue);

		// gpuhandle inside the host's device, on its queue, under the lock libplacebo uses.
		VulkanContext native;
		native.instance = instance_;
		native.physicalDevice = physical_;
		native.device = device_;
		native.queue = queue;
		native.queueFamilyIndex = 0;
		native.getInstanceProcAddr = reinterpret_cast<void *>(&vkGetInstanceProcAddr);
		// Told: none of gpuhandle's.
		native.enabledDeviceExtensions = { "VK_KHR_swapchain" };
		native.queueLock = [this](bool lock) {
			lock ? queueMutex_.lock() : queueMutex_.unlock();
		};
		Result<ContextRef> context = Context::create(std::move(native));
		if (!context)
			return "Context::create: " + context.error().message();
		BackendOpenOptions options;
		options.context = *context;
		Result<BackendRef> opened = openBackend(BackendKind::Vulkan, options);
		if (!opened)
			return "the Vulkan backend did not open in the host's device: " +
			       opened.error().message();
		backend_ = *opened;

		pl_log_params logParams{};
		logParams.log_cb = pl_log_color;
		logParams.log_level = PL_LOG_WARN;
		log_ = pl_log_create(PL_API_VER, &logParams);
		pl_vulkan_import_params import{};
		import.instance = instance_;
		import.get_proc_addr = vkGetInstanceProcAddr;
		import.phys_device = physical_;
		import.device = device_;
		import.queue_graphics = { 0, 1 };
		import.queue_compute = { 0, 1 };
		import.queue_transfer = { 0, 1 };
		import.features = &features_;
		import.lock_queue = [](void *self, uint32_t, uint32_t) {
			static_cast<Host *>(self)->queueMutex_.lock();
	};
	import.unlock_queue = [](void *self, uint32_t, uint32_t) {
		static_cast<Host *>(self)->queueMutex_.unlock();
};
import.queue_ctx = this;
vk_ = pl_vulkan_import(log_, &import);
if (!vk_)
	return "pl_vulkan_import refused the host's device";
return {};
} // namespace

Backend &backend() const
{
	return *backend_;
}
pl_gpu gpu() const
{
	return vk_->gpu;
}
pl_log log() const
{
	return log_;
}
VkDevice device() const
{
	return device_;
}

// A timeline semaphore of the host's device at 0, destroyed with the host's device idle.
VkSemaphore timeline()
{
	VkSemaphoreTypeCreateInfo type{ VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
					VK_SEMAPHORE_TYPE_TIMELINE, 0 };
	VkSemaphoreCreateInfo info{ VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type, 0 };
	VkSemaphore semaphore = VK_NULL_HANDLE;
	ck_assert_int_eq(vkCreateSemaphore(device_, &info, nullptr, &semaphore), VK_SUCCESS);
	return semaphore;
}

// gpuhandle's point over `semaphore` reaching `value`.
SyncPoint pointAt(VkSemaphore semaphore, uint64_t value) const
{
	VulkanDeviceDispatch dispatch;
	dispatch.device = device_;
	dispatch.getDeviceProcAddr = reinterpret_cast<void *>(&vkGetDeviceProcAddr);
	auto point = importVulkanSemaphore({ test::handleOf(semaphore),
					     VulkanSemaphoreKind::Timeline, value, device_ },
					   dispatch);
	ck_assert_ok(point);
	return *point;
}

private:
VkInstance instance_ = VK_NULL_HANDLE;
VkPhysicalDevice physical_ = VK_NULL_HANDLE;
VkDevice device_ = VK_NULL_HANDLE;
VkPhysicalDeviceFeatures2 features_{};
VkPhysicalDeviceVulkan11Features features11_{};
VkPhysicalDeviceVulkan12Features features12_{};
VkPhysicalDeviceVulkan13Features features13_{};
std::mutex queueMutex_;
BackendRef backend_;
pl_log log_ = nullptr;
pl_vulkan vk_ = nullptr;
}
;

// One plane of a gpuhandle frame as libplacebo sees it.
struct WrappedPlane {
	pl_tex tex = nullptr;
	uint32_t width = 0;
	uint32_t height = 0;
	uint64_t rowBytes = 0;
};

// Wraps every plane of `frame` (an image per plane, or a plane aspect of one multi-planar
// image) and hands it to libplacebo: after the frame's acquire point (its timeline semaphore
// when it has one, else waited here), in GENERAL, the layout gpuhandle keeps its images in.
std::vector<WrappedPlane> handOver(Host &host, const Frame &frame)
{
	const PixelFormatInfo &info = **pixelFormatInfo(frame.format());
	auto formats = planeApiFormats(PlaneApi::VkFormat, frame.format());
	ck_assert_ok(formats);
	pl_vulkan_sem semaphore{};
	const VulkanSemaphoreSync *raw = frame.acquire().raw<VulkanSemaphoreSync>();
	if (raw && raw->kind == VulkanSemaphoreKind::Timeline)
		semaphore = { reinterpret_cast<VkSemaphore>(raw->semaphore), raw->value };
	else
		ck_assert_ok(frame.acquire().wait(kTimeout));
	std::vector<WrappedPlane> planes;
	for (uint32_t p = 0; p < info.numPlanes; p++) {
		const PlaneView &view = frame.plane(p);
		auto image = frame.resource(view.resource).as<VulkanImage>();
		ck_assert_ok(image);
		WrappedPlane plane;
		plane.width = info.planes[p].rowTexels(frame.width());
		plane.height = info.planes[p].rows(frame.height());
		plane.rowBytes = info.planes[p].rowBytes(frame.width());
		pl_vulkan_wrap_params wrap{};
		wrap.image = reinterpret_cast<VkImage>((*image)->desc().image);
		wrap.aspect = vulkanPlaneAspect((*image)->desc().planes, view.subresource);
		wrap.width = static_cast<int>(plane.width);
		wrap.height = static_cast<int>(plane.height);
		wrap.format = static_cast<VkFormat>(formats->planes[p].value);
		// What the Vulkan backend creates its images with (vulkan_backend_internal.h).
		wrap.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
			     VK_IMAGE_USAGE_SAMPLED_BIT;
		wrap.debug_tag = PL_DEBUG_TAG;
		plane.tex = pl_vulkan_wrap(host.gpu(), &wrap);
		ck_assert_msg(plane.tex, "pl_vulkan_wrap refused plane %u (%s) of %s", p,
			      formats->planes[p].name, pixelFormatName(frame.format()));
		pl_vulkan_release_params release{};
		release.tex = plane.tex;
		release.layout = VK_IMAGE_LAYOUT_GENERAL;
		release.qf = VK_QUEUE_FAMILY_IGNORED;
		release.semaphore = semaphore;
		pl_vulkan_release_ex(host.gpu(), &release);
		planes.push_back(plane);
	}
	return planes;
}

// Takes the planes back from libplacebo in GENERAL; the frame's acquire point becomes the
// timeline value libplacebo signals once its work on them is done.
void takeBack(Host &host, Frame &frame, std::vector<WrappedPlane> &planes, VkSemaphore timeline,
	      uint64_t &value)
{
	for (WrappedPlane &plane : planes) {
		pl_vulkan_hold_params hold{};
		hold.tex = plane.tex;
		hold.layout = VK_IMAGE_LAYOUT_GENERAL;
		hold.qf = VK_QUEUE_FAMILY_IGNORED;
		hold.semaphore = { timeline, ++value };
		ck_assert(pl_vulkan_hold_ex(host.gpu(), &hold));
	}
	frame.setAcquire(host.pointAt(timeline, value));
}

// Reads a texture of libplacebo's into tightly packed rows.
std::vector<uint8_t> download(Host &host, pl_tex tex, uint64_t rowBytes, uint32_t rows)
{
	std::vector<uint8_t> bytes(rowBytes * rows);
	pl_tex_transfer_params transfer{};
	transfer.tex = tex;
	transfer.row_pitch = rowBytes;
	transfer.ptr = bytes.data();
	ck_assert(pl_tex_download(host.gpu(), &transfer));
	return bytes;
}

// A texture of libplacebo's own like `like`, that blits and transfers.
pl_tex texLike(Host &host, pl_tex like, bool renderable = false)
{
	pl_tex_params params{};
	params.w = like->params.w;
	params.h = like->params.h;
	params.format = like->params.format;
	params.blit_dst = true;
	params.blit_src = true;
	params.renderable = renderable;
	params.host_readable = true;
	params.host_writable = true;
	params.debug_tag = PL_DEBUG_TAG;
	pl_tex tex = pl_tex_create(host.gpu(), &params);
	ck_assert(tex);
	return tex;
}

std::string checkPlane(const std::vector<uint8_t> &bytes, const WrappedPlane &plane, uint32_t seed,
		       uint32_t p)
{
	for (uint32_t y = 0; y < plane.height; y++)
		for (uint64_t x = 0; x < plane.rowBytes; x++)
			if (bytes[y * plane.rowBytes + x] != test::patternByte(seed, p, y, x))
				return "plane " + std::to_string(p) + " row " + std::to_string(y) +
				       " byte " + std::to_string(x) + ": " +
				       std::to_string(bytes[y * plane.rowBytes + x]) +
				       ", expected " +
				       std::to_string(test::patternByte(seed, p, y, x));
	return {};
}

struct Case {
	PixelFormat format;
	uint32_t width;
	uint32_t height;
};
// Packed and planar 8-bit, 16-bit planes, odd sizes (chroma rounded up as the libraries do).
constexpr Case kCases[] = {
	{ PixelFormat::RGBA, 64, 48 },    { PixelFormat::RGBA, 33, 17 },
	{ PixelFormat::NV12, 64, 48 },    { PixelFormat::NV12, 30, 18 },
	{ PixelFormat::YUV420P, 34, 22 }, { PixelFormat::P010LE, 32, 16 },
};

// Per case: gpuhandle writes a pattern; libplacebo copies each plane into its own texture
// (read back: the pattern), then writes another pattern into each plane; gpuhandle, after
// libplacebo's semaphore, reads that one.
START_TEST(planes_cross_both_ways)
{
	test::nameLavapipeIcd();
	const Case c = kCases[_i];
	Host host;
	const std::string why = host.create();
	ck_assert_msg(why.empty(), "%s", why.c_str());
	if (!host.backend().supportsFormat(c.format, FrameStorage::OptimalImage)) {
		std::printf("%s: no optimal images of it on this driver\n",
			    pixelFormatName(c.format));
		return;
	}
	AllocateRequest request;
	request.format = c.format;
	request.width = c.width;
	request.height = c.height;
	request.storage = FrameStorage::OptimalImage;
	request.exportable = false;
	auto frame = host.backend().allocate(request);
	ck_assert_ok(frame);
	test::writePatternOk(host.backend(), *frame, 7);

	std::vector<WrappedPlane> planes = handOver(host, *frame);
	for (uint32_t p = 0; p < planes.size(); p++) {
		const WrappedPlane &plane = planes[p];
		pl_tex copy = texLike(host, plane.tex);
		pl_tex_blit_params blit{};
		blit.src = plane.tex;
		blit.dst = copy;
		blit.src_rc = { 0, 0, 0, plane.tex->params.w, plane.tex->params.h, 1 };
		blit.dst_rc = blit.src_rc;
		pl_tex_blit(host.gpu(), &blit);
		const std::string differs =
			checkPlane(download(host, copy, plane.rowBytes, plane.height), plane, 7, p);
		ck_assert_msg(differs.empty(), "%s %ux%u: libplacebo's copy of %s",
			      pixelFormatName(c.format), c.width, c.height, differs.c_str());
		// libplacebo writes seed 8 into gpuhandle's plane.
		std::vector<uint8_t> next(plane.rowBytes * plane.height);
		for (uint32_t y = 0; y < plane.height; y++)
			for (uint64_t x = 0; x < plane.rowBytes; x++)
				next[y * plane.rowBytes + x] = test::patternByte(8, p, y, x);
		pl_tex_transfer_params upload{};
		upload.tex = plane.tex;
		upload.row_pitch = plane.rowBytes;
		upload.ptr = next.data();
		ck_assert(pl_tex_upload(host.gpu(), &upload));
		pl_tex_destroy(host.gpu(), &copy);
	}
	VkSemaphore timeline = host.timeline();
	uint64_t value = 0;
	takeBack(host, *frame, planes, timeline, value);
	test::checkPatternOk(host.backend(), *frame, 8);
	for (WrappedPlane &plane : planes)
		pl_tex_destroy(host.gpu(), &plane.tex);
	pl_gpu_finish(host.gpu());
	vkDestroySemaphore(host.device(), timeline, nullptr);
}
END_TEST

// libplacebo renders a gpuhandle RGBA frame (pl_render_image, same size and colours: a copy
// through its shaders) into a texture of its own; the pixels are the frame's.
START_TEST(renderer_draws_a_frame)
{
	test::nameLavapipeIcd();
	Host host;
	const std::string why = host.create();
	ck_assert_msg(why.empty(), "%s", why.c_str());
	AllocateRequest request;
	request.format = PixelFormat::RGBA;
	request.width = 40;
	request.height = 24;
	request.storage = FrameStorage::OptimalImage;
	request.exportable = false;
	auto frame = host.backend().allocate(request);
	ck_assert_ok(frame);
	test::writePatternOk(host.backend(), *frame, 3);
	std::vector<WrappedPlane> planes = handOver(host, *frame);
	ck_assert_uint_eq(planes.size(), 1);

	pl_frame image{};
	image.num_planes = 1;
	image.planes[0].texture = planes[0].tex;
	image.planes[0].components = 4;
	for (int i = 0; i < 4; i++)
		image.planes[0].component_mapping[i] = i;
	image.repr = pl_color_repr_rgb;
	// The colours only: libplacebo's shaders premultiply alpha, so a pixel whose pattern alpha
	// is 0 would lose its colour; with the alpha channel ignored, R, G and B pass exactly.
	image.repr.alpha = PL_ALPHA_NONE;
	image.color = pl_color_space_srgb;
	image.crop = { 0, 0, 40, 24 };
	pl_tex target = texLike(host, planes[0].tex, true);
	pl_frame out{};
	out.num_planes = 1;
	out.planes[0] = image.planes[0];
	out.planes[0].texture = target;
	out.repr = image.repr;
	out.color = pl_color_space_srgb;
	out.crop = image.crop;
	pl_renderer renderer = pl_renderer_create(host.log(), host.gpu());
	ck_assert(renderer);
	pl_render_params params = pl_render_fast_params;
	// Alpha passes through: no blending onto a background, no border fill.
	params.background = PL_CLEAR_SKIP;
	params.border = PL_CLEAR_SKIP;
	ck_assert(pl_render_image(renderer, &image, &out, &params));
	const std::vector<uint8_t> rendered =
		download(host, target, planes[0].rowBytes, planes[0].height);
	for (uint32_t y = 0; y < planes[0].height; y++)
		for (uint64_t x = 0; x < planes[0].rowBytes; x++)
			if (x % 4 != 3) // R, G, B
				ck_assert_msg(rendered[y * planes[0].rowBytes + x] ==
						      test::patternByte(3, 0, y, x),
					      "libplacebo's rendering of rgba 40x24: row %u byte "
					      "%llu: %u, expected %u",
					      y, static_cast<unsigned long long>(x),
					      rendered[y * planes[0].rowBytes + x],
					      test::patternByte(3, 0, y, x));
	pl_renderer_destroy(&renderer);
	pl_tex_destroy(host.gpu(), &target);
	VkSemaphore timeline = host.timeline();
	uint64_t value = 0;
	takeBack(host, *frame, planes, timeline, value);
	ck_assert_ok(frame->acquire().wait(kTimeout));
	pl_tex_destroy(host.gpu(), &planes[0].tex);
	pl_gpu_finish(host.gpu());
	vkDestroySemaphore(host.device(), timeline, nullptr);
}
END_TEST

std::string probe()
{
	Host host;
	std::string why = host.create();
	if (!why.empty() && test::nameLavapipeIcd())
		why = Host().create();
	return why.empty() ? why : "no lavapipe host device for libplacebo: " + why;
}

} // namespace

int main()
{
	// The probe runs in a child so that no driver thread exists when Check forks each test.
	int status = test::probeInChild(probe);
	if (status != 0)
		return status;
	Suite *s = suite_create("placebo-consumer");
	TCase *tc = tcase_create("placebo-consumer");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, planes_cross_both_ways, 0, std::size(kCases));
	tcase_add_test(tc, renderer_draws_a_frame);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
