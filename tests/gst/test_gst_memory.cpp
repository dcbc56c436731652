// GpuHandle GstMemory over the cpu, fd (memfd) and Vulkan backends: CPU maps, nested maps, video
// frames, memories outliving their frame and backend, buffer round trips, refusals, fd counts.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/format_mappings.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlememory.hpp>

// Not <gst/check/gstcheck.h>: it redefines tcase_add_test for the Check 0.9 bundled in
// libgstcheck, which does not mix with the system Check of check_helpers.h (START_TEST differs).
// gst_init() and fatal GLib criticals/warnings stand in for gst_check_init().

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"
#include "../backends/skip_probe.h"
#include "fd_count.h"

using namespace gpuhandle;

namespace {

constexpr PixelFormat kFormats[] = { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::P010LE,
				     PixelFormat::RGBA, PixelFormat::V210 };
struct Size {
	uint32_t width = 0;
	uint32_t height = 0;
};
constexpr Size kSizes[] = { { 33, 17 }, { 1920, 1080 } };
constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

// Points the Vulkan loader at lavapipe when nobody named an ICD; true if it did.
bool nameLavapipeIcd()
{
	if (std::getenv("VK_ICD_FILENAMES") || access(kLavapipeIcd, R_OK) != 0)
		return false;
	setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
	return true;
}

BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_msg(backend.ok(), "%s: %s", backendKindName(kind),
		      backend.ok() ? "" : backend.error().message().c_str());
	return *backend;
}

Frame allocate(Backend &backend, PixelFormat format, Size size,
	       FrameStorage storage = FrameStorage::Buffer)
{
	AllocateRequest request{ format, size.width, size.height, {}, storage, 0, true };
	Result<Frame> frame = backend.allocate(request);
	ck_assert_msg(frame.ok(), "%s %s %ux%u: %s", backendKindName(backend.kind()),
		      pixelFormatName(format), size.width, size.height,
		      frame.ok() ? "" : frame.error().message().c_str());
	return *frame;
}

// Every resource of `frame` wrapped as a memory, mapped with `flags` (asserted).
struct MappedMemories {
	std::vector<GstMemory *> mems{};
	std::vector<GstMapInfo> infos{};

	MappedMemories(const Frame &frame, const BackendRef &backend, GstMapFlags flags)
	{
		for (uint32_t r = 0; r < frame.numResources(); r++) {
			GstMemory *mem = gst::wrapResource(frame, r, backend);
			ck_assert_ptr_nonnull(mem);
			mems.push_back(mem);
		}
		infos.resize(mems.size());
		for (size_t i = 0; i < mems.size(); i++)
			ck_assert_msg(gst_memory_map(mems[i], &infos[i], flags),
				      "%s %ux%u: memory %zu did not map",
				      pixelFormatName(frame.format()), frame.width(),
				      frame.height(), i);
	}
	~MappedMemories()
	{
		for (size_t i = 0; i < mems.size(); i++) {
			gst_memory_unmap(mems[i], &infos[i]);
			gst_memory_unref(mems[i]);
		}
	}
	uint8_t *row(const Frame &frame, uint32_t p, uint32_t y) const
	{
		const PlaneView &view = frame.plane(p);
		return infos[view.resource].data + view.offset + uint64_t{ y } * view.stride;
	}
};

// Writes a pattern through the memories, reads it back through new ones (and, for the cpu and
// fd backends, through memories without a backend, mapped with mapFrame()), then checks both
// directions against the backend's own map(). Returns how many format/size cases it verified.
size_t roundTrip(BackendKind kind)
{
	const int fdsBefore = kind == BackendKind::Vulkan ? -1 : test::openFdCount();
	BackendRef backend = open(kind);
	const int fdsOpen = test::openFdCount();
	uint32_t seed = 3;
	size_t verified = 0;
	for (PixelFormat format : kFormats)
		for (Size size : kSizes) {
			Frame frame = allocate(*backend, format, size);
			{
				MappedMemories w(frame, backend, GST_MAP_WRITE);
				test::fillRows(frame, seed, [&](uint32_t p, uint32_t y) {
					return w.row(frame, p, y);
				});
			}
			{
				MappedMemories r(frame, backend, GST_MAP_READ);
				ck_assert_string_eq(
					test::checkRows(frame, seed,
							[&](uint32_t p, uint32_t y) {
								return static_cast<const uint8_t *>(
									r.row(frame, p, y));
							}),
					"");
				for (size_t i = 0; i < r.infos.size(); i++)
					ck_assert_uint_eq(r.infos[i].size, r.mems[i]->size);
			}
			ck_assert_string_eq(test::checkPattern(*backend, frame, seed), "");
			ck_assert_string_eq(test::writePattern(*backend, frame, seed + 1), "");
			const BackendRef viaMapFrame = kind == BackendKind::Vulkan ? backend
										   : nullptr;
			MappedMemories r(frame, viaMapFrame, GST_MAP_READ);
			ck_assert_string_eq(
				test::checkRows(frame, seed + 1,
						[&](uint32_t p, uint32_t y) {
							return static_cast<const uint8_t *>(
								r.row(frame, p, y));
						}),
				"");
			seed += 2;
			++verified;
		}
	ck_assert_int_eq(test::openFdCount(), fdsOpen);
	backend.reset();
	if (fdsBefore >= 0)
		ck_assert_int_eq(test::openFdCount(), fdsBefore);
	return verified;
}

