// System buffers of one memory read through one plain map (frameFromSystemBuffer), a producer's
// own video-meta map function still honoured; a shared buffer handed to a peer without
// GstVideoMeta as a new buffer over the same memory, its other metas kept.
#include <gpuhandle/cpu_resources.h>

#include "wrapped_bytes.h"

#include <chrono>
#include <cstring>
#include <optional>

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>
#include <gst/video/video.h>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using test::freeWrapped;
using test::WrappedBytes;

namespace {

constexpr int kWidth = 48, kHeight = 20;
// A padded NV12 layout: rows of 64 bytes, the chroma plane 96 bytes after the luma's end.
constexpr gsize kOffsets[GST_VIDEO_MAX_PLANES] = { 32, 32 + 64 * kHeight + 96, 0, 0 };
constexpr gint kStrides[GST_VIDEO_MAX_PLANES] = { 64, 64, 0, 0 };
constexpr gsize kPaddedSize = 32 + 64 * kHeight + 96 + 64 * (kHeight / 2) + 16;

GstVideoInfo nv12Info()
{
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, kWidth, kHeight);
	return info;
}

// A one-memory buffer in the padded layout, each row's first byte its plane and row number.
GstBuffer *paddedBuffer(WrappedBytes &wrapped)
{
	wrapped.bytes = static_cast<guint8 *>(g_malloc0(kPaddedSize));
	for (int row = 0; row < kHeight; row++)
		wrapped.bytes[kOffsets[0] + gsize(row) * kStrides[0]] = guint8(row);
	for (int row = 0; row < kHeight / 2; row++)
		wrapped.bytes[kOffsets[1] + gsize(row) * kStrides[1]] = guint8(0x80 + row);
	GstBuffer *buffer = gst_buffer_new();
	gst_buffer_append_memory(
		buffer, gst_memory_new_wrapped(static_cast<GstMemoryFlags>(0), wrapped.bytes,
					       kPaddedSize, 0, kPaddedSize, &wrapped, freeWrapped));
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12,
				       kWidth, kHeight, 2, const_cast<gsize *>(kOffsets),
				       const_cast<gint *>(kStrides));
	return buffer;
}

// Whether the frame's planes read the padded layout's marks, through a CPU map of the frame.
void assertReadsPaddedLayout(const Frame &frame)
{
	Result<CpuMapping> mapped = mapFrame(frame, MapAccess::Read, 1s);
	ck_assert_ok(mapped);
	ck_assert_uint_eq(mapped->stride(0), kStrides[0]);
	ck_assert_uint_eq(mapped->stride(1), kStrides[1]);
	for (uint32_t row = 0; row < kHeight; row++)
		ck_assert_uint_eq(mapped->data(0)[row * mapped->stride(0)], row);
	for (uint32_t row = 0; row < kHeight / 2; row++)
		ck_assert_uint_eq(mapped->data(1)[row * mapped->stride(1)], 0x80 + row);
}

// A producer's own video-meta map: counts its calls, then maps as GStreamer's default does (the
// plane's memory, at the plane's offset and stride).
int gCustomMaps = 0;
int gCustomUnmaps = 0;

gboolean customMap(GstVideoMeta *meta, guint plane, GstMapInfo *info, gpointer *data, gint *stride,
		   GstMapFlags flags)
{
	gCustomMaps++;
	guint index = 0, length = 0;
	gsize skip = 0;
	if (!gst_buffer_find_memory(meta->buffer, meta->offset[plane], 1, &index, &length, &skip) ||
	    !gst_buffer_map_range(meta->buffer, index, length, info, flags))
		return FALSE;
	*data = static_cast<guint8 *>(info->data) + skip;
	*stride = meta->stride[plane];
	return TRUE;
}

gboolean customUnmap(GstVideoMeta *meta, guint, GstMapInfo *info)
{
	gCustomUnmaps++;
	gst_buffer_unmap(meta->buffer, info);
	return TRUE;
}

} // namespace

// The video meta's offsets and strides, read through one map of the buffer's one memory: the
// frame is one range of bytes (the whole memory), holds the buffer until its last copy goes, and
// names it as its source; a writable buffer mapped for writing is written through.
START_TEST(a_padded_one_memory_buffer_is_one_range)
{
	const GstVideoInfo info = nv12Info();
	WrappedBytes wrapped;
	GstBuffer *buffer = paddedBuffer(wrapped);
	std::optional<Frame> frame;
	{
		Result<Frame> made = gst::frameFromSystemBuffer(buffer, info, MapAccess::ReadWrite);
		ck_assert_ok(made);
		frame = *made;
	}
	ck_assert_uint_eq(frame->numResources(), 1);
	const CpuBytes *bytes = frame->resource(0).get<CpuBytes>();
	ck_assert_ptr_nonnull(bytes);
	ck_assert_ptr_eq(bytes->desc().data, wrapped.bytes);
	ck_assert_uint_eq(bytes->desc().size, kPaddedSize);
	for (uint32_t p = 0; p < 2; p++) {
		ck_assert_uint_eq(frame->plane(p).offset, kOffsets[p]);
		ck_assert_uint_eq(frame->plane(p).stride, kStrides[p]);
	}
	assertReadsPaddedLayout(*frame);
	GstBuffer *source = gst::sourceBufferOf(*frame);
	ck_assert_ptr_eq(source, buffer);
	gst_buffer_unref(source);
	{
		Result<CpuMapping> mapped = mapFrame(*frame, MapAccess::Write, 1s);
		ck_assert_ok(mapped);
		mapped->data(1)[1] = 0x5a;
	}
	ck_assert_uint_eq(wrapped.bytes[kOffsets[1] + 1], 0x5a);
	gst_buffer_unref(buffer);
	ck_assert(!wrapped.freed); // the frame still maps it
	std::optional<Frame> copy = *frame;
	frame.reset();
	ck_assert(!wrapped.freed);
	copy.reset();
	ck_assert(wrapped.freed);
}
END_TEST

