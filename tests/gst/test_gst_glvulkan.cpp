// GLMemory <-> frames on llvmpipe (Vulkan frames of lavapipe too); the GL backend in GStreamer.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/planner.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

// Not <gst/check/gstcheck.h>: its Check macros do not mix with the system Check (see
// test_gst_memory.cpp). Last: they include Check, whose fail() breaks later standard headers.
#include "../backends/skip_probe.h"
#include "fd_count.h"
#include "gl_fixture.h"

using namespace gpuhandle;
using test::Size;

#if GPUHANDLE_GST_HAVE_GL

namespace {

constexpr GstVideoFormat kFormats[] = { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12,
					GST_VIDEO_FORMAT_I420 };
constexpr Size kSizes[] = { { 1, 1 }, { 33, 17 }, { 1920, 1080 } };
// 4:2:0 at odd heights: the luma plane's rows are not twice the chroma plane's.
constexpr GstVideoFormat kFormats420[] = { GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420 };
constexpr Size kOddSizes[] = { { 64, 1 }, { 33, 17 }, { 64, 15 } };

} // namespace

// One backend per GStreamer context, working inside that context's EGL context.
START_TEST(gl_backend_is_cached_per_context)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> first = gst::glBackendFor(gl.context);
	ck_assert_ok(first);
	Result<BackendRef> again = gst::glBackendFor(gl.context);
	ck_assert_ok(again);
	ck_assert_ptr_eq(first->get(), again->get());
	const DeviceInfo &info = (*first)->deviceInfo();
	ck_assert_int_eq(static_cast<int>(info.backend), static_cast<int>(BackendKind::OpenGL));
	ck_assert(!info.name.empty());
	ck_assert(!info.driverVersion.empty());
	Result<const GlContext *> native = (*first)->context()->opengl();
	ck_assert_ok(native);
	ck_assert_ptr_eq((*native)->context,
			 reinterpret_cast<void *>(gst_gl_context_get_gl_context(gl.context)));
	ck_assert_ptr_nonnull((*native)->display);
	ck_assert((*first)->supportsFormat(PixelFormat::NV12, FrameStorage::OptimalImage));

	GstGLContext *other = gl.newContext(nullptr);
	ck_assert_ptr_nonnull(other);
	Result<BackendRef> second = gst::glBackendFor(other);
	ck_assert_ok(second);
	ck_assert_ptr_ne(second->get(), first->get());
	gst_object_unref(other); // the backend keeps its own reference
	ck_assert_ok(gst::glBackendFor(other));
	ck_assert_error(gst::glBackendFor(nullptr), ErrorCode::NullHandle, "context");
}
END_TEST

// GLMemory of GStreamer's GL buffer pool, written through a CPU map: the frame names its
// textures (uploaded), and GLMemory wrapping those textures again is laid out as the pool's and
// reads back the same bytes, from the textures and through GStreamer's download.
START_TEST(gl_memory_buffers_become_frames)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	void *eglContext = reinterpret_cast<void *>(gst_gl_context_get_gl_context(gl.context));
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = test::videoInfo(format, size);
			const uint32_t seed = test::seedOf(format, size);
			GstBuffer *buffer = test::glPatternBuffer(gl.context, info, seed);
			ck_assert_ptr_nonnull(buffer);
			Result<Frame> frame = gst::frameFromGlBuffer(buffer, info);
			ck_assert_msg(frame.ok(), "%s %ux%u: %s", test::formatName(format),
				      size.width, size.height,
				      frame.ok() ? "" : frame.error().message().c_str());
			ck_assert_uint_eq(frame->numResources(), GST_VIDEO_INFO_N_PLANES(&info));
			for (uint32_t p = 0; p < frame->numPlanes(); p++) {
				const GlTexture *texture = frame->resource(p).get<GlTexture>();
				ck_assert_ptr_nonnull(texture);
				ck_assert_uint_eq(
					texture->desc().name,
					gst_gl_memory_get_texture_id(test::glMemoryOf(buffer, p)));
				ck_assert_ptr_eq(texture->desc().context, eglContext);
				ck_assert_uint_eq(frame->plane(p).stride, 0);
			}
			gst_buffer_unref(buffer); // the frame keeps it
			Result<GstBuffer *> out = gst::glBufferFromFrame(*frame, gl.context, info);
			ck_assert_ok(out);
			ck_assert_ptr_nonnull(test::glSyncMeta(*out));
			ck_assert_uint_eq(gst_gl_memory_get_texture_id(test::glMemoryOf(*out, 0)),
					  frame->resource(0).get<GlTexture>()->desc().name);
			const std::string checked = test::readGlMemories(*out, info, seed);
			ck_assert_msg(checked.empty(), "%s", checked.c_str());
			const std::string layout = test::checkPoolLayout(gl.context, *out, info);
			ck_assert_msg(layout.empty(), "%s", layout.c_str());
			const std::string downloaded = test::checkGlDownload(*out, info, seed);
			ck_assert_msg(downloaded.empty(), "%s", downloaded.c_str());
			gst_buffer_unref(*out);
		}
}
END_TEST

