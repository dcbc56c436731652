// GstBuffer <-> Frame for system, fd and DMA-BUF memory; GstVideoInfo, colorimetry and caps tables.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/format_mappings.h>

#include "wrapped_bytes.h"

#include <chrono>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

// Not <gst/check/gstcheck.h>: see test_gst_memory.cpp (the system Check is used instead).

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"
#include "fd_count.h"

using namespace gpuhandle;
using namespace std::chrono_literals;
using test::freeWrapped;
using test::WrappedBytes;

namespace {

constexpr GstVideoFormat kFormats[] = {
	GST_VIDEO_FORMAT_I420,  GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_P010_10LE,
	GST_VIDEO_FORMAT_Y444,  GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY,
	GST_VIDEO_FORMAT_v210,  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRx,
	GST_VIDEO_FORMAT_GRAY8,
};
struct Size {
	uint32_t width = 0;
	uint32_t height = 0;
};
constexpr Size kSizes[] = { { 1, 1 }, { 33, 17 }, { 1920, 1080 } };
constexpr size_t kCases = std::size(kFormats) * std::size(kSizes);

GstVideoInfo videoInfo(GstVideoFormat format, Size size)
{
	GstVideoInfo info;
	ck_assert(gst_video_info_set_format(&info, format, size.width, size.height));
	return info;
}

const PixelFormatInfo &formatInfo(GstVideoFormat format)
{
	Result<PixelFormat> pixel = gst::pixelFormatOf(format);
	ck_assert_ok(pixel);
	return **pixelFormatInfo(*pixel);
}

// Writes (fill) or checks the test pattern in every pixel byte of `buffer` mapped as a video
// frame of `info`. Empty when every byte matched, else the first that did not.
std::string videoPattern(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed, bool fill)
{
	GstVideoInfo mapInfo = info;
	GstVideoFrame video;
	if (!gst_video_frame_map(&video, &mapInfo, buffer, fill ? GST_MAP_WRITE : GST_MAP_READ))
		return "gst_video_frame_map failed";
	const PixelFormatInfo &pf = formatInfo(GST_VIDEO_INFO_FORMAT(&info));
	const uint32_t width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
	std::string mismatch;
	for (uint32_t p = 0; p < pf.numPlanes && mismatch.empty(); p++) {
		const uint32_t rows =
			pf.planes[p].rows(static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)));
		for (uint32_t y = 0; y < rows && mismatch.empty(); y++) {
			uint8_t *row = static_cast<uint8_t *>(video.data[p]) +
				       static_cast<size_t>(y) *
					       static_cast<uint32_t>(video.info.stride[p]);
			for (uint64_t x = 0; x < pf.planes[p].rowBytes(width); x++) {
				if (fill) {
					row[x] = test::patternByte(seed, p, y, x);
				} else if (row[x] != test::patternByte(seed, p, y, x)) {
					mismatch = std::string(pf.name) + " plane " +
						   std::to_string(p) + " row " + std::to_string(y) +
						   " byte " + std::to_string(x);
					break;
				}
			}
		}
	}
	gst_video_frame_unmap(&video);
	return mismatch;
}

// Checks the pattern through gpuhandle's own CPU mapping of `frame`.
std::string framePattern(const Frame &frame, uint32_t seed)
{
	Result<CpuMapping> mapped = mapFrame(frame, MapAccess::Read, 1s);
	if (!mapped)
		return "mapFrame: " + mapped.error().message();
	return test::checkPattern(*mapped, frame, seed);
}

BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_msg(backend.ok(), "%s", backend.ok() ? "" : backend.error().message().c_str());
	return *backend;
}

Frame allocate(Backend &backend, PixelFormat format, Size size)
{
	Result<Frame> frame = backend.allocate(
		{ format, size.width, size.height, {}, FrameStorage::Buffer, 0, true });
	ck_assert_msg(frame.ok(), "%s", frame.ok() ? "" : frame.error().message().c_str());
	return *frame;
}

