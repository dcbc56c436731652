// Benchmark 1, the baselines: the same pooled handoff with GStreamer's and FFmpeg's own objects.
#include "handoff.h"

#include <gst/allocators/gstfdmemory.h>
#include <gst/gst.h>
#include <gst/video/video.h>
extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext_drm.h>
#include <libavutil/mem.h>
}

namespace gpuhandle::bench {

namespace {

constexpr uint32_t kDrmFormatNv12 = 0x3231564e; // fourcc_code('N', 'V', '1', '2')

// A slot's "free" flag; the release callbacks of both libraries set it (on the consumer thread).
using SlotFlags = std::array<std::atomic<bool>, kSlots>;

void setFlag(void *flag)
{
	static_cast<std::atomic<bool> *>(flag)->store(true, std::memory_order_release);
}

void freeFlags(SlotFlags &flags)
{
	for (auto &f : flags)
		f.store(true);
}

struct GstItem {
	GstBuffer *buffer;
	uint32_t slot;
};

uint32_t videoMetaStride(GstBuffer *buffer)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
	GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
#pragma GCC diagnostic pop
	return meta ? uint32_t(meta->stride[0]) : 0;
}

struct AvItem {
	AVFrame *frame;
	uint32_t slot;
};

// FFmpeg's free callback for the DRM descriptor a DRM_PRIME frame carries.
void freeDescriptor(void *flag, uint8_t *data)
{
	av_free(data);
	setFlag(flag);
}

void freeWrapped(void *flag, uint8_t *)
{
	setFlag(flag);
}

} // namespace

// gst_buffer_new + gst_memory_new_wrapped (CPU) or gst_fd_allocator_alloc (memfd) +
// gst_buffer_add_video_meta_full; the consumer reads the meta and unrefs the buffer. CPU slots
// come back through the wrapped memory's notify; fd memory has none, so the consumer frees the
// slot after the unref.
HandoffFigures handoffGstreamer(const PoolMemory &memory, Memory kind, Run run, int frames)
{
	GstAllocator *fdAllocator = gst_fd_allocator_new();
	SlotFlags flags;
	freeFlags(flags);
	gsize offsets[GST_VIDEO_MAX_PLANES] = { 0, kLumaBytes, 0, 0 };
	gint strides[GST_VIDEO_MAX_PLANES] = { int(kWidth), int(kWidth), 0, 0 };
	auto produce = [&](int i) {
		const uint32_t slot = uint32_t(i) % kSlots;
		takeSlot(flags[slot]);
		GstBuffer *buffer = gst_buffer_new();
		GstMemory *mem = kind == Memory::Cpu
					 ? gst_memory_new_wrapped(GstMemoryFlags(0),
								  memory.cpu[slot], kFrameBytes, 0,
								  kFrameBytes, &flags[slot],
								  setFlag)
					 : gst_fd_allocator_alloc(fdAllocator, memory.memfd[slot],
								  kFrameBytes,
								  GST_FD_MEMORY_FLAG_DONT_CLOSE);
		gst_buffer_append_memory(buffer, mem);
		gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE,
					       GST_VIDEO_FORMAT_NV12, kWidth, kHeight, 2, offsets,
					       strides);
		return GstItem{ buffer, slot };
	};
	auto consume = [&](GstItem &item) {
		g_consumerSink.fetch_add(videoMetaStride(item.buffer), std::memory_order_relaxed);
		gst_buffer_unref(item.buffer);
		if (kind == Memory::Memfd)
			setFlag(&flags[item.slot]);
	};
	HandoffFigures figures = runHandoff<GstItem>(run, frames, produce, consume);
	gst_object_unref(fdAllocator);
	return figures;
}

// av_frame_alloc + av_buffer_create over the plane memory (CPU), or over a DRM descriptor naming
// the memfd (memfd: FFmpeg's only fd-carrying frame, AV_PIX_FMT_DRM_PRIME, as its hwcontext maps
// make them); the consumer reads the frame and frees it, which frees the slot.
HandoffFigures handoffFfmpeg(const PoolMemory &memory, Memory kind, Run run, int frames)
{
	SlotFlags flags;
	freeFlags(flags);
	bool failed = false;
	auto produce = [&](int i) {
		const uint32_t slot = uint32_t(i) % kSlots;
		takeSlot(flags[slot]);
		AVFrame *frame = av_frame_alloc();
		frame->width = int(kWidth);
		frame->height = int(kHeight);
		if (kind == Memory::Cpu) {
			frame->format = AV_PIX_FMT_NV12;
			frame->buf[0] = av_buffer_create(memory.cpu[slot], kFrameBytes, freeWrapped,
							 &flags[slot], 0);
			frame->data[0] = memory.cpu[slot];
			frame->data[1] = memory.cpu[slot] + kLumaBytes;
			frame->linesize[0] = frame->linesize[1] = int(kWidth);
		} else {
			auto *desc = static_cast<AVDRMFrameDescriptor *>(
				av_mallocz(sizeof(AVDRMFrameDescriptor)));
			desc->nb_objects = 1;
			desc->objects[0] = { memory.memfd[slot], kFrameBytes, 0 };
			desc->nb_layers = 1;
			desc->layers[0].format = kDrmFormatNv12;
			desc->layers[0].nb_planes = 2;
			desc->layers[0].planes[0] = { 0, 0, ptrdiff_t(kWidth) };
			desc->layers[0].planes[1] = { 0, ptrdiff_t(kLumaBytes), ptrdiff_t(kWidth) };
			frame->format = AV_PIX_FMT_DRM_PRIME;
			frame->buf[0] = av_buffer_create(reinterpret_cast<uint8_t *>(desc),
							 sizeof(*desc), freeDescriptor,
							 &flags[slot], 0);
			frame->data[0] = reinterpret_cast<uint8_t *>(desc);
		}
		failed |= !frame->buf[0];
		return AvItem{ frame, slot };
	};
	auto consume = [&](AvItem &item) {
		uint32_t stride = uint32_t(item.frame->linesize[0]);
		if (item.frame->format == AV_PIX_FMT_DRM_PRIME)
			stride = uint32_t(
				reinterpret_cast<const AVDRMFrameDescriptor *>(item.frame->data[0])
					->layers[0]
					.planes[0]
					.pitch);
		g_consumerSink.fetch_add(stride, std::memory_order_relaxed);
		av_frame_free(&item.frame);
	};
	HandoffFigures figures = runHandoff<AvItem>(run, frames, produce, consume);
	if (failed)
		figures.error = "av_buffer_create failed";
	return figures;
}

HandoffFigures handoffFloor(Run run, int frames)
{
	SlotFlags flags;
	freeFlags(flags);
	auto produce = [&](int i) {
		const uint32_t slot = uint32_t(i) % kSlots;
		takeSlot(flags[slot]);
		return slot;
	};
	auto consume = [&](uint32_t &slot) {
		g_consumerSink.fetch_add(slot, std::memory_order_relaxed);
		setFlag(&flags[slot]);
	};
	return runHandoff<uint32_t>(run, frames, produce, consume);
}

} // namespace gpuhandle::bench