// Textures the GL backend allocates in GStreamer's context, written through the backend's
// map, become GLMemory laid out as GStreamer's pool lays it out, which GStreamer downloads with
// the same bytes; and back to the textures.
START_TEST(gl_backend_textures_become_gl_memory)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> backend = gst::glBackendFor(gl.context);
	ck_assert_ok(backend);
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = test::videoInfo(format, size);
			const uint32_t seed = test::seedOf(format, size) + 1;
			Frame frame = test::allocate(**backend, test::pixelFormatOf(format), size,
						     FrameStorage::OptimalImage);
			test::writePatternOk(**backend, frame, seed);
			Result<GstBuffer *> buffer =
				gst::glBufferFromFrame(frame, gl.context, info);
			ck_assert_ok(buffer);
			const std::string checked = test::readGlMemories(*buffer, info, seed);
			ck_assert_msg(checked.empty(), "%s", checked.c_str());
			const std::string layout = test::checkPoolLayout(gl.context, *buffer, info);
			ck_assert_msg(layout.empty(), "%s", layout.c_str());
			const std::string downloaded = test::checkGlDownload(*buffer, info, seed);
			ck_assert_msg(downloaded.empty(), "%s", downloaded.c_str());
			Result<Frame> back = gst::frameFromGlBuffer(*buffer, info);
			ck_assert_ok(back);
			for (uint32_t p = 0; p < frame.numPlanes(); p++)
				ck_assert_uint_eq(back->resource(p).get<GlTexture>()->desc().name,
						  frame.resource(p).get<GlTexture>()->desc().name);
			gst_buffer_unref(*buffer);
		}
}
END_TEST

// A GstGLSyncMeta on the buffer becomes the frame's acquire point (a GLsync after it); a
// frame's release gate is signalled once GStreamer frees the GLMemory made over it.
START_TEST(gl_sync_meta_and_release_gate_follow_the_buffer)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	const GstVideoInfo info = test::videoInfo(GST_VIDEO_FORMAT_NV12, { 33, 17 });
	GstBuffer *buffer = test::glPatternBuffer(gl.context, info, 11);
	ck_assert_ptr_nonnull(buffer);
	{
		Result<Frame> plain = gst::frameFromGlBuffer(buffer, info);
		ck_assert_ok(plain);
		ck_assert(plain->acquire().isNoop());
	} // the frame's buffer reference goes, so the buffer is writable again
	GstGLSyncMeta *meta = gst_buffer_add_gl_sync_meta(gl.context, buffer);
	ck_assert_ptr_nonnull(meta);
	gst_gl_sync_meta_set_sync_point(meta, gl.context);
	Result<Frame> synced = gst::frameFromGlBuffer(buffer, info);
	ck_assert_ok(synced);
	ck_assert_int_eq(static_cast<int>(synced->acquire().kind()),
			 static_cast<int>(SyncKind::GlSync));
	ck_assert_ok(synced->acquire().wait(kDefaultWaitTimeout));
	Result<GstBuffer *> out = gst::glBufferFromFrame(*synced, gl.context, info);
	ck_assert_ok(out);
	const std::string checked = test::readGlMemories(*out, info, 11);
	ck_assert_msg(checked.empty(), "%s", checked.c_str());
	gst_buffer_unref(*out);
	gst_buffer_unref(buffer);

	Result<BackendRef> backend = gst::glBackendFor(gl.context);
	ck_assert_ok(backend);
	Frame frame = test::allocate(**backend, PixelFormat::NV12, { 33, 17 },
				     FrameStorage::OptimalImage);
	Result<ReleaseGate> gate = ReleaseGate::create();
	ck_assert_ok(gate);
	frame.setRelease(*gate);
	Result<GstBuffer *> wrapped = gst::glBufferFromFrame(frame, gl.context, info);
	ck_assert_ok(wrapped);
	GstBuffer *copy = gst_buffer_copy(*wrapped); // shares the memories
	gst_buffer_unref(*wrapped);
	ck_assert(!gate->isSignaled());
	gst_buffer_unref(copy);
	ck_assert_ok(gate->released().wait(kDefaultWaitTimeout));
	ck_assert(gate->isSignaled());
}
END_TEST

