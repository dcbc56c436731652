// The path planner with the cpu and fd backends (always here): the route order, the copy
// reasons, forbidden copies, fences carried or waited, and the attempts it reports.
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/layout.h>

#include "fd_count.h"
#include "frame_pattern.h"

#include <atomic>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

#include "check_helpers.h"

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_ok(backend);
	return *backend;
}

AllocateRequest request(PixelFormat format, uint32_t width, uint32_t height)
{
	AllocateRequest r;
	r.format = format;
	r.width = width;
	r.height = height;
	return r;
}

// An acquire fence as the planner sees it: a CpuFence that notes its waits and adds up the
// budgets they were given (the planner waits on the thread that imports).
struct WatchedFence final : SyncWaiter {
	std::shared_ptr<CpuFence> fence = CpuFence::create().value();
	std::atomic<int> waits{ 0 };
	WaitDuration budgets{ 0 };
	BackendKind backend() const noexcept override { return BackendKind::Cpu; }
	Status wait(WaitDuration timeout) override
	{
		budgets += timeout;
		waits++;
		return fence->wait(timeout);
	}
	Result<bool> isSignaled() override { return fence->isSignaled(); }
	int pollFd() const noexcept override { return fence->pollFd(); }
};

SyncPoint pointOver(const std::shared_ptr<WatchedFence> &watched)
{
	Result<SyncPoint> point = SyncPoint::fromWaiter(SyncKind::Cpu, watched);
	ck_assert_ok(point);
	return *point;
}

START_TEST(a_frame_already_in_the_target_goes_direct)
{
	BackendRef cpu = open(BackendKind::Cpu);
	Frame frame = cpu->allocate(request(PixelFormat::NV12, 33, 17)).value();
	Result<ImportResult> result = importFrame(frame, *cpu);
	ck_assert_ok(result);
	ck_assert(result->route == ImportRoute::Direct);
	ck_assert(result->path == ExecutionPath::zeroCopy());
	ck_assert_uint_eq(result->tried.size(), 1);
	ck_assert(!result->tried[0].why);
	ck_assert_ptr_eq(result->frame.resource(0).get<CpuBytes>()->desc().data,
			 frame.resource(0).get<CpuBytes>()->desc().data);
}
END_TEST

// A memfd is host memory: the cpu backend uses it in place, so a write through the import is
// seen through the memfd's own mapping.
START_TEST(a_memfd_reaches_the_cpu_backend_by_host_pointer)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef cpu = open(BackendKind::Cpu);
		BackendRef fd = open(BackendKind::Fd);
		Frame frame = fd->allocate(request(PixelFormat::P010LE, 33, 17)).value();
		Result<ImportResult> result = importFrame(frame, *cpu);
		ck_assert_ok(result);
		ck_assert(result->route == ImportRoute::HostPointer);
		ck_assert(result->path == ExecutionPath::zeroCopy());
		// Direct, opaque fd, DMA-BUF refused, host pointer taken.
		ck_assert_uint_eq(result->tried.size(), 4);
		for (size_t i = 0; i + 1 < result->tried.size(); ++i)
			ck_assert(result->tried[i].why.has_value());
		ck_assert_string_eq(test::writePattern(*cpu, result->frame, 3), "");
		ck_assert_string_eq(test::checkPattern(*fd, frame, 3), "");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(host_memory_into_fds_is_a_cpu_copy_with_its_reason)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef cpu = open(BackendKind::Cpu);
		BackendRef fd = open(BackendKind::Fd);
		Frame frame = cpu->allocate(request(PixelFormat::YUV420P, 1921, 1081)).value();
		ck_assert_string_eq(test::writePattern(*cpu, frame, 5), "");
		ImportOptions options;
		options.source = cpu;
		Result<ImportResult> result = importFrame(frame, *fd, options);
		ck_assert_ok(result);
		ck_assert(result->route == ImportRoute::CpuCopy);
		ck_assert(result->path.kind() == ExecutionPath::Kind::CpuCopy);
		ck_assert_str_ne(result->path.reason(), "");
		ck_assert(result->tried.back().route == ImportRoute::CpuCopy);
		ck_assert(result->frame.resource(0).kind() == ResourceKind::ShmFd);
		ck_assert_string_eq(test::checkPattern(*fd, result->frame, 5), "");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(forbidden_copies_fail_naming_every_route)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef cpu = open(BackendKind::Cpu);
		BackendRef fd = open(BackendKind::Fd);
		Frame frame = cpu->allocate(request(PixelFormat::RGBA, 16, 16)).value();
		ImportOptions options;
		options.source = cpu;
		options.allowCopies = false;
		Result<ImportResult> result = importFrame(frame, *fd, options);
		ck_assert_error(result, ErrorCode::NotSupported, "allowCopies");
		ck_assert(result.error().kind() == ErrorKind::Configuration);
		const std::string &message = result.error().message();
		for (const char *route : { "direct", "opaque-fd", "dma-buf", "host-pointer" })
			ck_assert_msg(message.find(route) != std::string::npos, "%s not in: %s",
				      route, message.c_str());
		ck_assert(message.find("copies are forbidden") != std::string::npos);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A copy reads the frame, so it waits for the acquire point first, bounded by the timeout.
