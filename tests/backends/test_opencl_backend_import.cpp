// The OpenCL backend's imports: host pointers, a host's context and cl_mems, refused bad input.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/layout.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// clang-format off
#include "backend_probe.h"
#include "fd_count.h"
#include "opencl_context.h"
// Last: Check's fail() macro breaks standard headers included after it.
#include "opencl_backend_fixture.h"
// clang-format on

using namespace gpuhandle;
using namespace gpuhandle::test;

START_TEST(cpu_bytes_are_imported_in_place)
{
	BackendRef backend = openOwn();
	HostBlock host;
	{
		Frame cpu = cpuBytesFrame(host, PixelFormat::NV12, 33, 17);
		auto *base = static_cast<uint8_t *>(cpu.resource(0).get<CpuBytes>()->desc().data);
		auto cpuMapped = mapFrame(cpu, MapAccess::Write);
		ck_assert_ok(cpuMapped);
		fillPatternOk(*cpuMapped, cpu, 40);
		ck_assert_ok(cpuMapped->unmap());

		auto imported = backend->importFrame(cpu, ImportRoute::HostPointer);
		ck_assert_ok(imported);
		ck_assert(backend->holds(*imported));
		ck_assert_uint_eq(imported->numResources(), 1);
		ck_assert(imported->resource(0).kind() == ResourceKind::OpenClMem);
		for (uint32_t p = 0; p < imported->numPlanes(); ++p)
			ck_assert(imported->plane(p) == cpu.plane(p));

		// The device reads the host bytes (a device copy, no kernel).
		Frame device = allocateOk(*backend, PixelFormat::NV12, 33, 17);
		ck_assert_ok(backend->copyFrame(device, *imported, kDefaultWaitTimeout));
		checkPatternOk(*backend, device, 40);
		// Zero copy: the mapping is the host memory itself, and what is written there while
		// mapped is what the device copies next.
		{
			auto mapped =
				backend->map(*imported, MapAccess::Write, kDefaultWaitTimeout);
			ck_assert_ok(mapped);
			ck_assert_ptr_eq(mapped->data(0), base);
			ck_assert_ptr_eq(mapped->data(1), base + cpu.plane(1).offset);
			auto again = mapFrame(cpu, MapAccess::Write);
			ck_assert_ok(again);
			fillPatternOk(*again, cpu, 41);
		}
		ck_assert_ok(backend->copyFrame(device, *imported, kDefaultWaitTimeout));
		checkPatternOk(*backend, device, 41);
		// And device writes land in the host memory.
		ck_assert_string_eq(roundTrip(*backend, device, 42), "");
		ck_assert_ok(backend->copyFrame(*imported, device, kDefaultWaitTimeout));
		auto readBack = mapFrame(cpu, MapAccess::Read);
		ck_assert_ok(readBack);
		checkPatternOk(*readBack, cpu, 42);
		ck_assert_int_eq(host.released.load(), 0);
	}
	ck_assert_int_eq(host.released.load(), 1); // the bytes' one anchor, released once
}
END_TEST

START_TEST(cpu_planes_are_imported_one_buffer_per_plane)
{
	BackendRef backend = openOwn();
	HostBlock host;
	{
		const PixelFormatInfo &info = infoOf(PixelFormat::YUV420P);
		CpuPlanesDesc planes;
		planes.numPlanes = 3;
		for (uint32_t p = 0; p < 3; ++p) {
			uint32_t stride = static_cast<uint32_t>(info.planes[p].rowBytes(33)) +
					  7; // odd padding
			uint32_t rows = info.planes[p].rows(17);
			planes.planes[p] =
				CpuPlane{ host.add(uint64_t(stride) * rows), stride, rows };
		}
		planes.anchor = host.anchor();
		auto resource = CpuPlanes::create(planes);
		ck_assert_ok(resource);
		auto cpu = Frame::wrap(PixelFormat::YUV420P, 33, 17, {}, *resource);
		ck_assert_ok(cpu);
		{
			auto mapped = mapFrame(*cpu, MapAccess::Write);
			ck_assert_ok(mapped);
			fillPatternOk(*mapped, *cpu, 50);
		}
		auto imported = backend->importFrame(*cpu, ImportRoute::HostPointer);
		ck_assert_ok(imported);
		ck_assert_uint_eq(imported->numResources(), 3);
		Frame device = allocateOk(*backend, PixelFormat::YUV420P, 33, 17);
		ck_assert_ok(backend->copyFrame(device, *imported, kDefaultWaitTimeout));
		checkPatternOk(*backend, device, 50);
		auto direct = backend->map(*imported, MapAccess::Read, kDefaultWaitTimeout);
		ck_assert_ok(direct);
		for (uint32_t p = 0; p < 3; ++p)
			ck_assert_ptr_eq(direct->data(p), planes.planes[p].data);
	}
	ck_assert_int_eq(host.released.load(), 1);
}
END_TEST

