// GLMemory and Vulkan image memory <-> frames on llvmpipe/lavapipe; backends in GStreamer contexts.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/planner.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

// Not <gst/check/gstcheck.h>: its Check macros do not mix with the system Check (see
// test_gst_memory.cpp). Last: they include Check, whose fail() breaks later standard headers.
#include "../backends/skip_probe.h"
#include "fd_count.h"
#include "gl_vulkan_fixture.h"

using namespace gpuhandle;
using test::Size;

namespace {

constexpr GstVideoFormat kFormats[] = { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12,
					GST_VIDEO_FORMAT_I420 };
constexpr Size kSizes[] = { { 1, 1 }, { 33, 17 }, { 1920, 1080 } };
constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

uint32_t seedOf(GstVideoFormat format, Size size)
{
	return static_cast<uint32_t>(format) * 7 + size.width + size.height;
}

Frame allocate(Backend &backend, PixelFormat format, Size size, FrameStorage storage)
{
	AllocateRequest request{ format, size.width, size.height, {}, storage, 0, true };
	Result<Frame> frame = backend.allocate(request);
	ck_assert_msg(frame.ok(), "%s %s %ux%u: %s", backendKindName(backend.kind()),
		      pixelFormatName(format), size.width, size.height,
		      frame.ok() ? "" : frame.error().message().c_str());
	return *frame;
}

} // namespace

#if GPUHANDLE_GST_HAVE_GL

// ---- GL ----

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

// GLMemory as GStreamer's GL elements allocate it, written through a CPU map: the frame names
// its textures, and GLMemory wrapping those textures again reads back the same bytes.
START_TEST(gl_memory_buffers_become_frames)
{
	test::GlObjects gl;
	const std::string made = gl.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	void *eglContext = reinterpret_cast<void *>(gst_gl_context_get_gl_context(gl.context));
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = test::videoInfo(format, size);
			const uint32_t seed = seedOf(format, size);
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
			if (format == GST_VIDEO_FORMAT_RGBA) {
				const std::string mapped = test::checkBuffer(*out, info, seed);
				ck_assert_msg(mapped.empty(), "%s", mapped.c_str());
			}
			gst_buffer_unref(*out);
		}
}
END_TEST

// Textures the GL backend allocates in GStreamer's context, written through the backend's
// map, become GLMemory that GStreamer downloads with the same bytes; and back to the textures.
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
			const uint32_t seed = seedOf(format, size) + 1;
			Frame frame = allocate(**backend, test::pixelFormatOf(format), size,
					       FrameStorage::OptimalImage);
			test::writePatternOk(**backend, frame, seed);
			Result<GstBuffer *> buffer =
				gst::glBufferFromFrame(frame, gl.context, info);
			ck_assert_ok(buffer);
			const std::string checked = test::readGlMemories(*buffer, info, seed);
			ck_assert_msg(checked.empty(), "%s", checked.c_str());
			if (format == GST_VIDEO_FORMAT_RGBA) {
				const std::string mapped = test::checkBuffer(*buffer, info, seed);
				ck_assert_msg(mapped.empty(), "%s", mapped.c_str());
			}
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
	Frame frame =
		allocate(**backend, PixelFormat::NV12, { 33, 17 }, FrameStorage::OptimalImage);
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
// textures without a copy (an opaque-fd import), and GStreamer reads the Vulkan bytes.
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
				const uint32_t seed = seedOf(format, size) + 2;
				Frame frame =
					allocate(**vk, test::pixelFormatOf(format), size, storage);
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
				if (format == GST_VIDEO_FORMAT_RGBA) {
					const std::string mapped =
						test::checkBuffer(*buffer, info, seed);
					ck_assert_msg(mapped.empty(), "%s", mapped.c_str());
				}
				gst_buffer_unref(*buffer);
			}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
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
	Frame textures =
		allocate(**backend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::OptimalImage);
	Frame bytes = allocate(**backend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::Buffer);
	ck_assert_error(gst::glBufferFromFrame(bytes, gl.context, rgba), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(gst::glBufferFromFrame(textures, nullptr, rgba), ErrorCode::NullHandle,
			"context");
	ck_assert_error(gst::glBufferFromFrame(textures, gl.context,
					       test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 32, 17 })),
			ErrorCode::FormatMismatch, "info");
	// GLMemory has no v210; gpuhandle does.
	ck_assert_error(gst::glBufferFromFrame(textures, gl.context,
					       test::videoInfo(GST_VIDEO_FORMAT_v210, { 33, 17 })),
			ErrorCode::NotSupported, "info.format");

	// Textures of a context that shares nothing with GStreamer's are refused; a frame of
	// GStreamer's own that a sharing context wraps is taken.
	GstGLContext *alone = gl.newContext(nullptr);
	ck_assert_ptr_nonnull(alone);
	Result<BackendRef> aloneBackend = gst::glBackendFor(alone);
	ck_assert_ok(aloneBackend);
	Frame foreign =
		allocate(**aloneBackend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::OptimalImage);
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

