// Every backend's stub, the code a build without that API compiles instead of its sources, linked
// here whichever APIs this build has: open<Api>Backend() and the API's public calls answer
// NotSupported, naming the call, the API and the development files that were missing, on the
// field a caller checks ("kind" for openBackend). The CUDA waiters check their arguments first,
// as the real backend does.
#include <gpuhandle/backends/cuda_sync.h>
#include <gpuhandle/backends/gl_memory.h>
#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/backends/opencl_memory.h>
#include <gpuhandle/backends/opencl_sync.h>
#include <gpuhandle/backends/vulkan_memory.h>
#include <gpuhandle/backends/vulkan_sync.h>

#include "common/backend_internal.h"

#include <string>

// Last: Check's fail() macro breaks standard headers included after it.
#include "check_helpers.h"

using namespace gpuhandle;

namespace {

// The stub's answer: NotSupported on `field`, a sentence naming the call, the API and its files.
void assertNotBuilt(const Error &error, const char *call, const char *api, const char *files,
		    const char *field)
{
	ck_assert_int_eq(static_cast<int>(error.code()), static_cast<int>(ErrorCode::NotSupported));
	ck_assert_str_eq(error.field(), field);
	const std::string message = error.message();
	ck_assert_msg(message.rfind(std::string(call) + ": ", 0) == 0, "%s", message.c_str());
	ck_assert_msg(message.find(std::string("built without ") + api) != std::string::npos, "%s",
		      message.c_str());
	ck_assert_msg(message.find(files) != std::string::npos, "%s", message.c_str());
	ck_assert_msg(message.back() == '.', "%s", message.c_str());
}

const BackendOpenOptions kOptions{};

START_TEST(open_answers_not_built_for_every_api)
{
	struct Case {
		Result<BackendRef> (*open)(const BackendOpenOptions &);
		const char *api;
		const char *files;
	};
	const Case cases[] = {
		{ openVulkanBackend, "Vulkan", "libvulkan-dev" },
		{ openGlBackend, "EGL", "libegl-dev" },
		{ openOpenClBackend, "OpenCL", "ocl-icd-opencl-dev" },
		{ openCudaBackend, "CUDA", "libffmpeg-nvenc-dev" },
		{ openVaApiBackend, "VA-API", "libva-dev" },
	};
	for (const Case &c : cases) {
		auto backend = c.open(kOptions);
		ck_assert(!backend.ok());
		assertNotBuilt(backend.error(), "openBackend", c.api, c.files, "kind");
	}
}
END_TEST

START_TEST(api_calls_answer_not_built)
{
	auto event = importOpenClEvent(OpenClEventSync{}, {});
	ck_assert(!event.ok());
	assertNotBuilt(event.error(), "importOpenClEvent", "OpenCL", "ocl-icd-opencl-dev", "event");

	auto glSync = importEglSync(nullptr, nullptr, {});
	ck_assert(!glSync.ok());
	assertNotBuilt(glSync.error(), "importEglSync", "EGL", "libegl-dev", "sync");

	auto semaphore = importVulkanSemaphore(SyncPoint{}, VulkanDeviceDispatch{}, {});
	ck_assert(!semaphore.ok());
	assertNotBuilt(semaphore.error(), "importVulkanSemaphore", "Vulkan", "libvulkan-dev", "");

	Status driver = cudaDriverStatus();
	ck_assert(!driver.ok());
	assertNotBuilt(driver.error(), "cudaDriverStatus", "CUDA", "libffmpeg-nvenc-dev", "driver");
	ck_assert(!cudaDriverAvailable());
}
END_TEST

// The CUDA stub checks what the real backend checks before it says it was not built.
START_TEST(cuda_stub_checks_arguments_first)
{
	auto nullEvent = importCudaEvent(CudaEventSync{}, {});
	ck_assert(!nullEvent.ok());
	ck_assert_int_eq(static_cast<int>(nullEvent.error().code()),
			 static_cast<int>(ErrorCode::NullHandle));
}
END_TEST

Suite *notBuiltSuite()
{
	Suite *s = suite_create("not_built");
	TCase *tc = tcase_create("stubs");
	tcase_add_test(tc, open_answers_not_built_for_every_api);
	tcase_add_test(tc, api_calls_answer_not_built);
	tcase_add_test(tc, cuda_stub_checks_arguments_first);
	suite_add_tcase(s, tc);
	return s;
}

} // namespace

int main()
{
	return gpuhandle::test::runSuite(notBuiltSuite());
}
