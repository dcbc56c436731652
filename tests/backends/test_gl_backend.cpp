// The OpenGL backend on llvmpipe (surfaceless EGL): open, allocate, map, copy, host contexts.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/cpu_fence.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "gl_backend_fixture.h"
#include "egl_gl_thread.h"
#include "fd_count.h"
#include "skip_probe.h"
// clang-format on

using namespace gpuhandle;
using namespace gpuhandle::test;

START_TEST(opens_and_reports_the_device)
{
	int fdsBefore = test::openFdCount();
	{
		BackendRef gl = openGl();
		const DeviceInfo &info = gl->deviceInfo();
		ck_assert(gl->kind() == BackendKind::OpenGL);
		ck_assert_msg(info.name.find("llvmpipe") != std::string::npos, "renderer %s",
			      info.name.c_str());
		ck_assert(info.isSoftware);
		ck_assert(!info.driverVersion.empty());
		ck_assert(info.id.uuid.has_value()); // llvmpipe offers GL_EXT_memory_object
		const BackendCapabilities &caps = gl->capabilities();
		ck_assert_uint_eq(caps.allocates.size(), 2);
		ck_assert(caps.cpuMap && caps.gpuCopy);
		ck_assert(caps.routes.front() == ImportRoute::Direct);
		ck_assert_uint_eq(caps.storages.size(), 3);
		ck_assert(caps.fenceExports == std::vector<SyncKind>{ SyncKind::GlSync });
		ck_assert(gl->context() && gl->context()->backend() == BackendKind::OpenGL);
		ck_assert_ptr_nonnull((*gl->context()->opengl())->context);
		ck_assert((*gl->context()->opengl())->deviceUuid == info.id.uuid);
		ck_assert(gl->supportsFormat(PixelFormat::NV12, FrameStorage::OptimalImage));
		ck_assert(gl->supportsFormat(PixelFormat::V210, FrameStorage::Buffer));
		ck_assert(!gl->supportedFormats(FrameStorage::LinearImage).empty());
	}
	// The GL thread joined and the display was terminated: nothing stays open.
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(buffers_and_textures_round_trip)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	for (FrameStorage storage :
	     { FrameStorage::Buffer, FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (PixelFormat format : kFormats)
			for (auto [w, h] : { std::pair{ 33u, 17u }, std::pair{ 1u, 1u } }) {
				Frame frame = allocate(*gl, format, w, h, storage);
				ck_assert(gl->holds(frame));
				ResourceKind kind = storage == FrameStorage::Buffer
							    ? ResourceKind::GlBuffer
							    : ResourceKind::GlTexture;
				ck_assert(frame.resource(0).kind() == kind);
				writeFrame(*gl, frame, static_cast<uint8_t>(w + h));
				expectFrame(*gl, frame, static_cast<uint8_t>(w + h));
			}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(a_4k_buffer_and_texture_round_trip)
{
	BackendRef gl = openGl();
	Frame buffer = allocate(*gl, PixelFormat::NV12, 3840, 2160, FrameStorage::Buffer);
	writeFrame(*gl, buffer, 9);
	expectFrame(*gl, buffer, 9);
	Frame texture = allocate(*gl, PixelFormat::P010LE, 3840, 2160, FrameStorage::OptimalImage);
	ck_assert_ok(gl->copyFrame(
		texture, allocate(*gl, PixelFormat::P010LE, 3840, 2160, FrameStorage::Buffer),
		kDefaultWaitTimeout));
	writeFrame(*gl, texture, 4);
	expectFrame(*gl, texture, 4);
}
END_TEST

START_TEST(copies_between_buffers_and_textures)
{
	BackendRef gl = openGl();
	for (PixelFormat format : kFormats) {
		Frame a = allocate(*gl, format, 33, 17, FrameStorage::Buffer);
		Frame b = allocate(*gl, format, 33, 17, FrameStorage::OptimalImage);
		Frame c = allocate(*gl, format, 33, 17, FrameStorage::LinearImage);
		AllocateRequest wide{ format, 33, 17, {}, FrameStorage::Buffer, 256, true };
		auto d = gl->allocate(wide); // other strides: copied row by row
		ck_assert_ok(d);
		writeFrame(*gl, a, 3);
		ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));  // buffer -> texture
		ck_assert_ok(gl->copyFrame(c, b, kDefaultWaitTimeout));  // texture -> texture
		ck_assert_ok(gl->copyFrame(*d, c, kDefaultWaitTimeout)); // texture -> buffer
		expectFrame(*gl, b, 3);
		expectFrame(*gl, c, 3);
		expectFrame(*gl, *d, 3);
		writeFrame(*gl, *d, 8);
		ck_assert_ok(gl->copyFrame(a, *d, kDefaultWaitTimeout)); // buffer -> buffer
		expectFrame(*gl, a, 8);
	}
}
END_TEST

START_TEST(frames_outlive_the_backend)
{
	int fdsBefore = test::openFdCount();
	{
		Frame frame =
			allocate(*openGl(), PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
		BackendRef again = openGl(); // another backend's frame is not this one's
		ck_assert(!again->holds(frame));
		ck_assert_error(again->map(frame, MapAccess::Read, kDefaultWaitTimeout),
				ErrorCode::WrongKind, "frame");
		ck_assert(frame.resource(0).get<GlTexture>()->desc().name != 0);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// map() and copyFrame() wait for the frame's acquire point first, bounded by the timeout.
START_TEST(map_and_copy_wait_for_the_acquire_point)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	{
		Frame frame = allocate(*gl, PixelFormat::NV12, 33, 17, FrameStorage::Buffer);
		Frame other = allocate(*gl, PixelFormat::NV12, 33, 17, FrameStorage::Buffer);
		writeFrame(*gl, frame, 1);
		auto fence = CpuFence::create();
		ck_assert_ok(fence);
		frame.setAcquire((*fence)->point());
		auto early = gl->map(frame, MapAccess::Read, std::chrono::milliseconds(20));
		ck_assert_msg(!early.ok() && early.error().code() == ErrorCode::Timeout,
			      "map did not time out");
		Status copied = gl->copyFrame(other, frame, std::chrono::milliseconds(20));
		ck_assert_msg(!copied.ok() && copied.error().code() == ErrorCode::Timeout,
			      "copy did not time out");
		(*fence)->signal();
		expectFrame(*gl, frame, 1);
		ck_assert_ok(gl->copyFrame(other, frame, kDefaultWaitTimeout));
		expectFrame(*gl, other, 1);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A host's GLES 3 context on its own thread: the backend works through the host's executor.
START_TEST(works_inside_a_host_context)
{
	test::EglGlThread host;
	std::string why = host.start();
	ck_assert_msg(why.empty(), "%s", why.c_str());
	auto context = Context::create(
		GlContext{ host.display, host.context, {}, GlFlavour::Egl, {}, {} });
	ck_assert_ok(context);
	for (GlExecutor executor : { host.blocking(), host.posting() }) {
		BackendOpenOptions options;
		options.context = *context;
		options.glExecutor = executor;
		auto opened = openBackend(BackendKind::OpenGL, options);
		ck_assert_ok(opened);
		BackendRef gl = *opened;
		ck_assert(gl->context() == *context);
		ck_assert(gl->deviceInfo().id.uuid.has_value());
		for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::OptimalImage }) {
			Frame a = allocate(*gl, PixelFormat::RGBA, 33, 17, storage);
			writeFrame(*gl, a, 21);
			expectFrame(*gl, a, 21);
			Frame b = allocate(*gl, PixelFormat::RGBA, 33, 17, storage);
			ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));
			expectFrame(*gl, b, 21);
		}
	}
	// A context that is not current where the executor runs the work.
	auto wrong = Context::create(GlContext{ host.display, &host, {}, GlFlavour::Egl, {}, {} });
	ck_assert_ok(wrong);
	BackendOpenOptions options;
	options.context = *wrong;
	options.glExecutor = host.blocking();
	ck_assert_error(openBackend(BackendKind::OpenGL, options), ErrorCode::InvalidState,
			"executor");
}
END_TEST

int main()
{
	int probed = test::probeInChild([] {
		auto opened = openBackend(BackendKind::OpenGL);
		return opened.ok() ? std::string() : opened.error().message();
	});
	if (probed != 0)
		return probed;
	Suite *s = suite_create("gl-backend");
	TCase *tc = tcase_create("gl-backend");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, opens_and_reports_the_device);
	tcase_add_test(tc, buffers_and_textures_round_trip);
	tcase_add_test(tc, a_4k_buffer_and_texture_round_trip);
	tcase_add_test(tc, copies_between_buffers_and_textures);
	tcase_add_test(tc, frames_outlive_the_backend);
	tcase_add_test(tc, map_and_copy_wait_for_the_acquire_point);
	tcase_add_test(tc, works_inside_a_host_context);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