START_TEST(cpu_memories_round_trip)
{
	ck_assert_uint_eq(roundTrip(BackendKind::Cpu), std::size(kFormats) * std::size(kSizes));
}
END_TEST

START_TEST(fd_memories_round_trip)
{
	ck_assert_uint_eq(roundTrip(BackendKind::Fd), std::size(kFormats) * std::size(kSizes));
}
END_TEST

START_TEST(vulkan_memories_round_trip)
{
	ck_assert_uint_eq(roundTrip(BackendKind::Vulkan), std::size(kFormats) * std::size(kSizes));
}
END_TEST

// gst_video_frame_map() on bufferFromFrame()'s buffer: planes where the frame says, writable,
// and what it writes is what the backend reads.
// Returns how many format/size cases it verified.
size_t videoFrameMaps(BackendKind kind)
{
	BackendRef backend = open(kind);
	const int fdsBefore = test::openFdCount();
	uint32_t seed = 40;
	size_t verified = 0;
	for (PixelFormat format : { PixelFormat::NV12, PixelFormat::RGBA })
		for (Size size : kSizes) {
			Frame frame = allocate(*backend, format, size);
			GstBuffer *buffer = gst::bufferFromFrame(frame, backend);
			ck_assert_ptr_nonnull(buffer);
			ck_assert_uint_eq(gst_buffer_n_memory(buffer), frame.numResources());
			GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
			ck_assert_ptr_nonnull(meta);
			ck_assert_uint_eq(meta->n_planes, frame.numPlanes());
			GstVideoInfo info;
			const auto gstFormat = static_cast<GstVideoFormat>(
				*toApiFormat(FormatApi::GStreamer, format));
			ck_assert(gst_video_info_set_format(&info, gstFormat, size.width,
							    size.height));
			GstVideoFrame video;
			ck_assert(gst_video_frame_map(&video, &info, buffer, GST_MAP_WRITE));
			// Where each plane lies: its memory's base (a nested map, with the frame's
			// access: GStreamer refuses a nested map asking for other access) plus its
			// offset.
			for (uint32_t p = 0; p < frame.numPlanes(); p++) {
				ck_assert_int_eq(GST_VIDEO_FRAME_PLANE_STRIDE(&video, p),
						 frame.plane(p).stride);
				GstMemory *mem =
					gst_buffer_peek_memory(buffer, frame.plane(p).resource);
				GstMapInfo nested;
				ck_assert(gst_memory_map(mem, &nested, GST_MAP_WRITE));
				ck_assert_ptr_eq(GST_VIDEO_FRAME_PLANE_DATA(&video, p),
						 nested.data + frame.plane(p).offset);
				gst_memory_unmap(mem, &nested);
			}
			test::fillRows(frame, seed, [&](uint32_t p, uint32_t y) {
				return static_cast<uint8_t *>(
					       GST_VIDEO_FRAME_PLANE_DATA(&video, p)) +
				       y * static_cast<uint32_t>(
						   GST_VIDEO_FRAME_PLANE_STRIDE(&video, p));
			});
			gst_video_frame_unmap(&video);
			ck_assert_string_eq(test::checkPattern(*backend, frame, seed), "");
			ck_assert(gst_video_frame_map(&video, &info, buffer, GST_MAP_READ));
			ck_assert_string_eq(
				test::checkRows(
					frame, seed,
					[&](uint32_t p, uint32_t y) {
						return static_cast<const uint8_t *>(
							       GST_VIDEO_FRAME_PLANE_DATA(&video,
											  p)) +
						       y * static_cast<uint32_t>(
								   GST_VIDEO_FRAME_PLANE_STRIDE(
									   &video, p));
					}),
				"");
			gst_video_frame_unmap(&video);
			gst_buffer_unref(buffer);
			++seed;
			++verified;
		}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
	return verified;
}

