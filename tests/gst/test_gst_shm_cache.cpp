// ShmMemoryCache: a memfd sent again is mapped once and each frame's memory is a share of it; the
// frame lives until every share made since is freed (its own, and a downstream element's); a file
// seen once is not kept; an owned fd handed out again is known by its number; a peer without
// GstVideoMeta gets the default layout; nothing leaks.
#include <gpuhandle/fd_resources.h>

#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandleshmcache.hpp>
#include <gst/video/video.h>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "fd_count.h"

#include "check_helpers.h"

using namespace gpuhandle;

namespace {

constexpr uint32_t kWidth = 64, kHeight = 32;

// What the frame over a memfd holds (a producer's pool slot, say), with the frame's own fd:
// gone once the frame is.
struct Slot final : KeepAlive {
	Slot(bool &flag, int memfd) : gone(&flag), fd(dup(memfd)) {}
	~Slot() override { *gone = true; }
	bool *gone;
	UniqueFd fd;
};

GstVideoInfo nv12Info()
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, kWidth, kHeight);
	return info;
}

// An NV12 frame over `memfd` (`fileSize` bytes) with its luma rows `stride` bytes apart and its
// chroma plane right after them: GStreamer's default layout when stride is kWidth.
Frame paddedFrameOver(int memfd, bool &gone, uint32_t stride, uint64_t fileSize)
{
	auto slot = std::make_shared<Slot>(gone, memfd);
	FrameDesc d;
	d.format = PixelFormat::NV12;
	d.width = kWidth;
	d.height = kHeight;
	d.numResources = 1;
	d.resources[0] =
		*ShmFd::create({ .fd = SharedFd::borrow(slot->fd.get(), slot), .size = fileSize });
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 0, stride };
	d.planes[1] = { 0, 0, uint64_t{ stride } * kHeight, stride };
	Result<Frame> frame = Frame::create(d);
	ck_assert(frame.ok());
	return *frame;
}

// An NV12 frame over the whole of `memfd` in the default layout, through its own fd (as a
// receiver gets a new fd for the same open file per frame: dup shares the open file), holding a
// Slot that sets `gone`.
Frame frameOver(int memfd, bool &gone)
{
	return paddedFrameOver(memfd, gone, kWidth, nv12Info().size);
}

// The address the buffer's first memory maps at (read), or null.
const void *mappedAt(GstBuffer *buffer)
{
	GstMapInfo map;
	if (!gst_buffer_map(buffer, &map, GST_MAP_READ))
		return nullptr;
	const void *at = map.data;
	gst_buffer_unmap(buffer, &map);
	return at;
}

} // namespace

