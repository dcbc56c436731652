// The OpenCL backend on PoCL: device info, buffer and image frames, copies on the device.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/opencl_sync.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

// clang-format off
#include "backend_probe.h"
#include "opencl_context.h"
// Last: Check's fail() macro breaks standard headers included after it.
#include "opencl_backend_fixture.h"
// clang-format on

using namespace gpuhandle;
using namespace gpuhandle::test;

namespace {

const PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::P010LE,
				 PixelFormat::RGBA, PixelFormat::V210 };

bool contains(const auto &list, auto value)
{
	for (const auto &item : list)
		if (item == value)
			return true;
	return false;
}

} // namespace

START_TEST(opens_and_reports_the_device)
{
	BackendRef backend = openOwn();
	const DeviceInfo &info = backend->deviceInfo();
	ck_assert(backend->kind() == BackendKind::OpenCl);
	ck_assert(info.backend == BackendKind::OpenCl);
	ck_assert(!info.name.empty());
	ck_assert(!info.driverVersion.empty());
	ck_assert(info.vendorId.has_value());
	// PoCL's device is the CPU ("pthread-<cpu>"): software, sharing the host's memory.
	if (info.name.find("pthread") != std::string::npos || info.name.find("cpu") == 0) {
		ck_assert(info.isSoftware);
		ck_assert(info.isIntegrated);
		ck_assert_uint_eq(info.dedicatedMemoryBytes, 0);
	}
	const BackendCapabilities &caps = backend->capabilities();
	ck_assert(contains(caps.allocates, ResourceKind::OpenClMem));
	ck_assert(caps.exports.empty());
	ck_assert(contains(caps.imports, ResourceKind::CpuBytes));
	ck_assert(contains(caps.imports, ResourceKind::CpuPlanes));
	ck_assert(contains(caps.routes, ImportRoute::Direct));
	ck_assert(contains(caps.routes, ImportRoute::HostPointer));
	ck_assert(!contains(caps.routes, ImportRoute::DmaBuf));
	ck_assert(contains(caps.storages, FrameStorage::Buffer));
	ck_assert(caps.fenceExports.empty()); // exportFence() makes no fence fds from OpenCL
	ck_assert(caps.cpuMap && caps.gpuCopy);
	// Every known format goes in a buffer.
	ck_assert_uint_eq(backend->supportedFormats(FrameStorage::Buffer).size(),
			  kPixelFormatCount - 1);

	const ContextRef &context = backend->context();
	ck_assert_ptr_nonnull(context.get());
	ck_assert(context->backend() == BackendKind::OpenCl);
	auto native = context->opencl();
	ck_assert_ok(native);
	ck_assert_ptr_nonnull((*native)->context);
	ck_assert_ptr_nonnull((*native)->queue);
	ck_assert_ptr_nonnull((*native)->device);

	BackendOpenOptions far;
	far.deviceIndex = 1000;
	ck_assert_error(openBackend(BackendKind::OpenCl, far), ErrorCode::NotSupported,
			"deviceIndex");
	BackendOpenOptions cpu;
	cpu.context = Context::cpu();
	ck_assert_error(openBackend(BackendKind::OpenCl, cpu), ErrorCode::InvalidArgument,
			"context");
}
END_TEST

START_TEST(buffer_frames_read_back_what_was_written)
{
	BackendRef backend = openOwn();
	uint32_t seed = 1;
	for (PixelFormat format : kFormats)
		for (auto [width, height] : { std::pair{ 33u, 17u }, std::pair{ 1u, 1u } }) {
			Frame frame = allocateOk(*backend, format, width, height);
			ck_assert(backend->holds(frame));
			ck_assert_uint_eq(frame.numResources(), 1);
			ck_assert(frame.resource(0).kind() == ResourceKind::OpenClMem);
			for (uint32_t p = 0; p < frame.numPlanes(); ++p)
				// The preferred alignment.
				ck_assert_uint_eq(frame.plane(p).stride % 64, 0);
			ck_assert_string_eq(roundTrip(*backend, frame, seed++), "");
		}
	// A chosen alignment is kept.
	Frame aligned = allocateOk(*backend, PixelFormat::NV12, 33, 17, FrameStorage::Buffer, 256);
	ck_assert_uint_eq(aligned.plane(0).stride, 256);
	ck_assert_string_eq(roundTrip(*backend, aligned, 99), "");
}
END_TEST

START_TEST(a_4k_frame_reads_back_what_was_written)
{
	BackendRef backend = openOwn();
	Frame frame = allocateOk(*backend, PixelFormat::P010LE, 3840, 2160);
	ck_assert_string_eq(roundTrip(*backend, frame, 7), "");
}
END_TEST

