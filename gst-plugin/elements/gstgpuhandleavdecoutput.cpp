// gpuhandleavdec's output: caps from the decoded frames (size, format, colorimetry, interlacing,
// pixel aspect ratio, HDR metadata), renegotiated when they change, and each frame handed on as
// memory:GpuHandle, as system memory in the layout downstream reads, or in the GPU memory
// downstream asks for.
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

// Whether `peer` takes `candidate` (one structure of a GPU memory) in a structure that names
// that memory itself: a caps feature of ANY (fakesink's) does not count.
bool peerNames(GstCaps *peer, GstCaps *candidate)
{
	for (guint i = 0; i < gst_caps_get_size(peer); ++i) {
		const GstCapsFeatures *features = gst_caps_get_features(peer, i);
		if (!features || gst_caps_features_is_any(features))
			continue;
		GstCaps *one = gst_caps_copy_nth(peer, i);
		const bool takes = gst_caps_can_intersect(one, candidate) != FALSE;
		gst_caps_unref(one);
		if (takes)
			return true;
	}
	return false;
}

// The GPU memory `caps` (system memory) go out as, fixed, or null: the first the peer names, in
// the memory-type table's order, with the memory of the frames' own API (`native`, hardware
// frames) first. With `onlyIfNoSystem`, none where the peer takes system memory: software
// frames stay where they are unless downstream takes nothing else.
GstCaps *deviceCapsFor(GstCaps *peer, GstCaps *caps, std::optional<BackendKind> native,
		       bool onlyIfNoSystem, const MemoryTypeInfo *&chosen)
{
	if (onlyIfNoSystem && gst_caps_can_intersect(peer, caps))
		return nullptr;
	std::vector<const MemoryTypeInfo *> order;
	for (const MemoryTypeInfo &type : memoryTypes())
		if (type.built && type.outputRank >= 0 && type.memory != BufferMemory::System)
			order.push_back(&type);
	std::stable_sort(order.begin(), order.end(),
			 [&](const MemoryTypeInfo *a, const MemoryTypeInfo *b) {
				 if (native && (a->backend == *native) != (b->backend == *native))
					 return a->backend == *native;
				 return a->outputRank < b->outputRank;
			 });
	for (const MemoryTypeInfo *type : order) {
		GstCaps *candidate = capsWithFeatures(caps, { type->feature });
		if (!gst_caps_is_empty(candidate) && peerNames(peer, candidate)) {
			GstCaps *taken = gst_caps_intersect(peer, candidate);
			gst_caps_unref(candidate);
			chosen = type;
			return gst_caps_fixate(taken);
		}
		gst_caps_unref(candidate);
	}
	return nullptr;
}

// Sets the caps' memory: memory:GpuHandle where the peer names it; else a GPU memory the peer
// names (for hardware frames, which then stay on the GPU; for software frames only where the
// peer takes no system memory); else system memory. Sets s.gpuHandle, s.device and
// s.out.target; returns the caps to negotiate (a reference the caller drops).
GstCaps *chooseMemory(GstVideoDecoder *decoder, AvdecState &s, GstCaps *caps,
		      const av::GstFrame &wrapped)
{
	s.gpuHandle = av::peerNamesGpuHandle(GST_VIDEO_DECODER_SRC_PAD(decoder));
	s.device = false;
	if (s.gpuHandle) {
		av::setGpuHandleFeature(caps, true);
		return gst_caps_ref(caps);
	}
	GstCaps *peer = gst_pad_peer_query_caps(GST_VIDEO_DECODER_SRC_PAD(decoder), nullptr);
	GstCaps *device = nullptr;
	if (peer && !gst_caps_is_any(peer)) {
		std::optional<BackendKind> native;
		const BackendRef backend = memoryBackend(gst_buffer_peek_memory(wrapped.buffer, 0));
		if (wrapped.hardware && backend)
			native = backend->kind();
		const MemoryTypeInfo *chosen = nullptr;
		device = deviceCapsFor(peer, caps, native, !wrapped.hardware, chosen);
		if (device) {
			s.device = true;
			s.out.target = chosen;
		}
	}
	if (peer)
		gst_caps_unref(peer);
	return device ? device : gst_caps_ref(caps);
}

// The src caps for `picture` (described by `wrapped`, as memory:GpuHandle), in the memory
// chosen for it, negotiated with downstream; the GPU memory's device opened (NoDevice: the
// element error is posted).
enum class Negotiated { Yes, Refused, NoDevice };
Negotiated negotiate(GstVideoDecoder *decoder, AvdecState &s, const AVFrame *picture,
		     const av::GstFrame &wrapped)
{
	const GstVideoInfo &frameInfo = wrapped.info;
	GstVideoCodecState *out = gst_video_decoder_set_output_state(
		decoder, GST_VIDEO_INFO_FORMAT(&frameInfo), GST_VIDEO_INFO_WIDTH(&frameInfo),
		GST_VIDEO_INFO_HEIGHT(&frameInfo), s.input);
	if (!out)
		return Negotiated::Refused;
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
		addHdrFields(caps, picture);
		GstCaps *chosen = chooseMemory(decoder, s, caps, wrapped);
		gst_caps_unref(caps);
		caps = chosen;
		gst_caps_replace(&out->caps, caps);
		gst_caps_unref(caps);
	}
	s.outInfo = out->info;
	gst_video_codec_state_unref(out);
	GST_DEBUG_OBJECT(decoder, "negotiating %" GST_PTR_FORMAT, static_cast<void *>(caps));
	if (!caps || !gst_video_decoder_negotiate(decoder))
		return Negotiated::Refused;
	if (!s.device)
		return Negotiated::Yes;
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&s.outInfo));
	if (!format.ok()) { // frames gpuhandle wrapped have gpuhandle's formats
		GPUHANDLE_ELEMENT_ERROR(decoder, CORE, NEGOTIATION,
					(_("The video format is not supported by gpuhandle.")),
					format.error());
		return Negotiated::NoDevice;
	}
	return download::setTarget(s.out, s.outInfo, *format, *s.out.target) ? Negotiated::Yes
									     : Negotiated::NoDevice;
}

