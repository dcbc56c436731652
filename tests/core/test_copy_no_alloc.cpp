// Copying any Resource or a Frame allocates nothing: a Resource adds one reference per anchor or
// fd, a Frame one to the body its copies share.
#include <gpuhandle/frame.h>

#include "alloc_counter.h"
#include "fd_count.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;
using gpuhandle::test::AllocationScope;
using gpuhandle::test::makeMemfd;

namespace {

int g_handle;
void *const kH = &g_handle;

struct Anchor final : KeepAlive {};

// One resource of every kind, each holding `anchor` where the kind borrows.
std::vector<Resource> oneOfEachKind(const KeepAliveRef &anchor, uint8_t *memory)
{
	std::vector<Resource> all;
	all.push_back(VulkanImage::create({ .image = 1, .device = kH, .anchor = anchor }).value());
	all.push_back(
		VulkanBuffer::create({ .buffer = 1, .device = kH, .size = 64, .anchor = anchor })
			.value());
	VulkanMemoryFdDesc vk;
	vk.fd = SharedFd(makeMemfd(4096));
	vk.exportDesc.allocationSize = 4096;
	vk.exportDesc.usage = 1;
	all.push_back(VulkanMemoryFd::create(std::move(vk)).value());
	all.push_back(GlTexture::create({ .name = 1,
					  .target = 0x0DE1,
					  .internalFormat = 0x8058,
					  .width = 8,
					  .height = 8,
					  .context = kH,
					  .anchor = anchor })
			      .value());
	all.push_back(
		GlBuffer::create(
			{ .name = 1, .target = 0x8892, .size = 8, .context = kH, .anchor = anchor })
			.value());
	all.push_back(CudaPitched2D::create({ .pointer = 1,
					      .pitch = 64,
					      .numPlanes = 1,
					      .size = 4096,
					      .anchor = anchor })
			      .value());
	all.push_back(CudaBuffer::create({ .pointer = 1, .size = 64, .anchor = anchor }).value());
	all.push_back(
		CudaSurface::create({ .surface = 1, .width = 8, .height = 8, .anchor = anchor })
			.value());
	all.push_back(OpenClMem::create({ .mem = kH, .queue = kH, .anchor = anchor }).value());
	DmaBufDesc dmabuf;
	dmabuf.fourcc = 0x34325258; // XR24
	dmabuf.width = 16;
	dmabuf.height = 16;
	dmabuf.numObjects = 1;
	dmabuf.objects[0] = { SharedFd(makeMemfd(1024)), 1024 };
	dmabuf.numPlanes = 1;
	dmabuf.planes[0] = { 0, 0, 64 };
	all.push_back(DmaBuf::create(std::move(dmabuf)).value());
	all.push_back(ShmFd::create({ .fd = SharedFd(makeMemfd(64)), .size = 64 }).value());
	all.push_back(VaSurface::create({ .surface = 0, .display = kH, .anchor = anchor }).value());
	all.push_back(D3D11Texture::create({ .texture = kH, .anchor = anchor }).value());
	all.push_back(D3D12Resource::create({ .resource = kH, .anchor = anchor }).value());
	all.push_back(D3D12Buffer::create({ .resource = kH, .size = 8, .anchor = anchor }).value());
	all.push_back(MetalTexture::create({ .texture = kH, .anchor = anchor }).value());
	all.push_back(MetalBuffer::create({ .buffer = kH, .size = 8, .anchor = anchor }).value());
	all.push_back(
		WebGpuTexture::create(
			{ .texture = kH, .device = kH, .width = 8, .height = 8, .anchor = anchor })
			.value());
	all.push_back(CpuBytes::create({ .data = memory, .size = 64, .anchor = anchor }).value());
	CpuPlanesDesc planes;
	planes.numPlanes = 4;
	for (auto &p : planes.planes)
		p = { memory, 16, 4 };
	planes.anchor = anchor;
	all.push_back(CpuPlanes::create(planes).value());
	all.push_back(
		CpuSharedSlot::create({ .slot = 1, .size = 64, .rowPitch = 16, .anchor = anchor })
			.value());
	return all;
}

} // namespace

START_TEST(copying_every_kind_allocates_nothing)
{
	uint8_t memory[64];
	KeepAliveRef anchor = std::make_shared<Anchor>();
	std::vector<Resource> all = oneOfEachKind(anchor, memory);
	ck_assert_uint_eq(all.size(), kResourceKindCount - 1); // every kind but None
	for (uint32_t i = 0; i < all.size(); ++i)
		ck_assert_uint_eq(static_cast<uint32_t>(all[i].kind()), i + 1);

	for (const Resource &original : all) {
		long before = anchor.use_count();
		bool borrows = original.visit([&](const auto &h) {
			if constexpr (requires { h.desc().anchor; })
				return h.desc().anchor == anchor;
			else
				return false;
		});
		AllocationScope scope;
		Resource copy = original;
		Resource second = copy;
		uint64_t allocations = scope.count();
		ck_assert_msg(allocations == 0, "copying a %s allocated %llu times",
			      resourceKindName(original.kind()),
			      static_cast<unsigned long long>(allocations));
		// One reference (one atomic increment) per copy, and only for kinds holding the
		// anchor.
		ck_assert_int_eq(anchor.use_count(), before + (borrows ? 2 : 0));
	}
}
END_TEST

