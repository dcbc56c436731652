// GStreamer's Vulkan image memory <-> frames on lavapipe; the Vulkan backend in GStreamer's device.
#include <gpuhandle/backends/backend.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

// Not <gst/check/gstcheck.h>: its Check macros do not mix with the system Check (see
// test_gst_memory.cpp). Last: they include Check, whose fail() breaks later standard headers.
#include "../backends/skip_probe.h"
#include "vulkan_fixture.h"

using namespace gpuhandle;
using test::Size;

#if GPUHANDLE_GST_HAVE_VULKAN

namespace {

constexpr GstVideoFormat kFormats[] = { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12,
					GST_VIDEO_FORMAT_I420 };
constexpr Size kSizes[] = { { 1, 1 }, { 33, 17 }, { 1920, 1080 } };

// Whether GStreamer's own vulkanupload cannot make images of `info`'s format on this device:
// GStreamer 1.24 to 1.26 name a VkFormat only for the first of several planes that share one
// (I420: R8 for each) and then create the other planes' images with VK_FORMAT_UNDEFINED, which
// fails (gst-launch-1.0 videotestsrc ! video/x-raw,format=I420 ! vulkanupload: "Internal data
// stream error" on 1.26.2). Frames of the format still cross in both directions through
// gpuhandle's own images (backend_images_become_gst_vulkan_memory).
bool gstCannotUpload(GstVulkanDevice *device, const GstVideoInfo &info)
{
#if GST_CHECK_VERSION(1, 24, 0)
	GstVideoInfo copy = info;
	VkFormat formats[GST_VIDEO_MAX_PLANES] = {};
	int images = 0;
	VkImageUsageFlags usage = 0;
	if (!gst_vulkan_format_from_video_info_2(device, &copy, VK_IMAGE_TILING_OPTIMAL, FALSE,
						 VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
							 VK_IMAGE_USAGE_TRANSFER_DST_BIT,
						 formats, &images, &usage))
		return true;
	for (int i = 0; i < images; i++)
		if (formats[i] == VK_FORMAT_UNDEFINED)
			return true;
	return false;
#else
	(void)device;
	(void)info;
	return false;
#endif
}

} // namespace

START_TEST(vulkan_backend_is_cached_per_device)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> first = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(first);
	Result<BackendRef> again = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(again);
	ck_assert_ptr_eq(first->get(), again->get());
	const DeviceInfo &info = (*first)->deviceInfo();
	ck_assert_int_eq(static_cast<int>(info.backend), static_cast<int>(BackendKind::Vulkan));
	ck_assert(!info.name.empty());
	ck_assert(info.id.uuid.has_value());
	Result<const VulkanContext *> native = (*first)->context()->vulkan();
	ck_assert_ok(native);
	ck_assert_ptr_eq((*native)->device, static_cast<void *>(vk.device->device));
	ck_assert_ptr_eq((*native)->instance, static_cast<void *>(vk.instance->instance));
	ck_assert((*native)->deviceUuid == info.id.uuid);
	ck_assert_error(gst::vulkanBackendFor(nullptr), ErrorCode::NullHandle, "device");
}
END_TEST

