// CpuBytes, CpuPlanes and CpuSharedSlot factories, and the anchors that keep their memory alive.
#include <gpuhandle/cpu_resources.h>

#include "fd_count.h"

#include <vector>

#include "check_helpers.h"

using namespace gpuhandle;

namespace {
int g_released = 0;
KeepAliveRef countingAnchor()
{
	return makeKeepAlive([](void *) { ++g_released; }, nullptr);
}
} // namespace

START_TEST(bytes)
{
	std::vector<uint8_t> memory(256);
	ck_assert_ok(CpuBytes::create({ .data = memory.data(), .size = memory.size() }));
	ck_assert_error(CpuBytes::create({ .data = nullptr, .size = 1 }), ErrorCode::NullHandle,
			"data");
	ck_assert_error(CpuBytes::create({ .data = memory.data(), .size = 0 }), ErrorCode::ZeroSize,
			"size");
}
END_TEST

START_TEST(planes_held_inline)
{
	std::vector<uint8_t> y(64 * 48), uv(64 * 24);
	CpuPlanesDesc d;
	d.numPlanes = 2;
	d.planes[0] = { y.data(), 64, 48 };
	d.planes[1] = { uv.data(), 64, 24 };
	auto r = CpuPlanes::create(d);
	ck_assert_ok(r);
	ck_assert_ptr_eq(r->desc().planes[1].data, uv.data());
	static_assert(sizeof(CpuPlanes) < 128, "CpuPlanes keeps its planes inline");

	CpuPlanesDesc bad = d;
	bad.numPlanes = 0;
	ck_assert_error(CpuPlanes::create(bad), ErrorCode::OutOfRange, "numPlanes");
	bad.numPlanes = 5;
	ck_assert_error(CpuPlanes::create(bad), ErrorCode::OutOfRange, "numPlanes");
	bad = d;
	bad.planes[1].data = nullptr;
	ck_assert_error(CpuPlanes::create(bad), ErrorCode::NullHandle, "planes[1].data");
	bad = d;
	bad.planes[0].stride = 0;
	ck_assert_error(CpuPlanes::create(bad), ErrorCode::ZeroSize, "planes[0].stride");
	bad = d;
	bad.planes[1].rows = 0;
	ck_assert_error(CpuPlanes::create(bad), ErrorCode::ZeroSize, "planes[1].rows");
}
END_TEST

START_TEST(shared_slot_needs_an_anchor)
{
	g_released = 0;
	{
		auto r = CpuSharedSlot::create(
			{ .slot = 3, .size = 4096, .rowPitch = 256, .anchor = countingAnchor() });
		ck_assert_ok(r);
		CpuSharedSlot copy = *r;
		ck_assert_int_eq(g_released, 0);
	}
	ck_assert_int_eq(g_released, 1);
	ck_assert_error(CpuSharedSlot::create({ .slot = 3, .size = 4096, .rowPitch = 256 }),
			ErrorCode::NullHandle, "anchor");
	ck_assert_error(CpuSharedSlot::create({ .slot = 3, .size = 0, .anchor = countingAnchor() }),
			ErrorCode::ZeroSize, "size");
	ck_assert_error(
		CpuSharedSlot::create(
			{ .slot = 3, .size = 16, .rowPitch = 32, .anchor = countingAnchor() }),
		ErrorCode::OutOfRange, "rowPitch");
}
END_TEST

START_TEST(refused_input_still_releases_its_anchor)
{
	g_released = 0;
	auto r = CpuBytes::create({ .data = nullptr, .size = 8, .anchor = countingAnchor() });
	ck_assert(!r.ok());
	ck_assert_int_eq(g_released, 1);
}
END_TEST

START_TEST(factories_touch_no_fd)
{
	int before = gpuhandle::test::openFdCount();
	uint8_t byte = 0;
	for (int i = 0; i < 20; ++i) {
		ck_assert(CpuBytes::create({ .data = &byte, .size = 1 }).ok());
		ck_assert(!CpuPlanes::create({}).ok());
		ck_assert(!CpuSharedSlot::create({}).ok());
	}
	ck_assert_int_eq(gpuhandle::test::openFdCount(), before);
}
END_TEST

int main()
{
	Suite *s = suite_create("resource-cpu");
	TCase *tc = tcase_create("cpu");
	tcase_add_test(tc, bytes);
	tcase_add_test(tc, planes_held_inline);
	tcase_add_test(tc, shared_slot_needs_an_anchor);
	tcase_add_test(tc, refused_input_still_releases_its_anchor);
	tcase_add_test(tc, factories_touch_no_fd);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
