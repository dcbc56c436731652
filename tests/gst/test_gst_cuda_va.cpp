// GstCudaMemory and GstVaMemory -> frames, GStreamer's CUDA context and VA display as backends:
// types and refusals run anywhere; round trips run where a CUDA or VA device is (else skipped).
#include <gst/gpuhandle/gstgpuhandleconfig.h>

#if GPUHANDLE_GST_HAVE_CUDA
#include <gst/gpuhandle/gstgpuhandlecuda.hpp>
#endif
#if GPUHANDLE_GST_HAVE_VA
#include <gst/gpuhandle/gstgpuhandleva.hpp>
#endif

#include <gpuhandle/backends/backend.h>

#include <cstdio>
#include <string>
#include <unistd.h>

#include <gst/allocators/allocators.h>
#include <gst/video/video.h>

// GStreamer's CUDA and VA libraries are unstable API: their headers warn without this.
#define GST_USE_UNSTABLE_API 1
#if GPUHANDLE_GST_HAVE_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#endif
#if GPUHANDLE_GST_HAVE_VA
#include <gst/va/gstva.h>
#endif

// Not <gst/check/gstcheck.h>: its Check macros do not mix with the system Check (see
// test_gst_memory.cpp). Last: they include Check, whose fail() breaks later standard headers.
// clang-format off
#include "fd_count.h"
#include "../backends/frame_pattern.h"
#include "../backends/skip_probe.h"
// clang-format on

using namespace gpuhandle;

namespace {

struct Size {
	int width = 0;
	int height = 0;
};

GstVideoInfo videoInfo(GstVideoFormat format, Size size)
{
	GstVideoInfo info;
	ck_assert(gst_video_info_set_format(&info, format, static_cast<guint>(size.width),
					    static_cast<guint>(size.height)));
	return info;
}

// A system-memory buffer big enough for `info`.
GstBuffer *systemBuffer(const GstVideoInfo &info)
{
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	ck_assert_ptr_nonnull(buffer);
	return buffer;
}

#if GPUHANDLE_GST_HAVE_CUDA
Frame cpuFrame(PixelFormat format, uint32_t width, uint32_t height)
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	ck_assert_ok(cpu);
	AllocateRequest request{ format, width, height, {}, FrameStorage::Buffer, 0, false };
	Result<Frame> frame = (*cpu)->allocate(request);
	ck_assert_ok(frame);
	return *frame;
}
#endif

// Any GstObject that is neither a CUDA context nor a VA display.
GstObject *otherObject()
{
	GstElement *bin = gst_bin_new(nullptr);
	ck_assert_ptr_nonnull(bin);
	return reinterpret_cast<GstObject *>(gst_object_ref_sink(bin));
}

} // namespace

#if GPUHANDLE_GST_HAVE_CUDA

// ---- CUDA, anywhere ----

START_TEST(cuda_types_are_registered)
{
	ck_assert(g_type_is_a(gst_cuda_context_get_type(), GST_TYPE_OBJECT));
	ck_assert(g_type_is_a(gst_cuda_allocator_get_type(), GST_TYPE_ALLOCATOR));
	ck_assert_str_eq(GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, "memory:CUDAMemory");
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
	GstBuffer *buffer = systemBuffer(info);
	ck_assert(!gst_is_cuda_memory(gst_buffer_peek_memory(buffer, 0)));
	gst_buffer_unref(buffer);
}
END_TEST

// Refusals that need no driver: nothing here loads libcuda through GStreamer.
START_TEST(cuda_conversions_refuse_what_they_cannot_hold)
{
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
	ck_assert_error(gst::frameFromCudaBuffer(nullptr, info), ErrorCode::NullHandle, "buffer");
	GstBuffer *system = systemBuffer(info);
	Result<Frame> wrong = gst::frameFromCudaBuffer(system, info);
	ck_assert_error(wrong, ErrorCode::WrongKind, "buffer.memory");
	ck_assert(wrong.error().message().find("GstCudaMemory") != std::string::npos);
	gst_buffer_unref(system);
	GstBuffer *empty = gst_buffer_new();
	ck_assert_error(gst::frameFromCudaBuffer(empty, info), ErrorCode::InvalidArgument,
			"buffer.memory");
	gst_buffer_unref(empty);

	ck_assert_error(gst::cudaBackendFor(nullptr), ErrorCode::NullHandle, "context");
	GstObject *other = otherObject();
	auto *notContext = reinterpret_cast<GstCudaContext *>(other);
	ck_assert_error(gst::cudaBackendFor(notContext), ErrorCode::InvalidArgument, "context");
	// A context object that wraps no CUcontext (made without gst_cuda_context_new).
	auto *bare = static_cast<GstCudaContext *>(
		gst_object_ref_sink(g_object_new(gst_cuda_context_get_type(), nullptr)));
	ck_assert_ptr_null(gst_cuda_context_get_handle(bare));
	ck_assert_error(gst::cudaBackendFor(bare), ErrorCode::InvalidState, "context");

	const Frame frame = cpuFrame(PixelFormat::NV12, 64, 32);
	ck_assert_error(gst::cudaBufferFromFrame(frame, nullptr, info), ErrorCode::NullHandle,
			"context");
	ck_assert_error(gst::cudaBufferFromFrame(frame, notContext, info),
			ErrorCode::InvalidArgument, "context");
	Result<GstBuffer *> wrapped = gst::cudaBufferFromFrame(frame, bare, info);
	ck_assert_error(wrapped, ErrorCode::NotSupported, "context");
	ck_assert(wrapped.error().message().find("1.24") != std::string::npos);
	gst_object_unref(bare);
	gst_object_unref(other);
}
END_TEST