START_TEST(video_frames_map_on_cpu_and_fd)
{
	ck_assert_uint_eq(videoFrameMaps(BackendKind::Cpu), 2 * std::size(kSizes));
	ck_assert_uint_eq(videoFrameMaps(BackendKind::Fd), 2 * std::size(kSizes));
}
END_TEST

START_TEST(video_frames_map_on_vulkan)
{
	ck_assert_uint_eq(videoFrameMaps(BackendKind::Vulkan), 2 * std::size(kSizes));
}
END_TEST

// A memory mapped several times gives one address; the mapping ends with the last unmap, and a
// write map is refused while it is mapped for reading only.
START_TEST(nested_maps_share_one_mapping)
{
	BackendRef fd = open(BackendKind::Fd);
	Frame frame = allocate(*fd, PixelFormat::NV12, { 33, 17 });
	ck_assert_string_eq(test::writePattern(*fd, frame, 9), "");
	GstMemory *mem = gst::wrapResource(frame, 0, fd);
	ck_assert_ptr_nonnull(mem);
	const int fdsMapped0 = test::openFdCount();
	GstMapInfo a, b, c;
	ck_assert(gst_memory_map(mem, &a, GST_MAP_READ));
	const int fdsMapped1 = test::openFdCount();
	ck_assert(gst_memory_map(mem, &b, GST_MAP_READ));
	ck_assert_ptr_eq(a.data, b.data);
	ck_assert(!gst_memory_map(mem, &c, GST_MAP_WRITE));
	gst_memory_unmap(mem, &a);
	// Still mapped through `b`.
	ck_assert_int_eq(b.data[frame.plane(0).offset], test::patternByte(9, 0, 0, 0));
	ck_assert_int_eq(test::openFdCount(), fdsMapped1);
	gst_memory_unmap(mem, &b);
	ck_assert_int_eq(test::openFdCount(), fdsMapped0);
	// Mapped afresh, now for writing.
	ck_assert(gst_memory_map(mem, &c, GST_MAP_READWRITE));
	c.data[frame.plane(1).offset] = 0x5a;
	gst_memory_unmap(mem, &c);
	Result<CpuMapping> check = fd->map(frame, MapAccess::Read, kDefaultWaitTimeout);
	ck_assert_ok(check);
	ck_assert_int_eq(check->data(1)[0], 0x5a);
	ck_assert_ok(check->unmap());
	// A copy lands in system memory with the same bytes.
	GstMemory *copy = gst_memory_copy(mem, 0, -1);
	ck_assert_ptr_nonnull(copy);
	ck_assert(!gst_is_gpu_handle_memory(copy));
	ck_assert_uint_eq(copy->size, mem->size);
	gst_memory_unref(copy);
	gst_memory_unref(mem);
}
END_TEST

// The memory holds the frame (and so the device): it maps after both are dropped. Returns the
// first byte that differs from what was written before, or "".
std::string outlivesFrameAndBackend(BackendKind kind)
{
	GstMemory *mem = nullptr;
	{
		BackendRef backend = open(kind);
		Frame frame = allocate(*backend, PixelFormat::NV12, { 33, 17 });
		ck_assert_string_eq(test::writePattern(*backend, frame, 21), "");
		mem = gst::wrapResource(frame, 0, backend);
		ck_assert_ptr_nonnull(mem);
	} // the backend and the frame are gone; the memory's own frame copy remains
	const Frame *held = gst::memoryFrame(mem);
	ck_assert_ptr_nonnull(held);
	GstMapInfo info;
	ck_assert(gst_memory_map(mem, &info, GST_MAP_READ));
	std::string mismatch =
		test::checkRows(*held, 21, [&](uint32_t p, uint32_t y) -> const uint8_t * {
			return info.data + held->plane(p).offset +
			       uint64_t{ y } * held->plane(p).stride;
		});
	gst_memory_unmap(mem, &info);
	gst_memory_unref(mem);
	return mismatch;
}

