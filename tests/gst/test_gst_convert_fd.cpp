// GstBuffer <-> Frame for fd memories: GstFdMemory and GstDmaBufMemory become ShmFd and DmaBuf
// frames (duplicated fds, the buffer held), frames become fd buffers, and a real DMA-BUF
// (udmabuf) goes both ways where this machine has one.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/format_mappings.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <unistd.h>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "convert_fixture.h"

using namespace gpuhandle;
using namespace gpuhandle::test::convert;
using namespace std::chrono_literals;

// frameFromFdBuffer over memfd GstFdMemory (ShmFd resources) and over GstDmaBufMemory (one
// DmaBuf resource): dup'd fds, the buffer held, the bytes where GStreamer wrote them.
void fdBuffersBecomeFrames(bool dmaBuf)
{
	const int fdsBefore = test::openFdCount();
	uint32_t seed = 50;
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = videoInfo(format, size);
			GstBuffer *buffer = bufferOf(memfdMemory(info.size, dmaBuf));
			const int fd = gst_fd_memory_get_fd(gst_buffer_peek_memory(buffer, 0));
			ck_assert_string_eq(videoPattern(buffer, info, seed, true), "");
			Result<Frame> frame =
				gst::frameFromFdBuffer(buffer, info, kDrmModifierLinear);
			if (dmaBuf && format == GST_VIDEO_FORMAT_v210) {
				// No DRM fourcc.
				ck_assert_error(frame, ErrorCode::NotSupported, "format");
				gst_buffer_unref(buffer);
				continue;
			}
			ck_assert_ok(frame);
			ck_assert_int_eq(refcount(buffer), 2);
			if (dmaBuf) {
				const DmaBuf *resource = frame->resource(0).get<DmaBuf>();
				ck_assert_ptr_nonnull(resource);
				ck_assert_uint_eq(resource->desc().numObjects, 1);
				ck_assert_uint_eq(resource->desc().fourcc,
						  *toApiFormat(FormatApi::DrmFourcc,
							       frame->format()));
				ck_assert_int_ne(resource->desc().objects[0].fd.get(), fd);
			} else {
				const ShmFd *resource = frame->resource(0).get<ShmFd>();
				ck_assert_ptr_nonnull(resource);
				ck_assert_int_ne(resource->desc().fd.get(), fd);
			}
			ck_assert_string_eq(framePattern(*frame, seed), "");
			frame = Error(ErrorCode::Cancelled, "", "dropped");
			ck_assert_int_eq(refcount(buffer), 1);
			gst_buffer_unref(buffer);
			seed++;
		}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}

START_TEST(fd_buffers_become_shm_frames)
{
	fdBuffersBecomeFrames(false);
	ck_assert_int_ge(test::openFdCount(), 0);
}
END_TEST

START_TEST(dmabuf_buffers_become_dmabuf_frames)
{
	fdBuffersBecomeFrames(true);
	ck_assert_int_ge(test::openFdCount(), 0);
}
END_TEST