// A wrap of `picture` as memory:GpuHandle, or as system memory in the layout downstream reads
// (the element error posted when it fails).
Result<av::GstFrame> wrap(GstVideoDecoder *decoder, AVFrame *picture, bool systemMemory)
{
	av::GstFrameOptions options{};
	options.systemMemory = systemMemory;
	Result<av::GstFrame> out = av::gstFrameOf(picture, options);
	if (!out)
		GPUHANDLE_ELEMENT_ERROR(decoder, STREAM, DECODE,
					(_("A decoded frame could not be handed on: %s"),
					 out.error().message().c_str()),
					out.error());
	return out;
}

// `wrapped` (memory:GpuHandle, taken) into the negotiated GPU memory: `*buffer` set, or the
// error posted.
GstFlowReturn intoDevice(AvdecState &s, GstBuffer *wrapped, GstBuffer **buffer, bool &copied)
{
	std::optional<Frame> assembled;
	BackendRef backend;
	const Frame *frame = download::inputFrame(s.out, wrapped, assembled, backend);
	const GstFlowReturn ret =
		frame ? download::toDevice(s.out, wrapped, *frame, backend, buffer)
		      : GST_FLOW_ERROR;
	gst_buffer_unref(wrapped); // the output keeps it where it aliases its memory
	copied = copied || (ret == GST_FLOW_OK && s.out.lastPath != ExecutionPath::Kind::ZeroCopy);
	return ret;
}

} // namespace

GstFlowReturn finishWithFrame(GstVideoDecoder *decoder, AvdecState &s, GstVideoCodecFrame *frame,
			      AVFrame *picture)
{
	const bool interlaced = interlacedOf(picture);
	const bool changed = !s.negotiated || picture->width != s.outWidth ||
			     picture->height != s.outHeight || picture->format != s.outFormat ||
			     interlaced != s.outInterlaced;
	// New caps: the memory is chosen with the frame wrapped as memory:GpuHandle (its info and
	// device), and system memory wraps it again.
	Result<av::GstFrame> out = wrap(decoder, picture, !changed && !s.gpuHandle && !s.device);
	if (!out) {
		gst_video_decoder_drop_frame(decoder, frame);
		return GST_FLOW_ERROR;
	}
	if (changed) {
		const Negotiated negotiated = negotiate(decoder, s, picture, *out);
		if (negotiated != Negotiated::Yes) {
			gst_buffer_unref(out->buffer);
			gst_video_decoder_drop_frame(decoder, frame);
			s.negotiated = false;
			if (negotiated == Negotiated::NoDevice)
				return GST_FLOW_ERROR;
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
		if (!s.gpuHandle && !s.device) {
			gst_buffer_unref(out->buffer);
			out = wrap(decoder, picture, true);
			if (!out) {
				gst_video_decoder_drop_frame(decoder, frame);
				return GST_FLOW_ERROR;
			}
		}
	}
	GstBuffer *buffer = out->buffer;
	bool copied = out->copied;
	if (s.device) {
		if (GstFlowReturn ret = intoDevice(s, buffer, &buffer, copied);
		    ret != GST_FLOW_OK) {
			gst_video_decoder_drop_frame(decoder, frame);
			return ret;
		}
	} else if (!s.gpuHandle && !s.downstreamVideoMeta) { // GStreamer's layout rule
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
	download::noteDownstreamMetas(s.out, query);
	if (!s.gpuHandle && !s.device)
		return parentClass()->decide_allocation(decoder, query);
	// memory:GpuHandle frames are the decoder's own, and GPU memories wrap or copy them
	// (gpuhandledownload's steps, with pools of their own): GstVideoDecoder gets a pool that
	// allocates nothing (a downstream pool would make frames nobody uses).
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

GstCaps *srcTemplateCaps()
{
	GstCaps *caps = templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE);
	gst_caps_append(caps, templateCaps(GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY));
	for (const char *feature : memoryFeatures(MemoryRole::Output)) {
		if (std::string_view(feature) == GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY)
			continue;
		GstCaps *any = templateCaps(feature);
		gst_caps_append(caps, capsWithFeatures(any, { feature }));
		gst_caps_unref(any);
	}
	return caps;
}

} // namespace gpuhandle::gst::avdec
