// gpuhandleavdec: FFmpeg's video decoders (libavcodec, on a hardware device where asked) as a
// GstVideoDecoder whose frames go out as memory:GpuHandle, system memory or the GPU memory
// downstream asks for: the element, its properties and pads (decoding:
// gstgpuhandleavdecdecode.cpp, output: ...output.cpp).
#include "gstgpuhandleavdec.h"

#include "av_codec_caps.h"
#include "gstgpuhandlestats.h"

#include <gst/gpuhandle/gstgpuhandlememory.h>

extern "C" {
#include <libavcodec/avcodec.h>
}

GST_DEBUG_CATEGORY(gst_gpu_handle_avdec_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_avdec_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::avdec;

namespace {

enum Property {
	PropDecoder = 1,
	PropHwaccel,
	PropHwDevice,
	PropHwaccelFallback,
	PropThreads,
	PropStats
};

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleAvdec, gst_gpu_handle_avdec, GST_TYPE_VIDEO_DECODER)
#pragma GCC diagnostic pop
// Rank NONE: decodebin keeps gst-libav's and the platform's decoders unless the user raises it.
GST_ELEMENT_REGISTER_DEFINE(gpuhandleavdec, "gpuhandleavdec", GST_RANK_NONE,
			    GST_TYPE_GPU_HANDLE_AVDEC);

namespace gpuhandle::gst::avdec {

GType fallbackType()
{
	static GType type = 0;
	if (g_once_init_enter(&type)) {
		static const GEnumValue values[] = {
			{ static_cast<gint>(Fallback::Software),
			  "Decode in software, with a warning", "software" },
			{ static_cast<gint>(Fallback::Error), "Fail with an element error",
			  "error" },
			{ 0, nullptr, nullptr },
		};
		g_once_init_leave(&type,
				  g_enum_register_static("GstGpuHandleAvdecFallback", values));
	}
	return type;
}

AvdecState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleAvdec *>(self)->state;
}

GstVideoDecoderClass *parentClass()
{
	return GST_VIDEO_DECODER_CLASS(gst_gpu_handle_avdec_parent_class);
}

} // namespace gpuhandle::gst::avdec

