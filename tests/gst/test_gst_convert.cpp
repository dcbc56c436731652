// GstBuffer <-> Frame for system memory: buffers become frames without a copy (held, written
// through, their sync meta the frame's fences), frames become system buffers, memory kinds.
#include <gpuhandle/cpu_fence.h>

#include "wrapped_bytes.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: it includes Check, whose fail() macro breaks standard headers included after it.
#include "convert_fixture.h"

using namespace gpuhandle;
using namespace gpuhandle::test::convert;
using namespace std::chrono_literals;

using test::freeWrapped;
using test::WrappedBytes;

// frameFromSystemBuffer maps without a copy: the frame's planes are gst_video_frame_map's, as
// one range of bytes (the buffer's one memory) with the planes at their offsets.
START_TEST(system_buffers_become_frames_without_a_copy)
{
	const int fdsBefore = test::openFdCount();
	uint32_t seed = 1;
	size_t verified = 0;
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			const GstVideoInfo info = videoInfo(format, size);
			GstBuffer *buffer = gst_buffer_new_allocate(nullptr, info.size, nullptr);
			ck_assert_string_eq(videoPattern(buffer, info, seed, true), "");
			Result<Frame> frame = gst::frameFromSystemBuffer(buffer, info);
			ck_assert_ok(frame);
			ck_assert(frame->format() == *gst::pixelFormatOf(format));
			ck_assert_uint_eq(frame->width(), size.width);
			ck_assert_uint_eq(frame->numResources(), 1);
			const CpuBytes *bytes = frame->resource(0).get<CpuBytes>();
			ck_assert_ptr_nonnull(bytes);
			ck_assert_uint_eq(bytes->desc().size, gst_buffer_get_size(buffer));
			GstVideoInfo mapInfo = info;
			GstVideoFrame video;
			ck_assert(gst_video_frame_map(&video, &mapInfo, buffer, GST_MAP_READ));
			for (uint32_t p = 0; p < frame->numPlanes(); p++) {
				ck_assert_ptr_eq(static_cast<uint8_t *>(bytes->desc().data) +
							 frame->plane(p).offset,
						 video.data[p]);
				ck_assert_int_eq(frame->plane(p).stride, video.info.stride[p]);
			}
			gst_video_frame_unmap(&video);
			ck_assert_string_eq(framePattern(*frame, seed), "");
			gst_buffer_unref(buffer);
			seed++;
			verified++;
		}
	ck_assert_uint_eq(verified, kCases);
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// The frame holds the buffer (freed only after the frame's last copy); a read-write frame
// writes into it; its sync meta becomes the frame's acquire point and release gate.
START_TEST(system_frames_keep_their_buffer)
{
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_RGBA, { 33, 17 });
	WrappedBytes wrapped{ static_cast<guint8 *>(g_malloc0(info.size)) };
	const guint8 *bytes = wrapped.bytes;
	const bool &freed = wrapped.freed;
	GstBuffer *buffer =
		bufferOf(gst_memory_new_wrapped(static_cast<GstMemoryFlags>(0), wrapped.bytes,
						info.size, 0, info.size, &wrapped, freeWrapped));
	std::shared_ptr<CpuFence> fence = *CpuFence::create();
	ReleaseGate gate = *ReleaseGate::create();
	gst::addSyncMeta(buffer, fence->point(), gate);
	std::optional<Frame> frame;
	{
		Result<Frame> made = gst::frameFromSystemBuffer(buffer, info, MapAccess::ReadWrite);
		ck_assert_ok(made);
		frame = Frame(*made);
	}
	ck_assert(frame->acquire().waiter() == fence);
	ck_assert(!frame->release().isNone());
	ck_assert_error(gst::frameFromSystemBuffer(buffer, info, MapAccess::Write),
			ErrorCode::InvalidArgument, "buffer");
	gst_buffer_unref(buffer);
	ck_assert(!freed);
	ck_assert(!gate.isSignaled());
	{
		Result<CpuMapping> mapped = mapFrame(*frame, MapAccess::Write, 0ms);
		// The acquire point holds it.
		ck_assert_error(mapped, ErrorCode::Timeout, "timeout");
		fence->signal();
		mapped = mapFrame(*frame, MapAccess::Write, 1s);
		ck_assert_ok(mapped);
		test::fillPatternOk(*mapped, *frame, 7);
	}
	ck_assert_int_eq(bytes[0], test::patternByte(7, 0, 0, 0));
	ck_assert_int_eq(bytes[info.stride[0] + 5], test::patternByte(7, 0, 1, 5));
	frame.reset();
	ck_assert(freed);
	ck_assert(gate.isSignaled()); // the meta's state went with the buffer
}
END_TEST

