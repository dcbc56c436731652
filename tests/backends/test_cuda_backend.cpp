// CUDA backend object: open, allocate, map, copy and imports on a real NVIDIA device; skips (77)
// with the reason where no CUDA driver or device is usable.
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

// Page-aligned CPU memory freed by its anchor.
struct HostMemory {
	void *data = nullptr;
	KeepAliveRef anchor{};
};

HostMemory hostMemory(uint64_t size, void (*destroy)(void *))
{
	const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	size_t rounded = (size + page - 1) / page * page;
	HostMemory memory;
	memory.data = std::aligned_alloc(page, rounded);
	ck_assert_ptr_nonnull(memory.data);
	memory.anchor = makeKeepAlive(destroy, memory.data);
	return memory;
}

// A frame over CPU bytes at `offset` into page-aligned memory, planes at the tight layout;
// `destroy` frees the memory.
Frame cpuFrame(PixelFormat format, uint32_t width, uint32_t height, uint64_t offset = 0,
	       void (*destroy)(void *) = std::free)
{
	Result<FrameLayout> layout = computeLayout(format, width, height);
	ck_assert_ok(layout);
	HostMemory memory = hostMemory(layout->size + offset, destroy);
	Result<CpuBytes> bytes = CpuBytes::create(
		{ static_cast<uint8_t *>(memory.data) + offset, layout->size, memory.anchor });
	ck_assert_ok(bytes);
	FrameDesc desc;
	desc.format = format;
	desc.width = width;
	desc.height = height;
	desc.numResources = 1;
	desc.resources[0] = Resource(*bytes);
	desc.numPlanes = layout->numPlanes;
	for (uint32_t p = 0; p < layout->numPlanes; ++p)
		desc.planes[p] =
			PlaneView{ 0, 0, layout->planes[p].offset, layout->planes[p].stride };
	Result<Frame> frame = Frame::create(std::move(desc));
	ck_assert_ok(frame);
	return *frame;
}

// The driver calls the test makes itself, by their ABI names (CUresult returned as an int).
struct TestDriver {
	int (*ctxPush)(void *) = nullptr;
	int (*ctxPop)(void **) = nullptr;
	int (*streamCreate)(void **, unsigned int) = nullptr;
	int (*streamSynchronize)(void *) = nullptr;
	int (*streamDestroy)(void *) = nullptr;
	int (*launchHostFunc)(void *, void (*)(void *), void *) = nullptr;
	int (*eventCreate)(void **, unsigned int) = nullptr;
	int (*eventRecord)(void *, void *) = nullptr;
	int (*eventDestroy)(void *) = nullptr;
};

template<typename F>
void loadCall(void *library, const char *name, F &out)
{
	out = reinterpret_cast<F>(dlsym(library, name));
	ck_assert_msg(out != nullptr, "libcuda has no %s", name);
}

TestDriver testDriver()
{
	void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); // loaded by the backend
	ck_assert_ptr_nonnull(library);
	TestDriver d;
	loadCall(library, "cuCtxPushCurrent_v2", d.ctxPush);
	loadCall(library, "cuCtxPopCurrent_v2", d.ctxPop);
	loadCall(library, "cuStreamCreate", d.streamCreate);
	loadCall(library, "cuStreamSynchronize", d.streamSynchronize);
	loadCall(library, "cuStreamDestroy_v2", d.streamDestroy);
	loadCall(library, "cuLaunchHostFunc", d.launchHostFunc);
	loadCall(library, "cuEventCreate", d.eventCreate);
	loadCall(library, "cuEventRecord", d.eventRecord);
	loadCall(library, "cuEventDestroy_v2", d.eventDestroy);
	return d;
}

std::atomic<bool> gReleaseStream{ false };
std::atomic<int> gHostFrees{ 0 };

// A CUDA host function that holds its stream until the test lets it go.
void holdStream(void *)
{
	while (!gReleaseStream.load())
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void freeAndCount(void *data)
{
	std::free(data);
	++gHostFrees;
}

const PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::P010LE,
				 PixelFormat::RGBA, PixelFormat::V210 };

} // namespace