GstAllocator *fdAllocator(bool dmaBuf)
{
	static GstAllocator *dma = gst_dmabuf_allocator_new();
	static GstAllocator *fd = gst_fd_allocator_new();
	return dmaBuf ? dma : fd;
}

// A memfd of `size` bytes as a GstFdMemory, or a GstDmaBufMemory (an fd memory by another name:
// GStreamer maps both with mmap; only the DMA_BUF_IOCTL_SYNC it tries fails on a memfd).
GstMemory *memfdMemory(gsize size, bool dmaBuf)
{
	UniqueFd memfd = test::makeMemfd(size);
	ck_assert(memfd.isValid());
	return dmaBuf ? gst_dmabuf_allocator_alloc(fdAllocator(true), memfd.release(), size)
		      : gst_fd_allocator_alloc(fdAllocator(false), memfd.release(), size,
					       GST_FD_MEMORY_FLAG_NONE);
}

GstBuffer *bufferOf(GstMemory *mem)
{
	GstBuffer *buffer = gst_buffer_new();
	gst_buffer_append_memory(buffer, mem);
	return buffer;
}

int refcount(GstBuffer *buffer)
{
	return GST_MINI_OBJECT_REFCOUNT_VALUE(buffer);
}

} // namespace

// Every GstVideoFormat gpuhandle maps goes both ways with GStreamer's own spelling; every other
// raw format is refused with NotSupported.
START_TEST(format_tables_go_both_ways)
{
	size_t mapped = 0;
	for (const FormatMapping &row : formatMappings(FormatApi::GStreamer)) {
		const auto format = static_cast<GstVideoFormat>(row.value);
		Result<PixelFormat> pixel = gst::pixelFormatOf(format);
		ck_assert_ok(pixel);
		ck_assert(*pixel == row.format);
		Result<GstVideoFormat> back = gst::videoFormatOf(row.format);
		ck_assert_ok(back);
		ck_assert_int_eq(*back, format);
		ck_assert_str_eq(gst_video_format_to_string(format), row.name);
		mapped++;
	}
	guint count = 0;
	const GstVideoFormat *raw = gst_video_formats_raw(&count);
	size_t rawMapped = 0;
	for (guint i = 0; i < count; i++) {
		Result<PixelFormat> pixel = gst::pixelFormatOf(raw[i]);
		if (pixel)
			rawMapped++;
		else
			ck_assert_error(pixel, ErrorCode::NotSupported, "format");
	}
	ck_assert_uint_eq(rawMapped, mapped);
	for (GstVideoFormat format :
	     { GST_VIDEO_FORMAT_UNKNOWN, GST_VIDEO_FORMAT_ENCODED, GST_VIDEO_FORMAT_r210 })
		ck_assert_error(gst::pixelFormatOf(format), ErrorCode::NotSupported, "format");
	for (const PixelFormatInfo &info : allPixelFormats())
		ck_assert(gst::videoFormatOf(info.format).ok() ==
			  canRepresent(FormatApi::GStreamer, info.format));
	ck_assert_error(gst::videoFormatOf(PixelFormat::P210LE), ErrorCode::NotSupported, "format");
}
END_TEST