// What frameFromSystemBuffer refuses.
START_TEST(system_buffer_errors)
{
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 33, 17 });
	ck_assert_error(gst::frameFromSystemBuffer(nullptr, info), ErrorCode::NullHandle, "buffer");
	GstBuffer *small = gst_buffer_new_allocate(nullptr, info.size - 1, nullptr);
	ck_assert_error(gst::frameFromSystemBuffer(small, info), ErrorCode::InvalidArgument,
			"buffer");
	gst_buffer_unref(small);
	const GstVideoInfo r210 = videoInfo(GST_VIDEO_FORMAT_r210, { 33, 17 });
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, r210.size, nullptr);
	ck_assert_error(gst::frameFromSystemBuffer(buffer, r210), ErrorCode::NotSupported,
			"format");
	ck_assert_error(gst::frameFromFdBuffer(buffer, r210), ErrorCode::WrongKind,
			"buffer.memory");
	gst_buffer_unref(buffer);
}
END_TEST

// systemBufferFromFrame over CpuBytes (cpu backend) and ShmFd (fd backend) frames: the
// memories are the frame's bytes, read-only unless asked, and outlive the frame and backend.
void framesBecomeSystemBuffers(BackendKind kind)
{
	const int fdsBefore = test::openFdCount();
	uint32_t seed = 90;
	for (GstVideoFormat format : kFormats)
		for (Size size : kSizes) {
			GstBuffer *buffer = nullptr;
			const uint8_t *firstByte = nullptr;
			{
				BackendRef backend = open(kind);
				Frame frame = allocate(*backend, *gst::pixelFormatOf(format), size);
				ck_assert_string_eq(test::writePattern(*backend, frame, seed), "");
				Result<GstBuffer *> made = gst::systemBufferFromFrame(frame);
				ck_assert_ok(made);
				buffer = *made;
				if (const CpuBytes *bytes = frame.resource(0).get<CpuBytes>())
					firstByte =
						static_cast<const uint8_t *>(bytes->desc().data) +
						frame.plane(0).offset;
			}
			ck_assert_uint_eq(gst_buffer_n_memory(buffer), 1);
			ck_assert(GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(buffer, 0)));
			ck_assert_ptr_nonnull(gst_buffer_get_video_meta(buffer));
			const GstVideoInfo info = videoInfo(format, size);
			if (firstByte) {
				GstMapInfo map;
				ck_assert(gst_buffer_map(buffer, &map, GST_MAP_READ));
				ck_assert_ptr_eq(
					map.data + gst_buffer_get_video_meta(buffer)->offset[0],
					firstByte);
				gst_buffer_unmap(buffer, &map);
			}
			ck_assert_string_eq(videoPattern(buffer, info, seed, false), "");
			gst_buffer_unref(buffer);
			seed++;
		}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}

START_TEST(cpu_frames_become_system_buffers)
{
	framesBecomeSystemBuffers(BackendKind::Cpu);
	ck_assert_int_ge(test::openFdCount(), 0);
}
END_TEST

START_TEST(shm_frames_become_system_buffers)
{
	framesBecomeSystemBuffers(BackendKind::Fd);
	ck_assert_int_ge(test::openFdCount(), 0);
}
END_TEST