// Where libcuda is absent, GStreamer says so and gpuhandle's backend answers NotSupported.
START_TEST(cuda_without_a_driver_says_why)
{
	Result<BackendRef> opened = openBackend(BackendKind::Cuda);
	const bool loaded = gst_cuda_load_library();
	if (!opened) {
		ck_assert_int_eq(static_cast<int>(opened.error().code()),
				 static_cast<int>(ErrorCode::NotSupported));
		ck_assert(!opened.error().message().empty());
		std::printf("gpuhandle's CUDA backend: %s\n", opened.error().message().c_str());
	}
	// Both load the same libcuda.so.1: where GStreamer cannot, neither can gpuhandle.
	ck_assert(loaded || !opened.ok());
}
END_TEST

// ---- CUDA, on a device ----

namespace {

// GST_MAP_CUDA lies past GstMapFlags' named values, as GStreamer defines it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
GstMapFlags cudaWriteMap()
{
	return static_cast<GstMapFlags>(GST_MAP_WRITE | GST_MAP_CUDA);
}
#pragma GCC diagnostic pop

// A buffer of one GstCudaMemory of `info` on `context`.
GstBuffer *cudaBuffer(GstCudaContext *context, const GstVideoInfo &info)
{
	gst_cuda_memory_init_once();
	GstAllocator *allocator = gst_allocator_find(GST_CUDA_MEMORY_TYPE_NAME);
	ck_assert_ptr_nonnull(allocator);
	GstMemory *mem = gst_cuda_allocator_alloc(reinterpret_cast<GstCudaAllocator *>(allocator),
						  context, &info);
	gst_object_unref(allocator);
	ck_assert_ptr_nonnull(mem);
	GstBuffer *buffer = gst_buffer_new();
	gst_buffer_append_memory(buffer, mem);
	return buffer;
}

// The rows of a CPU map of a CUDA memory, at the planes of the memory's own info.
struct CudaRows {
	const GstVideoInfo &laid;
	uint8_t *data;
	uint8_t *operator()(uint32_t plane, uint32_t row) const
	{
		return data + GST_VIDEO_INFO_PLANE_OFFSET(&laid, plane) +
		       static_cast<size_t>(row) *
			       static_cast<size_t>(GST_VIDEO_INFO_PLANE_STRIDE(&laid, plane));
	}
};

} // namespace

START_TEST(cuda_backend_is_cached_per_context)
{
	GstCudaContext *context = gst_cuda_context_new(0);
	ck_assert_ptr_nonnull(context);
	Result<BackendRef> first = gst::cudaBackendFor(context);
	ck_assert_ok(first);
	Result<BackendRef> again = gst::cudaBackendFor(context);
	ck_assert_ok(again);
	ck_assert_ptr_eq(first->get(), again->get());
	ck_assert_int_eq(static_cast<int>((*first)->kind()), static_cast<int>(BackendKind::Cuda));
	Result<const CudaContext *> native = (*first)->context()->cuda();
	ck_assert_ok(native);
	ck_assert_ptr_eq((*native)->context, gst_cuda_context_get_handle(context));
	gst_object_unref(context); // the backends hold their own reference
	ck_assert(!(*first)->deviceInfo().name.empty());
}
END_TEST

