// The cpu and fd backends: devices, capabilities, allocation of every format, mapping, export,
// and refusals of bad requests and foreign frames, with fd counts unchanged.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/planner.h>

#include "fd_count.h"
#include "frame_pattern.h"

#include <algorithm>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_ok(backend);
	return *backend;
}

template<typename T>
bool has(const std::vector<T> &values, T value)
{
	return std::find(values.begin(), values.end(), value) != values.end();
}

START_TEST(cpu_backend_describes_itself)
{
	BackendRef cpu = open(BackendKind::Cpu);
	ck_assert(cpu->kind() == BackendKind::Cpu);
	ck_assert(cpu->deviceId().isCpu);
	ck_assert(cpu->context()->backend() == BackendKind::Cpu);
	ck_assert(has(cpu->capabilities().allocates, ResourceKind::CpuBytes));
	ck_assert(has(cpu->capabilities().routes, ImportRoute::HostPointer));
	ck_assert(cpu->capabilities().cpuMap);
	ck_assert(!cpu->capabilities().gpuCopy);
	// Every known format in a buffer, none as images.
	ck_assert_uint_eq(cpu->supportedFormats(FrameStorage::Buffer).size(),
			  allPixelFormats().size());
	ck_assert_uint_eq(cpu->supportedFormats(FrameStorage::OptimalImage).size(), 0);
}
END_TEST

START_TEST(fd_backend_describes_itself)
{
	BackendRef fd = open(BackendKind::Fd);
	ck_assert(fd->kind() == BackendKind::Fd);
	ck_assert(has(fd->capabilities().allocates, ResourceKind::ShmFd));
	ck_assert(has(fd->capabilities().exports, ResourceKind::ShmFd));
	// DMA-BUF export is offered exactly when the kernel has udmabuf.
	ck_assert(has(fd->capabilities().exports, ResourceKind::DmaBuf) ==
		  (access("/dev/udmabuf", R_OK | W_OK) == 0));
}
END_TEST

