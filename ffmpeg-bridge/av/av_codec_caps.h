// The GStreamer caps of the video codecs FFmpeg decodes: what gpuhandleavdec's sink pad takes,
// in the form GStreamer's parsers and demuxers give (the names gst-libav's decoders use).
#pragma once

#include <cstdint> // UINT64_C, which libavutil/common.h needs in C++
#include <span>

extern "C" {
#include <libavcodec/codec_id.h>
}

namespace gpuhandle::av {

struct CodecCaps {
	AVCodecID codec;
	const char *caps; // a GstCaps string: one structure, the stream's form where it matters
};

// One row per codec, in the order a decoder element offers them.
std::span<const CodecCaps> codecCaps() noexcept;

// The caps of `codec`, or null when the table has no row for it.
const char *capsOfCodec(AVCodecID codec) noexcept;

} // namespace gpuhandle::av