// The first frame over a file is made the uncached way (seen once); from the second on, its
// memory is a share of one kept-mapped GstFdMemory: the same mapping every time.
START_TEST(a_file_sent_again_is_mapped_once)
{
	const int fdsBefore = test::openFdCount();
	{
		gst::ShmMemoryCache cache;
		UniqueFd memfd = test::makeMemfd(nv12Info().size, true);
		void *bytes = mmap(nullptr, 16, PROT_WRITE, MAP_SHARED, memfd.get(), 0);
		ck_assert(bytes != MAP_FAILED);
		std::memset(bytes, 0x5a, 16);
		munmap(bytes, 16);
		const void *firstCached = nullptr;
		for (int i = 0; i < 4; i++) {
			bool gone = false;
			Result<GstBuffer *> buffer =
				gst::fdBufferFromFrame(frameOver(memfd.get(), gone), cache);
			ck_assert(buffer.ok());
			GstMemory *mem = gst_buffer_peek_memory(*buffer, 0);
			ck_assert(gst_is_fd_memory(mem));
			ck_assert_msg((mem->parent != nullptr) == (i > 0),
				      "frame %d: parent %p (seen once: not cached)", i,
				      static_cast<void *>(mem->parent));
			GstMapInfo map;
			ck_assert(gst_buffer_map(*buffer, &map, GST_MAP_READ));
			ck_assert_uint_eq(map.data[0], 0x5a);
			gst_buffer_unmap(*buffer, &map);
			if (i == 1)
				firstCached = mappedAt(*buffer);
			if (i > 1)
				ck_assert_ptr_eq(mappedAt(*buffer), firstCached);
			ck_assert(!gone);
			gst_buffer_unref(*buffer);
			ck_assert_msg(gone, "frame %d outlived its buffer", i);
		}
		ck_assert_uint_eq(cache.hits(), 3);
		ck_assert_uint_eq(cache.filesCached(), 1);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A downstream element's share of the memory (gst_buffer_copy_region, a resize) is a share of
// the cached file's memory, not of the frame's: the frame must still live until it goes.
START_TEST(a_downstream_share_keeps_the_frame)
{
	const int fdsBefore = test::openFdCount();
	{
		gst::ShmMemoryCache cache;
		UniqueFd memfd = test::makeMemfd(nv12Info().size, true);
		bool seen = false;
		gst_buffer_unref(*gst::fdBufferFromFrame(frameOver(memfd.get(), seen), cache));
		bool gone = false;
		GstBuffer *buffer = *gst::fdBufferFromFrame(frameOver(memfd.get(), gone), cache);
		ck_assert(gst_buffer_peek_memory(buffer, 0)->parent != nullptr);
		GstBuffer *region = gst_buffer_copy_region(buffer, GST_BUFFER_COPY_MEMORY, 16, 64);
		GstMemory *share = gst_memory_share(gst_buffer_peek_memory(region, 0), 0, 8);
		gst_buffer_unref(buffer);
		ck_assert_msg(!gone, "the frame went while a region of it was downstream");
		gst_buffer_unref(region);
		ck_assert_msg(!gone, "the frame went while a share of a region lived");
		gst_memory_unref(share);
		ck_assert(gone);
		// The next frame over the file takes it again, and goes with its buffer.
		bool next = false;
		buffer = *gst::fdBufferFromFrame(frameOver(memfd.get(), next), cache);
		ck_assert(gst_buffer_peek_memory(buffer, 0)->parent != nullptr);
		gst_buffer_unref(buffer);
		ck_assert(next);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A producer without a pool sends a new file per frame: none is cached (no dead file stays
// mapped here), and clear() lets go of a cached one while its last buffer lives on.
START_TEST(new_files_are_not_kept_and_clear_lets_go)
{
	const int fdsBefore = test::openFdCount();
	{
		gst::ShmMemoryCache cache;
		for (int i = 0; i < 40; i++) {
			UniqueFd memfd = test::makeMemfd(nv12Info().size, true);
			bool gone = false;
			Result<GstBuffer *> buffer =
				gst::fdBufferFromFrame(frameOver(memfd.get(), gone), cache);
			ck_assert(buffer.ok());
			ck_assert(gst_buffer_peek_memory(*buffer, 0)->parent == nullptr);
			gst_buffer_unref(*buffer);
			ck_assert(gone);
		}
		ck_assert_uint_eq(cache.filesCached(), 0);
		ck_assert_int_eq(test::openFdCount(), fdsBefore);

		UniqueFd memfd = test::makeMemfd(nv12Info().size, true);
		bool seen = false, gone = false;
		gst_buffer_unref(*gst::fdBufferFromFrame(frameOver(memfd.get(), seen), cache));
		GstBuffer *buffer = *gst::fdBufferFromFrame(frameOver(memfd.get(), gone), cache);
		ck_assert_uint_eq(cache.filesCached(), 1);
		cache.clear();
		ck_assert(!gone);
		ck_assert(mappedAt(buffer) != nullptr);
		gst_buffer_unref(buffer);
		ck_assert(gone);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// FrameReceiver's file cache hands out one owned fd for every frame over a file: the cache keeps
// that fd open and knows the file by its number from then on; clear() closes it.
START_TEST(an_owned_fd_handed_out_again_is_kept_open)
{
	const int fdsBefore = test::openFdCount();
	const GstVideoInfo info = nv12Info();
	gst::ShmMemoryCache cache;
	{
		auto file = ShmFd::create(
			{ .fd = SharedFd(test::makeMemfd(info.size, true)), .size = info.size });
		ck_assert(file.ok());
		FrameDesc d;
		d.format = PixelFormat::NV12;
		d.width = kWidth;
		d.height = kHeight;
		d.numResources = 1;
		d.resources[0] = *file;
		d.numPlanes = 2;
		for (uint32_t p = 0; p < 2; p++)
			d.planes[p] = { 0, 0, GST_VIDEO_INFO_PLANE_OFFSET(&info, p),
					static_cast<uint32_t>(
						GST_VIDEO_INFO_PLANE_STRIDE(&info, p)) };
		const void *cachedAt = nullptr;
		for (int i = 0; i < 5; i++) {
			Result<Frame> frame = Frame::create(d);
			ck_assert(frame.ok());
			Result<GstBuffer *> buffer = gst::fdBufferFromFrame(*frame, cache);
			ck_assert(buffer.ok());
			ck_assert((gst_buffer_peek_memory(*buffer, 0)->parent != nullptr) ==
				  (i > 0));
			if (i == 1)
				cachedAt = mappedAt(*buffer);
			if (i > 1)
				ck_assert_ptr_eq(mappedAt(*buffer), cachedAt);
			gst_buffer_unref(*buffer);
		}
		ck_assert_uint_eq(cache.hits(), 4);
		ck_assert_uint_eq(cache.filesCached(), 1);
	}
	// The frames and the file are gone here; the cache holds the file's fd and its mapping's.
	ck_assert_int_eq(test::openFdCount(), fdsBefore + 2);
	cache.clear();
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A peer without GstVideoMeta gets exactly the caps' frame in the default layout. A frame that
// is laid out so (in a page-rounded file) is a share of the cached file, cut to the frame's size,
// with no video meta; a padded one is copied into the default layout. Either way the bytes read
// are the frame's and the frame goes with the buffer.
START_TEST(a_peer_without_video_meta_gets_the_default_layout)
{
	const int fdsBefore = test::openFdCount();
	const GstVideoInfo info = nv12Info();
	{
		gst::ShmMemoryCache cache;
		for (const uint32_t stride : { kWidth, kWidth + 64 }) {
			const uint64_t fileSize =
				(uint64_t{ stride } * kHeight * 3 / 2 + 4095) / 4096 * 4096;
			UniqueFd memfd = test::makeMemfd(fileSize, true);
			auto *bytes = static_cast<uint8_t *>(
				mmap(nullptr, fileSize, PROT_WRITE, MAP_SHARED, memfd.get(), 0));
			ck_assert(bytes != MAP_FAILED);
			// Each row's first byte is its row number; chroma rows start at 0x80.
			for (uint32_t row = 0; row < kHeight * 3 / 2; row++)
				bytes[uint64_t{ row } * stride] = static_cast<uint8_t>(
					row < kHeight ? row : 0x80 + row - kHeight);
			munmap(bytes, fileSize);
			const bool laidOut = stride == kWidth;
			for (int i = 0; i < 3; i++) {
				bool gone = false;
				Result<GstBuffer *> buffer = gst::defaultLayoutBufferFromFrame(
					paddedFrameOver(memfd.get(), gone, stride, fileSize), cache,
					info);
				ck_assert(buffer.ok());
				ck_assert_uint_eq(gst_buffer_get_size(*buffer), info.size);
				ck_assert(gst_buffer_get_video_meta(*buffer) == nullptr);
				GstMemory *mem = gst_buffer_peek_memory(*buffer, 0);
				ck_assert_msg(gst_is_fd_memory(mem) == laidOut,
					      "stride %u: the file's memory %s", stride,
					      laidOut ? "expected" : "where a copy was due");
				if (laidOut)
					ck_assert((mem->parent != nullptr) == (i > 0));
				GstVideoFrame frame;
				GstVideoInfo mapInfo = info;
				ck_assert(gst_video_frame_map(&frame, &mapInfo, *buffer,
							      GST_MAP_READ));
				for (uint32_t row = 0; row < kHeight; row++)
					ck_assert_uint_eq(static_cast<const uint8_t *>(
								  GST_VIDEO_FRAME_PLANE_DATA(
									  &frame, 0))[row * kWidth],
							  row);
				for (uint32_t row = 0; row < kHeight / 2; row++)
					ck_assert_uint_eq(static_cast<const uint8_t *>(
								  GST_VIDEO_FRAME_PLANE_DATA(
									  &frame, 1))[row * kWidth],
							  0x80 + row);
				gst_video_frame_unmap(&frame);
				gst_buffer_unref(*buffer);
				ck_assert_msg(gone, "frame %d outlived its buffer", i);
			}
		}
		// Frames 1 and 2 of each file (the padded one's are copied from their share).
		ck_assert_uint_eq(cache.hits(), 4);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-shm-cache");
	TCase *tc = tcase_create("gst-shm-cache");
	tcase_add_test(tc, a_file_sent_again_is_mapped_once);
	tcase_add_test(tc, a_downstream_share_keeps_the_frame);
	tcase_add_test(tc, new_files_are_not_kept_and_clear_lets_go);
	tcase_add_test(tc, an_owned_fd_handed_out_again_is_kept_open);
	tcase_add_test(tc, a_peer_without_video_meta_gets_the_default_layout);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
