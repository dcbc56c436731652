// What the GL, Vulkan, CUDA and VA conversions share (not installed): one backend per GStreamer
// object, and a video info's format named and looked up.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>

#include <memory>
#include <mutex>

#include <gst/video/video.h>

namespace gpuhandle::gst::detail {

// One backend per GStreamer object (a GL context, a Vulkan device), found through a weak
// reference in the object's qdata under `quark`: the backend holds the object, so a strong
// reference there would be a cycle. Opening a backend runs GPU work, so it is not done under
// the lock: two first callers may both open one, and the first to store it wins.
inline std::mutex gBackendCacheMutex;

inline void deleteWeakBackend(gpointer weak)
{
	delete static_cast<std::weak_ptr<Backend> *>(weak);
}

// The live backend cached on `object`, else null.
inline BackendRef cachedBackend(GObject *object, GQuark quark)
{
	std::lock_guard<std::mutex> lock(gBackendCacheMutex);
	auto *weak = static_cast<std::weak_ptr<Backend> *>(g_object_get_qdata(object, quark));
	return weak ? weak->lock() : nullptr;
}

// Caches `backend` on `object` and returns it, or returns the live one cached there first.
inline BackendRef cacheBackend(GObject *object, GQuark quark, BackendRef backend)
{
	std::lock_guard<std::mutex> lock(gBackendCacheMutex);
	auto *weak = static_cast<std::weak_ptr<Backend> *>(g_object_get_qdata(object, quark));
	if (weak)
		if (BackendRef existing = weak->lock())
			return existing;
	g_object_set_qdata_full(object, quark, new std::weak_ptr<Backend>(backend),
				deleteWeakBackend);
	return backend;
}

// The anchor of frames over a buffer's memories: a reference on the buffer (whose memories hold
// their context, device or display), dropped when the last copy of the frame goes.
struct BufferAnchor final : KeepAlive {
	explicit BufferAnchor(GstBuffer *b) : buffer(gst_buffer_ref(b)) {}
	BufferAnchor(const BufferAnchor &) = delete;
	BufferAnchor &operator=(const BufferAnchor &) = delete;
	~BufferAnchor() override { gst_buffer_unref(buffer); }

	GstBuffer *const buffer;
};

inline const char *videoFormatName(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	return name ? name : "unknown";
}

// The gpuhandle format of `info`. Errors: NotSupported naming "info.format".
inline Result<PixelFormat> pixelFormatOfInfo(const GstVideoInfo &info)
{
	const GstVideoFormat format = GST_VIDEO_INFO_FORMAT(&info);
	Result<PixelFormat> mapped =
		fromApiFormat(FormatApi::GStreamer, static_cast<uint32_t>(format));
	if (!mapped)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "The GstVideoFormat %s has no gpuhandle format.",
				     videoFormatName(format));
	return mapped;
}

} // namespace gpuhandle::gst::detail
