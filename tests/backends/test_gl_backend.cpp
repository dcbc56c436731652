// The OpenGL backend on llvmpipe (surfaceless EGL): open, allocate, map, copy, host contexts.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/cpu_fence.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// Last: Check's fail() macro breaks standard headers included after it.
// clang-format off
#include "backend_probe.h"
#include "gl_backend_fixture.h"
#include "egl_gl_thread.h"
#include "fd_count.h"
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
		// Buffers and opaque textures: GL has no CPU-visible linear image layout.
		ck_assert_uint_eq(caps.storages.size(), 2);
		ck_assert(caps.storages[0] == FrameStorage::Buffer);
		ck_assert(caps.storages[1] == FrameStorage::OptimalImage);
		ck_assert(caps.fenceExports.empty()); // exportFence() makes no fence fds from GL
		ck_assert(gl->context() && gl->context()->backend() == BackendKind::OpenGL);
		ck_assert_ptr_nonnull((*gl->context()->opengl())->context);
		ck_assert((*gl->context()->opengl())->deviceUuid == info.id.uuid);
		ck_assert(gl->supportsFormat(PixelFormat::NV12, FrameStorage::OptimalImage));
		ck_assert(gl->supportsFormat(PixelFormat::V210, FrameStorage::Buffer));
		ck_assert(!gl->supportedFormats(FrameStorage::OptimalImage).empty());
		ck_assert(gl->supportedFormats(FrameStorage::LinearImage).empty());
		ck_assert(!gl->supportsFormat(PixelFormat::RGBA, FrameStorage::LinearImage));
		AllocateRequest linear{ PixelFormat::RGBA,         33, 17,  {},
					FrameStorage::LinearImage, 0,  true };
		ck_assert_error(gl->allocate(linear), ErrorCode::NotSupported, "storage");
	}
	// The GL thread joined and the display was terminated: nothing stays open.
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(buffers_and_textures_round_trip)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::OptimalImage })
		for (PixelFormat format : kFormats)
			for (auto [w, h] : { std::pair{ 33u, 17u }, std::pair{ 1u, 1u } }) {
				Frame frame = allocate(*gl, format, w, h, storage);
				ck_assert(gl->holds(frame));
				ResourceKind kind = storage == FrameStorage::Buffer
							    ? ResourceKind::GlBuffer
							    : ResourceKind::GlTexture;
				ck_assert(frame.resource(0).kind() == kind);
				writePatternOk(*gl, frame, static_cast<uint8_t>(w + h));
				checkPatternOk(*gl, frame, static_cast<uint8_t>(w + h));
			}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(a_4k_buffer_and_texture_round_trip)
{
	BackendRef gl = openGl();
	Frame buffer = allocate(*gl, PixelFormat::NV12, 3840, 2160, FrameStorage::Buffer);
	writePatternOk(*gl, buffer, 9);
	checkPatternOk(*gl, buffer, 9);
	Frame texture = allocate(*gl, PixelFormat::P010LE, 3840, 2160, FrameStorage::OptimalImage);
	ck_assert_ok(gl->copyFrame(
		texture, allocate(*gl, PixelFormat::P010LE, 3840, 2160, FrameStorage::Buffer),
		kDefaultWaitTimeout));
	writePatternOk(*gl, texture, 4);
	checkPatternOk(*gl, texture, 4);
}
END_TEST

START_TEST(copies_between_buffers_and_textures)
{
	BackendRef gl = openGl();
	for (PixelFormat format : kFormats) {
		Frame a = allocate(*gl, format, 33, 17, FrameStorage::Buffer);
		Frame b = allocate(*gl, format, 33, 17, FrameStorage::OptimalImage);
		Frame c = allocate(*gl, format, 33, 17, FrameStorage::OptimalImage);
		AllocateRequest wide{ format, 33, 17, {}, FrameStorage::Buffer, 256, true };
		auto d = gl->allocate(wide); // other strides: copied row by row
		ck_assert_ok(d);
		writePatternOk(*gl, a, 3);
		ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));  // buffer -> texture
		ck_assert_ok(gl->copyFrame(c, b, kDefaultWaitTimeout));  // texture -> texture
		ck_assert_ok(gl->copyFrame(*d, c, kDefaultWaitTimeout)); // texture -> buffer
		checkPatternOk(*gl, b, 3);
		checkPatternOk(*gl, c, 3);
		checkPatternOk(*gl, *d, 3);
		writePatternOk(*gl, *d, 8);
		ck_assert_ok(gl->copyFrame(a, *d, kDefaultWaitTimeout)); // buffer -> buffer
		checkPatternOk(*gl, a, 8);
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
		writePatternOk(*gl, frame, 1);
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
		checkPatternOk(*gl, frame, 1);
		ck_assert_ok(gl->copyFrame(other, frame, kDefaultWaitTimeout));
		checkPatternOk(*gl, other, 1);
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
			writePatternOk(*gl, a, 21);
			checkPatternOk(*gl, a, 21);
			Frame b = allocate(*gl, PixelFormat::RGBA, 33, 17, storage);
			ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));
			checkPatternOk(*gl, b, 21);
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