#endif // GPUHANDLE_GST_HAVE_GL

#if GPUHANDLE_GST_HAVE_VULKAN

// ---- Vulkan ----

START_TEST(vulkan_backend_is_cached_per_device)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> first = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(first);
	Result<BackendRef> again = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(again);
	ck_assert_ptr_eq(first->get(), again->get());
	const DeviceInfo &info = (*first)->deviceInfo();
	ck_assert_int_eq(static_cast<int>(info.backend), static_cast<int>(BackendKind::Vulkan));
	ck_assert(!info.name.empty());
	ck_assert(info.id.uuid.has_value());
	Result<const VulkanContext *> native = (*first)->context()->vulkan();
	ck_assert_ok(native);
	ck_assert_ptr_eq((*native)->device, static_cast<void *>(vk.device->device));
	ck_assert_ptr_eq((*native)->instance, static_cast<void *>(vk.instance->instance));
	ck_assert((*native)->deviceUuid == info.id.uuid);
	ck_assert_error(gst::vulkanBackendFor(nullptr), ErrorCode::NullHandle, "device");
}
END_TEST

// Images vulkanupload filled become frames (GStreamer's images, now in GENERAL), and memories
// wrapping the frame's images again download to the same bytes through vulkandownload.
START_TEST(gst_vulkan_images_become_frames)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = test::videoInfo(format, size);
			const uint32_t seed = seedOf(format, size) + 3;
			GstCaps *buffers =
				test::capsOf(info, GST_CAPS_FEATURE_MEMORY_VULKAN_BUFFER);
			GstCaps *images = test::capsOf(info, GST_CAPS_FEATURE_MEMORY_VULKAN_IMAGE);
			GstCaps *system = test::capsOf(info, nullptr);
			GstBuffer *input = test::vulkanPatternBuffer(vk.device, info, seed);
			ck_assert_ptr_nonnull(input);
			std::string why;
			GstBuffer *uploaded = test::throughElement("vulkanupload", input, buffers,
								   images, vk, why);
			ck_assert_msg(uploaded, "%s %ux%u: %s", test::formatName(format),
				      size.width, size.height, why.c_str());
			Result<Frame> frame = gst::frameFromVulkanBuffer(uploaded, info);
			ck_assert_ok(frame);
			for (uint32_t p = 0; p < frame->numPlanes(); p++) {
				auto *mem = reinterpret_cast<GstVulkanImageMemory *>(
					gst_buffer_peek_memory(uploaded, p));
				const VulkanImage *image = frame->resource(p).get<VulkanImage>();
				ck_assert_ptr_nonnull(image);
				ck_assert_uint_eq(image->desc().image,
						  reinterpret_cast<uint64_t>(mem->image));
				ck_assert_ptr_eq(image->desc().device,
						 static_cast<void *>(vk.device->device));
				ck_assert_int_eq(mem->barrier.image_layout,
						 VK_IMAGE_LAYOUT_GENERAL);
			}
			gst_buffer_unref(uploaded); // the frame keeps it
			Result<GstBuffer *> wrapped =
				gst::vulkanBufferFromFrame(*frame, vk.device, info);
			ck_assert_ok(wrapped);
			GstBuffer *downloaded = test::throughElement("vulkandownload", *wrapped,
								     images, system, vk, why);
			ck_assert_msg(downloaded, "%s", why.c_str());
			const std::string checked = test::checkDownloaded(downloaded, info, seed);
			ck_assert_msg(checked.empty(), "%s", checked.c_str());
			gst_buffer_unref(downloaded);
			gst_buffer_unref(*wrapped);
			gst_buffer_unref(input);
			gst_caps_unref(system);
			gst_caps_unref(images);
			gst_caps_unref(buffers);
		}
}
END_TEST