START_TEST(cuda_memory_buffers_become_frames)
{
	GstCudaContext *context = gst_cuda_context_new(0);
	ck_assert_ptr_nonnull(context);
	Result<BackendRef> backend = gst::cudaBackendFor(context);
	ck_assert_ok(backend);
	const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
					   GST_VIDEO_FORMAT_RGBA };
	const Size sizes[] = { { 33, 17 }, { 1920, 1080 } };
	uint32_t seed = 1;
	for (GstVideoFormat format : formats) {
		for (Size size : sizes) {
			const GstVideoInfo info = videoInfo(format, size);
			GstBuffer *buffer = cudaBuffer(context, info);
			GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
			const GstVideoInfo &laid = reinterpret_cast<GstCudaMemory *>(mem)->info;
			Result<Frame> first = gst::frameFromCudaBuffer(buffer, info);
			ck_assert_ok(first);
			// GStreamer -> gpuhandle: a CPU writer, then the CUDA map uploads.
			GstMapInfo map;
			ck_assert(gst_memory_map(mem, &map, GST_MAP_WRITE));
			test::fillRows(*first, seed, CudaRows{ laid, map.data });
			gst_memory_unmap(mem, &map);
			Result<Frame> frame = gst::frameFromCudaBuffer(buffer, info);
			ck_assert_ok(frame);
			ck_assert_int_eq(frame->numResources(), 1);
			ck_assert_ptr_nonnull(frame->resource(0).get<CudaPitched2D>());
			Result<Frame> imported =
				(*backend)->importFrame(*frame, ImportRoute::Direct);
			ck_assert_ok(imported);
			test::checkPatternOk(**backend, *imported, seed);
			// gpuhandle -> GStreamer: a CUDA writer marks the memory, the CPU map
			// downloads.
			test::writePatternOk(**backend, *imported, seed + 1);
			ck_assert(gst_memory_map(mem, &map, cudaWriteMap()));
			gst_memory_unmap(mem, &map);
			ck_assert(gst_memory_map(mem, &map, GST_MAP_READ));
			const std::string differs =
				test::checkRows(*first, seed + 1, CudaRows{ laid, map.data });
			gst_memory_unmap(mem, &map);
			ck_assert_msg(differs.empty(), "%s", differs.c_str());
			gst_buffer_unref(buffer);
			seed += 2;
		}
	}
	// The frames hold the buffers, the buffers their memories and the context.
	gst_object_unref(context);
}
END_TEST

START_TEST(cuda_buffer_from_frame_is_not_supported_on_1_22)
{
	GstCudaContext *context = gst_cuda_context_new(0);
	ck_assert_ptr_nonnull(context);
	Result<BackendRef> backend = gst::cudaBackendFor(context);
	ck_assert_ok(backend);
	AllocateRequest request{ PixelFormat::NV12, 64, 32, {}, FrameStorage::Buffer, 0, false };
	Result<Frame> frame = (*backend)->allocate(request);
	ck_assert_ok(frame);
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
	Result<GstBuffer *> buffer = gst::cudaBufferFromFrame(*frame, context, info);
	ck_assert_error(buffer, ErrorCode::NotSupported, "context");
	gst_object_unref(context);
}
END_TEST

#endif // GPUHANDLE_GST_HAVE_CUDA

#if GPUHANDLE_GST_HAVE_VA

// ---- VA, anywhere ----

START_TEST(va_types_are_registered)
{
	ck_assert(g_type_is_a(gst_va_display_get_type(), GST_TYPE_OBJECT));
	ck_assert(g_type_is_a(gst_va_allocator_get_type(), GST_TYPE_ALLOCATOR));
	ck_assert(g_type_is_a(gst_va_dmabuf_allocator_get_type(), GST_TYPE_DMABUF_ALLOCATOR));
	ck_assert_str_eq(GST_CAPS_FEATURE_MEMORY_VA, "memory:VAMemory");
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
	GstBuffer *buffer = systemBuffer(info);
	ck_assert_uint_eq(gst_va_buffer_get_surface(buffer), VA_INVALID_ID);
	ck_assert_ptr_null(gst_va_buffer_peek_display(buffer));
	gst_buffer_unref(buffer);
}
END_TEST