START_TEST(copies_wait_for_the_acquire_point)
{
	BackendRef cpu = open(BackendKind::Cpu);
	BackendRef fd = open(BackendKind::Fd);
	Frame frame = cpu->allocate(request(PixelFormat::NV12, 64, 32)).value();
	auto watched = std::make_shared<WatchedFence>();
	frame.setAcquire(pointOver(watched));
	ImportOptions options;
	options.source = cpu;
	options.timeout = 50ms;
	ck_assert_error(importFrame(frame, *fd, options), ErrorCode::Timeout, "timeout");

	options.timeout = 5s;
	const int waitsBefore = watched->waits;
	std::thread producer([watched, waitsBefore] {
		// The 20 ms start once the planner waits (bounded, for a planner that never does).
		for (int i = 0; i < 10000 && watched->waits == waitsBefore; ++i)
			std::this_thread::sleep_for(1ms);
		std::this_thread::sleep_for(20ms);
		watched->fence->signal();
	});
	Result<ImportResult> result = importFrame(frame, *fd, options);
	producer.join();
	ck_assert_ok(result);
	ck_assert(result->fence == FenceTransfer::CpuWait);
	ck_assert(result->fenceWait >= 10ms);
	ck_assert(result->frame.acquire().isNoop());
}
END_TEST

// Every wait of one import shares one deadline: a fence that never signals fails the import
// once, after about one timeout, however many routes would have waited on it.
START_TEST(one_deadline_bounds_the_whole_import)
{
	BackendRef cpu = open(BackendKind::Cpu);
	BackendRef fd = open(BackendKind::Fd);
	Frame frame = fd->allocate(request(PixelFormat::NV12, 64, 32)).value();
	auto watched = std::make_shared<WatchedFence>();
	frame.setAcquire(pointOver(watched));
	ImportOptions options;
	options.source = fd;
	options.timeout = 100ms;
	// The host-pointer route waits (the mapping), then the copy routes would wait again.
	ck_assert_error(importFrame(frame, *cpu, options), ErrorCode::Timeout, "timeout");
	// All its waits together were given one timeout, whatever the time they took.
	const auto given = std::chrono::duration_cast<std::chrono::milliseconds>(watched->budgets);
	ck_assert_int_ge(watched->waits.load(), 1);
	ck_assert_msg(watched->budgets <= options.timeout, "%d waits were given %lld ms in all",
		      watched->waits.load(), static_cast<long long>(given.count()));
}
END_TEST

// A zero-copy import keeps a point the target can wait on, and waits on the CPU for the others.
START_TEST(zero_copy_imports_carry_or_wait_the_fence)
{
	BackendRef cpu = open(BackendKind::Cpu);
	BackendRef fd = open(BackendKind::Fd);
	Frame frame = fd->allocate(request(PixelFormat::NV12, 64, 32)).value();
	int event = eventfd(1, EFD_CLOEXEC); // readable: already signalled
	ck_assert_int_ge(event, 0);
	frame.setAcquire(SyncPoint::fromFenceFd(SharedFd(UniqueFd(event))).value());

	// The fd backend takes fence fds as they are.
	Result<ImportResult> carried = importFrame(frame, *fd);
	ck_assert_ok(carried);
	ck_assert(carried->fence == FenceTransfer::Carried);
	ck_assert(carried->frame.acquire().kind() == SyncKind::FenceFd);

	// Host memory has no queue: the planner waits, and the imported frame is ready.
	Result<ImportResult> waited = importFrame(frame, *cpu);
	ck_assert_ok(waited);
	ck_assert(waited->route == ImportRoute::HostPointer);
	ck_assert(waited->fence == FenceTransfer::CpuWait);
	ck_assert(waited->frame.acquire().isNoop());
}
END_TEST

START_TEST(copy_helpers_refuse_mismatched_mappings)
{
	BackendRef cpu = open(BackendKind::Cpu);
	Frame nv12 = cpu->allocate(request(PixelFormat::NV12, 16, 16)).value();
	Frame rgba = cpu->allocate(request(PixelFormat::RGBA, 16, 16)).value();
	CpuMapping src = cpu->map(nv12, MapAccess::Read, 1s).value();
	CpuMapping dst = cpu->map(rgba, MapAccess::Write, 1s).value();
	ck_assert_error(copyMappedPlanes(dst, src, PixelFormat::NV12, 16, 16),
			ErrorCode::FormatMismatch, "planes");
	CpuMapping readOnly = cpu->map(nv12, MapAccess::Read, 1s).value();
	ck_assert_error(copyMappedPlanes(readOnly, src, PixelFormat::NV12, 16, 16),
			ErrorCode::InvalidArgument, "dst");
	ck_assert_error(copyMappedPlanes(dst, src, PixelFormat::Unknown, 16, 16),
			ErrorCode::NotSupported, "format");
}
END_TEST

