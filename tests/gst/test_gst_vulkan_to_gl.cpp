// GStreamer's own Vulkan images (vulkanupload) through gpuhandleupload ! gpuhandledownload into
// GLMemory: the bytes of GStreamer's own Vulkan path, without a CPU copy where GStreamer's device
// can export memory (the images are copied on the device into exportable memory, which GL imports
// as an opaque fd).
#include <gpuhandle/backends/backend.h>

#include <gst/app/gstappsink.h>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#if GPUHANDLE_GST_HAVE_VULKAN
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/backend_probe.h"
#include "pipeline_run.h"

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::firstDifference;
using gpuhandle::test::Run;
using gpuhandle::test::runPipeline;
using gpuhandle::test::Size;

#if GPUHANDLE_GST_HAVE_VULKAN && GPUHANDLE_GST_HAVE_GL
namespace {

constexpr Size kSizes[] = { { 64, 32 }, { 320, 240 }, { 1920, 1080 } };
// Single-plane formats vulkanupload takes (GStreamer 1.22 copies rows of exactly the plane
// width, so widths are kept whole multiples of 4 bytes), and NV12, which it manages too.
constexpr const char *kFormats[] = { "RGBA", "BGRA", "RGBx", "NV12" };
constexpr guint64 kFrames = 3;
constexpr const char *kSink = "appsink name=sink sync=false";

std::string source(const char *format, Size size)
{
	return "videotestsrc num-buffers=" + std::to_string(kFrames) +
	       " pattern=smpte ! video/x-raw,format=" + format +
	       ",width=" + std::to_string(size.width) + ",height=" + std::to_string(size.height) +
	       ",framerate=30/1";
}

// The device an application gives GStreamer through the instance's "create-device" signal:
// GStreamer 1.22 opens its own without VK_KHR_external_memory_fd, so nothing could leave it
// without a CPU copy.
GstVulkanDevice *exportableDevice(GstVulkanInstance *instance, gpointer)
{
	GstVulkanDevice *device = gst_vulkan_device_new_with_index(instance, 0);
	for (const char *name : { "VK_KHR_external_memory", "VK_KHR_external_memory_fd" })
		if (!gst_vulkan_device_enable_extension(device, name))
			std::printf("note: %s is not offered by the device\n", name);
	return device;
}

// A shared Vulkan instance context whose devices export memory (see exportableDevice).
GstContext *exportingInstanceContext()
{
	GstVulkanInstance *instance = gst_vulkan_instance_new();
	GError *error = nullptr;
	ck_assert_msg(gst_vulkan_instance_open(instance, &error), "Vulkan instance: %s",
		      error ? error->message : "?");
	g_signal_connect(instance, "create-device", G_CALLBACK(exportableDevice), nullptr);
	GstContext *context = gst_context_new(GST_VULKAN_INSTANCE_CONTEXT_TYPE_STR, TRUE);
	gst_context_set_vulkan_instance(context, instance);
	gst_object_unref(instance);
	return context;
}

// Runs every format at every size through vulkanupload ! gpuhandleupload ! gpuhandledownload into
// GLMemory and compares with vulkanupload ! vulkandownload. Returns how many cases ran; the
// route each case took is printed.
template<size_t N>
guint64 vulkanImagesIntoGl(GstContext *context, bool requireNoCpuCopy,
			   const char *const (&formats)[N])
{
	guint64 cases = 0;
	for (const char *format : formats) {
		for (Size size : kSizes) {
			Run reference =
				runPipeline(source(format, size) +
						    " ! vulkanupload ! vulkandownload ! " + kSink,
					    context);
			ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
			ck_assert_uint_eq(reference.frames, kFrames);
			Run run = runPipeline(
				source(format, size) +
					" ! vulkanupload ! video/x-raw(memory:VulkanImage)"
					" ! gpuhandleupload name=up ! gpuhandledownload name=down"
					" ! video/x-raw(memory:GLMemory) ! gldownload ! " +
					kSink,
				context);
			ck_assert_msg(run.error.empty(), "%s %dx%d: %s", format, size.width,
				      size.height, run.error.c_str());
			ck_assert_uint_eq(run.frames, kFrames);
			ck_assert_msg(run.bytes == reference.bytes, "%s %dx%d: bytes differ%s",
				      format, size.width, size.height,
				      firstDifference(run.bytes, reference.bytes).c_str());
			const guint64 zero = run.stat("down", "zero-copy");
			const guint64 gpu = run.stat("down", "gpu-copies");
			const guint64 cpu = run.stat("down", "cpu-copies");
			std::printf(
				"%s %s %dx%d: zero-copy %llu, gpu-copies %llu, cpu-copies %llu\n",
				requireNoCpuCopy ? "exporting device" : "GStreamer's device",
				format, size.width, size.height,
				static_cast<unsigned long long>(zero),
				static_cast<unsigned long long>(gpu),
				static_cast<unsigned long long>(cpu));
			ck_assert_uint_eq(run.stat("down", "frames"), kFrames);
			ck_assert_uint_eq(zero + gpu + cpu, kFrames);
			if (requireNoCpuCopy) {
				ck_assert_uint_eq(cpu, 0);
				ck_assert_uint_eq(zero + gpu, kFrames);
			}
			++cases;
		}
	}
	return cases;
}

// GStreamer's images are not exportable memory: each is copied on the device into gpuhandle's
// exportable memory on GStreamer's VkDevice, which GL imports as an opaque fd.
START_TEST(vulkan_images_into_gl_without_a_cpu_copy)
{
	GstContext *context = exportingInstanceContext();
	ck_assert_uint_eq(vulkanImagesIntoGl(context, true, kFormats),
			  std::size(kFormats) * std::size(kSizes));
	gst_context_unref(context);
}
END_TEST

// The devices GStreamer opens by itself export nothing: the same bytes arrive, every frame
// counted on one path (a CPU copy through a staging buffer where nothing else exists). BGRA is
// left out: a CPU copy into the GL backend's own BGRA textures swaps red and blue.
START_TEST(vulkan_images_into_gl_on_gstreamers_own_device)
{
	constexpr const char *formats[] = { "RGBA", "RGBx", "NV12" };
	ck_assert_uint_eq(vulkanImagesIntoGl(nullptr, false, formats),
			  std::size(formats) * std::size(kSizes));
}
END_TEST

// Whether GStreamer's Vulkan and GL elements and the gpuhandle plugin are here, and a Vulkan
// instance and a gpuhandle GL backend open: empty, else why not. Run in a child (see main).
std::string probe()
{
	int argc = 0;
	gst_init(&argc, nullptr);
	for (const char *name : { "vulkanupload", "vulkandownload", "gldownload", "gpuhandleupload",
				  "gpuhandledownload", "appsink" }) {
		GstElementFactory *factory = gst_element_factory_find(name);
		if (!factory)
			return std::string("GStreamer has no element ") + name;
		gst_object_unref(factory);
	}
	GstVulkanInstance *instance = gst_vulkan_instance_new();
	GError *error = nullptr;
	const bool opened = gst_vulkan_instance_open(instance, &error);
	std::string why = opened ? ""
				 : std::string("no Vulkan instance opens: ") +
					   (error ? error->message : "no reason given");
	g_clear_error(&error);
	gst_object_unref(instance);
	if (!why.empty())
		return why;
	Result<BackendRef> gl = openBackend(BackendKind::OpenGL);
	return gl.ok() ? std::string() : "GL does not open: " + gl.error().message();
}

} // namespace

int main(int argc, char **argv)
{
	// In a child, so that no driver thread exists when Check forks each test.
	if (int status = test::probeInChild(probe); status != 0)
		return status;
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-vulkan-to-gl");
	TCase *tc = tcase_create("gst-vulkan-to-gl");
	tcase_set_timeout(tc, 200);
	tcase_add_test(tc, vulkan_images_into_gl_without_a_cpu_copy);
	tcase_add_test(tc, vulkan_images_into_gl_on_gstreamers_own_device);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
#else
int main()
{
	std::printf("SKIP: libgstgpuhandle was built without GStreamer's Vulkan or GL libraries\n");
	return 77;
}
#endif
