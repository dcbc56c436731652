// GstBuffer <-> AVFrame without a copy: system buffers both ways, memfd GpuHandle buffers to
// AVFrames, the source freed first, timestamps rescaled, bad input refused with clear errors.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/ffmpeg/gst_buffer.h>

#include <cstdio>
#include <string>

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Not <gst/check/gstcheck.h>: it redefines tcase_add_test for libgstcheck's bundled Check, which
// does not mix with the system Check of check_helpers.h. gst_init() and fatal criticals stand in.

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "av_frames.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

struct Case {
	AVPixelFormat av;
	GstVideoFormat gst;
};
constexpr Case kFormats[] = { { AV_PIX_FMT_NV12, GST_VIDEO_FORMAT_NV12 },
			      { AV_PIX_FMT_YUV420P, GST_VIDEO_FORMAT_I420 },
			      { AV_PIX_FMT_RGBA, GST_VIDEO_FORMAT_RGBA } };
struct Size {
	int width = 0;
	int height = 0;
};
constexpr Size kSizes[] = { { 33, 17 }, { 1920, 1080 } };
constexpr AVRational k90kHz{ 1, 90000 };

// A videotestsrc-like buffer: gst_buffer_new_allocate of info.size, no video meta.
GstBuffer *allocateBuffer(const GstVideoInfo &info)
{
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, info.size, nullptr);
	ck_assert_ptr_nonnull(buffer);
	return buffer;
}

GstVideoInfo videoInfo(GstVideoFormat format, Size size)
{
	GstVideoInfo info;
	gst_video_info_init(&info);
	ck_assert(gst_video_info_set_format(&info, format, static_cast<guint>(size.width),
					    static_cast<guint>(size.height)));
	return info;
}

// A Frame of `info`'s format and size, for the pattern helpers (which read only those).
Frame frameLike(const GstVideoInfo &info)
{
	GstBuffer *scratch = allocateBuffer(info);
	Result<Frame> like = gst::frameFromSystemBuffer(scratch, info);
	gst_buffer_unref(scratch);
	ck_assert_ok(like);
	return *like;
}

// An AVFrame of av_frame_get_buffer -> GstBuffer: same bytes at the same addresses, timestamps
// in nanoseconds, the AVFrame freed first and its buffers freed once the GstBuffer goes.
void avFrameToBuffer(const Case &c, Size size, uint32_t seed)
{
	test::resetAvCounts();
	AVFrame *source = test::countedAvFrame(c.av, size.width, size.height);
	ck_assert_ptr_nonnull(source);
	const GstVideoInfo expected = videoInfo(c.gst, size);
	const Frame like = frameLike(expected);
	test::fillAvFrame(source, like, seed);
	// Through FrameProperties: AVFrame.duration is pkt_duration before lavu 57.30.
	FrameProperties timing{};
	timing.pts = 9000;      // 0.1 s
	timing.duration = 3003; // 33.366 ms
	timing.timeBase = k90kHz;
	ck_assert_ok(applyFrameProperties(source, timing));
	uint8_t *data[4] = {};
	for (int p = 0; p < 4; p++)
		data[p] = source->data[p];

	Result<GstBuffer *> buffer = gstBufferFromAVFrame(source);
	ck_assert_ok(buffer);
	Result<GstCaps *> caps = capsOfAVFrame(source);
	ck_assert_ok(caps);
	av_frame_free(&source);
	ck_assert_int_eq(test::g_avBuffersFreed, 0);

	GstVideoInfo info;
	ck_assert(gst_video_info_from_caps(&info, *caps));
	gst_caps_unref(*caps);
	ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&info), c.gst);
	ck_assert_int_eq(GST_VIDEO_INFO_WIDTH(&info), size.width);
	ck_assert_int_eq(GST_VIDEO_INFO_HEIGHT(&info), size.height);
	ck_assert_uint_eq((*buffer)->pts, 100000000u);
	ck_assert_uint_eq((*buffer)->duration, 33366667u);

	GstVideoFrame vframe;
	ck_assert(gst_video_frame_map(&vframe, &info, *buffer, GST_MAP_READ));
	for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&vframe); p++)
		ck_assert_ptr_eq(vframe.data[p], data[p]); // no copy
	const std::string checked = test::checkRows(like, seed, [&](uint32_t p, uint32_t y) {
		return static_cast<const uint8_t *>(vframe.data[p]) +
		       static_cast<ptrdiff_t>(y) * vframe.info.stride[p];
	});
	gst_video_frame_unmap(&vframe);
	ck_assert_msg(checked.empty(), "%s %dx%d: %s", av_get_pix_fmt_name(c.av), size.width,
		      size.height, checked.c_str());
	gst_buffer_unref(*buffer);
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}