// GStreamer's named colorimetries survive the trip through gpuhandle; fields one side lacks
// stay unknown on the other.
START_TEST(colorimetry_round_trips)
{
	for (const char *name : { "bt709", "bt601", "bt2020", "bt2100-pq", "bt2100-hlg", "sRGB",
				  "smpte240m", "bt2020-10" }) {
		GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 64 });
		ck_assert(gst_video_colorimetry_from_string(&info.colorimetry, name));
		const Colorimetry ours = gst::colorimetryOf(info);
		GstVideoInfo back = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 64 });
		gst::setColorimetry(back, ours);
		ck_assert_msg(gst_video_colorimetry_is_equal(&info.colorimetry, &back.colorimetry),
			      "%s", name);
	}
	GstVideoInfo info = videoInfo(GST_VIDEO_FORMAT_NV12, { 64, 64 });
	const Colorimetry hdr{ ColorRange::Limited, ColorMatrix::Bt2020Ncl, ColorPrimaries::Bt2020,
			       ColorTransfer::Pq };
	gst::setColorimetry(info, hdr);
	ck_assert_int_eq(info.colorimetry.range, GST_VIDEO_COLOR_RANGE_16_235);
	ck_assert_int_eq(info.colorimetry.matrix, GST_VIDEO_COLOR_MATRIX_BT2020);
	ck_assert_int_eq(info.colorimetry.transfer, GST_VIDEO_TRANSFER_SMPTE2084);
	ck_assert_int_eq(info.colorimetry.primaries, GST_VIDEO_COLOR_PRIMARIES_BT2020);
	ck_assert(gst::colorimetryOf(info) == hdr);
	// GAMMA18 has no H.273 code; ICtCp no GstVideoColorMatrix: each leaves only itself unset.
	info.colorimetry.transfer = GST_VIDEO_TRANSFER_GAMMA18;
	ck_assert(gst::colorimetryOf(info).transfer == ColorTransfer::Unknown);
	ck_assert(gst::colorimetryOf(info).matrix == ColorMatrix::Bt2020Ncl);
	gst::setColorimetry(info, { ColorRange::Full, ColorMatrix::ICtCp, ColorPrimaries::Bt709,
				    ColorTransfer::Bt709 });
	ck_assert_int_eq(info.colorimetry.matrix, GST_VIDEO_COLOR_MATRIX_UNKNOWN);
	ck_assert_int_eq(info.colorimetry.range, GST_VIDEO_COLOR_RANGE_0_255);
	ck_assert_int_eq(info.colorimetry.primaries, GST_VIDEO_COLOR_PRIMARIES_BT709);
}
END_TEST