START_TEST(other_frames_and_bad_input_are_refused)
{
	// Open and close once first: the driver's first use may open files it keeps.
	openOwn().reset();
	int fds = test::openFdCount();
	{
		BackendRef backend = openOwn();
		BackendRef other = openOwn();
		HostBlock host;
		Frame cpu = cpuBytesFrame(host, PixelFormat::RGBA, 16, 4);
		Frame mine = allocateOk(*backend, PixelFormat::RGBA, 16, 4);
		Frame theirs = allocateOk(*other, PixelFormat::RGBA, 16, 4);
		ck_assert(!backend->holds(cpu));
		ck_assert(!backend->holds(theirs));
		ck_assert_error(backend->map(cpu, MapAccess::Read, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(backend->map(theirs, MapAccess::Read, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(backend->copyFrame(mine, theirs, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(backend->copyFrame(cpu, mine, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(backend->exportFrame(cpu, ResourceKind::DmaBuf),
				ErrorCode::WrongKind, "frame");
		ck_assert_error(backend->exportFrame(mine, ResourceKind::DmaBuf),
				ErrorCode::NotSupported, "kind");
		ck_assert_error(backend->exportFrame(mine, ResourceKind::VulkanMemoryFd),
				ErrorCode::NotSupported, "kind");
		ck_assert_error(backend->map(mine, static_cast<MapAccess>(0), kDefaultWaitTimeout),
				ErrorCode::InvalidArgument, "access");
		// Another context's cl_mem cannot be used directly; a host pointer must be CPU
		// memory.
		ck_assert_error(backend->importFrame(theirs, ImportRoute::Direct),
				ErrorCode::NotSupported, "route");
		ck_assert_error(backend->importFrame(cpu, ImportRoute::Direct),
				ErrorCode::NotSupported, "route");
		ck_assert_error(backend->importFrame(theirs, ImportRoute::HostPointer),
				ErrorCode::NotSupported, "route");
		auto same = backend->importFrame(mine, ImportRoute::Direct);
		ck_assert_ok(same);
		ck_assert(same->resource(0).get<OpenClMem>()->desc().mem ==
			  mine.resource(0).get<OpenClMem>()->desc().mem);
		// No fd routes: PoCL offers no cl_khr_external_memory.
		UniqueFd memfd = test::makeMemfd(16 * 4 * 4);
		auto shm = ShmFd::create({ SharedFd(std::move(memfd)), 0, 16 * 4 * 4, 0 });
		ck_assert_ok(shm);
		auto fdFrame = Frame::wrap(PixelFormat::RGBA, 16, 4, {}, *shm);
		ck_assert_ok(fdFrame);
		for (ImportRoute route :
		     { ImportRoute::DmaBuf, ImportRoute::OpaqueFd, ImportRoute::GpuCopy,
		       ImportRoute::CpuCopy, ImportRoute::HostPointer })
			ck_assert_error(backend->importFrame(*fdFrame, route),
					ErrorCode::NotSupported, "route");
		// Sizes and formats.
		Frame smaller = allocateOk(*backend, PixelFormat::RGBA, 15, 4);
		Frame nv12 = allocateOk(*backend, PixelFormat::NV12, 16, 4);
		ck_assert_error(backend->copyFrame(smaller, mine, kDefaultWaitTimeout),
				ErrorCode::FormatMismatch, "dst");
		ck_assert_error(backend->copyFrame(nv12, mine, kDefaultWaitTimeout),
				ErrorCode::FormatMismatch, "dst");
		ck_assert_error(
			backend->allocate(
				{ PixelFormat::RGBA, 0, 4, {}, FrameStorage::Buffer, 0, true }),
			ErrorCode::ZeroSize, "width");
		ck_assert_error(
			backend->allocate(
				{ PixelFormat::Unknown, 4, 4, {}, FrameStorage::Buffer, 0, true }),
			ErrorCode::NotSupported, "format");
		// Images are opaque: no linear-image storage.
		ck_assert_error(backend->allocate({ PixelFormat::RGBA,
						    4,
						    4,
						    {},
						    FrameStorage::LinearImage,
						    0,
						    true }),
				ErrorCode::NotSupported, "storage");
		ck_assert_error(
			backend->allocate(
				{ PixelFormat::RGBA, 4, 4, {}, FrameStorage::Buffer, 48, true }),
			ErrorCode::InvalidArgument, "strideAlign");
		ck_assert_error(backend->allocate({ PixelFormat::RGBA,
						    65535,
						    65535,
						    {},
						    FrameStorage::Buffer,
						    0,
						    true }),
				ErrorCode::OutOfMemory, "request");
		// A producer's staging slot is CPU memory the consumer cannot address.
		auto slot = CpuSharedSlot::create({ 1, 64 * 4, 64, host.anchor() });
		ck_assert_ok(slot);
		auto slotFrame = Frame::wrap(PixelFormat::RGBA, 16, 4, {}, *slot);
		ck_assert_ok(slotFrame);
		ck_assert_error(backend->importFrame(*slotFrame, ImportRoute::HostPointer),
				ErrorCode::NotSupported, "route");
	}
	ck_assert_int_eq(test::openFdCount(), fds);
}
END_TEST

START_TEST(a_host_context_is_used_and_its_cl_mems_imported_directly)
{
	std::string why;
	cl_device_id device = nullptr;
	cl_context clContext = test::openClContext(why, &device);
	ck_assert_msg(clContext, "%s", why.c_str());
	cl_int error = CL_SUCCESS;
	cl_command_queue queue = clCreateCommandQueue(clContext, device, 0, &error);
	ck_assert_int_eq(error, CL_SUCCESS);
	OpenClContext native;
	native.context = clContext;
	native.queue = queue;
	native.device = device;
	auto context = Context::create(native);
	ck_assert_ok(context);
	BackendOpenOptions options;
	options.context = *context;
	Frame outlives = [&] {
		auto opened = openBackend(BackendKind::OpenCl, options);
		ck_assert_ok(opened);
		BackendRef backend = *opened;
		ck_assert_ptr_eq(backend->context().get(), context->get());
		Frame frame = allocateOk(*backend, PixelFormat::YUV420P, 33, 17);
		ck_assert_ptr_eq(frame.resource(0).get<OpenClMem>()->desc().queue, queue);
		ck_assert_string_eq(roundTrip(*backend, frame, 60), "");

		// A cl_mem the host made in its context, written by the host, is used directly.
		const size_t size = 64 * 4;
		cl_mem mem = clCreateBuffer(clContext, CL_MEM_READ_WRITE, size, nullptr, &error);
		ck_assert_int_eq(error, CL_SUCCESS);
		std::vector<uint8_t> bytes(size);
		for (size_t i = 0; i < size; ++i)
			bytes[i] = static_cast<uint8_t>(i * 3);
		ck_assert_int_eq(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, size, bytes.data(), 0,
						      nullptr, nullptr),
				 CL_SUCCESS);
		auto hostMem = OpenClMem::create(
			{ mem, queue, size,
			  makeKeepAlive([](void *m) { clReleaseMemObject(static_cast<cl_mem>(m)); },
					mem) });
		ck_assert_ok(hostMem);
		auto hostFrame = Frame::create([&] {
			FrameDesc desc;
			desc.format = PixelFormat::RGBA;
			desc.width = 16;
			desc.height = 4;
			desc.numResources = 1;
			desc.resources[0] = *hostMem;
			desc.numPlanes = 1;
			desc.planes[0] = PlaneView{ 0, 0, 0, 64 };
			return desc;
		}());
		ck_assert_ok(hostFrame);
		ck_assert(!backend->holds(*hostFrame));
		auto direct = backend->importFrame(*hostFrame, ImportRoute::Direct);
		ck_assert_ok(direct);
		ck_assert(backend->holds(*direct));
		auto mapped = backend->map(*direct, MapAccess::Read, kDefaultWaitTimeout);
		ck_assert_ok(mapped);
		ck_assert_int_eq(std::memcmp(mapped->data(0), bytes.data(), size), 0);
		// The import holds one reference of its own (PoCL holds one more while mapped).
		ck_assert_ok(mapped->unmap());
		cl_uint references = 0;
		clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof(references), &references,
				   nullptr);
		ck_assert_uint_eq(references, 2);
		direct = Error(ErrorCode::Cancelled, "", "dropped");
		clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof(references), &references,
				   nullptr);
		ck_assert_uint_eq(references, 1);
		return frame;
	}();
	// The frame keeps the device alive after its backend went; its release is clean.
	ck_assert_ptr_nonnull(outlives.resource(0).get<OpenClMem>()->desc().mem);

	// A queue of another context is refused.
	cl_device_id otherDevice = nullptr;
	cl_context other = test::openClContext(why, &otherDevice);
	cl_command_queue otherQueue = clCreateCommandQueue(other, otherDevice, 0, &error);
	native.queue = otherQueue;
	auto mixed = Context::create(native);
	ck_assert_ok(mixed);
	options.context = *mixed;
	ck_assert_error(openBackend(BackendKind::OpenCl, options), ErrorCode::InvalidArgument,
			"context");
	clReleaseCommandQueue(otherQueue);
	clReleaseContext(other);
	clReleaseCommandQueue(queue);
	clReleaseContext(clContext);
}
END_TEST

int main()
{
	// Skips (exit 77) when no OpenCL device opens.
	int probed = test::probeBackend(BackendKind::OpenCl);
	if (probed != 0)
		return probed;
	Suite *s = suite_create("opencl-backend-import");
	TCase *tc = tcase_create("opencl-backend-import");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cpu_bytes_are_imported_in_place);
	tcase_add_test(tc, cpu_planes_are_imported_one_buffer_per_plane);
	tcase_add_test(tc, other_frames_and_bad_input_are_refused);
	tcase_add_test(tc, a_host_context_is_used_and_its_cl_mems_imported_directly);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