// Images vulkanupload filled become frames (GStreamer's images, now in GENERAL), and memories
// wrapping the frame's images again download to the same bytes through vulkandownload.
START_TEST(gst_vulkan_images_become_frames)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = test::videoInfo(format, size);
			if (gstCannotUpload(vk.device, info)) {
				std::printf("%s %ux%u: GStreamer's vulkanupload makes no images of "
					    "it here (a plane without a VkFormat): not uploaded\n",
					    test::formatName(format), size.width, size.height);
				continue;
			}
			const uint32_t seed = test::seedOf(format, size) + 3;
			GstCaps *buffers =
				test::capsOf(info, GST_CAPS_FEATURE_MEMORY_VULKAN_BUFFER);
			GstCaps *images = test::capsOf(info, GST_CAPS_FEATURE_MEMORY_VULKAN_IMAGE);
			GstCaps *system = test::capsOf(info, nullptr);
			GstBuffer *input = test::vulkanPatternBuffer(vk.device, info, seed);
			ck_assert_ptr_nonnull(input);
			std::string why;
			GstBuffer *uploaded = test::throughVulkanElement("vulkanupload", input,
									 buffers, images, vk, why);
			ck_assert_msg(uploaded, "%s %ux%u: %s", test::formatName(format),
				      size.width, size.height, why.c_str());
			Result<Frame> frame = gst::frameFromVulkanBuffer(uploaded, info);
			ck_assert_ok(frame);
			// One image per plane, or (GStreamer 1.24+ where lavapipe has the
			// format) one multi-planar image whose aspects are the planes.
			const guint memories = gst_buffer_n_memory(uploaded);
			ck_assert_uint_eq(frame->numResources(), memories);
			ck_assert(memories == frame->numPlanes() || memories == 1);
			for (uint32_t p = 0; p < frame->numPlanes(); p++)
				ck_assert_uint_eq(frame->plane(p).subresource,
						  memories == 1 ? p : 0);
			for (uint32_t p = 0; p < memories; p++) {
				auto *mem = reinterpret_cast<GstVulkanImageMemory *>(
					gst_buffer_peek_memory(uploaded, p));
				const VulkanImage *image = frame->resource(p).get<VulkanImage>();
				ck_assert_ptr_nonnull(image);
				ck_assert_uint_eq(image->desc().planes,
						  memories == 1 ? frame->numPlanes() : 1);
				ck_assert_uint_eq(image->desc().image,
						  reinterpret_cast<uint64_t>(mem->image));
				ck_assert_ptr_eq(image->desc().device,
						 static_cast<void *>(vk.device->device));
				ck_assert_int_eq(mem->barrier.image_layout,
						 VK_IMAGE_LAYOUT_GENERAL);
			}
			gst_buffer_unref(uploaded); // the frame keeps it
			// The backend on GStreamer's device reads the same bytes, plane by plane
			// (aspect by aspect of a multi-planar image).
			Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
			ck_assert_ok(backend);
			test::checkPatternOk(**backend, *frame, seed);
			// ... and writes a new pattern into GStreamer's images, which
			// vulkandownload then reads.
			const uint32_t rewritten = seed + 100;
			test::writePatternOk(**backend, *frame, rewritten);
			Result<GstBuffer *> wrapped =
				gst::vulkanBufferFromFrame(*frame, vk.device, info);
			ck_assert_ok(wrapped);
			GstBuffer *downloaded = test::throughVulkanElement(
				"vulkandownload", *wrapped, images, system, vk, why);
			ck_assert_msg(downloaded, "%s", why.c_str());
			const std::string checked =
				test::checkDownloaded(downloaded, info, rewritten);
			ck_assert_msg(checked.empty(), "%s", checked.c_str());
			gst_buffer_unref(downloaded);
			gst_buffer_unref(*wrapped);
			gst_buffer_unref(input);
			gst_caps_unref(system);
			gst_caps_unref(images);
			gst_caps_unref(buffers);
		}
}
END_TEST