START_TEST(copying_a_frame_allocates_nothing)
{
	uint8_t memory[64];
	KeepAliveRef anchor = std::make_shared<Anchor>();
	std::vector<Resource> all = oneOfEachKind(anchor, memory);
	FrameDesc d;
	d.width = 16;
	d.height = 16;
	d.numResources = 4;
	d.resources = { all[9], all[10], all[18], all[19] }; // DmaBuf, ShmFd, CpuBytes, CpuPlanes
	d.numPlanes = 4;
	d.planes[0] = { 0, 0, 0, 64 };
	d.planes[1] = { 1, 0, 0, 16 };
	d.planes[2] = { 2, 0, 0, 16 };
	d.planes[3] = { 3, 3, 0, 16 };
	Frame frame = Frame::create(d).value();
	long before = anchor.use_count();

	AllocationScope scope;
	Frame copy = frame;
	Frame moved = std::move(copy);
	Frame assigned = frame;
	assigned = moved;
	ck_assert_uint_eq(scope.count(), 0);
	// Copies share the first frame's body: no resource was copied, so no anchor reference
	// was added (one atomic per copy, on the body).
	ck_assert_int_eq(anchor.use_count(), before);
	ck_assert(&moved.desc() == &frame.desc());
	ck_assert(&assigned.desc() == &frame.desc());
	// A frame moved from holds nothing.
	ck_assert_uint_eq(copy.numResources(), 0);
	ck_assert(copy.format() == PixelFormat::Unknown);
}
END_TEST

// Writing one copy's fences leaves the others as they were (the writer gets a body of its own);
// a frame that holds its body alone is written in place, allocating nothing.
START_TEST(writing_a_copy_leaves_the_others_alone)
{
	uint8_t memory[64];
	KeepAliveRef anchor = std::make_shared<Anchor>();
	CpuPlanesDesc planes;
	planes.numPlanes = 1;
	planes.planes[0] = { memory, 8, 8 };
	planes.anchor = anchor;
	Frame frame =
		Frame::wrap(PixelFormat::RGBA, 2, 8, {}, CpuPlanes::create(planes).value()).value();
	ReleaseGate gate = ReleaseGate::create().value();
	Frame copy = frame;
	const long shared = anchor.use_count();
	copy.setRelease(gate);
	ck_assert(&copy.desc() != &frame.desc());
	ck_assert(!frame.release().isSignaled());
	ck_assert(frame.release().isNone());
	ck_assert(!copy.release().isNone());
	ck_assert_int_eq(anchor.use_count(), shared + 1); // the writer's own resources
	ck_assert_ptr_eq(copy.resource(0).get<CpuPlanes>()->desc().planes[0].data, memory);

	// Now each holds its body alone: writes allocate nothing and stay in place.
	const FrameDesc *before = &copy.desc();
	AllocationScope scope;
	copy.setAcquire(SyncPoint::noop());
	copy.setRelease(ReleaseGate::none());
	frame.setRelease(gate);
	ck_assert_uint_eq(scope.count(), 0);
	ck_assert(&copy.desc() == before);
	ck_assert(copy.release().isNone());
	ck_assert(!frame.release().isNone());

	// A frame moved from is empty, and can be written and copied like any other.
	Frame taken = std::move(copy);
	copy.setRelease(gate);
	ck_assert_uint_eq(copy.numResources(), 0);
	ck_assert(!copy.release().isNone());
	ck_assert_int_eq(anchor.use_count(), shared + 1);
}
END_TEST

END_TEST

START_TEST(counter_sees_allocations)
{
	// Guards the test above: the counter must see an allocation when one happens.
	AllocationScope scope;
	// A direct call, unlike a new-expression, may not be elided by the compiler.
	void *volatile p = ::operator new(16);
	::operator delete(p);
	if (std::getenv("GPUHANDLE_UNDER_VALGRIND")) {
		// Valgrind replaces operator new and malloc with its own: nothing can be counted
		// there (this suite's allocation counts are checked by the plain runs).
		std::printf(
			"counter_sees_allocations: under valgrind, allocations are not counted\n");
		ck_assert_uint_eq(scope.count(), 0);
		return;
	}
	ck_assert_uint_ge(scope.count(), 1);
}
END_TEST

int main()
{
	Suite *s = suite_create("copy-no-alloc");
	TCase *tc = tcase_create("copy");
	tcase_add_test(tc, copying_every_kind_allocates_nothing);
	tcase_add_test(tc, copying_a_frame_allocates_nothing);
	tcase_add_test(tc, writing_a_copy_leaves_the_others_alone);
	tcase_add_test(tc, counter_sees_allocations);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
