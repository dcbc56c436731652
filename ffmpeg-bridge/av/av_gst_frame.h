// A decoded or filtered AVFrame as a GstBuffer (memory:GpuHandle, or system memory with a
// GstVideoMeta) with its video info: what gpuhandle-avbridge's to-gst and the FFmpeg elements hand
// to GStreamer.
#pragma once

#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/result.h>

#include <gst/video/video.h>

struct AVFrame;

namespace gpuhandle::av {

struct GstFrame {
	GstBuffer *buffer = nullptr; // the caller's reference
	GstVideoInfo info{};         // size, format, colorimetry (no frame rate)
	ffmpeg::FrameProperties properties{};
	bool hardware = false; // the AVFrame was a hardware frame (hw_frames_ctx)
	bool copied = false;   // its pixels were copied (a hardware frame to system memory)
};

struct GstFrameOptions {
	// FFmpeg 5.1's Vulkan hwupload copies from a host-mapped software frame without waiting and
	// frees that frame at once: waiting for a Vulkan frame's acquire point keeps the next frame
	// from overwriting it before the GPU copied it. Graphs that hwupload need it; decoders not.
	bool waitVulkanFrames = false;
	// System memory (read-only, with a GstVideoMeta) instead of memory:GpuHandle: software
	// frames without a copy, hardware frames through av_hwframe_transfer_data.
	bool systemMemory = false;
};

// Wraps `frame` without a copy (frameFromAVFrame, then gst::bufferFromFrame on the frame's
// device's backend, or gst::systemBufferFromFrame); the buffer keeps the AVFrame's buffers, so
// the caller may free the AVFrame. PTS and duration are left to the caller. Errors:
// frameFromAVFrame's (with the format named), backendForHwDevice's, NotSupported (no GStreamer
// video info for the format), Backend (a hardware frame FFmpeg could not download).
Result<GstFrame> gstFrameOf(AVFrame *frame, const GstFrameOptions &options = {});

// Whether the peer of `srcpad` names memory:GpuHandle in its caps itself (a caps feature of ANY,
// fakesink's, does not count: such a peer gets system memory, which every element reads).
bool peerNamesGpuHandle(GstPad *srcpad);

// `caps` (one structure) with the caps feature memory:GpuHandle, or system memory when
// `gpuHandle` is false.
void setGpuHandleFeature(GstCaps *caps, bool gpuHandle);

} // namespace gpuhandle::av
