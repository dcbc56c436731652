// libgstgpuhandle-1.0's stubs (src/stubs/), compiled in every build and linked here instead of the
// library: each per-API function answers NotSupported naming the library the build lacked, so a
// build without gstreamer-gl/vulkan/cuda/va-1.0 exports the same symbols as one with them. Linking
// against the installed headers also checks that each stub's signature is the header's.
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlecuda.hpp>
#if __has_include(<gst/gl/gl.h>)
#include <gst/gpuhandle/gstgpuhandlegl.hpp>
#define HAVE_GL_HEADERS 1
#endif
#if __has_include(<gst/vulkan/vulkan.h>) && __has_include(<vulkan/vulkan.h>)
#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>
#define HAVE_VULKAN_HEADERS 1
#endif
#if __has_include(<gst/va/va_fwd.h>)
#include <gst/gpuhandle/gstgpuhandleva.hpp>
#define HAVE_VA_HEADERS 1
#endif

#include <string>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::gst;

namespace {

// NotSupported, naming the call and what the build lacked.
template<typename T>
void assertNotBuilt(const Result<T> &result, const char *call, const char *library)
{
	ck_assert_msg(!result.ok(), "%s succeeded", call);
	ck_assert_int_eq(static_cast<int>(result.error().code()),
			 static_cast<int>(ErrorCode::NotSupported));
	const std::string &message = result.error().message();
	ck_assert_msg(message.find(call) != std::string::npos &&
			      message.find(library) != std::string::npos,
		      "%s", message.c_str());
}

} // namespace

START_TEST(every_stub_answers_not_supported)
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, 64, 48);
	// Any frame: the stubs look at nothing.
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert(cpu.ok());
	AllocateRequest request{};
	request.format = PixelFormat::NV12;
	request.width = 64;
	request.height = 48;
	Result<Frame> frame = (*cpu)->allocate(request);
	ck_assert(frame.ok());
	const Frame &none = *frame;
	assertNotBuilt(cudaBackendFor(nullptr), "cudaBackendFor", "gstreamer-cuda-1.0");
	assertNotBuilt(cudaBackendForBuffer(nullptr), "cudaBackendForBuffer", "gstreamer-cuda");
	assertNotBuilt(frameFromCudaBuffer(nullptr, info), "frameFromCudaBuffer", "gstreamer-cuda");
	assertNotBuilt(cudaBufferFromFrame(none, nullptr, info), "cudaBufferFromFrame",
		       "gstreamer-cuda");
	assertNotBuilt(Result<bool>(ensureCudaContext(nullptr, nullptr).error()),
		       "ensureCudaContext", "gstreamer-cuda");
	assertNotBuilt(cudaBufferPoolFor(nullptr, info), "cudaBufferPoolFor", "gstreamer-cuda");
	assertNotBuilt(cudaBufferCopyOf(none, nullptr, nullptr, info, kDefaultWaitTimeout),
		       "cudaBufferCopyOf", "gstreamer-cuda");
	ck_assert(!cudaHandleContextQuery(nullptr, nullptr, nullptr));
	cudaHandleSetContext(nullptr, nullptr, nullptr);
#if HAVE_GL_HEADERS
	assertNotBuilt(glBackendFor(nullptr), "glBackendFor", "gstreamer-gl-1.0");
	assertNotBuilt(frameFromGlBuffer(nullptr, info), "frameFromGlBuffer", "gstreamer-gl");
	assertNotBuilt(glBufferFromFrame(none, nullptr, info), "glBufferFromFrame", "gstreamer-gl");
	assertNotBuilt(
		Result<bool>(
			ensureGlContext(nullptr, GST_PAD_SRC, nullptr, nullptr, nullptr).error()),
		"ensureGlContext", "gstreamer-gl");
#endif
#if HAVE_VULKAN_HEADERS
	assertNotBuilt(vulkanBackendFor(nullptr), "vulkanBackendFor", "gstreamer-vulkan-1.0");
	assertNotBuilt(frameFromVulkanBuffer(nullptr, info), "frameFromVulkanBuffer",
		       "gstreamer-vulkan");
	assertNotBuilt(vulkanBufferFromFrame(none, nullptr, info), "vulkanBufferFromFrame",
		       "gstreamer-vulkan");
	assertNotBuilt(Result<bool>(ensureVulkanDevice(nullptr, nullptr, nullptr).error()),
		       "ensureVulkanDevice", "gstreamer-vulkan");
#endif
#if HAVE_VA_HEADERS
	assertNotBuilt(vaBackendFor(nullptr), "vaBackendFor", "gstreamer-va-1.0");
	assertNotBuilt(vaBackendForBuffer(nullptr), "vaBackendForBuffer", "gstreamer-va");
	assertNotBuilt(frameFromVaBuffer(nullptr, info), "frameFromVaBuffer", "gstreamer-va");
#endif
}
END_TEST

int main()
{
	gst_init(nullptr, nullptr);
	Suite *s = suite_create("gst_not_built");
	TCase *tc = tcase_create("stubs");
	tcase_add_test(tc, every_stub_answers_not_supported);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