START_TEST(optimal_images_where_the_device_takes_the_plane_formats)
{
	BackendRef backend = openOwn();
	// OpenCL images are opaque: never linear-image storage, whatever the device.
	ck_assert(!contains(backend->capabilities().storages, FrameStorage::LinearImage));
	ck_assert(backend->supportedFormats(FrameStorage::LinearImage).empty());
	ck_assert_error(
		backend->allocate(
			{ PixelFormat::RGBA, 8, 8, {}, FrameStorage::LinearImage, 0, true }),
		ErrorCode::NotSupported, "storage");
	bool images = contains(backend->capabilities().storages, FrameStorage::OptimalImage);
	if (!images) {
		ck_assert_error(backend->allocate({ PixelFormat::RGBA,
						    8,
						    8,
						    {},
						    FrameStorage::OptimalImage,
						    0,
						    true }),
				ErrorCode::NotSupported, "format");
		return;
	}
	// PoCL takes CL_R and CL_RGBA but not CL_RG: I420 and RGBA have images, NV12 and P010 not.
	ck_assert(backend->supportsFormat(PixelFormat::YUV420P, FrameStorage::OptimalImage));
	ck_assert(backend->supportsFormat(PixelFormat::RGBA, FrameStorage::OptimalImage));
	ck_assert(!backend->supportsFormat(PixelFormat::V210, FrameStorage::OptimalImage));
	uint32_t seed = 20;
	for (PixelFormat format : kFormats) {
		AllocateRequest request{ format, 33, 17, {}, FrameStorage::OptimalImage, 0, true };
		if (!backend->supportsFormat(format, FrameStorage::OptimalImage)) {
			ck_assert_error(backend->allocate(request), ErrorCode::NotSupported,
					"format");
			continue;
		}
		Frame frame = allocateOk(*backend, format, 33, 17, FrameStorage::OptimalImage);
		ck_assert_uint_eq(frame.numResources(), frame.numPlanes());
		for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
			ck_assert_uint_eq(frame.plane(p).resource, p);
			ck_assert_uint_eq(frame.plane(p).stride, 0); // no pitch outside a mapping
		}
		ck_assert_string_eq(roundTrip(*backend, frame, seed++), "");
	}
	Frame big =
		allocateOk(*backend, PixelFormat::YUV420P, 3840, 2160, FrameStorage::OptimalImage);
	ck_assert_string_eq(roundTrip(*backend, big, 5), "");
	ck_assert_error(
		backend->allocate(
			{ PixelFormat::RGBA, 100000, 4, {}, FrameStorage::OptimalImage, 0, true }),
		ErrorCode::NotSupported, "request");
}
END_TEST

START_TEST(copies_on_the_device_are_identical)
{
	BackendRef backend = openOwn();
	// Buffer to buffer with other strides.
	Frame a = allocateOk(*backend, PixelFormat::NV12, 33, 17);
	Frame b = allocateOk(*backend, PixelFormat::NV12, 33, 17, FrameStorage::Buffer, 512);
	ck_assert_string_eq(roundTrip(*backend, a, 3), "");
	ck_assert_ok(backend->copyFrame(b, a, kDefaultWaitTimeout));
	checkPatternOk(*backend, b, 3);
	if (!backend->supportsFormat(PixelFormat::YUV420P, FrameStorage::OptimalImage))
		return;
	// Buffer -> image -> image -> buffer (one command per row: the buffer's rows are padded).
	Frame src = allocateOk(*backend, PixelFormat::YUV420P, 33, 17);
	Frame image =
		allocateOk(*backend, PixelFormat::YUV420P, 33, 17, FrameStorage::OptimalImage);
	Frame image2 =
		allocateOk(*backend, PixelFormat::YUV420P, 33, 17, FrameStorage::OptimalImage);
	Frame dst = allocateOk(*backend, PixelFormat::YUV420P, 33, 17, FrameStorage::Buffer, 128);
	ck_assert_string_eq(roundTrip(*backend, src, 11), "");
	ck_assert_ok(backend->copyFrame(image, src, kDefaultWaitTimeout));
	ck_assert_ok(backend->copyFrame(image2, image, kDefaultWaitTimeout));
	ck_assert_ok(backend->copyFrame(dst, image2, kDefaultWaitTimeout));
	checkPatternOk(*backend, dst, 11);
}
END_TEST

// The backend's queue held behind a marker that waits for a user event, which the test sets.
struct HeldQueue {
	cl_event gate = nullptr;