START_TEST(memories_outlive_frame_and_backend)
{
	const int fdsBefore = test::openFdCount();
	ck_assert_string_eq(outlivesFrameAndBackend(BackendKind::Cpu), "");
	ck_assert_string_eq(outlivesFrameAndBackend(BackendKind::Fd), "");
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

START_TEST(vulkan_memory_outlives_frame_and_backend)
{
	ck_assert_string_eq(outlivesFrameAndBackend(BackendKind::Vulkan), "");
}
END_TEST

// bufferFromFrame() then frameFromBuffer() gives the frame back; other buffers are refused.
START_TEST(frame_from_buffer_round_trips)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef fd = open(BackendKind::Fd);
		Frame frame = allocate(*fd, PixelFormat::YUV420P, { 33, 17 });
		GstBuffer *buffer = gst::bufferFromFrame(frame, fd);
		ck_assert_ptr_nonnull(buffer);
		Result<Frame> back = gst::frameFromBuffer(buffer);
		ck_assert_ok(back);
		ck_assert(back->format() == frame.format());
		ck_assert_uint_eq(back->width(), 33);
		ck_assert_uint_eq(back->height(), 17);
		ck_assert_uint_eq(back->numPlanes(), frame.numPlanes());
		for (uint32_t p = 0; p < frame.numPlanes(); p++)
			ck_assert(back->plane(p) == frame.plane(p));
		ck_assert_int_eq(back->resource(0).get<ShmFd>()->desc().fd.get(),
				 frame.resource(0).get<ShmFd>()->desc().fd.get());
		GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
		ck_assert_uint_eq(gst::memoryResourceIndex(mem), 0);
		ck_assert(gst::memoryBackend(mem) == fd);
		ck_assert_uint_eq(gst_gpu_handle_memory_get_resource_kind(mem),
				  static_cast<guint>(ResourceKind::ShmFd));
		ck_assert_int_eq(gst_gpu_handle_memory_get_backend(mem),
				 static_cast<gint>(BackendKind::Fd));

		// The video meta's offsets count from the buffer's start.
		GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
		ck_assert_ptr_nonnull(meta);
		ck_assert(meta->format == GST_VIDEO_FORMAT_I420);
		for (uint32_t p = 0; p < frame.numPlanes(); p++) {
			ck_assert_uint_eq(meta->offset[p], frame.plane(p).offset);
			ck_assert_int_eq(meta->stride[p], frame.plane(p).stride);
		}

		// A memory of another frame, and a system memory, are refused.
		Frame other = allocate(*fd, PixelFormat::YUV420P, { 33, 17 });
		GstBuffer *mixed = gst_buffer_new();
		gst_buffer_append_memory(mixed, gst::wrapResource(frame, 0, fd));
		gst_buffer_append_memory(mixed, gst::wrapResource(other, 0, fd));
		ck_assert_error(gst::frameFromBuffer(mixed), ErrorCode::InvalidArgument,
				"buffer.memory");
		gst_buffer_unref(mixed);
		GstBuffer *system = gst_buffer_new_allocate(nullptr, 64, nullptr);
		ck_assert_error(gst::frameFromBuffer(system), ErrorCode::WrongKind,
				"buffer.memory");
		ck_assert_error(gst::frameFromBuffer(nullptr), ErrorCode::NullHandle, "buffer");
		GstBuffer *empty = gst_buffer_new();
		ck_assert_error(gst::frameFromBuffer(empty), ErrorCode::InvalidArgument, "buffer");
		gst_buffer_unref(empty);

		GstMemory *sysmem = gst_buffer_peek_memory(system, 0);
		ck_assert(!gst_is_gpu_handle_memory(sysmem));
		ck_assert_ptr_null(gst::memoryFrame(sysmem));
		ck_assert_uint_eq(gst::memoryResourceIndex(sysmem), 0);
		ck_assert(!gst::memoryBackend(sysmem));
		ck_assert_uint_eq(gst_gpu_handle_memory_get_resource_kind(sysmem), 0);
		ck_assert_int_eq(gst_gpu_handle_memory_get_backend(sysmem), -1);
		gst_buffer_unref(system);

		// An index out of range gives no memory.
		ck_assert_ptr_null(gst::wrapResource(frame, 1, fd));
		gst_buffer_unref(buffer);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// The memory of an optimal-tiled image has no CPU layout: mapping it fails cleanly, and so does
// gst_video_frame_map() on its buffer.
START_TEST(vulkan_optimal_image_refuses_to_map)
{
	BackendRef vk = open(BackendKind::Vulkan);
	const int fdsBefore = test::openFdCount();
	{
		Frame frame =
			allocate(*vk, PixelFormat::NV12, { 33, 17 }, FrameStorage::OptimalImage);
		GstMemory *mem = gst::wrapResource(frame, 0, vk);
		ck_assert_ptr_nonnull(mem);
		ck_assert_uint_eq(gst_gpu_handle_memory_get_resource_kind(mem),
				  static_cast<guint>(ResourceKind::VulkanImage));
		ck_assert_int_eq(gst_gpu_handle_memory_get_backend(mem),
				 static_cast<gint>(BackendKind::Vulkan));
		GstMapInfo info;
		ck_assert(!gst_memory_map(mem, &info, GST_MAP_READ));
		ck_assert(!gst_memory_map(mem, &info, GST_MAP_WRITE));
		gst_memory_unref(mem);

		GstBuffer *buffer = gst::bufferFromFrame(frame, vk);
		ck_assert_ptr_nonnull(buffer);
		GstVideoInfo vinfo;
		ck_assert(gst_video_info_set_format(&vinfo, GST_VIDEO_FORMAT_NV12, 33, 17));
		GstVideoFrame video;
		ck_assert(!gst_video_frame_map(&video, &vinfo, buffer, GST_MAP_READ));
		ck_assert_ok(gst::frameFromBuffer(buffer));
		gst_buffer_unref(buffer);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// The allocator is registered under the memory type, wraps but never allocates.
START_TEST(allocator_is_registered)
{
	gst_gpu_handle_init();
	gst_gpu_handle_init();
	GstAllocator *found = gst_allocator_find(GST_GPU_HANDLE_MEMORY_TYPE);
	ck_assert_ptr_nonnull(found);
	GstAllocator *own = gst_gpu_handle_allocator_get();
	ck_assert_ptr_eq(found, own);
	ck_assert(G_TYPE_CHECK_INSTANCE_TYPE(found, GST_TYPE_GPU_HANDLE_ALLOCATOR));
	ck_assert(GST_OBJECT_FLAG_IS_SET(found, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC));
	ck_assert_str_eq(found->mem_type, GST_GPU_HANDLE_MEMORY_TYPE);
	ck_assert_ptr_null(gst_allocator_alloc(found, 4096, nullptr));

	BackendRef cpu = open(BackendKind::Cpu);
	Frame frame = allocate(*cpu, PixelFormat::RGBA, { 33, 17 });
	GstMemory *mem = gst::wrapResource(frame, 0, cpu);
	ck_assert_ptr_eq(mem->allocator, found);
	ck_assert(gst_is_gpu_handle_memory(mem));
	ck_assert(gst_memory_is_type(mem, GST_GPU_HANDLE_MEMORY_TYPE));
	ck_assert_uint_eq(mem->size, frame.resource(0).byteSize(0));
	// Not shareable: a region copy of its buffer falls back to system memory.
	GstBuffer *buffer = gst_buffer_new();
	gst_buffer_append_memory(buffer, mem);
	GstBuffer *region = gst_buffer_copy_region(buffer, GST_BUFFER_COPY_MEMORY, 4, 16);
	ck_assert_ptr_nonnull(region);
	ck_assert(!gst_is_gpu_handle_memory(gst_buffer_peek_memory(region, 0)));
	gst_buffer_unref(region);
	gst_buffer_unref(buffer);
	gst_object_unref(found);
	gst_object_unref(own);
}
END_TEST

std::string probeVulkan()
{
	Result<BackendRef> opened = openBackend(BackendKind::Vulkan);
	if (!opened.ok() && nameLavapipeIcd())
		opened = openBackend(BackendKind::Vulkan);
	if (!opened.ok())
		return "the Vulkan backend did not open: " + opened.error().message();
	return {};
}

} // namespace

int main(int argc, char **argv)
{
	// The probe runs in a child so that no driver thread exists when Check forks each test;
	// naming lavapipe's ICD there must be repeated here.
	const bool vulkan = test::probeInChild(probeVulkan) == 0;
	if (!vulkan)
		std::printf("The Vulkan tests are skipped (the reason is above).\n");
	nameLavapipeIcd();
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-memory");
	TCase *tc = tcase_create("gst-memory");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, cpu_memories_round_trip);
	tcase_add_test(tc, fd_memories_round_trip);
	tcase_add_test(tc, video_frames_map_on_cpu_and_fd);
	tcase_add_test(tc, nested_maps_share_one_mapping);
	tcase_add_test(tc, memories_outlive_frame_and_backend);
	tcase_add_test(tc, frame_from_buffer_round_trips);
	tcase_add_test(tc, allocator_is_registered);
	if (vulkan) {
		tcase_add_test(tc, vulkan_memories_round_trip);
		tcase_add_test(tc, video_frames_map_on_vulkan);
		tcase_add_test(tc, vulkan_memory_outlives_frame_and_backend);
		tcase_add_test(tc, vulkan_optimal_image_refuses_to_map);
	}
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