// Every format at an odd size and one large size: allocated, written, read back identical.
START_TEST(every_format_round_trips_through_a_mapping)
{
	const int fdsBefore = test::openFdCount();
	for (BackendKind kind : { BackendKind::Cpu, BackendKind::Fd }) {
		BackendRef backend = open(kind);
		uint32_t seed = 1;
		for (const PixelFormatInfo &info : allPixelFormats()) {
			AllocateRequest request{ info.format,          33, 17,  {},
						 FrameStorage::Buffer, 0,  true };
			Result<Frame> frame = backend->allocate(request);
			ck_assert_msg(frame.ok(), "%s %s: %s", backendKindName(kind), info.name,
				      frame.ok() ? "" : frame.error().message().c_str());
			ck_assert_uint_eq(frame->numPlanes(), info.numPlanes);
			ck_assert(backend->holds(*frame));
			ck_assert_string_eq(test::writePattern(*backend, *frame, seed), "");
			ck_assert_msg(test::checkPattern(*backend, *frame, seed).empty(), "%s %s",
				      backendKindName(kind), info.name);
			++seed;
		}
		Result<Frame> large = backend->allocate(
			{ PixelFormat::V210, 3840, 2160, {}, FrameStorage::Buffer, 0, true });
		ck_assert_ok(large);
		ck_assert_string_eq(test::writePattern(*backend, *large, 7), "");
		ck_assert_string_eq(test::checkPattern(*backend, *large, 7), "");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(cpu_memory_is_page_aligned)
{
	BackendRef cpu = open(BackendKind::Cpu);
	Frame frame =
		cpu->allocate({ PixelFormat::NV12, 33, 17, {}, FrameStorage::Buffer, 0, true })
			.value();
	const CpuBytes *bytes = frame.resource(0).get<CpuBytes>();
	ck_assert_ptr_nonnull(bytes);
	const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
	ck_assert_uint_eq(reinterpret_cast<uintptr_t>(bytes->desc().data) % page, 0);
	ck_assert_uint_eq(bytes->desc().size % page, 0);
	// The layout's strides follow the 64-byte default.
	ck_assert_uint_eq(frame.plane(0).stride % 64, 0);
}
END_TEST

START_TEST(fd_frames_export_as_shm_and_refuse_other_kinds)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef fd = open(BackendKind::Fd);
		Frame frame = fd->allocate({ PixelFormat::YUV420P,
					     33,
					     17,
					     {},
					     FrameStorage::Buffer,
					     0,
					     true })
				      .value();
		const ShmFd *shm = frame.resource(0).get<ShmFd>();
		ck_assert_ptr_nonnull(shm);
		ck_assert(shm->isSealed());
		ck_assert_ok(fd->exportFrame(frame, ResourceKind::ShmFd));
		ck_assert_error(fd->exportFrame(frame, ResourceKind::VulkanMemoryFd),
				ErrorCode::NotSupported, "kind");
		if (access("/dev/udmabuf", R_OK | W_OK) != 0)
			ck_assert_error(fd->exportFrame(frame, ResourceKind::DmaBuf),
					ErrorCode::NotSupported, "kind");
		// A format without a DRM fourcc never becomes a DMA-BUF.
		Frame v210 =
			fd->allocate(
				  { PixelFormat::V210, 33, 17, {}, FrameStorage::Buffer, 0, true })
				.value();
		ck_assert_error(fd->exportFrame(v210, ResourceKind::DmaBuf),
				ErrorCode::NotSupported, "format");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(bad_requests_fail_with_the_field)
{
	for (BackendKind kind : { BackendKind::Cpu, BackendKind::Fd }) {
		BackendRef backend = open(kind);
		ck_assert_error(
			backend->allocate(
				{ PixelFormat::NV12, 0, 17, {}, FrameStorage::Buffer, 0, true }),
			ErrorCode::ZeroSize, "width");
		ck_assert_error(
			backend->allocate(
				{ PixelFormat::NV12, 16, 0, {}, FrameStorage::Buffer, 0, true }),
			ErrorCode::ZeroSize, "height");
		ck_assert_error(backend->allocate({ PixelFormat::Unknown,
						    16,
						    16,
						    {},
						    FrameStorage::Buffer,
						    0,
						    true }),
				ErrorCode::NotSupported, "format");
		ck_assert_error(backend->allocate({ static_cast<PixelFormat>(9999),
						    16,
						    16,
						    {},
						    FrameStorage::Buffer,
						    0,
						    true }),
				ErrorCode::NotSupported, "format");
		ck_assert_error(
			backend->allocate(
				{ PixelFormat::NV12, 16, 16, {}, FrameStorage::Buffer, 48, true }),
			ErrorCode::InvalidArgument, "strideAlign");
		ck_assert_error(backend->allocate({ PixelFormat::NV12,
						    16,
						    16,
						    {},
						    FrameStorage::OptimalImage,
						    0,
						    true }),
				ErrorCode::NotSupported, "storage");
		ck_assert_error(backend->allocate({ PixelFormat::NV12,
						    16,
						    16,
						    {},
						    static_cast<FrameStorage>(9),
						    0,
						    true }),
				ErrorCode::InvalidArgument, "storage");
		ck_assert_error(
			backend->copyFrame(backend->allocate({ PixelFormat::NV12, 16, 16 }).value(),
					   backend->allocate({ PixelFormat::NV12, 16, 16 }).value(),
					   std::chrono::seconds(1)),
			ErrorCode::NotSupported, "");
	}
}
END_TEST

START_TEST(foreign_frames_are_refused)
{
	BackendRef cpu = open(BackendKind::Cpu);
	BackendRef fd = open(BackendKind::Fd);
	Frame inCpu = cpu->allocate({ PixelFormat::RGBA, 8, 8 }).value();
	Frame inFd = fd->allocate({ PixelFormat::RGBA, 8, 8 }).value();
	ck_assert(!fd->holds(inCpu));
	ck_assert(!cpu->holds(inFd));
	ck_assert_error(fd->map(inCpu, MapAccess::Read, std::chrono::seconds(1)),
			ErrorCode::WrongKind, "frame");
	ck_assert_error(fd->exportFrame(inCpu, ResourceKind::ShmFd), ErrorCode::WrongKind, "frame");
	ck_assert_error(fd->importFrame(inCpu, ImportRoute::Direct), ErrorCode::NotSupported,
			"route");
	ck_assert_error(cpu->importFrame(inFd, ImportRoute::Direct), ErrorCode::NotSupported,
			"route");
	ck_assert_error(cpu->importFrame(inFd, ImportRoute::OpaqueFd), ErrorCode::NotSupported,
			"route");
	// A memfd is host memory: the cpu backend uses it in place.
	Result<Frame> mapped = cpu->importFrame(inFd, ImportRoute::HostPointer);
	ck_assert_ok(mapped);
	ck_assert(cpu->holds(*mapped));
}
END_TEST

START_TEST(backends_refuse_contexts_of_other_apis)
{
	VulkanContext vk;
	vk.instance = test::fakeHandle(1);
	vk.physicalDevice = test::fakeHandle(2);
	vk.device = test::fakeHandle(3);
	vk.queue = test::fakeHandle(4);
	ContextRef context = Context::create(vk).value();
	BackendOpenOptions options;
	options.context = context;
	ck_assert_error(openBackend(BackendKind::Cpu, options), ErrorCode::InvalidArgument,
			"context");
	ck_assert_error(openBackend(BackendKind::Fd, options), ErrorCode::InvalidArgument,
			"context");
	ck_assert_error(openBackend(BackendKind::D3D11), ErrorCode::NotSupported, "kind");
}
END_TEST

} // namespace

int main()
{
	Suite *suite = suite_create("cpu-fd-backend");
	TCase *tc = tcase_create("backends");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cpu_backend_describes_itself);
	tcase_add_test(tc, fd_backend_describes_itself);
	tcase_add_test(tc, every_format_round_trips_through_a_mapping);
	tcase_add_test(tc, cpu_memory_is_page_aligned);
	tcase_add_test(tc, fd_frames_export_as_shm_and_refuse_other_kinds);
	tcase_add_test(tc, bad_requests_fail_with_the_field);
	tcase_add_test(tc, foreign_frames_are_refused);
	tcase_add_test(tc, backends_refuse_contexts_of_other_apis);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