START_TEST(va_conversions_refuse_what_they_cannot_hold)
{
	const int fds = test::openFdCount();
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
	ck_assert_error(gst::frameFromVaBuffer(nullptr, info), ErrorCode::NullHandle, "buffer");
	GstBuffer *system = systemBuffer(info);
	Result<Frame> wrong = gst::frameFromVaBuffer(system, info);
	ck_assert_error(wrong, ErrorCode::WrongKind, "buffer.memory");
	ck_assert(wrong.error().message().find("VA surface") != std::string::npos);
	gst_buffer_unref(system);
	GstBuffer *empty = gst_buffer_new();
	ck_assert_error(gst::frameFromVaBuffer(empty, info), ErrorCode::WrongKind, "buffer.memory");
	gst_buffer_unref(empty);
	// A DMA-BUF memory that GStreamer's VA allocator did not export names no surface.
	const gsize size = GST_VIDEO_INFO_SIZE(&info);
	UniqueFd memfd = test::makeMemfd(size);
	ck_assert_int_ge(memfd.get(), 0);
	GstAllocator *dmabuf = gst_dmabuf_allocator_new();
	GstBuffer *foreign = gst_buffer_new();
	gst_buffer_append_memory(foreign,
				 gst_dmabuf_allocator_alloc(dmabuf, memfd.release(), size));
	ck_assert_error(gst::frameFromVaBuffer(foreign, info), ErrorCode::WrongKind,
			"buffer.memory");
	gst_buffer_unref(foreign);
	gst_object_unref(dmabuf);
	ck_assert_int_eq(test::openFdCount(), fds);

	ck_assert_error(gst::vaBackendFor(nullptr), ErrorCode::NullHandle, "display");
	GstObject *other = otherObject();
	ck_assert_error(gst::vaBackendFor(reinterpret_cast<GstVaDisplay *>(other)),
			ErrorCode::InvalidArgument, "display");
	gst_object_unref(other);
}
END_TEST

// ---- VA, on a device ----

namespace {
std::string gRenderNode; // the node findVaNode() chose
} // namespace

START_TEST(va_backend_is_cached_per_display)
{
	GstVaDisplay *display = gst_va_display_drm_new_from_path(gRenderNode.c_str());
	ck_assert_ptr_nonnull(display);
	Result<BackendRef> first = gst::vaBackendFor(display);
	ck_assert_ok(first);
	Result<BackendRef> again = gst::vaBackendFor(display);
	ck_assert_ok(again);
	ck_assert_ptr_eq(first->get(), again->get());
	Result<const VaApiContext *> native = (*first)->context()->vaapi();
	ck_assert_ok(native);
	ck_assert_ptr_eq((*native)->display, gst_va_display_get_va_dpy(display));
	ck_assert((*native)->renderNode.has_value());
	gst_object_unref(display);
	ck_assert_int_eq(static_cast<int>((*first)->kind()), static_cast<int>(BackendKind::VaApi));
}
END_TEST

START_TEST(va_memory_buffers_become_frames)
{
	GstVaDisplay *display = gst_va_display_drm_new_from_path(gRenderNode.c_str());
	ck_assert_ptr_nonnull(display);
	Result<BackendRef> backend = gst::vaBackendFor(display);
	ck_assert_ok(backend);
	const Size sizes[] = { { 64, 32 }, { 1920, 1080 } };
	uint32_t seed = 3;
	for (Size size : sizes) {
		GArray *formats = g_array_new(FALSE, FALSE, sizeof(GstVideoFormat));
		const GstVideoFormat nv12 = GST_VIDEO_FORMAT_NV12;
		g_array_append_vals(formats, &nv12, 1);
		GstAllocator *allocator = gst_va_allocator_new(display, formats);
		ck_assert_ptr_nonnull(allocator);
		GstVideoInfo info = videoInfo(nv12, size);
		ck_assert(gst_va_allocator_set_format(allocator, &info, 0, GST_VA_FEATURE_AUTO));
		GstBuffer *buffer = gst_buffer_new();
		ck_assert(gst_va_allocator_setup_buffer(allocator, buffer));
		gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, nv12,
					       GST_VIDEO_INFO_WIDTH(&info),
					       GST_VIDEO_INFO_HEIGHT(&info),
					       GST_VIDEO_INFO_N_PLANES(&info), info.offset,
					       info.stride);
		Result<Frame> frame = gst::frameFromVaBuffer(buffer, info);
		ck_assert_ok(frame);
		ck_assert_ptr_nonnull(frame->resource(0).get<VaSurface>());
		ck_assert_uint_eq(frame->resource(0).get<VaSurface>()->desc().surface,
				  gst_va_buffer_get_surface(buffer));
		// GStreamer's CPU writer, read back through gpuhandle's VA backend.
		GstVideoFrame mapped;
		ck_assert(gst_video_frame_map(&mapped, &info, buffer, GST_MAP_WRITE));
		test::fillRows(*frame, seed, [&](uint32_t p, uint32_t y) {
			return static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&mapped, p)) +
			       static_cast<size_t>(y) *
				       static_cast<size_t>(
					       GST_VIDEO_FRAME_PLANE_STRIDE(&mapped, p));
		});
		gst_video_frame_unmap(&mapped);
		Result<Frame> imported = (*backend)->importFrame(*frame, ImportRoute::Direct);
		ck_assert_ok(imported);
		test::checkPatternOk(**backend, *imported, seed);
		gst_buffer_unref(buffer);
		gst_object_unref(allocator);
		seed++;
	}
	gst_object_unref(display);
}
END_TEST