namespace {
void setProperty(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	AvdecState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	const char *text = G_VALUE_HOLDS_STRING(value) ? g_value_get_string(value) : nullptr;
	switch (id) {
	case PropDecoder: s.decoderName = text ? text : ""; break;
	case PropHwaccel: s.hwaccel = text && *text ? text : "none"; break;
	case PropHwDevice: s.hwDevice = text ? text : ""; break;
	case PropHwaccelFallback:
		s.fallback = static_cast<Fallback>(g_value_get_enum(value));
		break;
	case PropThreads: s.threads = g_value_get_int(value); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void getProperty(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	AvdecState &s = stateOf(object);
	std::lock_guard<std::mutex> lock(s.mutex);
	switch (id) {
	case PropDecoder: g_value_set_string(value, s.decoderName.c_str()); break;
	case PropHwaccel: g_value_set_string(value, s.hwaccel.c_str()); break;
	case PropHwDevice: g_value_set_string(value, s.hwDevice.c_str()); break;
	case PropHwaccelFallback: g_value_set_enum(value, static_cast<gint>(s.fallback)); break;
	case PropThreads: g_value_set_int(value, s.threads); break;
	case PropStats:
		g_value_take_boxed(
			value,
			gst_structure_new("gpuhandleavdec-stats", "frames", G_TYPE_UINT64,
					  s.frames.load(), "frames-gpuhandle", G_TYPE_UINT64,
					  s.gpuHandleFrames.load(), "copies", G_TYPE_UINT64,
					  s.copies.load(), "decode-errors", G_TYPE_UINT64,
					  s.decodeErrors.load(), "corrupt-frames", G_TYPE_UINT64,
					  s.corruptFrames.load(), "stream-errors", G_TYPE_UINT64,
					  s.streamErrors.load(), nullptr));
		break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
	}
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleAvdec *>(static_cast<void *>(object));
	download::release(self->state->out);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_avdec_parent_class)->finalize(object);
}

// The codecs this FFmpeg decodes, in the table's caps.
GstCaps *sinkTemplateCaps()
{
	GstCaps *caps = gst_caps_new_empty();
	for (const av::CodecCaps &row : av::codecCaps())
		if (avcodec_find_decoder(row.codec))
			gst_caps_append(caps, gst_caps_from_string(row.caps));
	return caps;
}

// The GPU memories' neighbours share their devices through context queries (as with
// gpuhandledownload); a flush ends a wait for a frame's fence at once.
gboolean srcQuery(GstVideoDecoder *decoder, GstQuery *query)
{
	if (download::answerQuery(stateOf(decoder).out, query))
		return TRUE;
	return parentClass()->src_query(decoder, query);
}

// At EOS (GstVideoDecoder calls it before it forwards EOS): the decoder's last frames out, then
// the totals on the bus, ahead of the sink's EOS.
GstFlowReturn finish(GstVideoDecoder *decoder)
{
	const GstFlowReturn flow = drain(decoder);
	postStats(GST_ELEMENT(decoder));
	return flow;
}

gboolean sinkEvent(GstVideoDecoder *decoder, GstEvent *event)
{
	noteFlush(event, stateOf(decoder).out.flushing);
	return parentClass()->sink_event(decoder, event);
}

void setContext(GstElement *element, GstContext *context)
{
	download::setContext(stateOf(element).out, context);
	GST_ELEMENT_CLASS(gst_gpu_handle_avdec_parent_class)->set_context(element, context);
}

GstStateChangeReturn changeState(GstElement *element, GstStateChange transition)
{
	noteFlush(transition, stateOf(element).out.flushing);
	return GST_ELEMENT_CLASS(gst_gpu_handle_avdec_parent_class)
		->change_state(element, transition);
}

} // namespace

static void gst_gpu_handle_avdec_class_init(GstGpuHandleAvdecClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->set_property = setProperty;
	object->get_property = getProperty;
	object->finalize = finalize;
	const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
						    GST_PARAM_MUTABLE_READY);
	g_object_class_install_property(
		object, PropDecoder,
		g_param_spec_string("decoder", "Decoder",
				    "The FFmpeg decoder to use, by name (ffmpeg -decoders: h264, "
				    "libdav1d, hevc_cuvid, ...); empty: FFmpeg's decoder of the "
				    "stream's codec",
				    nullptr, flags));
	g_object_class_install_property(
		object, PropHwaccel,
		g_param_spec_string("hwaccel", "Hardware acceleration",
				    "Decode on a device of this FFmpeg hardware type, as ffmpeg's "
				    "-hwaccel (vaapi, cuda, vulkan, drm, ...); none: in software",
				    "none", flags));
	g_object_class_install_property(
		object, PropHwDevice,
		g_param_spec_string(
			"hw-device", "Hardware device",
			"The hwaccel device, as ffmpeg's -hwaccel_device (a device path "
			"such as /dev/dri/renderD128, or an index); empty: FFmpeg's "
			"default",
			nullptr, flags));
	g_object_class_install_property(
		object, PropHwaccelFallback,
		g_param_spec_enum("hwaccel-fallback", "Hardware fallback",
				  "What to do when the hwaccel device cannot be made or the "
				  "decoder does not offer its frames for the stream",
				  fallbackType(), static_cast<gint>(Fallback::Software), flags));
	g_object_class_install_property(
		object, PropThreads,
		g_param_spec_int("threads", "Threads",
				 "Decoding threads (FFmpeg's thread_count); 0: FFmpeg's choice", 0,
				 256, 0, flags));
	g_object_class_install_property(
		object, PropStats,
		g_param_spec_boxed(
			"stats", "Statistics",
			"frames, frames-gpuhandle (pushed as memory:GpuHandle), copies "
			"(frames whose pixels were copied), decode-errors (packets or frames "
			"the decoder refused), corrupt-frames, stream-errors (errors "
			"FFmpeg reported and concealed) (guint64)",
			GST_TYPE_STRUCTURE,
			static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	element->set_context = setContext;
	element->change_state = changeState;
	gst_element_class_set_static_metadata(
		element, "gpuhandle FFmpeg video decoder", "Codec/Decoder/Video/Hardware",
		"Decodes video with FFmpeg's decoders, on a hardware device where asked (hwaccel); "
		"frames go out as memory:GpuHandle without a copy, as system memory, or as the GL, "
		"Vulkan, DMABuf or CUDA memory downstream asks for",
		"gpuhandle developers");
	GstCaps *sinkCaps = sinkTemplateCaps();
	gst_element_class_add_pad_template(element, gst_pad_template_new("sink", GST_PAD_SINK,
									 GST_PAD_ALWAYS, sinkCaps));
	gst_caps_unref(sinkCaps);
	GstCaps *srcCaps = srcTemplateCaps();
	gst_element_class_add_pad_template(element, gst_pad_template_new("src", GST_PAD_SRC,
									 GST_PAD_ALWAYS, srcCaps));
	gst_caps_unref(srcCaps);

	GstVideoDecoderClass *video = GST_VIDEO_DECODER_CLASS(klass);
	video->start = start;
	video->stop = stop;
	video->set_format = setFormat;
	video->handle_frame = handleFrame;
	video->flush = flush;
	video->drain = drain;
	video->finish = finish;
	video->decide_allocation = decideAllocation;
	video->src_query = srcQuery;
	video->sink_event = sinkEvent;
	gst_type_mark_as_plugin_api(fallbackType(), static_cast<GstPluginAPIFlags>(0));
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_avdec_debug, "gpuhandleavdec", 0,
				"gpuhandle FFmpeg video decoder");
}

static void gst_gpu_handle_avdec_init(GstGpuHandleAvdec *self)
{
	self->state = new AvdecState();
	// Its frames get their timestamps from GstVideoDecoder: nothing to carry over.
	self->state->out.element = GST_ELEMENT(self);
	self->state->out.category = gst_gpu_handle_avdec_debug;
	GstVideoDecoder *decoder = GST_VIDEO_DECODER(self);
	// Packets are whole frames (parsed caps); FFmpeg reorders, GstVideoDecoder times.
	gst_video_decoder_set_packetized(decoder, TRUE);
	gst_video_decoder_set_needs_format(decoder, TRUE);
	gst_video_decoder_set_use_default_pad_acceptcaps(decoder, TRUE);
	GST_PAD_SET_ACCEPT_TEMPLATE(GST_VIDEO_DECODER_SINK_PAD(decoder));
}