// The cross-API core: Vulkan images of gpuhandle's own device reach GStreamer's GL context as
// textures without a copy (an opaque-fd import), and GStreamer reads the Vulkan bytes from the
// textures and through its download.
START_TEST(vulkan_frames_reach_gst_gl_without_copy)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> glBackend = gst::glBackendFor(gl.context);
	ck_assert_ok(glBackend);
	Result<BackendRef> vk = openBackend(BackendKind::Vulkan);
	ck_assert_ok(vk);
	const int fdsBefore = test::openFdCount();
	for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (GstVideoFormat format : kFormats)
			for (Size size : kSizes) {
				const GstVideoInfo info = test::videoInfo(format, size);
				const uint32_t seed = test::seedOf(format, size) + 2;
				Frame frame = test::allocate(**vk, test::pixelFormatOf(format),
							     size, storage);
				test::writePatternOk(**vk, frame, seed);
				ImportOptions options;
				options.source = *vk;
				options.allowCopies = false;
				Result<ImportResult> imported =
					importFrame(frame, **glBackend, options);
				ck_assert_msg(
					imported.ok(), "%s %s %ux%u: %s", frameStorageName(storage),
					test::formatName(format), size.width, size.height,
					imported.ok() ? "" : imported.error().message().c_str());
				ck_assert(imported->path.kind() == ExecutionPath::Kind::ZeroCopy);
				ck_assert_int_eq(static_cast<int>(imported->route),
						 static_cast<int>(ImportRoute::OpaqueFd));
				ck_assert_ptr_nonnull(imported->frame.resource(0).get<GlTexture>());
				Result<GstBuffer *> buffer =
					gst::glBufferFromFrame(imported->frame, gl.context, info);
				ck_assert_ok(buffer);
				const std::string checked =
					test::readGlMemories(*buffer, info, seed);
				ck_assert_msg(checked.empty(), "%s: %s", frameStorageName(storage),
					      checked.c_str());
				const std::string downloaded =
					test::checkGlDownload(*buffer, info, seed);
				ck_assert_msg(downloaded.empty(), "%s: %s",
					      frameStorageName(storage), downloaded.c_str());
				gst_buffer_unref(*buffer);
			}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// 4:2:0 of odd heights, whose chroma GStreamer's CPU transfers place by the video info's plane
// offsets: textures of the GL backend, wrapped, are laid out as GStreamer's GL buffer pool lays
// them out, and gldownload and the download it does read them in their memories' bounds.
START_TEST(odd_height_420_textures_reach_gldownload)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> backend = gst::glBackendFor(gl.context);
	ck_assert_ok(backend);
	for (GstVideoFormat format : kFormats420)
		for (Size size : kOddSizes) {
			const GstVideoInfo info = test::videoInfo(format, size);
			const uint32_t seed = test::seedOf(format, size) + 5;
			Frame frame = test::allocate(**backend, test::pixelFormatOf(format), size,
						     FrameStorage::OptimalImage);
			test::writePatternOk(**backend, frame, seed);
			Result<GstBuffer *> buffer =
				gst::glBufferFromFrame(frame, gl.context, info);
			ck_assert_ok(buffer);
			const std::string layout = test::checkPoolLayout(gl.context, *buffer, info);
			ck_assert_msg(layout.empty(), "%s", layout.c_str());
			const std::string element =
				test::checkThroughGlDownload(*buffer, info, seed, gl);
			ck_assert_msg(element.empty(), "%s", element.c_str());
			gst_buffer_unref(*buffer);
			Result<GstBuffer *> again = gst::glBufferFromFrame(frame, gl.context, info);
			ck_assert_ok(again);
			const std::string downloaded = test::checkGlDownload(*again, info, seed);
			ck_assert_msg(downloaded.empty(), "%s", downloaded.c_str());
			gst_buffer_unref(*again);
		}
}
END_TEST