#endif // GPUHANDLE_GST_HAVE_VA

namespace {

// Probes run in a child, so that no driver thread exists when Check forks each test.
#if GPUHANDLE_GST_HAVE_CUDA
std::string probeCuda()
{
	gst_init(nullptr, nullptr);
	// GStreamer's CUDA calls abort where libcuda is absent: its loader must succeed first.
	if (!gst_cuda_load_library())
		return "GStreamer's CUDA library could not load libcuda (no NVIDIA driver here)";
	GstCudaContext *context = gst_cuda_context_new(0);
	if (!context)
		return "GStreamer could not make a CUDA context on device 0 (no CUDA device)";
	Result<BackendRef> backend = gst::cudaBackendFor(context);
	gst_object_unref(context);
	return backend ? std::string() : "gpuhandle CUDA backend: " + backend.error().message();
}
#endif

#if GPUHANDLE_GST_HAVE_VA
// Whether GStreamer's VA library opens `path` and gpuhandle's VA-API backend works on it.
std::string probeVaNode(const std::string &path)
{
	gst_init(nullptr, nullptr);
	GstVaDisplay *display = gst_va_display_drm_new_from_path(path.c_str());
	if (!display)
		return "GStreamer's VA library found no usable VA driver for " + path;
	Result<BackendRef> backend = gst::vaBackendFor(display);
	gst_object_unref(display);
	return backend ? std::string()
		       : "gpuhandle VA-API backend on " + path + ": " + backend.error().message();
}

// The first render node that passes probeVaNode (each probed in a child), or empty.
std::string findVaNode()
{
	bool any = false;
	for (int minor = 128; minor < 136; minor++) {
		const std::string path = "/dev/dri/renderD" + std::to_string(minor);
		if (access(path.c_str(), R_OK | W_OK) != 0)
			continue;
		any = true;
		if (test::probeInChild([&path] { return probeVaNode(path); }) == 0)
			return path;
	}
	if (!any)
		std::printf("SKIP: no DRM render node (/dev/dri/renderD128..135) is here\n");
	return {};
}
#endif

} // namespace

int main(int argc, char **argv)
{
#if GPUHANDLE_GST_HAVE_CUDA
	[[maybe_unused]] const bool cuda = test::probeInChild(probeCuda) == 0;
	if (!cuda)
		std::printf(
			"The CUDA tests that need a device are skipped (the reason is above).\n");
#else
	[[maybe_unused]] const bool cuda = false;
#endif
#if GPUHANDLE_GST_HAVE_VA
	gRenderNode = findVaNode();
	[[maybe_unused]] const bool va = !gRenderNode.empty();
	if (!va)
		std::printf("The VA tests that need a device are skipped (the reason is above).\n");
#else
	[[maybe_unused]] const bool va = false;
#endif
	if (!GPUHANDLE_GST_HAVE_CUDA && !GPUHANDLE_GST_HAVE_VA) {
		std::printf("SKIP: neither GStreamer's CUDA nor its VA library is built here "
			    "(gstreamer-cuda-1.0 with the CUDA Toolkit's cuda.h, gstreamer-va-1.0; "
			    "libgstreamer-plugins-bad1.0-dev)\n");
		return 77;
	}
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-cuda-va");
	// One case per test, so that CK_RUN_CASE=<test> runs one.
	[[maybe_unused]] auto add = [s](const TTest *test, int timeout) {
		TCase *tc = tcase_create(test->name);
		tcase_set_timeout(tc, timeout);
		tcase_add_test(tc, test);
		suite_add_tcase(s, tc);
	};
#if GPUHANDLE_GST_HAVE_CUDA
	add(cuda_types_are_registered, 30);
	add(cuda_conversions_refuse_what_they_cannot_hold, 30);
	add(cuda_without_a_driver_says_why, 30);
	if (cuda) {
		add(cuda_backend_is_cached_per_context, 60);
		add(cuda_memory_buffers_become_frames, 120);
		add(cuda_buffer_from_frame_is_not_supported_on_1_22, 60);
	}
#endif
#if GPUHANDLE_GST_HAVE_VA
	add(va_types_are_registered, 30);
	add(va_conversions_refuse_what_they_cannot_hold, 30);
	if (va) {
		add(va_backend_is_cached_per_display, 60);
		add(va_memory_buffers_become_frames, 120);
	}
#endif
	return test::runSuite(s);
}
