// gpuhandleavdec's output: caps from the decoded frames (size, format, colorimetry, interlacing,
// pixel aspect ratio, HDR metadata), renegotiated when they change, and each frame handed on as
// memory:GpuHandle or as system memory in the layout downstream reads.
#include "av_gst_frame.h"
#include "gstgpuhandleavdec.h"

#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandlepeerlayout.hpp>

extern "C" {
#include <libavutil/mastering_display_metadata.h>
}

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_avdec_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_avdec_debug

namespace gpuhandle::gst::avdec {

namespace {

bool interlacedOf(const AVFrame *picture)
{
#ifdef AV_FRAME_FLAG_INTERLACED // FFmpeg 6.1 and later
	return picture->flags & AV_FRAME_FLAG_INTERLACED;
#else
	return picture->interlaced_frame != 0;
#endif
}

bool topFieldFirstOf(const AVFrame *picture)
{
#ifdef AV_FRAME_FLAG_TOP_FIELD_FIRST
	return picture->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST;
#else
	return picture->top_field_first != 0;
#endif
}

bool corruptOf(const AVFrame *picture)
{
	return (picture->flags & AV_FRAME_FLAG_CORRUPT) || picture->decode_error_flags != 0;
}

// A rational in units of 1/`scale`, clamped to guint32 (GStreamer's HDR fields).
guint32 inUnits(AVRational value, int64_t scale)
{
	if (value.den <= 0 || value.num < 0)
		return 0;
	const int64_t units = av_rescale(value.num, scale, value.den);
	return static_cast<guint32>(std::min<int64_t>(units, G_MAXUINT32));
}

// Mastering display and content light level, as GStreamer's caps carry them.
void addHdrFields(GstCaps *caps, const AVFrame *picture)
{
	if (const AVFrameSideData *side =
		    av_frame_get_side_data(picture, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)) {
		const auto *m = reinterpret_cast<const AVMasteringDisplayMetadata *>(side->data);
		if (m->has_primaries && m->has_luminance) {
			GstVideoMasteringDisplayInfo info;
			gst_video_mastering_display_info_init(&info);
			for (int i = 0; i < 3; ++i) {
				info.display_primaries[i].x = static_cast<guint16>(
					inUnits(m->display_primaries[i][0], 50000));
				info.display_primaries[i].y = static_cast<guint16>(
					inUnits(m->display_primaries[i][1], 50000));
			}
			info.white_point.x =
				static_cast<guint16>(inUnits(m->white_point[0], 50000));
			info.white_point.y =
				static_cast<guint16>(inUnits(m->white_point[1], 50000));
			info.max_display_mastering_luminance = inUnits(m->max_luminance, 10000);
			info.min_display_mastering_luminance = inUnits(m->min_luminance, 10000);
			gst_video_mastering_display_info_add_to_caps(&info, caps);
		}
	}
	if (const AVFrameSideData *side =
		    av_frame_get_side_data(picture, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)) {
		const auto *l = reinterpret_cast<const AVContentLightMetadata *>(side->data);
		GstVideoContentLightLevel level;
		gst_video_content_light_level_init(&level);
		level.max_content_light_level = static_cast<guint16>(std::min(l->MaxCLL, 65535u));
		level.max_frame_average_light_level =
			static_cast<guint16>(std::min(l->MaxFALL, 65535u));
		gst_video_content_light_level_add_to_caps(&level, caps);
	}
}

// The src caps for `picture` (described by `frameInfo`), negotiated with downstream.
bool negotiate(GstVideoDecoder *decoder, AvdecState &s, const AVFrame *picture,
	       const GstVideoInfo &frameInfo)
{
	GstVideoCodecState *out = gst_video_decoder_set_output_state(
		decoder, GST_VIDEO_INFO_FORMAT(&frameInfo), GST_VIDEO_INFO_WIDTH(&frameInfo),
		GST_VIDEO_INFO_HEIGHT(&frameInfo), s.input);
	if (!out)
		return false;
	out->info.colorimetry = frameInfo.colorimetry;
	out->info.chroma_site = frameInfo.chroma_site;
	if (picture->sample_aspect_ratio.num > 0 && picture->sample_aspect_ratio.den > 0) {
		GST_VIDEO_INFO_PAR_N(&out->info) = picture->sample_aspect_ratio.num;
		GST_VIDEO_INFO_PAR_D(&out->info) = picture->sample_aspect_ratio.den;
	}
	GST_VIDEO_INFO_INTERLACE_MODE(&out->info) = interlacedOf(picture)
							    ? GST_VIDEO_INTERLACE_MODE_MIXED
							    : GST_VIDEO_INTERLACE_MODE_PROGRESSIVE;
	GstCaps *caps = gst_video_info_to_caps(&out->info);
	if (caps) {
		av::setGpuHandleFeature(caps, s.gpuHandle);
		addHdrFields(caps, picture);
		gst_caps_replace(&out->caps, caps);
		gst_caps_unref(caps);
	}
	s.outInfo = out->info;
	gst_video_codec_state_unref(out);
	GST_DEBUG_OBJECT(decoder, "negotiating %" GST_PTR_FORMAT, static_cast<void *>(caps));
	return caps && gst_video_decoder_negotiate(decoder);
}

} // namespace

GstFlowReturn finishWithFrame(GstVideoDecoder *decoder, AvdecState &s, GstVideoCodecFrame *frame,
			      AVFrame *picture)
{
	const bool interlaced = interlacedOf(picture);
	const bool changed = !s.negotiated || picture->width != s.outWidth ||
			     picture->height != s.outHeight || picture->format != s.outFormat ||
			     interlaced != s.outInterlaced;
	if (changed)
		s.gpuHandle = av::peerNamesGpuHandle(GST_VIDEO_DECODER_SRC_PAD(decoder));
	av::GstFrameOptions options{};
	options.systemMemory = !s.gpuHandle;
	Result<av::GstFrame> out = av::gstFrameOf(picture, options);
	if (!out) {
		gst_video_decoder_drop_frame(decoder, frame);
		GPUHANDLE_ELEMENT_ERROR(decoder, STREAM, DECODE,
					(_("A decoded frame could not be handed on: %s"),
					 out.error().message().c_str()),
					out.error());
		return GST_FLOW_ERROR;
	}
	if (changed) {
		if (!negotiate(decoder, s, picture, out->info)) {
			gst_buffer_unref(out->buffer);
			gst_video_decoder_drop_frame(decoder, frame);
			if (GST_PAD_IS_FLUSHING(GST_VIDEO_DECODER_SRC_PAD(decoder)))
				return GST_FLOW_FLUSHING;
			GST_ELEMENT_ERROR(
				decoder, CORE, NEGOTIATION,
				(_("Downstream does not take the decoded %dx%d %s "
				   "frames."),
				 picture->width, picture->height,
				 gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&out->info))),
				(nullptr));
			return GST_FLOW_NOT_NEGOTIATED;
		}
		s.negotiated = true;
		s.outWidth = picture->width;
		s.outHeight = picture->height;
		s.outFormat = picture->format;
		s.outInterlaced = interlaced;
	}
	GstBuffer *buffer = out->buffer;
	bool copied = out->copied;
	if (!s.gpuHandle && !s.downstreamVideoMeta) { // GStreamer's layout rule for such a peer
		copied = copied || !hasDefaultLayout(buffer, s.outInfo);
		Result<GstBuffer *> fixed = toDefaultLayout(buffer, s.outInfo); // takes `buffer`
		if (!fixed) {
			gst_video_decoder_drop_frame(decoder, frame);
			GPUHANDLE_ELEMENT_ERROR(decoder, STREAM, DECODE,
						(_("A decoded frame could not be handed on: %s"),
						 fixed.error().message().c_str()),
						fixed.error());
			return GST_FLOW_ERROR;
		}
		buffer = *fixed;
	}
	if (interlaced) {
		GST_BUFFER_FLAG_SET(buffer, GST_VIDEO_BUFFER_FLAG_INTERLACED);
		if (topFieldFirstOf(picture))
			GST_BUFFER_FLAG_SET(buffer, GST_VIDEO_BUFFER_FLAG_TFF);
	}
	if (corruptOf(picture)) {
		++s.corruptFrames;
		GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_CORRUPTED);
	}
	frame->output_buffer = buffer;
	++s.frames;
	if (s.gpuHandle)
		++s.gpuHandleFrames;
	if (copied)
		++s.copies;
	return gst_video_decoder_finish_frame(decoder, frame);
}

gboolean decideAllocation(GstVideoDecoder *decoder, GstQuery *query)
{
	AvdecState &s = stateOf(decoder);
	s.downstreamVideoMeta =
		gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	if (!s.gpuHandle)
		return parentClass()->decide_allocation(decoder, query);
	// memory:GpuHandle frames are the decoder's own: GstVideoDecoder gets a pool that allocates
	// nothing (a downstream pool would make frames nobody uses).
	GstCaps *caps = nullptr;
	gst_query_parse_allocation(query, &caps, nullptr);
	while (gst_query_get_n_allocation_pools(query) > 0)
		gst_query_remove_nth_allocation_pool(query, 0);
	GstBufferPool *pool = gst_buffer_pool_new();
	GstStructure *config = gst_buffer_pool_get_config(pool);
	gst_buffer_pool_config_set_params(config, caps, 0, 0, 0);
	const gboolean configured = gst_buffer_pool_set_config(pool, config);
	gst_query_add_allocation_pool(query, pool, 0, 0, 0);
	gst_object_unref(pool);
	return configured;
}

} // namespace gpuhandle::gst::avdec