// The same through Vulkan: 4:2:0 images of gpuhandle's Vulkan device at odd heights, imported
// into GStreamer's GL context (optimal and linear), come out of gldownload with every byte.
START_TEST(odd_height_420_vulkan_frames_reach_gldownload)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> glBackend = gst::glBackendFor(gl.context);
	ck_assert_ok(glBackend);
	Result<BackendRef> vk = openBackend(BackendKind::Vulkan);
	ck_assert_ok(vk);
	for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (GstVideoFormat format : kFormats420)
			for (Size size : kOddSizes) {
				const GstVideoInfo info = test::videoInfo(format, size);
				const uint32_t seed = test::seedOf(format, size) + 6;
				Frame frame = test::allocate(**vk, test::pixelFormatOf(format),
							     size, storage);
				test::writePatternOk(**vk, frame, seed);
				ImportOptions options;
				options.source = *vk;
				options.allowCopies = false;
				Result<ImportResult> imported =
					importFrame(frame, **glBackend, options);
				ck_assert_ok(imported);
				Result<GstBuffer *> buffer =
					gst::glBufferFromFrame(imported->frame, gl.context, info);
				ck_assert_ok(buffer);
				const std::string layout =
					test::checkPoolLayout(gl.context, *buffer, info);
				ck_assert_msg(layout.empty(), "%s", layout.c_str());
				const std::string element =
					test::checkThroughGlDownload(*buffer, info, seed, gl);
				ck_assert_msg(element.empty(), "%s: %s", frameStorageName(storage),
					      element.c_str());
				gst_buffer_unref(*buffer);
			}
}
END_TEST

START_TEST(gl_conversions_refuse_what_they_cannot_hold)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	const GstVideoInfo rgba = test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 33, 17 });
	GstBuffer *system = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&rgba), nullptr);
	ck_assert_error(gst::frameFromGlBuffer(system, rgba), ErrorCode::WrongKind,
			"buffer.memory");
	ck_assert_error(gst::frameFromGlBuffer(nullptr, rgba), ErrorCode::NullHandle, "buffer");
	gst_buffer_unref(system);

	// GStreamer keeps YUY2 as a full-width two-channel texture; gpuhandle as half-width RGBA.
	const GstVideoInfo yuy2 = test::videoInfo(GST_VIDEO_FORMAT_YUY2, { 34, 18 });
	GstBuffer *packed = test::glPatternBuffer(gl.context, yuy2, 5);
	ck_assert_ptr_nonnull(packed);
	ck_assert_error(gst::frameFromGlBuffer(packed, yuy2), ErrorCode::NotSupported,
			"buffer.memory");
	// A buffer of three planes is not a one-plane format's.
	const GstVideoInfo i420 = test::videoInfo(GST_VIDEO_FORMAT_I420, { 34, 18 });
	GstBuffer *planar = test::glPatternBuffer(gl.context, i420, 6);
	ck_assert_ptr_nonnull(planar);
	ck_assert_error(gst::frameFromGlBuffer(planar, rgba), ErrorCode::InvalidArgument,
			"buffer.memory");

	Result<BackendRef> backend = gst::glBackendFor(gl.context);
	ck_assert_ok(backend);
	Frame textures = test::allocate(**backend, PixelFormat::RGBA, { 33, 17 },
					FrameStorage::OptimalImage);
	Frame bytes =
		test::allocate(**backend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::Buffer);
	ck_assert_error(gst::glBufferFromFrame(bytes, gl.context, rgba), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(gst::glBufferFromFrame(textures, nullptr, rgba), ErrorCode::NullHandle,
			"context");
	ck_assert_error(gst::glBufferFromFrame(textures, gl.context,
					       test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 32, 17 })),
			ErrorCode::FormatMismatch, "info");
	// GLMemory has no YUV9 (4:1:0; nor v210 before GStreamer 1.24); gpuhandle does.
	ck_assert_error(gst::glBufferFromFrame(textures, gl.context,
					       test::videoInfo(GST_VIDEO_FORMAT_YUV9, { 33, 17 })),
			ErrorCode::NotSupported, "info.format");

	// Textures of a context that shares nothing with GStreamer's are refused; a frame of
	// GStreamer's own that a sharing context wraps is taken.
	GstGLContext *alone = gl.newContext(nullptr);
	ck_assert_ptr_nonnull(alone);
	Result<BackendRef> aloneBackend = gst::glBackendFor(alone);
	ck_assert_ok(aloneBackend);
	Frame foreign = test::allocate(**aloneBackend, PixelFormat::RGBA, { 33, 17 },
				       FrameStorage::OptimalImage);
	ck_assert_error(gst::glBufferFromFrame(foreign, gl.context, rgba),
			ErrorCode::DeviceMismatch, "frame");
	GstGLContext *sharing = gl.newContext(gl.context);
	ck_assert_ptr_nonnull(sharing);
	GstBuffer *shared = test::glPatternBuffer(gl.context, rgba, 9);
	Result<Frame> sharedFrame = gst::frameFromGlBuffer(shared, rgba);
	ck_assert_ok(sharedFrame);
	Result<GstBuffer *> viaSharing = gst::glBufferFromFrame(*sharedFrame, sharing, rgba);
	ck_assert_ok(viaSharing);
	const std::string checked = test::readGlMemories(*viaSharing, rgba, 9);
	ck_assert_msg(checked.empty(), "%s", checked.c_str());
	ck_assert_error(gst::glBufferFromFrame(*sharedFrame, alone, rgba),
			ErrorCode::DeviceMismatch, "frame");
	gst_buffer_unref(*viaSharing);
	gst_buffer_unref(shared);
	gst_object_unref(sharing);
	gst_object_unref(alone);
	gst_buffer_unref(planar);
	gst_buffer_unref(packed);
}
END_TEST