// A map whose begin fails part way (its buffer is mapped already: GL_INVALID_OPERATION) undoes
// what it began without writing anything back: the frame keeps its bytes.
START_TEST(a_failed_map_leaves_the_frame_as_it_was)
{
	BackendRef gl = openGl();
	int fdsBefore = test::openFdCount();
	{
		Frame texture =
			allocate(*gl, PixelFormat::NV12, 33, 17, FrameStorage::OptimalImage);
		Frame buffer = allocate(*gl, PixelFormat::NV12, 33, 17, FrameStorage::Buffer);
		writePatternOk(*gl, texture, 5);
		writePatternOk(*gl, buffer, 6);
		// Plane 0 in the texture frame's luma texture, plane 1 in the buffer: the texture
		// is staged first, then the buffer's map fails.
		FrameDesc desc;
		desc.format = PixelFormat::NV12;
		desc.width = 33;
		desc.height = 17;
		desc.numResources = 2;
		desc.resources[0] = texture.resource(0);
		desc.resources[1] = buffer.resource(0);
		desc.numPlanes = 2;
		desc.planes[0] = PlaneView{ 0, 0, 0, 0 };
		desc.planes[1] = PlaneView{ 1, 0, buffer.plane(1).offset, buffer.plane(1).stride };
		auto mixed = Frame::create(desc);
		ck_assert_ok(mixed);
		ck_assert(gl->holds(*mixed));
		{
			auto held = gl->map(buffer, MapAccess::Read, kDefaultWaitTimeout);
			ck_assert_ok(held);
			for (MapAccess access : { MapAccess::Write, MapAccess::ReadWrite })
				ck_assert_error(gl->map(*mixed, access, kDefaultWaitTimeout),
						ErrorCode::Backend, "frame");
			checkPatternOk(*held, buffer, 6); // the other mapping is untouched
		}
		// No zeros were uploaded into the texture, and the buffer was not unmapped twice.
		checkPatternOk(*gl, texture, 5);
		checkPatternOk(*gl, buffer, 6);
		writePatternOk(*gl, *mixed, 7);
		checkPatternOk(*gl, *mixed, 7);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A posting host executor that stops running its queue: calls give up with Timeout within
// their timeout, and the work they gave up on does nothing when it runs late.
START_TEST(a_stalled_executor_times_out)
{
	test::EglGlThread host;
	std::string why = host.start();
	ck_assert_msg(why.empty(), "%s", why.c_str());
	int fdsBefore = test::openFdCount();
	{
		struct Gate {
			std::mutex mutex;
			bool hold = false;
			std::vector<std::function<void()>> held;
		};
		auto gate = std::make_shared<Gate>();
		auto context = Context::create(
			GlContext{ host.display, host.context, {}, GlFlavour::Egl, {}, {} });
		ck_assert_ok(context);
		BackendOpenOptions options;
		options.context = *context;
		options.glExecutor = [&host, gate](std::function<void()> work) {
			std::unique_lock<std::mutex> lock(gate->mutex);
			if (gate->hold) {
				gate->held.push_back(std::move(work));
				return;
			}
			lock.unlock();
			host.post(std::move(work));
		};
		auto opened = openBackend(BackendKind::OpenGL, options);
		ck_assert_ok(opened);
		BackendRef gl = *opened;
		Frame a = allocate(*gl, PixelFormat::RGBA, 33, 17, FrameStorage::Buffer);
		Frame b = allocate(*gl, PixelFormat::RGBA, 33, 17, FrameStorage::OptimalImage);
		writePatternOk(*gl, a, 11);
		{
			std::lock_guard<std::mutex> lock(gate->mutex);
			gate->hold = true;
		}
		// Timeout, not a hang: the executor runs nothing until after these calls.
		ck_assert_error(gl->map(a, MapAccess::Read, std::chrono::milliseconds(100)),
				ErrorCode::Timeout, "executor");
		ck_assert_error(gl->copyFrame(b, a, std::chrono::milliseconds(100)),
				ErrorCode::Timeout, "executor");
		std::vector<std::function<void()>> late;
		{
			std::lock_guard<std::mutex> lock(gate->mutex);
			gate->hold = false;
			late.swap(gate->held);
		}
		ck_assert_uint_eq(late.size(), 2);
		// Run late on the GL thread: had the abandoned map begun, its buffer would stay
		// mapped and the next map fail.
		host.run([&late] {
			for (auto &work : late)
				work();
		});
		late.clear();
		checkPatternOk(*gl, a, 11);
		ck_assert_ok(gl->copyFrame(b, a, kDefaultWaitTimeout));
		checkPatternOk(*gl, b, 11);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A blocking host executor that always posts (no inline shortcut on its own thread): frames
// released on the host's GL thread delete their names there at once instead of waiting for it.
START_TEST(frames_release_on_the_host_thread_with_a_blocking_executor)
{
	test::EglGlThread host;
	std::string why = host.start();
	ck_assert_msg(why.empty(), "%s", why.c_str());
	auto stuck = std::make_shared<std::atomic<bool>>(false);
	auto context = Context::create(
		GlContext{ host.display, host.context, {}, GlFlavour::Egl, {}, {} });
	ck_assert_ok(context);
	BackendOpenOptions options;
	options.context = *context;
	options.glExecutor = [&host, stuck](std::function<void()> work) {
		auto ran = std::make_shared<std::promise<void>>();
		auto done = ran->get_future();
		host.post([work = std::move(work), ran] {
			work();
			ran->set_value();
		});
		// Called on the GL thread, this would wait for itself: give up, and say so.
		if (done.wait_for(std::chrono::seconds(1)) != std::future_status::ready)
			stuck->store(true);
	};
	auto opened = openBackend(BackendKind::OpenGL, options);
	ck_assert_ok(opened);
	BackendRef gl = std::move(*opened);
	std::vector<Frame> frames;
	std::vector<GLuint> buffers, textures;
	for (FrameStorage storage : { FrameStorage::Buffer, FrameStorage::OptimalImage }) {
		Frame frame = allocate(*gl, PixelFormat::NV12, 33, 17, storage);
		writePatternOk(*gl, frame, 2);
		checkPatternOk(*gl, frame, 2);
		for (uint32_t r = 0; r < frame.numResources(); ++r)
			if (const GlBuffer *buffer = frame.resource(r).get<GlBuffer>())
				buffers.push_back(buffer->desc().name);
			else
				textures.push_back(frame.resource(r).get<GlTexture>()->desc().name);
		frames.push_back(std::move(frame));
	}
	auto mapped = gl->map(frames[1], MapAccess::ReadWrite, kDefaultWaitTimeout);
	ck_assert_ok(mapped);
	auto mapping = std::make_unique<CpuMapping>(std::move(*mapped));
	checkPatternOk(*mapping, frames[1], 2);
	fillPatternOk(*mapping, frames[1], 3);
	bool deleted = false;
	host.run([&] {
		// The mapping ends here (its upload runs inline), then the last references go.
		Status unmapped = mapping->unmap();
		deleted = unmapped.ok();
		mapping.reset();
		frames.clear();
		gl.reset();
		for (GLuint name : buffers)
			deleted = deleted && !glIsBuffer(name);
		for (GLuint name : textures)
			deleted = deleted && !glIsTexture(name);
	});
	ck_assert_msg(!stuck->load(), "the executor was called on its own GL thread");
	ck_assert_msg(deleted, "the unmap failed, or the GL names were not deleted at once");
}
END_TEST

int main()
{
	int probed = test::probeBackend(BackendKind::OpenGL);
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
	tcase_add_test(tc, a_failed_map_leaves_the_frame_as_it_was);
	tcase_add_test(tc, a_stalled_executor_times_out);
	tcase_add_test(tc, frames_release_on_the_host_thread_with_a_blocking_executor);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