// A buffer with a memory per plane (its GstVideoMeta placing them) becomes a CpuPlanes frame,
// which gives one memory per plane back; a writable buffer writes into the frame; the acquire
// point is waited (bounded) and the release gate signalled when the memories go.
START_TEST(system_buffer_planes_sync_and_errors)
{
	const int fdsBefore = test::openFdCount();
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_I420, { 33, 17 });
	{
		GstBuffer *source = gst_buffer_new();
		for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++) {
			const gsize end = p + 1 < GST_VIDEO_INFO_N_PLANES(&info)
						  ? info.offset[p + 1]
						  : info.size;
			gst_buffer_append_memory(source,
						 gst_allocator_alloc(nullptr, end - info.offset[p],
								     nullptr));
		}
		gsize offsets[GST_VIDEO_MAX_PLANES];
		gint strides[GST_VIDEO_MAX_PLANES];
		for (guint p = 0; p < GST_VIDEO_MAX_PLANES; p++) {
			offsets[p] = info.offset[p];
			strides[p] = info.stride[p];
		}
		gst_buffer_add_video_meta_full(source, GST_VIDEO_FRAME_FLAG_NONE,
					       GST_VIDEO_INFO_FORMAT(&info), info.width,
					       info.height, GST_VIDEO_INFO_N_PLANES(&info), offsets,
					       strides);
		ck_assert_string_eq(videoPattern(source, info, 21, true), "");
		Frame frame = *gst::frameFromSystemBuffer(source, info, MapAccess::ReadWrite);
		ck_assert_ptr_nonnull(frame.resource(0).get<CpuPlanes>());
		gst_buffer_unref(source);
		Result<GstBuffer *> planes = gst::systemBufferFromFrame(frame, true);
		ck_assert_ok(planes);
		ck_assert_uint_eq(gst_buffer_n_memory(*planes), 3);
		ck_assert(!GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(*planes, 0)));
		ck_assert_string_eq(videoPattern(*planes, info, 21, false), "");
		ck_assert_string_eq(videoPattern(*planes, info, 22, true), "");
		gst_buffer_unref(*planes);
		ck_assert_string_eq(framePattern(frame, 22), "");

		std::shared_ptr<CpuFence> fence = *CpuFence::create();
		ReleaseGate gate = *ReleaseGate::create();
		frame.setAcquire(fence->point());
		frame.setRelease(gate);
		ck_assert_error(gst::systemBufferFromFrame(frame, false, 30ms), ErrorCode::Timeout,
				"timeout");
		std::thread signaller([fence] {
			std::this_thread::sleep_for(50ms);
			fence->signal();
		});
		Result<GstBuffer *> waited = gst::systemBufferFromFrame(frame, false, 5s);
		signaller.join();
		ck_assert_ok(waited);
		ck_assert(fence->isSignaled().value());
		GstBuffer *copy = gst_buffer_copy(*waited); // shares the memories
		gst_buffer_unref(*waited);
		ck_assert(!gate.isSignaled());
		gst_buffer_unref(copy);
		ck_assert(gate.isSignaled());

		BackendRef cpu = open(BackendKind::Cpu);
		ck_assert_error(
			gst::systemBufferFromFrame(allocate(*cpu, PixelFormat::P210LE, { 33, 17 })),
			ErrorCode::NotSupported, "format");
		GstBuffer *dma = bufferOf(memfdMemory(info.size, true));
		Frame dmabuf = *gst::frameFromFdBuffer(dma, info);
		ck_assert_error(gst::systemBufferFromFrame(dmabuf), ErrorCode::WrongKind,
				"frame.resources");
		ck_assert_error(gst::fdBufferFromFrame(frame), ErrorCode::WrongKind,
				"frame.resources");
		gst_buffer_unref(dma);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// bufferMemoryOf tells the memories apart, and says Mixed when they differ.
START_TEST(buffer_memory_kinds)
{
	GstBuffer *system = gst_buffer_new_allocate(nullptr, 64, nullptr);
	ck_assert(gst::bufferMemoryOf(system) == gst::BufferMemory::System);
	GstBuffer *fd = bufferOf(memfdMemory(64, false));
	ck_assert(gst::bufferMemoryOf(fd) == gst::BufferMemory::Fd);
	GstBuffer *dma = bufferOf(memfdMemory(64, true));
	ck_assert(gst::bufferMemoryOf(dma) == gst::BufferMemory::DmaBuf);
	BackendRef cpu = open(BackendKind::Cpu);
	GstBuffer *wrapped =
		gst::bufferFromFrame(allocate(*cpu, PixelFormat::RGBA, { 33, 17 }), cpu);
	ck_assert(gst::bufferMemoryOf(wrapped) == gst::BufferMemory::GpuHandle);
	gst_buffer_append_memory(dma, gst_allocator_alloc(nullptr, 64, nullptr));
	ck_assert(gst::bufferMemoryOf(dma) == gst::BufferMemory::Mixed);
	ck_assert(gst::bufferMemoryOf(nullptr) == gst::BufferMemory::System);
	ck_assert_str_eq(gst::bufferMemoryName(gst::BufferMemory::DmaBuf), "dmabuf");
	ck_assert_str_eq(gst::bufferMemoryName(gst::BufferMemory::Mixed), "mixed");
	for (GstBuffer *buffer : { system, fd, dma, wrapped })
		gst_buffer_unref(buffer);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-convert");
	TCase *tc = tcase_create("gst-convert");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, system_buffers_become_frames_without_a_copy);
	tcase_add_test(tc, system_frames_keep_their_buffer);
	tcase_add_test(tc, system_buffer_errors);
	tcase_add_test(tc, cpu_frames_become_system_buffers);
	tcase_add_test(tc, shm_frames_become_system_buffers);
	tcase_add_test(tc, system_buffer_planes_sync_and_errors);
	tcase_add_test(tc, buffer_memory_kinds);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