// An element with no GL neighbours gets a display and a context of its own, once.
START_TEST(ensure_gl_context_makes_one_for_a_lone_element)
{
	GstElement *element = gst_element_factory_make("fakesink", nullptr);
	ck_assert_ptr_nonnull(element);
	GstGLDisplay *display = nullptr;
	GstGLContext *other = nullptr;
	GstGLContext *context = nullptr;
	ck_assert_ok(gst::ensureGlContext(element, GST_PAD_SINK, &display, &other, &context));
	ck_assert_ptr_nonnull(display);
	ck_assert_ptr_nonnull(context);
	GstGLContext *first = context;
	ck_assert_ok(gst::ensureGlContext(element, GST_PAD_SINK, &display, &other, &context));
	ck_assert_ptr_eq(context, first);
	ck_assert_ok(gst::glBackendFor(context));
	ck_assert_error(gst::ensureGlContext(nullptr, GST_PAD_SINK, &display, &other, &context),
			ErrorCode::NullHandle, "element");
	gst_object_unref(context);
	if (other)
		gst_object_unref(other);
	gst_object_unref(display);
	gst_object_unref(element);
}
END_TEST

namespace {

// Probes run in a child, so that no driver thread exists when Check forks each test.
std::string probeGl()
{
	gst_init(nullptr, nullptr);
	test::GlObjects gl;
	if (std::string why = gl.create(); !why.empty())
		return "GStreamer GL: " + why;
	Result<BackendRef> backend = gst::glBackendFor(gl.context);
	return backend ? std::string() : "GStreamer GL: " + backend.error().message();
}

// The cross-API test also needs gpuhandle's own Vulkan device and GL's opaque-fd import.
std::string probeCrossApi()
{
	gst_init(nullptr, nullptr);
	test::GlObjects gl;
	if (std::string why = gl.create(); !why.empty())
		return why;
	Result<BackendRef> glBackend = gst::glBackendFor(gl.context);
	Result<BackendRef> vk = openBackend(BackendKind::Vulkan);
	if (!glBackend || !vk)
		return "no GL or Vulkan backend";
	for (ImportRoute route : (*glBackend)->capabilities().routes)
		if (route == ImportRoute::OpaqueFd)
			return {};
	return "the GL context has no GL_EXT_memory_object_fd";
}

} // namespace

#endif // GPUHANDLE_GST_HAVE_GL

int main(int argc, char **argv)
{
#if GPUHANDLE_GST_HAVE_GL
	constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
	if (!std::getenv("VK_ICD_FILENAMES") && access(kLavapipeIcd, R_OK) == 0)
		setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
	if (test::probeInChild(probeGl) != 0)
		return 77; // the probe said why
	const bool crossApi = test::probeInChild(probeCrossApi) == 0;
	gst_init(&argc, &argv);
	// gst_check_init() makes criticals and warnings fatal; so does this.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-gl");
	// One case per test, so that CK_RUN_CASE=<test> runs one.
	auto add = [s](const TTest *test) {
		TCase *tc = tcase_create(test->name);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, test);
		suite_add_tcase(s, tc);
	};
	add(gl_backend_is_cached_per_context);
	add(gl_memory_buffers_become_frames);
	add(gl_backend_textures_become_gl_memory);
	add(gl_sync_meta_and_release_gate_follow_the_buffer);
	add(gl_conversions_refuse_what_they_cannot_hold);
	add(ensure_gl_context_makes_one_for_a_lone_element);
	if (crossApi)
		add(vulkan_frames_reach_gst_gl_without_copy);
	GstElementFactory *gldownload = gst_element_factory_find("gldownload");
	if (gldownload) {
		add(odd_height_420_textures_reach_gldownload);
		if (crossApi)
			add(odd_height_420_vulkan_frames_reach_gldownload);
		gst_object_unref(gldownload);
	} else {
		std::printf("SKIP: GStreamer's gldownload element is not installed\n");
	}
	return test::runSuite(s);
#else
	(void)argc;
	(void)argv;
	std::printf("SKIP: GStreamer GL (gstreamer-gl-1.0 with EGL) is not built here\n");
	return 77;
#endif
}