// A system GstBuffer -> AVFrame: the planes lie in the buffer's memory at info's offsets, the
// buffer unref'd first, timestamps carried in nanoseconds.
void bufferToAvFrame(const Case &c, Size size, uint32_t seed)
{
	const GstVideoInfo info = videoInfo(c.gst, size);
	const Frame like = frameLike(info);
	GstBuffer *buffer = allocateBuffer(info);
	GstMapInfo map;
	ck_assert(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
	uint8_t *base = map.data;
	test::fillRows(like, seed, [&](uint32_t p, uint32_t y) {
		return base + info.offset[p] + static_cast<ptrdiff_t>(y) * info.stride[p];
	});
	gst_buffer_unmap(buffer, &map);
	buffer->pts = 40000000;
	buffer->duration = 20000000;

	ExecutionPath path;
	Result<AVFrame *> frame = avFrameFromGstBuffer(buffer, info, {}, &path);
	ck_assert_ok(frame);
	gst_buffer_unref(buffer); // the AVFrame holds its own reference
	ck_assert(path == ExecutionPath::zeroCopy());
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++) {
		ck_assert_ptr_eq((*frame)->data[p], base + info.offset[p]);
		ck_assert_int_eq((*frame)->linesize[p], info.stride[p]);
	}
	ck_assert_int_eq((*frame)->pts, 40000000);
	ck_assert_int_eq((*frame)->time_base.num, 1);
	ck_assert_int_eq((*frame)->time_base.den, 1000000000);
	ck_assert_int_eq(framePropertiesOf(*frame).duration, 20000000);
	const std::string checked = test::checkAvFrame(*frame, like, seed);
	ck_assert_msg(checked.empty(), "%s %dx%d: %s", av_get_pix_fmt_name(c.av), size.width,
		      size.height, checked.c_str());
	av_frame_free(&*frame);
}

START_TEST(avframe_to_gst_buffer)
{
	uint32_t seed = 1;
	for (const Case &c : kFormats)
		for (Size size : kSizes)
			avFrameToBuffer(c, size, seed++);
	ck_assert_uint_eq(seed, 7);
}
END_TEST

START_TEST(gst_buffer_to_avframe)
{
	uint32_t seed = 11;
	for (const Case &c : kFormats)
		for (Size size : kSizes)
			bufferToAvFrame(c, size, seed++);
	ck_assert_uint_eq(seed, 17);
}
END_TEST

// A GpuHandle buffer over a memfd frame of the fd backend reaches FFmpeg without a copy: the
// AVFrame reads the memfd's pages, after the buffer, frame and backend are gone.
START_TEST(gpuhandle_memfd_buffer_to_avframe)
{
	AVFrame *av = nullptr;
	const Frame like = frameLike(videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 36 }));
	{
		Result<BackendRef> fd = openBackend(BackendKind::Fd);
		ck_assert_ok(fd);
		AllocateRequest request{ PixelFormat::NV12,    64, 36,  {},
					 FrameStorage::Buffer, 0,  true };
		Result<Frame> frame = (*fd)->allocate(request);
		ck_assert_ok(frame);
		ck_assert(frame->resource(0).kind() == ResourceKind::ShmFd);
		test::writePatternOk(**fd, *frame, 21);
		Result<GstVideoInfo> info = gst::videoInfoOf(*frame);
		ck_assert_ok(info);
		GstBuffer *buffer = gst::bufferFromFrame(*frame, *fd);
		ck_assert_ptr_nonnull(buffer);
		ck_assert(gst::bufferMemoryOf(buffer) == gst::BufferMemory::GpuHandle);
		ExecutionPath path;
		Result<AVFrame *> converted = avFrameFromGstBuffer(buffer, *info, {}, &path);
		ck_assert_ok(converted);
		ck_assert(path == ExecutionPath::zeroCopy());
		gst_buffer_unref(buffer);
		av = *converted;
	}
	const std::string checked = test::checkAvFrame(av, like, 21);
	ck_assert_msg(checked.empty(), "%s", checked.c_str());
	av_frame_free(&av);
	ck_assert_ptr_null(av);
}
END_TEST

START_TEST(bad_input_is_refused)
{
	const GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 32 });
	ck_assert_error(avFrameFromGstBuffer(nullptr, info), ErrorCode::NullHandle, "buffer");
	ck_assert_error(gstBufferFromAVFrame(nullptr), ErrorCode::NullHandle, "frame");
	ck_assert_error(capsOfAVFrame(nullptr), ErrorCode::NullHandle, "frame");

	// A buffer smaller than its video info says.
	GstBuffer *small = gst_buffer_new_allocate(nullptr, 16, nullptr);
	ck_assert_ptr_nonnull(small);
	Result<AVFrame *> frame = avFrameFromGstBuffer(small, info);
	gst_buffer_unref(small);
	ck_assert(!frame.ok());
	ck_assert_msg(frame.error().code() == ErrorCode::InvalidArgument, "%s: %s",
		      errorCodeName(frame.error().code()), frame.error().message().c_str());
	ck_assert(!frame.error().message().empty());
}
END_TEST

} // namespace

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("ffmpeg-gst-buffer");
	TCase *tc = tcase_create("ffmpeg-gst-buffer");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, avframe_to_gst_buffer);
	tcase_add_test(tc, gst_buffer_to_avframe);
	tcase_add_test(tc, gpuhandle_memfd_buffer_to_avframe);
	tcase_add_test(tc, bad_input_is_refused);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
