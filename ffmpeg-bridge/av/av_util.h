// FFmpeg helpers shared by gpuhandle-avbridge and the elements that run FFmpeg inside GStreamer:
// error text, buffer ownership, hardware devices.
#pragma once

#include <gpuhandle/result.h>

#include <string>

struct AVBufferRef;

namespace gpuhandle::av {

// FFmpeg's sentence for an AVERROR code.
std::string avErrorText(int code);
// An Error whose message is `what` followed by FFmpeg's sentence for `code`.
Error avError(const std::string &what, int code);

// Unrefs an AVBufferRef when it goes out of scope (null is fine).
struct AvBufferOwner {
	AVBufferRef *ref = nullptr;
	AvBufferOwner() = default;
	explicit AvBufferOwner(AVBufferRef *owned) : ref(owned) {}
	~AvBufferOwner();
	AvBufferOwner(const AvBufferOwner &) = delete;
	AvBufferOwner &operator=(const AvBufferOwner &) = delete;
};

// A device like ffmpeg's -init_hw_device TYPE[:DEVICE] (av_hwdevice_ctx_create). The caller
// unrefs it. Errors: InvalidArgument (an unknown type, listing the known ones), Backend.
Result<AVBufferRef *> createHwDevice(const std::string &spec);

// An initialised frames context of `device` (its type's hardware format; Vulkan frames one image
// per plane, requestVulkanPlaneImages) for `swFormat` (AVPixelFormat) frames of width x height:
// what gpuhandle frames are wrapped in on their way into FFmpeg (avFrameFromFrame's hwFrames).
// The caller unrefs it. Errors: OutOfMemory, NotSupported (a device type without frames here),
// Backend (FFmpeg refused it).
Result<AVBufferRef *> createHwFrames(AVBufferRef *device, int swFormat, int width, int height);

} // namespace gpuhandle::av