// Images gpuhandle's backend allocates on GStreamer's device, written through its map, become
// Vulkan image memories that vulkandownload reads the same bytes from.
START_TEST(backend_images_become_gst_vulkan_memory)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(backend);
	for (FrameStorage storage : { FrameStorage::OptimalImage, FrameStorage::LinearImage })
		for (GstVideoFormat format : kFormats)
			for (Size size : kSizes) {
				const GstVideoInfo info = test::videoInfo(format, size);
				const uint32_t seed = seedOf(format, size) + 4;
				Frame frame = allocate(**backend, test::pixelFormatOf(format), size,
						       storage);
				test::writePatternOk(**backend, frame, seed);
				Result<GstBuffer *> buffer =
					gst::vulkanBufferFromFrame(frame, vk.device, info);
				ck_assert_ok(buffer);
				GstCaps *images =
					test::capsOf(info, GST_CAPS_FEATURE_MEMORY_VULKAN_IMAGE);
				GstCaps *system = test::capsOf(info, nullptr);
				std::string why;
				GstBuffer *downloaded = test::throughElement(
					"vulkandownload", *buffer, images, system, vk, why);
				ck_assert_msg(downloaded, "%s %s %ux%u: %s",
					      frameStorageName(storage), test::formatName(format),
					      size.width, size.height, why.c_str());
				const std::string checked =
					test::checkDownloaded(downloaded, info, seed);
				ck_assert_msg(checked.empty(), "%s: %s", frameStorageName(storage),
					      checked.c_str());
				Result<Frame> back = gst::frameFromVulkanBuffer(*buffer, info);
				ck_assert_ok(back);
				for (uint32_t p = 0; p < frame.numPlanes(); p++)
					ck_assert_uint_eq(
						back->resource(p).get<VulkanImage>()->desc().image,
						frame.resource(p).get<VulkanImage>()->desc().image);
				gst_buffer_unref(downloaded);
				gst_buffer_unref(*buffer);
				gst_caps_unref(system);
				gst_caps_unref(images);
			}
}
END_TEST

START_TEST(vulkan_conversions_refuse_what_they_cannot_hold)
{
	test::VulkanObjects vk;
	const std::string made = vk.create();
	ck_assert_msg(made.empty(), "%s", made.c_str());
	const GstVideoInfo rgba = test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 33, 17 });
	GstBuffer *system = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&rgba), nullptr);
	ck_assert_error(gst::frameFromVulkanBuffer(system, rgba), ErrorCode::WrongKind,
			"buffer.memory");
	ck_assert_error(gst::frameFromVulkanBuffer(nullptr, rgba), ErrorCode::NullHandle, "buffer");
	gst_buffer_unref(system);

	// GStreamer keeps YUY2 as a full-width R8G8 image; gpuhandle as half-width RGBA.
	const GstVideoInfo yuy2 = test::videoInfo(GST_VIDEO_FORMAT_YUY2, { 34, 18 });
	GstBuffer *packed = gst_buffer_new();
	gst_buffer_append_memory(
		packed, gst_vulkan_image_memory_alloc(
				vk.device, VK_FORMAT_R8G8_UNORM, 34, 18, VK_IMAGE_TILING_OPTIMAL,
				VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
				VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT));
	ck_assert_error(gst::frameFromVulkanBuffer(packed, yuy2), ErrorCode::NotSupported,
			"buffer.memory");
	ck_assert_error(gst::frameFromVulkanBuffer(packed, test::videoInfo(GST_VIDEO_FORMAT_NV12,
									   { 34, 18 })),
			ErrorCode::InvalidArgument, "buffer.memory");
	gst_buffer_unref(packed);

	Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
	ck_assert_ok(backend);
	Frame image =
		allocate(**backend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::OptimalImage);
	Frame bytes = allocate(**backend, PixelFormat::RGBA, { 33, 17 }, FrameStorage::Buffer);
	ck_assert_error(gst::vulkanBufferFromFrame(bytes, vk.device, rgba), ErrorCode::WrongKind,
			"frame");
	ck_assert_error(gst::vulkanBufferFromFrame(image, nullptr, rgba), ErrorCode::NullHandle,
			"device");
	ck_assert_error(
		gst::vulkanBufferFromFrame(image, vk.device,
					   test::videoInfo(GST_VIDEO_FORMAT_RGBA, { 33, 16 })),
		ErrorCode::FormatMismatch, "info");
	ck_assert_error(
		gst::vulkanBufferFromFrame(image, vk.device,
					   test::videoInfo(GST_VIDEO_FORMAT_v210, { 33, 17 })),
		ErrorCode::NotSupported, "info.format");
	Frame yuyv =
		allocate(**backend, PixelFormat::YUYV422, { 34, 18 }, FrameStorage::OptimalImage);
	ck_assert_error(gst::vulkanBufferFromFrame(yuyv, vk.device, yuy2), ErrorCode::NotSupported,
			"info.format");

	// An image of another VkDevice (gpuhandle's own) cannot be GStreamer's device's memory.
	Result<BackendRef> own = openBackend(BackendKind::Vulkan);
	ck_assert_ok(own);
	Frame foreign = allocate(**own, PixelFormat::RGBA, { 33, 17 }, FrameStorage::OptimalImage);
	ck_assert_error(gst::vulkanBufferFromFrame(foreign, vk.device, rgba),
			ErrorCode::DeviceMismatch, "frame");
}
END_TEST