// A video meta whose map function is the producer's own is read through that function, as
// gst_video_frame_map() does, not through a plain map of the memory.
START_TEST(a_producers_own_meta_map_is_used)
{
	const GstVideoInfo info = nv12Info();
	WrappedBytes wrapped;
	GstBuffer *buffer = paddedBuffer(wrapped);
	// The default map first: the plain path calls no meta map at all.
	gCustomMaps = gCustomUnmaps = 0;
	{
		Result<Frame> frame = gst::frameFromSystemBuffer(buffer, info);
		ck_assert_ok(frame);
		assertReadsPaddedLayout(*frame);
	}
	GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
	meta->map = customMap;
	meta->unmap = customUnmap;
	{
		Result<Frame> frame = gst::frameFromSystemBuffer(buffer, info);
		ck_assert_ok(frame);
		ck_assert_int_eq(gCustomMaps, 2); // one per plane
		ck_assert_int_eq(gCustomUnmaps, 0);
		assertReadsPaddedLayout(*frame);
		GstBuffer *source = gst::sourceBufferOf(*frame);
		ck_assert_ptr_eq(source, buffer);
		gst_buffer_unref(source);
	}
	ck_assert_int_eq(gCustomUnmaps, 2);
	gst_buffer_unref(buffer);
	ck_assert(wrapped.freed);
}
END_TEST

// A shared buffer in the default layout (page-rounded) leaves for a peer without GstVideoMeta as
// a new buffer over the same bytes, cut to the frame, with its timestamps and flags and no meta;
// the shared buffer keeps its own. With another meta besides, that meta goes along.
START_TEST(a_shared_buffer_goes_without_its_video_meta)
{
	const GstVideoInfo info = nv12Info();
	const gsize rounded = GST_VIDEO_INFO_SIZE(&info) + 100;
	for (bool otherMeta : { false, true }) {
		GstBuffer *buffer = gst_buffer_new_allocate(nullptr, rounded, nullptr);
		gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE,
					       GST_VIDEO_FORMAT_NV12, kWidth, kHeight, 2,
					       const_cast<gsize *>(info.offset),
					       const_cast<gint *>(info.stride));
		GstCaps *reference = gst_caps_new_empty_simple("timestamp/x-test");
		if (otherMeta)
			gst_buffer_add_reference_timestamp_meta(buffer, reference, 7 * GST_SECOND,
								GST_CLOCK_TIME_NONE);
		gst_caps_unref(reference);
		GST_BUFFER_PTS(buffer) = 3 * GST_SECOND;
		GST_BUFFER_DTS(buffer) = 2 * GST_SECOND;
		GST_BUFFER_DURATION(buffer) = GST_SECOND / 30;
		GST_BUFFER_OFFSET(buffer) = 11;
		GST_BUFFER_OFFSET_END(buffer) = 12;
		GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
		GstMapInfo original;
		ck_assert(gst_buffer_map(buffer, &original, GST_MAP_READ));
		gst_buffer_unmap(buffer, &original);

		Result<GstBuffer *> out = gst::toDefaultLayout(gst_buffer_ref(buffer), info);
		ck_assert_ok(out);
		ck_assert_ptr_ne(*out, buffer);
		ck_assert_ptr_null(gst_buffer_get_video_meta(*out));
		ck_assert_uint_eq(gst_buffer_get_size(*out), GST_VIDEO_INFO_SIZE(&info));
		ck_assert_uint_eq(GST_BUFFER_PTS(*out), 3 * GST_SECOND);
		ck_assert_uint_eq(GST_BUFFER_DTS(*out), 2 * GST_SECOND);
		ck_assert_uint_eq(GST_BUFFER_DURATION(*out), GST_SECOND / 30);
		ck_assert_uint_eq(GST_BUFFER_OFFSET(*out), 11);
		ck_assert_uint_eq(GST_BUFFER_OFFSET_END(*out), 12);
		ck_assert(GST_BUFFER_FLAG_IS_SET(*out, GST_BUFFER_FLAG_DELTA_UNIT));
		GstReferenceTimestampMeta *kept =
			gst_buffer_get_reference_timestamp_meta(*out, nullptr);
		if (otherMeta) {
			ck_assert_ptr_nonnull(kept);
			ck_assert_uint_eq(kept->timestamp, 7 * GST_SECOND);
		} else {
			ck_assert_ptr_null(kept);
		}
		GstMapInfo shared;
		ck_assert(gst_buffer_map(*out, &shared, GST_MAP_READ));
		ck_assert_ptr_eq(shared.data, original.data); // the same bytes, not a copy
		gst_buffer_unmap(*out, &shared);
		gst_buffer_unref(*out);
		// The shared buffer is as it was.
		ck_assert_ptr_nonnull(gst_buffer_get_video_meta(buffer));
		ck_assert_uint_eq(gst_buffer_get_size(buffer), rounded);
		ck_assert_int_eq(GST_MINI_OBJECT_REFCOUNT_VALUE(buffer), 1);
		gst_buffer_unref(buffer);
	}
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-system-map");
	TCase *tc = tcase_create("gst-system-map");
	tcase_add_test(tc, a_padded_one_memory_buffer_is_one_range);
	tcase_add_test(tc, a_producers_own_meta_map_is_used);
	tcase_add_test(tc, a_shared_buffer_goes_without_its_video_meta);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