	explicit HeldQueue(Backend &backend)
	{
		auto native = backend.context()->opencl();
		ck_assert_ok(native);
		auto context = static_cast<cl_context>((*native)->context);
		auto queue = static_cast<cl_command_queue>((*native)->queue);
		cl_int error = CL_SUCCESS;
		gate = clCreateUserEvent(context, &error);
		ck_assert_int_eq(error, CL_SUCCESS);
		ck_assert_int_eq(clEnqueueMarkerWithWaitList(queue, 1, &gate, nullptr), CL_SUCCESS);
		ck_assert_int_eq(clFlush(queue), CL_SUCCESS);
	}
	void release() { ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS); }
	~HeldQueue() { clReleaseEvent(gate); }
};

// Commands queued behind work that does not end in time: copyFrame and map return Timeout within
// their budget, and the memory the commands use lives until they have run.
START_TEST(timed_out_commands_keep_their_memory_until_done)
{
	BackendRef backend = openOwn();
	HostBlock host;
	HeldQueue held(*backend);
	{
		Frame srcCpu = cpuBytesFrame(host, PixelFormat::NV12, 33, 17);
		Frame dstCpu = cpuBytesFrame(host, PixelFormat::NV12, 33, 17);
		auto src = backend->importFrame(srcCpu, ImportRoute::HostPointer);
		auto dst = backend->importFrame(dstCpu, ImportRoute::HostPointer);
		ck_assert_ok(src);
		ck_assert_ok(dst);
		Frame other = allocateOk(*backend, PixelFormat::RGBA, 33, 17);
		// Timeout, not a hang: the queue is held until after these calls.
		auto copied = backend->copyFrame(*dst, *src, std::chrono::milliseconds(50));
		ck_assert_error(copied, ErrorCode::Timeout, "timeout");
		ck_assert(copied.error().message().find("did not finish within 50 ms") !=
			  std::string::npos);
		ck_assert_error(backend->map(other, MapAccess::Read, std::chrono::milliseconds(50)),
				ErrorCode::Timeout, "timeout");
	}
	// Every frame is gone; the queued copy still holds the host memory it reads and writes.
	ck_assert_int_eq(host.released.load(), 0);
	held.release();
	// Later calls reclaim the commands once they have run.
	for (int i = 0; i < 1000 && host.released.load() < 2; ++i) {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		allocateOk(*backend, PixelFormat::RGBA, 1, 1);
	}
	ck_assert_int_eq(host.released.load(), 2);
	// The queue runs again: a copy and a mapping within the budget.
	Frame a = allocateOk(*backend, PixelFormat::NV12, 33, 17);
	Frame b = allocateOk(*backend, PixelFormat::NV12, 33, 17);
	ck_assert_string_eq(roundTrip(*backend, a, 31), "");
	ck_assert_ok(backend->copyFrame(b, a, kDefaultWaitTimeout));
	checkPatternOk(*backend, b, 31);
}
END_TEST

// copyFrame waits for the destination's acquire point too, within its budget.
START_TEST(copies_wait_for_the_destination)
{
	BackendRef backend = openOwn();
	Frame src = allocateOk(*backend, PixelFormat::NV12, 33, 17);
	Frame dst = allocateOk(*backend, PixelFormat::NV12, 33, 17);
	ck_assert_string_eq(roundTrip(*backend, src, 41), "");
	auto native = backend->context()->opencl();
	ck_assert_ok(native);
	cl_int error = CL_SUCCESS;
	cl_event gate = clCreateUserEvent(static_cast<cl_context>((*native)->context), &error);
	ck_assert_int_eq(error, CL_SUCCESS);
	auto point = importOpenClEvent({ gate });
	ck_assert_ok(point);
	dst.setAcquire(*point);
	ck_assert_error(backend->copyFrame(dst, src, std::chrono::milliseconds(30)),
			ErrorCode::Timeout, "timeout");
	ck_assert_int_eq(clSetUserEventStatus(gate, CL_COMPLETE), CL_SUCCESS);
	ck_assert_ok(backend->copyFrame(dst, src, kDefaultWaitTimeout));
	checkPatternOk(*backend, dst, 41);
	clReleaseEvent(gate);
}
END_TEST

int main()
{
	// Skips (exit 77) when no OpenCL device opens.
	int probed = test::probeBackend(BackendKind::OpenCl);
	if (probed != 0)
		return probed;
	Suite *s = suite_create("opencl-backend");
	TCase *tc = tcase_create("opencl-backend");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, opens_and_reports_the_device);
	tcase_add_test(tc, buffer_frames_read_back_what_was_written);
	tcase_add_test(tc, a_4k_frame_reads_back_what_was_written);
	tcase_add_test(tc, optimal_images_where_the_device_takes_the_plane_formats);
	tcase_add_test(tc, copies_on_the_device_are_identical);
	tcase_add_test(tc, timed_out_commands_keep_their_memory_until_done);
	tcase_add_test(tc, copies_wait_for_the_destination);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