// Images gpuhandle's backend allocates on GStreamer's device, written through its map, become
// Vulkan image memories that vulkandownload reads the same bytes from.
START_TEST(backend_images_become_gst_vulkan_memory)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(backend);
	for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (GstVideoFormat format : kFormats)
			for (Size size : kSizes) {
				const GstVideoInfo info = test::videoInfo(format, size);
				const uint32_t seed = test::seedOf(format, size) + 4;
				Frame frame = test::allocate(**backend, test::pixelFormatOf(format),
							     size, storage);
				test::writePatternOk(**backend, frame, seed);
				Result<GstBuffer *> buffer =
					gst::vulkanBufferFromFrame(frame, vk.device, info);
				ck_assert_ok(buffer);
				GstCaps *images =
					test::capsOf(info, GST_CAPS_FEATURE_MEMORY_VULKAN_IMAGE);
				GstCaps *system = test::capsOf(info, nullptr);
				std::string why;
				GstBuffer *downloaded = test::throughVulkanElement(
					"vulkandownload", *buffer, images, system, vk, why);
				ck_assert_msg(downloaded, "%s %s %ux%u: %s",
					      frameStorageName(storage), test::formatName(format),
					      size.width, size.height, why.c_str());
				const std::string checked =
					test::checkDownloaded(downloaded, info, seed);
				ck_assert_msg(checked.empty(), "%s: %s", frameStorageName(storage),
					      checked.c_str());
				Result<Frame> back = gst::frameFromVulkanBuffer(*buffer, info);
				ck_assert_ok(back);
				for (uint32_t p = 0; p < frame.numPlanes(); p++)
					ck_assert_uint_eq(
						back->resource(p).get<VulkanImage>()->desc().image,
						frame.resource(p).get<VulkanImage>()->desc().image);
				gst_buffer_unref(downloaded);
				gst_buffer_unref(*buffer);
				gst_caps_unref(system);
				gst_caps_unref(images);
			}
}
END_TEST

START_TEST(vulkan_conversions_refuse_what_they_cannot_hold)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	const GstVideoInfo rgba = test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 33, 17 });
	GstBuffer *system = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&rgba), nullptr);
	ck_assert_error(gst::frameFromVulkanBuffer(system, rgba), ErrorCode::WrongKind,
			"buffer.memory");
	ck_assert_error(gst::frameFromVulkanBuffer(nullptr, rgba), ErrorCode::NullHandle, "buffer");
	gst_buffer_unref(system);

	// GStreamer keeps YUY2 as a full-width R8G8 image; gpuhandle as half-width RGBA.
	const GstVideoInfo yuy2 = test::videoInfo(GST_VIDEO_FORMAT_YUY2, { 34, 18 });
	GstBuffer *packed = gst_buffer_new();
	gst_buffer_append_memory(
		packed, gst_vulkan_image_memory_alloc(
				vk.device, VK_FORMAT_R8G8_UNORM, 34, 18, VK_IMAGE_TILING_OPTIMAL,
				VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
				VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT));
	ck_assert_error(gst::frameFromVulkanBuffer(packed, yuy2), ErrorCode::NotSupported,
			"buffer.memory");
	// One memory for a two-plane format must be one multi-planar image: an R8G8 one is not.
	ck_assert_error(gst::frameFromVulkanBuffer(packed, test::videoInfo(GST_VIDEO_FORMAT_NV12,
									   { 34, 18 })),
			ErrorCode::NotSupported, "buffer.memory");
	// Three memories for NV12's two planes are neither shape.
	gst_buffer_append_memory(packed, gst_memory_ref(gst_buffer_peek_memory(packed, 0)));
	gst_buffer_append_memory(packed, gst_memory_ref(gst_buffer_peek_memory(packed, 0)));
	ck_assert_error(gst::frameFromVulkanBuffer(packed, test::videoInfo(GST_VIDEO_FORMAT_NV12,
									   { 34, 18 })),
			ErrorCode::InvalidArgument, "buffer.memory");
	gst_buffer_unref(packed);

	Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(backend);
	Frame image = test::allocate(**backend, PixelFormat::RGBA, { 33, 17 },
				     FrameStorage::OptimalImage);
	Frame bytes =
		test::allocate(**backend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::Buffer);
	ck_assert_error(gst::vulkanBufferFromFrame(bytes, vk.device, rgba), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(gst::vulkanBufferFromFrame(image, nullptr, rgba), ErrorCode::NullHandle,
			"device");
	ck_assert_error(
		gst::vulkanBufferFromFrame(image, vk.device,
					   test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 33, 16 })),
		ErrorCode::FormatMismatch, "info");
	ck_assert_error(
		gst::vulkanBufferFromFrame(image, vk.device,
					   test::videoInfo(GST_VIDEO_FORMAT_v210, { 33, 17 })),
		ErrorCode::NotSupported, "info.format");
	Frame yuyv = test::allocate(**backend, PixelFormat::YUYV422, { 34, 18 },
				    FrameStorage::OptimalImage);
	ck_assert_error(gst::vulkanBufferFromFrame(yuyv, vk.device, yuy2), ErrorCode::NotSupported,
			"info.format");

	// An image of another VkDevice (gpuhandle's own) cannot be GStreamer's device's memory.
	Result<BackendRef> own = openBackend(BackendKind::Vulkan);
	ck_assert_ok(own);
	Frame foreign =
		test::allocate(**own, PixelFormat::RGBA, { 33, 17 }, FrameStorage::OptimalImage);
	ck_assert_error(gst::vulkanBufferFromFrame(foreign, vk.device, rgba),
			ErrorCode::DeviceMismatch, "frame");
}
END_TEST

