// CUDA imports of other APIs' memory: Vulkan opaque fds and DMA-BUFs (through EGL) on a real
// NVIDIA device; skips (77) with the reason where no CUDA driver or device is usable.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cuda_sync.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include "backend_probe.h"
#include "fd_count.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "frame_pattern.h"

#include "check_helpers.h"

using namespace gpuhandle;

using namespace gpuhandle;

namespace {

BackendRef openCuda()
{
	Result<BackendRef> opened = openBackend(BackendKind::Cuda);
	ck_assert_ok(opened);
	return *opened;
}

AllocateRequest requestOf(PixelFormat format, uint32_t width, uint32_t height)
{
	AllocateRequest request;
	request.format = format;
	request.width = width;
	request.height = height;
	return request;
}

} // namespace

// Vulkan memory exported as an opaque fd: imported on the same GPU, refused on another device.
START_TEST(vulkan_opaque_fd_import)
{
	BackendRef cuda = openCuda();
	bool ranSame = false;
	for (uint32_t index = 0; index < 8; ++index) {
		BackendOpenOptions options;
		options.deviceIndex = index;
		Result<BackendRef> vulkan = openBackend(BackendKind::Vulkan, options);
		if (!vulkan.ok())
			break;
		Result<Frame> frame = (*vulkan)->allocate(requestOf(PixelFormat::NV12, 64, 32));
		ck_assert_ok(frame);
		Result<Frame> exported =
			(*vulkan)->exportFrame(*frame, ResourceKind::VulkanMemoryFd);
		if (!exported.ok()) {
			std::printf("vulkan device %u exports no opaque fd: %s\n", index,
				    exported.error().message().c_str());
			continue;
		}
		int fds = test::openFdCount();
		DeviceMatch match = sameDevice((*vulkan)->deviceId(), cuda->deviceId());
		std::printf("vulkan device %u (%s): %s GPU as CUDA\n", index,
			    (*vulkan)->deviceInfo().toString().c_str(), deviceMatchName(match));
		if (match == DeviceMatch::Same) {
			test::writePatternOk(**vulkan, *frame, 11);
			Result<Frame> imported =
				cuda->importFrame(*exported, ImportRoute::OpaqueFd);
			ck_assert_ok(imported);
			test::checkPatternOk(*cuda, *imported, 11);
			ranSame = true;
		} else if (match == DeviceMatch::Different) {
			ck_assert_error(cuda->importFrame(*exported, ImportRoute::OpaqueFd),
					ErrorCode::DeviceMismatch, "deviceUuid");
		}
		ck_assert_int_eq(test::openFdCount(), fds);
	}
	if (!ranSame)
		std::printf(
			"no Vulkan device on this GPU exports an opaque fd: same-GPU import not run\n");
}
END_TEST

// `exported` with its first DmaBuf renamed to `fourcc` and the frame resized to width x height.
Frame alteredDmaBuf(const Frame &exported, uint32_t fourcc, uint32_t width, uint32_t height)
{
	FrameDesc desc = exported.desc();
	DmaBufDesc dmaBuf = desc.resources[0].get<DmaBuf>()->desc();
	dmaBuf.fourcc = fourcc;
	Result<DmaBuf> made = DmaBuf::create(std::move(dmaBuf));
	ck_assert_ok(made);
	desc.resources[0] = Resource(std::move(*made));
	desc.width = width;
	desc.height = height;
	Result<Frame> frame = Frame::create(std::move(desc));
	ck_assert_ok(frame);
	return *frame;
}