// Planes in several memories: one ShmFd per memory (a memory's offset into its fd kept), or
// one DMA-BUF object per distinct fd; a plane running past its memory is refused.
START_TEST(fd_buffers_with_several_memories)
{
	const int fdsBefore = test::openFdCount();
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 33, 17 });
	const gsize luma = info.offset[1];
	const gsize chroma = info.size - luma;
	gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, luma };
	gint strides[GST_VIDEO_MAX_PLANES] = { info.stride[0], info.stride[1] };
	// GstFdMemory: luma in one memfd, chroma 4096 bytes into another.
	GstBuffer *buffer = bufferOf(memfdMemory(luma, false));
	GstMemory *second = memfdMemory(4096 + chroma, false);
	gst_memory_resize(second, 4096, chroma);
	gst_buffer_append_memory(buffer, second);
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 33,
				       17, 2, offsets, strides);
	ck_assert_string_eq(videoPattern(buffer, info, 3, true), "");
	Result<Frame> frame = gst::frameFromFdBuffer(buffer, info);
	ck_assert_ok(frame);
	ck_assert_uint_eq(frame->numResources(), 2);
	ck_assert_uint_eq(frame->resource(1).get<ShmFd>()->desc().offset, 4096);
	ck_assert_uint_eq(frame->plane(1).resource, 1);
	ck_assert_uint_eq(frame->plane(1).offset, 0);
	ck_assert_string_eq(framePattern(*frame, 3), "");
	gst_buffer_get_video_meta(buffer)->offset[0] = 64; // luma now runs into the chroma memory
	ck_assert_error(gst::frameFromFdBuffer(buffer, info), ErrorCode::InvalidArgument, "buffer");
	gst_buffer_unref(buffer);

	// GstDmaBufMemory: two memories sharing one fd are one object, offsets from the fd's start.
	// (Written first: shared memories are read-only, and a write map would copy them.)
	GstMemory *whole = memfdMemory(info.size, true);
	buffer = bufferOf(gst_memory_ref(whole));
	ck_assert_string_eq(videoPattern(buffer, info, 4, true), "");
	gst_buffer_unref(buffer);
	buffer = bufferOf(gst_memory_share(whole, 0, static_cast<gssize>(luma)));
	gst_buffer_append_memory(buffer, gst_memory_share(whole, static_cast<gssize>(luma),
							  static_cast<gssize>(chroma)));
	gst_memory_unref(whole);
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 33,
				       17, 2, offsets, strides);
	ck_assert(gst::bufferMemoryOf(buffer) == gst::BufferMemory::DmaBuf);
	frame = gst::frameFromFdBuffer(buffer, info);
	ck_assert_ok(frame);
	const DmaBuf *dmabuf = frame->resource(0).get<DmaBuf>();
	ck_assert_uint_eq(dmabuf->desc().numObjects, 1);
	ck_assert_uint_eq(dmabuf->desc().planes[1].offset, luma);
	ck_assert_uint_eq(dmabuf->desc().objects[0].size, info.size);
	ck_assert_string_eq(framePattern(*frame, 4), "");
	frame = Error(ErrorCode::Cancelled, "", "dropped");
	gst_buffer_unref(buffer);
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A real DMA-BUF (udmabuf over the fd backend's memfd) through both directions.
START_TEST(real_dmabuf_round_trip)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef fd = open(BackendKind::Fd);
		Frame shm = allocate(*fd, PixelFormat::NV12, { 1920, 1080 });
		ck_assert_string_eq(test::writePattern(*fd, shm, 11), "");
		Result<Frame> exported = fd->exportFrame(shm, ResourceKind::DmaBuf);
		ck_assert_ok(exported);
		Result<GstBuffer *> buffer = gst::fdBufferFromFrame(*exported);
		ck_assert_ok(buffer);
		ck_assert(gst::bufferMemoryOf(*buffer) == gst::BufferMemory::DmaBuf);
		GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 1920, 1080 });
		ck_assert_string_eq(videoPattern(*buffer, info, 11, false), "");
		Result<Frame> back = gst::frameFromFdBuffer(*buffer, info);
		ck_assert_ok(back);
		ck_assert_string_eq(framePattern(*back, 11), "");
		gst_buffer_unref(*buffer);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// fdBufferFromFrame: ShmFd frames as GstFdMemory (when allowed), DmaBuf frames as
