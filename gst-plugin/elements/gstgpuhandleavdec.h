// gpuhandleavdec: the element type, its state, and the parts its files share (not installed).
#pragma once

#include "av_decoder.h"
#include "gstgpuhandledownloader.h"
#include "gstgpuhandleelements.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <gst/video/gstvideodecoder.h>
#include <gst/video/video.h>

namespace gpuhandle::gst::avdec {

// The `hwaccel-fallback` property (GEnum GstGpuHandleAvdecFallback): what to do when the
// hardware device cannot be made or the decoder does not offer its frames for a stream.
enum class Fallback : int { Software = 0, Error = 1 };
GType fallbackType();

// What the element keeps. Properties are guarded by `mutex` and read at set_format; the rest
// belongs to the streaming thread.
struct AvdecState {
	std::mutex mutex{};
	std::string decoderName{}; // empty: libavcodec's decoder of the caps' codec
	std::string hwaccel{ "none" };
	std::string hwDevice{};
	Fallback fallback = Fallback::Software;
	int threads = 0; // 0: FFmpeg's choice

	std::unique_ptr<av::VideoDecoder> decoder{};
	AVPacket *packet = nullptr;
	AVFrame *frame = nullptr;
	GstVideoCodecState *input = nullptr;
	Fallback streamFallback = Fallback::Software; // the property's value at set_format
	bool toldFallback = false;

	// What the src pad was negotiated for (the frames that made its caps).
	bool negotiated = false;
	bool gpuHandle = false; // memory:GpuHandle
	// A GPU memory downstream asked for (VulkanImage, GLMemory, CUDAMemory, DMABuf): frames go
	// into `out.target` through gpuhandledownload's steps, on the device the neighbours share.
	bool device = false;
	download::Downloader out{};
	bool downstreamVideoMeta = false;
	int outWidth = 0;
	int outHeight = 0;
	int outFormat = -1; // AVPixelFormat
	bool outInterlaced = false;
	GstVideoInfo outInfo{};

	std::atomic<uint64_t> frames{ 0 };
	std::atomic<uint64_t> gpuHandleFrames{ 0 }; // pushed as memory:GpuHandle
	std::atomic<uint64_t> copies{ 0 };          // frames whose pixels were copied
	std::atomic<uint64_t> decodeErrors{ 0 };    // packets or frames the decoder refused
	std::atomic<uint64_t> corruptFrames{ 0 };   // frames FFmpeg flagged corrupt
	// FFmpeg's error messages about the stream (concealment, bad slices, ...), from any of the
	// decoder's threads; the streaming thread posts a warning at the first, logs the others.
	std::atomic<uint64_t> streamErrors{ 0 };
	uint64_t warnedStreamErrors = 0; // the count last logged
	bool toldStreamErrors = false;   // the bus warning posted (once per start)
	std::mutex logMutex{};
	std::string lastStreamError{};
};

AvdecState &stateOf(void *self);
GstVideoDecoderClass *parentClass();

// gstgpuhandleavdecdecode.cpp: GstVideoDecoder's start, stop, set_format, handle_frame, flush
// and drain (finish too).
gboolean start(GstVideoDecoder *decoder);
gboolean stop(GstVideoDecoder *decoder);
gboolean setFormat(GstVideoDecoder *decoder, GstVideoCodecState *state);
GstFlowReturn handleFrame(GstVideoDecoder *decoder, GstVideoCodecFrame *frame);
gboolean flush(GstVideoDecoder *decoder);
GstFlowReturn drain(GstVideoDecoder *decoder);

// gstgpuhandleavdecoutput.cpp: a decoded frame to the src pad (the caps negotiated or renegotiated
// for it, memory:GpuHandle or system memory in the layout downstream reads), finishing `frame`.
GstFlowReturn finishWithFrame(GstVideoDecoder *decoder, AvdecState &s, GstVideoCodecFrame *frame,
			      AVFrame *picture);
// decide_allocation: whether downstream reads GstVideoMeta; frames of memory:GpuHandle and of GPU
// memories need no pool.
gboolean decideAllocation(GstVideoDecoder *decoder, GstQuery *query);
// The memory types the src pad offers: memory:GpuHandle, system memory, then the GPU memories
// gpuhandledownload gives.
GstCaps *srcTemplateCaps();

} // namespace gpuhandle::gst::avdec

// The element type, declared as GStreamer's elements are (G_DECLARE_FINAL_TYPE,
// GST_ELEMENT_REGISTER_DECLARE); its instance holds the state above.
G_BEGIN_DECLS
#define GST_TYPE_GPU_HANDLE_AVDEC (gst_gpu_handle_avdec_get_type())
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DECLARE_FINAL_TYPE(GstGpuHandleAvdec, gst_gpu_handle_avdec, GST, GPU_HANDLE_AVDEC,
		     GstVideoDecoder)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DECLARE(gpuhandleavdec);
G_END_DECLS

struct _GstGpuHandleAvdec {
	GstVideoDecoder parent;
	gpuhandle::gst::avdec::AvdecState *state;
};
