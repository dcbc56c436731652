// Test helper: AVFrames from av_frame_get_buffer whose buffers count their frees, and patterns.
#pragma once

#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include <cstdint>
#include <string>

extern "C" {
#include <libavutil/buffer.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
}

// Last: Check defines a fail() macro that breaks standard headers included after it.
#include "../backends/frame_pattern.h"

#include "check_helpers.h"

namespace gpuhandle::test {

// Buffers made and freed by countedAvFrame().
inline int g_avBuffersMade = 0;
inline int g_avBuffersFreed = 0;

// Zero at the start of each test (CK_FORK=no runs them all in one process).
inline void resetAvCounts()
{
	g_avBuffersMade = 0;
	g_avBuffersFreed = 0;
}

inline void freeCounted(void *opaque, uint8_t *)
{
	AVBufferRef *original = static_cast<AVBufferRef *>(opaque);
	av_buffer_unref(&original);
	g_avBuffersFreed++;
}

// A width x height AVFrame of `format` from av_frame_get_buffer (its own alignment when align is
// 0), each buf[] replaced by a buffer over the same bytes whose free is counted. Null on failure.
inline AVFrame *countedAvFrame(AVPixelFormat format, int width, int height, int align = 0)
{
	AVFrame *frame = av_frame_alloc();
	if (!frame)
		return nullptr;
	frame->format = format;
	frame->width = width;
	frame->height = height;
	if (av_frame_get_buffer(frame, align) < 0) {
		av_frame_free(&frame);
		return nullptr;
	}
	for (AVBufferRef *&buf : frame->buf) {
		if (!buf)
			continue;
		AVBufferRef *counted = av_buffer_create(buf->data, buf->size, freeCounted, buf, 0);
		if (!counted) {
			av_frame_free(&frame);
			return nullptr;
		}
		buf = counted;
		g_avBuffersMade++;
	}
	return frame;
}

// Writes the frame_pattern.h bytes into every pixel row of `frame`, seen as a frame of `like`'s
// format and size (padding is left alone).
inline void fillAvFrame(AVFrame *frame, const Frame &like, uint32_t seed)
{
	fillRows(like, seed, [&](uint32_t p, uint32_t y) {
		return frame->data[p] + static_cast<ptrdiff_t>(y) * frame->linesize[p];
	});
}

// Empty when every pixel byte of `frame` holds the pattern, else the first difference.
inline std::string checkAvFrame(const AVFrame *frame, const Frame &like, uint32_t seed)
{
	return checkRows(like, seed, [&](uint32_t p, uint32_t y) -> const uint8_t * {
		return frame->data[p] + static_cast<ptrdiff_t>(y) * frame->linesize[p];
	});
}

} // namespace gpuhandle::test