// Runs anywhere: without a driver the open fails with NotSupported and leaks nothing.
START_TEST(open_answers_or_says_why)
{
	int fds = test::openFdCount();
	Result<BackendRef> opened = openBackend(BackendKind::Cuda);
	if (!opened.ok()) {
		ck_assert_int_eq(static_cast<int>(opened.error().code()),
				 static_cast<int>(ErrorCode::NotSupported));
		ck_assert(!opened.error().message().empty());
	}
	opened = Error(ErrorCode::Fatal, "", "dropped");
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

START_TEST(device_is_described)
{
	BackendRef cuda = openCuda();
	const DeviceInfo &info = cuda->deviceInfo();
	ck_assert(info.backend == BackendKind::Cuda);
	ck_assert(!info.name.empty());
	ck_assert(info.vendorId && *info.vendorId == 0x10de);
	ck_assert(info.id.uuid.has_value());
	ck_assert(!info.driverVersion.empty());
	ck_assert(cuda->context() && cuda->context()->backend() == BackendKind::Cuda);
	ck_assert(cuda->capabilities().cpuMap && cuda->capabilities().gpuCopy);
	ck_assert(cuda->supportsFormat(PixelFormat::NV12, FrameStorage::Buffer));
	ck_assert(!cuda->supportsFormat(PixelFormat::NV12, FrameStorage::OptimalImage));
	std::printf("cuda device: %s\n", info.toString().c_str());
	// A second backend inside the first one's context works on the same device.
	BackendOpenOptions options;
	options.context = cuda->context();
	Result<BackendRef> inside = openBackend(BackendKind::Cuda, options);
	ck_assert_ok(inside);
	ck_assert(sameDevice((*inside)->deviceId(), cuda->deviceId()) == DeviceMatch::Same);
}
END_TEST

START_TEST(allocate_write_read_identical)
{
	BackendRef cuda = openCuda();
	int fds = test::openFdCount();
	const uint32_t sizes[][2] = { { 33, 17 }, { 1, 1 }, { 640, 360 } };
	uint32_t seed = 1;
	for (PixelFormat format : kFormats)
		for (const auto &size : sizes) {
			Result<Frame> frame = cuda->allocate(requestOf(format, size[0], size[1]));
			ck_assert_ok(frame);
			ck_assert(cuda->holds(*frame));
			test::writePatternOk(*cuda, *frame, seed);
			test::checkPatternOk(*cuda, *frame, seed);
			++seed;
		}
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

START_TEST(large_frame_and_frames_outlive_backend)
{
	BackendRef cuda = openCuda();
	Result<Frame> frame = cuda->allocate(requestOf(PixelFormat::P010LE, 3840, 2160));
	ck_assert_ok(frame);
	test::writePatternOk(*cuda, *frame, 9);
	Result<CpuMapping> both = cuda->map(*frame, MapAccess::ReadWrite, kDefaultWaitTimeout);
	ck_assert_ok(both);
	// The mapping and the frame keep the device alive after the last BackendRef goes: the
	// write-back still runs, and the memory is freed only with the frame.
	cuda.reset();
	test::checkPatternOk(*both, *frame, 9);
	test::fillPatternOk(*both, *frame, 10);
	ck_assert_ok(both->unmap());
	BackendRef again = openCuda();
	ck_assert(!again->holds(*frame)); // another opening: another device state
	frame = Error(ErrorCode::Fatal, "", "dropped");
}
END_TEST

START_TEST(copy_frame_on_device)
{
	BackendRef cuda = openCuda();
	for (PixelFormat format : kFormats) {
		Result<Frame> src = cuda->allocate(requestOf(format, 33, 17));
		ck_assert_ok(src);
		AllocateRequest wide = requestOf(format, 33, 17);
		wide.strideAlign = 1024; // another stride: the copy is row by row
		Result<Frame> dst = cuda->allocate(wide);
		ck_assert_ok(dst);
		test::writePatternOk(*cuda, *src, 3);
		ck_assert_ok(cuda->copyFrame(*dst, *src, kDefaultWaitTimeout));
		test::checkPatternOk(*cuda, *dst, 3);
	}
	Result<Frame> big = cuda->allocate(requestOf(PixelFormat::RGBA, 3840, 2160));
	Result<Frame> small = cuda->allocate(requestOf(PixelFormat::RGBA, 33, 17));
	ck_assert_ok(big);
	ck_assert_ok(small);
	ck_assert_error(cuda->copyFrame(*big, *small, kDefaultWaitTimeout),
			ErrorCode::FormatMismatch, "dst");
}
END_TEST

START_TEST(host_pointer_import_is_zero_copy)
{
	BackendRef cuda = openCuda();
	bool offered = false;
	for (ImportRoute route : cuda->capabilities().routes)
		offered = offered || route == ImportRoute::HostPointer;
	if (!offered) {
		std::printf("host-pointer import not offered by this device\n");
		return;
	}
	int fds = test::openFdCount();
	for (PixelFormat format : kFormats) {
		Frame host = cpuFrame(format, 33, 17);
		Result<CpuMapping> cpu = mapFrame(host, MapAccess::Write);
		ck_assert_ok(cpu);
		test::fillPatternOk(*cpu, host, 5);
		ck_assert_ok(cpu->unmap());
		Result<Frame> imported = cuda->importFrame(host, ImportRoute::HostPointer);
		ck_assert_ok(imported);
		ck_assert(cuda->holds(*imported));
		test::checkPatternOk(*cuda, *imported, 5);
		// A device copy into the imported frame lands in the CPU memory itself.
		Result<Frame> device = cuda->allocate(requestOf(format, 33, 17));
		ck_assert_ok(device);
		test::writePatternOk(*cuda, *device, 6);
		ck_assert_ok(cuda->copyFrame(*imported, *device, kDefaultWaitTimeout));
		cpu = mapFrame(host, MapAccess::Read);
		ck_assert_ok(cpu);
		test::checkPatternOk(*cpu, host, 6);
	}
	// Memory that does not start on a page is refused, naming the alignment.
	Frame unaligned = cpuFrame(PixelFormat::NV12, 33, 17, 64);
	ck_assert_error(cuda->importFrame(unaligned, ImportRoute::HostPointer),
			ErrorCode::NotSupported, "route");
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

// Work queued behind an acquire point that does not signal in time: copyFrame and map(Read)
// return Timeout within their budget (the staging copy is page-locked, so the device-to-host
// copy does not block), and the memory the queued work uses lives until the work has run.
START_TEST(timed_out_work_keeps_its_memory_until_done)
{
	BackendRef cuda = openCuda();
	bool offered = false;
	for (ImportRoute route : cuda->capabilities().routes)
		offered = offered || route == ImportRoute::HostPointer;
	if (!offered) {
		std::printf("host-pointer import not offered by this device\n");
		return;
	}
	TestDriver d = testDriver();
	void *context = (*cuda->context()->cuda())->context;
	void *stream = nullptr;
	void *event = nullptr;
	void *popped = nullptr;
	gReleaseStream = false;
	gHostFrees = 0;
	ck_assert_int_eq(d.ctxPush(context), 0);
	ck_assert_int_eq(d.streamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */), 0);
	ck_assert_int_eq(d.launchHostFunc(stream, holdStream, nullptr), 0);
	ck_assert_int_eq(d.eventCreate(&event, 2 /* CU_EVENT_DISABLE_TIMING */), 0);
	ck_assert_int_eq(d.eventRecord(event, stream), 0);
	ck_assert_int_eq(d.ctxPop(&popped), 0);
	{
		Result<Frame> src = cuda->allocate(requestOf(PixelFormat::NV12, 64, 32));
		ck_assert_ok(src);
		test::writePatternOk(*cuda, *src, 21);
		Result<SyncPoint> held = importCudaEvent({ event, context, 0 });
		ck_assert_ok(held);
		src->setAcquire(*held);
		Frame host = cpuFrame(PixelFormat::NV12, 64, 32, 0, freeAndCount);
		Result<Frame> dst = cuda->importFrame(host, ImportRoute::HostPointer);
		ck_assert_ok(dst);
		// Timeout, not a hang: the stream is held until after these calls.
		ck_assert_error(cuda->copyFrame(*dst, *src, std::chrono::milliseconds(50)),
				ErrorCode::Timeout, "timeout");
		// The stream still waits: a read mapping's copy queues behind and times out too.
		Result<Frame> other = cuda->allocate(requestOf(PixelFormat::RGBA, 33, 17));
		ck_assert_ok(other);
		ck_assert_error(cuda->map(*other, MapAccess::Read, std::chrono::milliseconds(50)),
				ErrorCode::Timeout, "timeout");
	}
	// Every frame is gone, but the queued copy still holds the CPU memory it writes.
	ck_assert_int_eq(gHostFrees.load(), 0);
	gReleaseStream = true;
	// A later call reclaims the work once it has run.
	for (int i = 0; i < 1000 && gHostFrees.load() == 0; ++i) {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		ck_assert_ok(cuda->allocate(requestOf(PixelFormat::RGBA, 1, 1)));
	}
	ck_assert_int_eq(gHostFrees.load(), 1);
	ck_assert_int_eq(d.ctxPush(context), 0);
	ck_assert_int_eq(d.streamSynchronize(stream), 0);
	d.eventDestroy(event);
	d.streamDestroy(stream);
	ck_assert_int_eq(d.ctxPop(&popped), 0);
}
END_TEST

START_TEST(bad_input_is_refused)
{
	BackendRef cuda = openCuda();
	int fds = test::openFdCount();
	ck_assert_error(cuda->allocate(requestOf(PixelFormat::NV12, 0, 17)), ErrorCode::ZeroSize,
			"width");
	AllocateRequest image = requestOf(PixelFormat::NV12, 33, 17);
	image.storage = FrameStorage::OptimalImage;
	ck_assert_error(cuda->allocate(image), ErrorCode::NotSupported, "storage");
	ck_assert_error(cuda->allocate(requestOf(PixelFormat::Unknown, 33, 17)),
			ErrorCode::NotSupported, "format");

	Frame host = cpuFrame(PixelFormat::NV12, 33, 17);
	ck_assert(!cuda->holds(host));
	ck_assert_error(cuda->map(host, MapAccess::Read, kDefaultWaitTimeout), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(cuda->exportFrame(host, ResourceKind::DmaBuf), ErrorCode::WrongKind,
			"frame");
	Result<Frame> frame = cuda->allocate(requestOf(PixelFormat::NV12, 33, 17));
	ck_assert_ok(frame);
	ck_assert_error(cuda->copyFrame(*frame, host, kDefaultWaitTimeout), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(cuda->exportFrame(*frame, ResourceKind::VulkanMemoryFd),
			ErrorCode::NotSupported, "kind");
	ck_assert_error(cuda->importFrame(host, ImportRoute::DmaBuf), ErrorCode::NotSupported,
			"route");
	ck_assert_error(cuda->importFrame(host, ImportRoute::OpaqueFd), ErrorCode::NotSupported,
			"route");
	ck_assert_error(cuda->importFrame(host, ImportRoute::Direct), ErrorCode::NotSupported,
			"route");
	ck_assert_error(cuda->importFrame(host, ImportRoute::CpuCopy), ErrorCode::NotSupported,
			"route");
	// Our own frame imports directly as itself.
	Result<Frame> direct = cuda->importFrame(*frame, ImportRoute::Direct);
	ck_assert_ok(direct);
	ck_assert(cuda->holds(*direct));
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

namespace {

Suite *hardwareSuite()
{
	Suite *suite = suite_create("cuda_backend");
	TCase *tc = tcase_create("device");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, device_is_described);
	tcase_add_test(tc, allocate_write_read_identical);
	tcase_add_test(tc, large_frame_and_frames_outlive_backend);
	tcase_add_test(tc, copy_frame_on_device);
	tcase_add_test(tc, host_pointer_import_is_zero_copy);
	tcase_add_test(tc, timed_out_work_keeps_its_memory_until_done);
	tcase_add_test(tc, bad_input_is_refused);
	suite_add_tcase(suite, tc);
	return suite;
}

Suite *anywhereSuite()
{
	Suite *suite = suite_create("cuda_backend_anywhere");
	TCase *tc = tcase_create("open");
	tcase_add_test(tc, open_answers_or_says_why);
	suite_add_tcase(suite, tc);
	return suite;
}

} // namespace

int main()
{
	// Each test runs in a forked child, which starts the driver itself: this process never
	// initialises CUDA (a CUDA context does not survive fork()), so the probe runs in a child.
	if (test::runSuite(anywhereSuite()) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	int probe = test::probeBackend(BackendKind::Cuda);
	if (probe != 0)
		return probe;
	return test::runSuite(hardwareSuite());
}