// videoInfoOf: a frame in one range gives its own offsets and strides, CpuPlanes GStreamer's
// defaults; bufferLayout reads the video meta (offsets across memories) or the info.
START_TEST(video_info_and_buffer_layout)
{
	BackendRef cpu = open(BackendKind::Cpu);
	FrameDesc desc = allocate(*cpu, PixelFormat::NV12, { 33, 17 }).desc();
	desc.colorimetry = { ColorRange::Full, ColorMatrix::Bt709, ColorPrimaries::Bt709,
			     ColorTransfer::Bt709 };
	Frame frame = *Frame::create(desc);
	Result<GstVideoInfo> info = gst::videoInfoOf(frame);
	ck_assert_ok(info);
	ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&*info), GST_VIDEO_FORMAT_NV12);
	ck_assert_int_eq(info->width, 33);
	ck_assert_int_eq(info->colorimetry.range, GST_VIDEO_COLOR_RANGE_0_255);
	for (uint32_t p = 0; p < 2; p++) {
		ck_assert_uint_eq(info->offset[p], frame.plane(p).offset);
		ck_assert_int_eq(info->stride[p], frame.plane(p).stride);
	}
	ck_assert_uint_eq(info->size, frame.resource(0).byteSize(0));
	ck_assert_error(gst::videoInfoOf(allocate(*cpu, PixelFormat::P210LE, { 33, 17 })),
			ErrorCode::NotSupported, "format");

	// Without a video meta: the info's layout, and the whole of info.size is needed.
	GstVideoInfo i420 = videoInfo(GST_VIDEO_FORMAT_I420, { 33, 17 });
	GstBuffer *buffer = gst_buffer_new_allocate(nullptr, i420.size, nullptr);
	Result<FrameLayout> layout = gst::bufferLayout(buffer, i420);
	ck_assert_ok(layout);
	ck_assert_uint_eq(layout->numPlanes, 3);
	ck_assert_uint_eq(layout->size, i420.size);
	for (uint32_t p = 0; p < 3; p++) {
		ck_assert_uint_eq(layout->planes[p].offset, i420.offset[p]);
		ck_assert_int_eq(layout->planes[p].stride, i420.stride[p]);
	}
	ck_assert_uint_eq(layout->planes[1].height, 9);
	gst_buffer_set_size(buffer, static_cast<gssize>(i420.size - 1));
	ck_assert_error(gst::bufferLayout(buffer, i420), ErrorCode::InvalidArgument, "buffer");
	gst_buffer_unref(buffer);
	ck_assert_error(gst::bufferLayout(nullptr, i420), ErrorCode::NullHandle, "buffer");

	// With one: two memories, the chroma plane's offset counted from the first one's start.
	GstVideoInfo nv12 = videoInfo(GST_VIDEO_FORMAT_NV12, { 33, 17 });
	buffer = gst_buffer_new_allocate(nullptr, 64 * 17, nullptr);
	gst_buffer_append_memory(buffer, gst_allocator_alloc(nullptr, 64 * 9, nullptr));
	gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, 64 * 17 };
	gint strides[GST_VIDEO_MAX_PLANES] = { 64, 64 };
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, 33,
				       17, 2, offsets, strides);
	layout = gst::bufferLayout(buffer, nv12);
	ck_assert_ok(layout);
	ck_assert_uint_eq(layout->planes[1].offset, 64 * 17);
	ck_assert_uint_eq(layout->planes[1].stride, 64);
	ck_assert_uint_eq(layout->size, 64 * 26);
	gst_buffer_get_video_meta(buffer)->offset[1] = 64 * 18;
	ck_assert_error(gst::bufferLayout(buffer, nv12), ErrorCode::InvalidArgument, "buffer");
	gst_buffer_get_video_meta(buffer)->stride[1] = 16;
	ck_assert_error(gst::bufferLayout(buffer, nv12), ErrorCode::InvalidArgument, "stride");
	gst_buffer_unref(buffer);
}
END_TEST