// An NV12 DMA-BUF over a memfd (a stand-in: no dma-buf exporter here) with `modifier`.
Frame nv12DmaBuf(uint64_t modifier, uint64_t objectSize)
{
	FrameLayout layout =
		computeLayout(PixelFormat::NV12, 64, 32, LayoutPolicy::StrideAlign, 64).value();
	SharedFd fd(test::makeMemfd(objectSize));
	DmaBufDesc d;
	d.fourcc = 0x3231564e; // DRM_FORMAT_NV12
	d.modifier = modifier;
	d.width = 64;
	d.height = 32;
	d.numObjects = 1;
	d.objects[0] = { fd, objectSize };
	d.numPlanes = 2;
	for (uint32_t i = 0; i < 2; ++i)
		d.planes[i] = { 0, layout.planes[i].offset, layout.planes[i].stride };
	return Frame::wrap(PixelFormat::NV12, 64, 32, {}, DmaBuf::create(std::move(d)).value())
		.value();
}

// Bad input fails with a clear error and leaves no fd open: a tiled modifier the CPU cannot read,
// memory too small for the planes, a closed fd.
START_TEST(bad_frames_are_refused_and_leak_nothing)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef cpu = open(BackendKind::Cpu);
		const uint64_t size =
			computeLayout(PixelFormat::NV12, 64, 32, LayoutPolicy::StrideAlign, 64)
				.value()
				.size;
		// I915_FORMAT_MOD_Y_TILED: tiled rows, so neither a host pointer nor a CPU copy
		// works.
		Frame tiled = nv12DmaBuf(0x0100000000000002ULL, size);
		Result<ImportResult> refused = importFrame(tiled, *cpu);
		ck_assert_error(refused, ErrorCode::NotSupported, "modifier");
		ImportOptions noCopies;
		noCopies.allowCopies = false;
		Result<ImportResult> forbidden = importFrame(tiled, *cpu, noCopies);
		ck_assert_error(forbidden, ErrorCode::NotSupported, "allowCopies");
		ck_assert(forbidden.error().message().find("modifier") != std::string::npos);
		// A linear one goes in place.
		Result<ImportResult> linear =
			importFrame(nv12DmaBuf(kDrmModifierLinear, size), *cpu);
		ck_assert_ok(linear);
		ck_assert(linear->route == ImportRoute::HostPointer);
	}
	// Memory smaller than the planes never becomes a frame.
	{
		FrameLayout layout =
			computeLayout(PixelFormat::NV12, 64, 32, LayoutPolicy::StrideAlign, 64)
				.value();
		SharedFd fd(test::makeMemfd(layout.size / 2));
		Result<ShmFd> shm = ShmFd::create({ .fd = fd, .size = layout.size / 2 });
		ck_assert_ok(shm);
		FrameDesc d;
		d.format = PixelFormat::NV12;
		d.width = 64;
		d.height = 32;
		d.numResources = 1;
		d.resources[0] = *shm;
		d.numPlanes = 2;
		for (uint32_t i = 0; i < 2; ++i)
			d.planes[i] = { 0, 0, layout.planes[i].offset, layout.planes[i].stride };
		ck_assert(!Frame::create(std::move(d)).ok());
	}
	// A closed fd never becomes a resource.
	{
		UniqueFd fd = test::makeMemfd(4096);
		int number = fd.get();
		fd.reset();
		ck_assert_error(
			ShmFd::create({ .fd = SharedFd::borrow(number, nullptr), .size = 4096 }),
			ErrorCode::BadFd, "fd");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

} // namespace

int main()
{
	Suite *suite = suite_create("planner");
	TCase *tc = tcase_create("cpu-fd");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_frame_already_in_the_target_goes_direct);
	tcase_add_test(tc, a_memfd_reaches_the_cpu_backend_by_host_pointer);
	tcase_add_test(tc, host_memory_into_fds_is_a_cpu_copy_with_its_reason);
	tcase_add_test(tc, forbidden_copies_fail_naming_every_route);
	tcase_add_test(tc, copies_wait_for_the_acquire_point);
	tcase_add_test(tc, zero_copy_imports_carry_or_wait_the_fence);
	tcase_add_test(tc, one_deadline_bounds_the_whole_import);
	tcase_add_test(tc, copy_helpers_refuse_mismatched_mappings);
	tcase_add_test(tc, bad_frames_are_refused_and_leak_nothing);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