START_TEST(ensure_vulkan_device_makes_one_for_a_lone_element)
{
	GstElement *element = gst_element_factory_make("fakesink", nullptr);
	ck_assert_ptr_nonnull(element);
	GstVulkanInstance *instance = nullptr;
	GstVulkanDevice *device = nullptr;
	ck_assert_ok(gst::ensureVulkanDevice(element, &instance, &device));
	ck_assert_ptr_nonnull(instance);
	ck_assert_ptr_nonnull(device);
	GstVulkanDevice *first = device;
	ck_assert_ok(gst::ensureVulkanDevice(element, &instance, &device));
	ck_assert_ptr_eq(device, first);
	ck_assert_ok(gst::vulkanBackendFor(device));
	ck_assert_error(gst::ensureVulkanDevice(element, nullptr, &device), ErrorCode::NullHandle,
			"element");
	gst_object_unref(device);
	gst_object_unref(instance);
	gst_object_unref(element);
}
END_TEST

#endif // GPUHANDLE_GST_HAVE_VULKAN

namespace {

// Probes run in a child, so that no driver thread exists when Check forks each test.
#if GPUHANDLE_GST_HAVE_GL
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

#endif // GPUHANDLE_GST_HAVE_GL

#if GPUHANDLE_GST_HAVE_VULKAN
std::string probeVulkan()
{
	gst_init(nullptr, nullptr);
	test::VulkanObjects vk;
	if (std::string why = vk.create(); !why.empty())
		return "GStreamer Vulkan: " + why;
	if (!gst_element_factory_find("vulkanupload") ||
	    !gst_element_factory_find("vulkandownload"))
		return "GStreamer's vulkanupload and vulkandownload elements are not installed";
	Result<BackendRef> backend = gst::vulkanBackendFor(vk.device);
	return backend ? std::string() : "GStreamer Vulkan: " + backend.error().message();
}
#endif // GPUHANDLE_GST_HAVE_VULKAN

} // namespace

int main(int argc, char **argv)
{
	if (!std::getenv("VK_ICD_FILENAMES") && access(kLavapipeIcd, R_OK) == 0)
		setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
#if GPUHANDLE_GST_HAVE_GL
	[[maybe_unused]] const bool gl = test::probeInChild(probeGl) == 0;
	[[maybe_unused]] const bool crossApi = gl && test::probeInChild(probeCrossApi) == 0;
#else
	[[maybe_unused]] const bool gl = false, crossApi = false;
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	[[maybe_unused]] const bool vulkan = test::probeInChild(probeVulkan) == 0;
#else
	[[maybe_unused]] const bool vulkan = false;
#endif
	if (!gl && !vulkan) {
		std::printf(
			"SKIP: neither GStreamer GL (EGL) nor GStreamer Vulkan is built or works "
			"here (GL: %d, Vulkan: %d in this build)\n",
			GPUHANDLE_GST_HAVE_GL, GPUHANDLE_GST_HAVE_VULKAN);
		return 77;
	}
	gst_init(&argc, &argv);
	// gst_check_init() makes criticals and warnings fatal; so does this.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-glvulkan");
	// One case per test, so that CK_RUN_CASE=<test> runs one.
	[[maybe_unused]] auto add = [s](const TTest *test) {
		TCase *tc = tcase_create(test->name);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, test);
		suite_add_tcase(s, tc);
	};
#if GPUHANDLE_GST_HAVE_GL
	if (gl) {
		add(gl_backend_is_cached_per_context);
		add(gl_memory_buffers_become_frames);
		add(gl_backend_textures_become_gl_memory);
		add(gl_sync_meta_and_release_gate_follow_the_buffer);
		add(gl_conversions_refuse_what_they_cannot_hold);
		add(ensure_gl_context_makes_one_for_a_lone_element);
	}
	if (crossApi)
		add(vulkan_frames_reach_gst_gl_without_copy);
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	if (vulkan) {
		add(vulkan_backend_is_cached_per_device);
		add(gst_vulkan_images_become_frames);
		add(backend_images_become_gst_vulkan_memory);
		add(vulkan_conversions_refuse_what_they_cannot_hold);
		add(ensure_vulkan_device_makes_one_for_a_lone_element);
	}
#endif
	return test::runSuite(s);
}