// GStreamer 1.22's plain DMA-BUF caps round-trip through text; DMA_DRM caps need 1.24.
START_TEST(dma_drm_caps)
{
	gst::DmaDrmInfo info;
	info.info = videoInfo(GST_VIDEO_FORMAT_NV12, { 1920, 1080 });
	info.drmFourcc = *toApiFormat(FormatApi::DrmFourcc, PixelFormat::NV12);
	GstCaps *caps = gst::dmaDrmInfoToCaps(info);
	ck_assert_ptr_nonnull(caps);
	ck_assert(gst_caps_features_contains(gst_caps_get_features(caps, 0),
					     GST_CAPS_FEATURE_MEMORY_DMABUF));
	gchar *text = gst_caps_to_string(caps);
	GstCaps *parsed = gst_caps_from_string(text);
	g_free(text);
	ck_assert(gst_caps_is_equal(caps, parsed));
	Result<gst::DmaDrmInfo> back = gst::dmaDrmInfoFromCaps(parsed);
	ck_assert_ok(back);
	ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&back->info), GST_VIDEO_FORMAT_NV12);
	ck_assert_int_eq(back->info.width, 1920);
	ck_assert_int_eq(back->info.height, 1080);
	ck_assert_uint_eq(back->drmFourcc, GST_MAKE_FOURCC('N', 'V', '1', '2'));
	ck_assert_uint_eq(back->modifier, kDrmModifierLinear);
	ck_assert(!back->drmFormatCaps);
	gst_caps_unref(parsed);
	gst_caps_unref(caps);

	GstCaps *drm =
		gst_caps_from_string("video/x-raw(memory:DMABuf),format=DMA_DRM,"
				     "drm-format=NV12:0x0100000000000002,width=64,height=64");
	Result<gst::DmaDrmInfo> drmInfo = gst::dmaDrmInfoFromCaps(drm);
	if (gst::hasDmaDrmCaps()) {
		ck_assert_ok(drmInfo);
		ck_assert_int_eq(GST_VIDEO_INFO_FORMAT(&drmInfo->info), GST_VIDEO_FORMAT_NV12);
		ck_assert_uint_eq(drmInfo->modifier, 0x0100000000000002ULL);
		ck_assert(drmInfo->drmFormatCaps);
		// Printed again (with the fields gst_video_info_to_caps() adds), it reads the same.
		GstCaps *again = gst::dmaDrmInfoToCaps(*drmInfo);
		ck_assert(gst_caps_is_subset(again, drm));
		Result<gst::DmaDrmInfo> reread = gst::dmaDrmInfoFromCaps(again);
		ck_assert_ok(reread);
		ck_assert_uint_eq(reread->drmFourcc, drmInfo->drmFourcc);
		ck_assert_uint_eq(reread->modifier, drmInfo->modifier);
		ck_assert(reread->drmFormatCaps);
		gst_caps_unref(again);
	} else {
		ck_assert_error(drmInfo, ErrorCode::NotSupported, "caps.format");
		ck_assert(drmInfo.error().message().find("1.24") != std::string::npos);
	}
	gst_caps_unref(drm);

	GstCaps *loose = gst_caps_from_string("video/x-raw,format=NV12,width=[1,100],height=64");
	ck_assert_error(gst::dmaDrmInfoFromCaps(loose), ErrorCode::InvalidArgument, "caps");
	gst_caps_unref(loose);
	GstCaps *audio = gst_caps_from_string("audio/x-raw,format=S16LE,rate=48000,channels=2");
	ck_assert_error(gst::dmaDrmInfoFromCaps(audio), ErrorCode::InvalidArgument, "caps");
	gst_caps_unref(audio);
	GstCaps *v210 =
		gst_caps_from_string("video/x-raw(memory:DMABuf),format=v210,width=64,height=64");
	ck_assert_error(gst::dmaDrmInfoFromCaps(v210), ErrorCode::NotSupported, "caps.format");
	gst_caps_unref(v210);
	ck_assert_error(gst::dmaDrmInfoFromCaps(nullptr), ErrorCode::InvalidArgument, "caps");
}
END_TEST

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
	const bool udmabuf = access("/dev/udmabuf", R_OK | W_OK) == 0;
	if (!udmabuf)
		std::printf(
			"The real DMA-BUF case is skipped: /dev/udmabuf is absent or closed.\n");
	gst_init(&argc, &argv);
	// As gst_check_init() does: a GLib critical or warning fails the test that caused it.
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	Suite *s = suite_create("gst-convert");
	TCase *tc = tcase_create("gst-convert");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, format_tables_go_both_ways);
	tcase_add_test(tc, colorimetry_round_trips);
	tcase_add_test(tc, video_info_and_buffer_layout);
	tcase_add_test(tc, dma_drm_caps);
	tcase_add_test(tc, system_buffers_become_frames_without_a_copy);
	tcase_add_test(tc, system_frames_keep_their_buffer);
	tcase_add_test(tc, system_buffer_errors);
	tcase_add_test(tc, fd_buffers_become_shm_frames);
	tcase_add_test(tc, dmabuf_buffers_become_dmabuf_frames);
	tcase_add_test(tc, fd_buffers_with_several_memories);
	tcase_add_test(tc, cpu_frames_become_system_buffers);
	tcase_add_test(tc, shm_frames_become_system_buffers);
	tcase_add_test(tc, system_buffer_planes_sync_and_errors);
	tcase_add_test(tc, frames_become_fd_buffers);
	tcase_add_test(tc, fd_memories_keep_their_frame_until_freed);
	tcase_add_test(tc, buffer_memory_kinds);
	if (udmabuf)
		tcase_add_test(tc, real_dmabuf_round_trip);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