// GstDmaBufMemory over dup'd fds; the acquire point and release gate go on a sync meta.
START_TEST(frames_become_fd_buffers)
{
	const int fdsBefore = test::openFdCount();
	{
		BackendRef fd = open(BackendKind::Fd);
		uint32_t seed = 120;
		for (GstVideoFormat format : kFormats)
			for (Size size : kSizes) {
				Frame frame = allocate(*fd, *gst::pixelFormatOf(format), size);
				ck_assert_string_eq(test::writePattern(*fd, frame, seed), "");
				ck_assert_error(gst::fdBufferFromFrame(frame), ErrorCode::WrongKind,
						"frame.resources");
				Result<GstBuffer *> buffer = gst::fdBufferFromFrame(frame, true);
				ck_assert_ok(buffer);
				ck_assert(gst::bufferMemoryOf(*buffer) == gst::BufferMemory::Fd);
				ck_assert_int_ne(
					gst_fd_memory_get_fd(gst_buffer_peek_memory(*buffer, 0)),
					frame.resource(0).get<ShmFd>()->desc().fd.get());
				ck_assert_ptr_null(gst_buffer_get_gpu_handle_sync_meta(*buffer));
				const GstVideoInfo info = videoInfo(format, size);
				ck_assert_string_eq(videoPattern(*buffer, info, seed, false), "");
				gst_buffer_unref(*buffer);
				seed++;
			}

		// DMA-BUF frames (here over memfds) round-trip with their sync.
		const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 1920, 1080 });
		GstBuffer *source = bufferOf(memfdMemory(info.size, true));
		ck_assert_string_eq(videoPattern(source, info, 5, true), "");
		Frame frame = *gst::frameFromFdBuffer(source, info);
		gst_buffer_unref(source);
		std::shared_ptr<CpuFence> fence = *CpuFence::create();
		ReleaseGate gate = *ReleaseGate::create();
		frame.setAcquire(fence->point());
		frame.setRelease(gate);
		// Not waited: returns at once.
		Result<GstBuffer *> buffer = gst::fdBufferFromFrame(frame);
		ck_assert_ok(buffer);
		ck_assert(gst::bufferMemoryOf(*buffer) == gst::BufferMemory::DmaBuf);
		GstGpuHandleSyncMeta *meta = gst_buffer_get_gpu_handle_sync_meta(*buffer);
		ck_assert_ptr_nonnull(meta);
		ck_assert(gst::syncMetaAcquire(meta).waiter() == fence);
		ck_assert(!gst_gpu_handle_sync_meta_is_signaled(meta));
		fence->signal();
		ck_assert_string_eq(videoPattern(*buffer, info, 5, false), "");
		Result<Frame> back = gst::frameFromFdBuffer(*buffer, info);
		ck_assert_ok(back);
		ck_assert(back->acquire().waiter() == fence);
		ck_assert_string_eq(framePattern(*back, 5), "");
		back = Error(ErrorCode::Cancelled, "", "dropped");
		gst_buffer_unref(*buffer);
		ck_assert(gate.isSignaled());

		BackendRef cpu = open(BackendKind::Cpu);
		ck_assert_error(
			gst::fdBufferFromFrame(allocate(*cpu, PixelFormat::NV12, { 33, 17 }), true),
			ErrorCode::WrongKind, "frame.resources");
		ck_assert_error(gst::fdBufferFromFrame(
					allocate(*fd, PixelFormat::P210LE, { 33, 17 }), true),
				ErrorCode::NotSupported, "format");
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// An fd memory keeps its frame (and so what the frame holds: a producer's pool slot, through its
// anchor) until GStreamer frees the memory: past its buffer, and past a share of it, which holds
// its parent. Its kind stays GStreamer's, though its allocator keeps the frame.
START_TEST(fd_memories_keep_their_frame_until_freed)
{
	struct Slot final : KeepAlive {
		bool *gone = nullptr;
		~Slot() override { *gone = true; }
	};
	const int fdsBefore = test::openFdCount();
	{
		const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
		UniqueFd memfd = test::makeMemfd(info.size);
		bool gone = false;
		GstBuffer *buffer = nullptr;
		{
			auto slot = std::make_shared<Slot>();
			slot->gone = &gone;
			FrameDesc d;
			d.format = PixelFormat::NV12;
			d.width = 64;
			d.height = 32;
			d.numResources = 1;
			d.resources[0] = *ShmFd::create(
				{ .fd = SharedFd::borrow(memfd.get(), slot), .size = info.size });
			d.numPlanes = 2;
			for (uint32_t p = 0; p < 2; p++)
				d.planes[p] = { 0, 0, GST_VIDEO_INFO_PLANE_OFFSET(&info, p),
						static_cast<uint32_t>(
							GST_VIDEO_INFO_PLANE_STRIDE(&info, p)) };
			Result<GstBuffer *> made = gst::fdBufferFromFrame(*Frame::create(d), true);
			ck_assert_ok(made);
			buffer = *made;
		} // only the buffer's memory holds the frame now
		GstMemory *memory = gst_buffer_get_memory(buffer, 0);
		ck_assert(gst_is_fd_memory(memory));
		GstMemory *share = gst_memory_share(memory, 0, 16);
		gst_buffer_unref(buffer);
		ck_assert(!gone); // the memory outlives its buffer
		gst_memory_unref(memory);
		ck_assert(!gone); // the share holds its parent
		gst_memory_unref(share);
		ck_assert(gone);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

int main(int argc, char **argv)
{
	const bool udmabuf = access("/dev/udmabuf", R_OK | W_OK) == 0;
	if (!udmabuf)
		std::printf(
			"The real DMA-BUF case is skipped: /dev/udmabuf is absent or closed.\n");
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-convert-fd");
	TCase *tc = tcase_create("gst-convert-fd");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fd_buffers_become_shm_frames);
	tcase_add_test(tc, dmabuf_buffers_become_dmabuf_frames);
	tcase_add_test(tc, fd_buffers_with_several_memories);
	tcase_add_test(tc, frames_become_fd_buffers);
	tcase_add_test(tc, fd_memories_keep_their_frame_until_freed);
	if (udmabuf)
		tcase_add_test(tc, real_dmabuf_round_trip);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
