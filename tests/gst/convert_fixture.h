// Shared by the GstBuffer <-> Frame tests: formats and sizes, video infos, the test pattern
// written or checked through GStreamer's map and gpuhandle's, backends, fd memories.
#pragma once

#include <gpuhandle/backends/backend.h>

#include <chrono>
#include <iterator>
#include <string>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#include <gst/video/video.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/frame_pattern.h"
#include "fd_count.h"

namespace gpuhandle::test::convert {

using namespace std::chrono_literals;

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

inline GstVideoInfo videoInfo(GstVideoFormat format, Size size)
{
	GstVideoInfo info;
	ck_assert(gst_video_info_set_format(&info, format, size.width, size.height));
	return info;
}

inline const PixelFormatInfo &formatInfo(GstVideoFormat format)
{
	Result<PixelFormat> pixel = gst::pixelFormatOf(format);
	ck_assert_ok(pixel);
	return **pixelFormatInfo(*pixel);
}

// Writes (fill) or checks the test pattern in every pixel byte of `buffer` mapped as a video
// frame of `info`. Empty when every byte matched, else the first that did not.
inline std::string videoPattern(GstBuffer *buffer, const GstVideoInfo &info, uint32_t seed,
				bool fill)
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
inline std::string framePattern(const Frame &frame, uint32_t seed)
{
	Result<CpuMapping> mapped = mapFrame(frame, MapAccess::Read, 1s);
	if (!mapped)
		return "mapFrame: " + mapped.error().message();
	return test::checkPattern(*mapped, frame, seed);
}

inline BackendRef open(BackendKind kind)
{
	Result<BackendRef> backend = openBackend(kind);
	ck_assert_msg(backend.ok(), "%s", backend.ok() ? "" : backend.error().message().c_str());
	return *backend;
}

inline Frame allocate(Backend &backend, PixelFormat format, Size size)
{
	Result<Frame> frame = backend.allocate(
		{ format, size.width, size.height, {}, FrameStorage::Buffer, 0, true });
	ck_assert_msg(frame.ok(), "%s", frame.ok() ? "" : frame.error().message().c_str());
	return *frame;
}

inline GstAllocator *fdAllocator(bool dmaBuf)
{
	static GstAllocator *dma = gst_dmabuf_allocator_new();
	static GstAllocator *fd = gst_fd_allocator_new();
	return dmaBuf ? dma : fd;
}

// A memfd of `size` bytes as a GstFdMemory, or a GstDmaBufMemory (an fd memory by another name:
// GStreamer maps both with mmap; only the DMA_BUF_IOCTL_SYNC it tries fails on a memfd).
inline GstMemory *memfdMemory(gsize size, bool dmaBuf)
{
	UniqueFd memfd = test::makeMemfd(size);
	ck_assert(memfd.isValid());
	return dmaBuf ? gst_dmabuf_allocator_alloc(fdAllocator(true), memfd.release(), size)
		      : gst_fd_allocator_alloc(fdAllocator(false), memfd.release(), size,
					       GST_FD_MEMORY_FLAG_NONE);
}

inline GstBuffer *bufferOf(GstMemory *mem)
{
	GstBuffer *buffer = gst_buffer_new();
	gst_buffer_append_memory(buffer, mem);
	return buffer;
}

inline int refcount(GstBuffer *buffer)
{
	return GST_MINI_OBJECT_REFCOUNT_VALUE(buffer);
}

} // namespace gpuhandle::test::convert
