// Buffers for peers without GstVideoMeta: trimmed in place when laid out by default, else copied.
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>

namespace gpuhandle::gst {

bool hasDefaultLayout(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (!buffer || gst_buffer_get_size(buffer) < GST_VIDEO_INFO_SIZE(&info))
		return false;
	const GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
	if (!meta)
		return true;
	if (meta->format != GST_VIDEO_INFO_FORMAT(&info) ||
	    meta->n_planes != GST_VIDEO_INFO_N_PLANES(&info) ||
	    meta->width != static_cast<guint>(GST_VIDEO_INFO_WIDTH(&info)) ||
	    meta->height != static_cast<guint>(GST_VIDEO_INFO_HEIGHT(&info)))
		return false;
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); ++p)
		if (meta->offset[p] != GST_VIDEO_INFO_PLANE_OFFSET(&info, p) ||
		    meta->stride[p] != GST_VIDEO_INFO_PLANE_STRIDE(&info, p))
			return false;
	return true;
}

namespace {

bool hasOnlyVideoMetas(GstBuffer *buffer)
{
	gpointer state = nullptr;
	while (GstMeta *meta = gst_buffer_iterate_meta(buffer, &state))
		if (meta->info->api != GST_VIDEO_META_API_TYPE)
			return false;
	return true;
}

// The video meta goes (the peer did not ask for it, and a stale one would be wrong after a
// trim); so does a size past the frame's (a page-rounded memfd, a padded pool slot).
GstBuffer *trimInPlace(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (!gst_buffer_is_writable(buffer) && hasOnlyVideoMetas(buffer)) {
		// Shared, as a buffer passed on usually is: a new one over the same memories (cut
		// to the frame) with its timestamps and flags, rather than a copy of its metas
		// whose one video meta is then removed (half the cost per buffer).
		GstBuffer *out = gst_buffer_new();
		gst_buffer_copy_into(out, buffer,
				     static_cast<GstBufferCopyFlags>(GST_BUFFER_COPY_FLAGS |
								     GST_BUFFER_COPY_TIMESTAMPS |
								     GST_BUFFER_COPY_MEMORY),
				     0, GST_VIDEO_INFO_SIZE(&info));
		// A region short of the whole buffer leaves the duration and end offset behind
		// (gst_buffer_copy_into's rule for parts of a buffer); this is the whole frame.
		GST_BUFFER_DURATION(out) = GST_BUFFER_DURATION(buffer);
		GST_BUFFER_OFFSET_END(out) = GST_BUFFER_OFFSET_END(buffer);
		gst_buffer_unref(buffer);
		return out;
	}
	buffer = gst_buffer_make_writable(buffer); // a shallow copy when shared: memories stay
	if (GstVideoMeta *meta = gst_buffer_get_video_meta(buffer))
		gst_buffer_remove_meta(buffer, &meta->meta);
	if (gst_buffer_get_size(buffer) != GST_VIDEO_INFO_SIZE(&info))
		gst_buffer_resize(buffer, 0, static_cast<gssize>(GST_VIDEO_INFO_SIZE(&info)));
	return buffer;
}

} // namespace

Result<GstBuffer *> toDefaultLayout(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	if (hasDefaultLayout(buffer, info))
		return trimInPlace(buffer, info);
	GstVideoFrame src;
	if (!gst_video_frame_map(&src, &info, buffer, GST_MAP_READ)) {
		const gsize size = gst_buffer_get_size(buffer);
		gst_buffer_unref(buffer);
		return Error::format(
			ErrorCode::InvalidArgument, "buffer",
			"A %s %dx%d buffer of %" G_GSIZE_FORMAT " bytes did not map for "
			"reading, so it could not be copied into GStreamer's default layout.",
			gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
			GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), size);
	}
	GstBuffer *out = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
	GstVideoFrame dst;
	if (!out || !gst_video_frame_map(&dst, &info, out, GST_MAP_WRITE)) {
		gst_video_frame_unmap(&src);
		gst_buffer_unref(buffer);
		if (out)
			gst_buffer_unref(out);
		return Error(ErrorCode::Io, "buffer",
			     "No writable buffer in GStreamer's default layout could be made.");
	}
	const bool copied = gst_video_frame_copy(&dst, &src) != FALSE;
	gst_video_frame_unmap(&dst);
	gst_video_frame_unmap(&src);
	if (!copied) {
		gst_buffer_unref(buffer);
		gst_buffer_unref(out);
		return Error(ErrorCode::Io, "buffer",
			     "Copying the frame into the default layout failed.");
	}
	// Timestamps, flags and metas as gst_buffer_copy() carries them (memory metas stay behind:
	// the memory is new); the source's video meta described the source's layout only.
	gst_buffer_copy_into(out, buffer,
			     static_cast<GstBufferCopyFlags>(GST_BUFFER_COPY_FLAGS |
							     GST_BUFFER_COPY_TIMESTAMPS |
							     GST_BUFFER_COPY_META),
			     0, static_cast<gsize>(-1));
	if (GstVideoMeta *meta = gst_buffer_get_video_meta(out))
		gst_buffer_remove_meta(out, &meta->meta);
	gst_buffer_unref(buffer);
	return out;
}

} // namespace gpuhandle::gst