// Imports `exported` (an NV12 64x32 DMA-BUF holding pattern 21) into CUDA: read back identical,
// copied on the device, refused under another fourcc or size. False when CUDA maps the surface
// as arrays (a tiled modifier), which the backend does not import yet.
bool importAndCheck(Backend &cuda, const Frame &exported, const char *what)
{
	uint64_t modifier = exported.resource(0).get<DmaBuf>()->desc().modifier;
	Result<Frame> imported = cuda.importFrame(exported, ImportRoute::DmaBuf);
	std::printf("%s DMA-BUF (modifier 0x%llx) into CUDA: %s\n", what,
		    static_cast<unsigned long long>(modifier),
		    imported.ok() ? "imported" : imported.error().message().c_str());
	if (!imported.ok() && modifier != kDrmModifierLinear && modifier != kDrmModifierInvalid &&
	    imported.error().code() == ErrorCode::NotSupported)
		return false;
	ck_assert_ok(imported);
	ck_assert(cuda.holds(*imported));
	test::checkPatternOk(cuda, *imported, 21);
	Result<Frame> copy = cuda.allocate(requestOf(PixelFormat::NV12, 64, 32));
	ck_assert_ok(copy);
	ck_assert_ok(cuda.copyFrame(*copy, *imported, kDefaultWaitTimeout));
	test::checkPatternOk(cuda, *copy, 21);
	uint32_t nv12 = *toApiFormat(FormatApi::DrmFourcc, PixelFormat::NV12);
	uint32_t nv21 = *toApiFormat(FormatApi::DrmFourcc, PixelFormat::NV21);
	ck_assert_error(cuda.importFrame(alteredDmaBuf(exported, nv21, 64, 32),
					 ImportRoute::DmaBuf),
			ErrorCode::FormatMismatch, "fourcc");
	ck_assert_error(cuda.importFrame(alteredDmaBuf(exported, nv12, 32, 16),
					 ImportRoute::DmaBuf),
			ErrorCode::FormatMismatch, "size");
	return true;
}

// An NV12 DMA-BUF of `exporter` (same GPU) through importAndCheck(), in the first storage it
// exports that CUDA maps linearly. False when there was none.
bool importExportedDmaBuf(Backend &cuda, Backend &exporter)
{
	for (FrameStorage storage :
	     { FrameStorage::Buffer, FrameStorage::LinearImage, FrameStorage::OptimalImage }) {
		AllocateRequest request = requestOf(PixelFormat::NV12, 64, 32);
		request.storage = storage;
		Result<Frame> frame = exporter.allocate(request);
		if (!frame.ok())
			continue;
		Result<Frame> exported = exporter.exportFrame(*frame, ResourceKind::DmaBuf);
		if (!exported.ok())
			continue;
		test::writePatternOk(exporter, *frame, 21);
		// Counted with the export alive: the import and all made from it leave no fd
		// behind.
		int fds = test::openFdCount();
		std::string what = std::string(backendKindName(exporter.kind())) + " " +
				   frameStorageName(storage);
		bool imported = importAndCheck(cuda, *exported, what.c_str());
		ck_assert_int_eq(test::openFdCount(), fds);
		if (imported)
			return true;
	}
	return false;
}

// DMA-BUFs of a Vulkan or VA-API device on the same GPU import through EGL interop.
START_TEST(dmabuf_import_through_egl)
{
	BackendRef cuda = openCuda();
	const std::vector<ImportRoute> &routes = cuda->capabilities().routes;
	if (std::find(routes.begin(), routes.end(), ImportRoute::DmaBuf) == routes.end()) {
		Frame host = openBackend(BackendKind::Cpu)
				     .value()
				     ->allocate(requestOf(PixelFormat::NV12, 33, 17))
				     .value();
		Result<Frame> refused = cuda->importFrame(host, ImportRoute::DmaBuf);
		ck_assert_error(refused, ErrorCode::NotSupported, "route");
		std::printf("no DMA-BUF import: %s\n", refused.error().message().c_str());
		return;
	}
	bool ran = false;
	for (BackendKind kind : { BackendKind::Vulkan, BackendKind::VaApi })
		for (uint32_t index = 0; index < 4; ++index) {
			BackendOpenOptions options;
			options.deviceIndex = index;
			Result<BackendRef> exporter = openBackend(kind, options);
			if (!exporter.ok())
				break;
			if (sameDevice((*exporter)->deviceId(), cuda->deviceId()) ==
			    DeviceMatch::Same)
				ran = importExportedDmaBuf(*cuda, **exporter) || ran;
		}
	if (!ran)
		std::printf("no Vulkan or VA-API device on this GPU exported a DMA-BUF CUDA maps "
			    "linearly: import not run\n");
}
END_TEST

int main()
{
	// Each test runs in a forked child that starts the driver itself; the probe runs in a child
	// too, so this process never initialises CUDA (a CUDA context does not survive fork()).
	int probe = test::probeBackend(BackendKind::Cuda);
	if (probe != 0)
		return probe;
	Suite *suite = suite_create("cuda_backend_import");
	TCase *tc = tcase_create("imports");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, vulkan_opaque_fd_import);
	tcase_add_test(tc, dmabuf_import_through_egl);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