START_TEST(ensure_vulkan_device_makes_one_for_a_lone_element)
{
	GstElement *element = gst_element_factory_make("fakesink", nullptr);
	ck_assert_ptr_nonnull(element);
	GstVulkanInstance *instance = nullptr;
	GstVulkanDevice *device = nullptr;
	ck_assert_ok(gst::ensureVulkanDevice(element, &instance, &device));
	ck_assert_ptr_nonnull(instance);
	ck_assert_ptr_nonnull(device);
	GstVulkanDevice *first = device;
	ck_assert_ok(gst::ensureVulkanDevice(element, &instance, &device));
	ck_assert_ptr_eq(device, first);
	ck_assert_ok(gst::vulkanBackendFor(device));
	ck_assert_error(gst::ensureVulkanDevice(element, nullptr, &device), ErrorCode::NullHandle,
			"element");
	gst_object_unref(device);
	gst_object_unref(instance);
	gst_object_unref(element);
}
END_TEST

namespace {

// Probed in a child, so that no driver thread exists when Check forks each test.
std::string probeVulkan()
{
	gst_init(nullptr, nullptr);
	test::VulkanObjects vk;
	if (std::string why = vk.create(); !why.empty())
		return "GStreamer Vulkan: " + why;
	if (!gst_element_factory_find("vulkanupload") ||
	    !gst_element_factory_find("vulkandownload"))
		return "GStreamer's vulkanupload and vulkandownload elements are not installed";
	Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
	return backend ? std::string() : "GStreamer Vulkan: " + backend.error().message();
}

} // namespace

#endif // GPUHANDLE_GST_HAVE_VULKAN

int main(int argc, char **argv)
{
#if GPUHANDLE_GST_HAVE_VULKAN
	constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
	if (!std::getenv("VK_ICD_FILENAMES") && access(kLavapipeIcd, R_OK) == 0)
		setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
	if (test::probeInChild(probeVulkan) != 0)
		return 77; // the probe said why
	gst_init(&argc, &argv);
	// gst_check_init() makes criticals and warnings fatal; so does this.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-vulkan");
	// One case per test, so that CK_RUN_CASE=<test> runs one.
	auto add = [s](const TTest *test) {
		TCase *tc = tcase_create(test->name);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, test);
		suite_add_tcase(s, tc);
	};
	add(vulkan_backend_is_cached_per_device);
	add(gst_vulkan_images_become_frames);
	add(backend_images_become_gst_vulkan_memory);
	add(vulkan_conversions_refuse_what_they_cannot_hold);
	add(ensure_vulkan_device_makes_one_for_a_lone_element);
	return test::runSuite(s);
#else
	(void)argc;
	(void)argv;
	std::printf("SKIP: GStreamer Vulkan (gstreamer-vulkan-1.0) is not built here\n");
	return 77;
#endif
}
