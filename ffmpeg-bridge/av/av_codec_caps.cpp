// The video codecs' GStreamer caps (see av_codec_caps.h).
#include "av_codec_caps.h"

namespace gpuhandle::av {

namespace {

// H.264 and H.265 whole access units, in every stream format FFmpeg's parsers read (codec data
// in the caps for avc/hvc1/hev1); MPEG video outside a system stream; JPEG one picture per
// buffer, as demuxers give it (matroskademux, qtdemux and avidemux set no `parsed`) or jpegparse.
constexpr CodecCaps kCodecCaps[] = {
	{ AV_CODEC_ID_H264,
	  "video/x-h264, stream-format=(string){ avc, avc3, byte-stream }, alignment=(string)au" },
	{ AV_CODEC_ID_HEVC,
	  "video/x-h265, stream-format=(string){ hvc1, hev1, byte-stream }, alignment=(string)au" },
	{ AV_CODEC_ID_VP8, "video/x-vp8" },
	{ AV_CODEC_ID_VP9, "video/x-vp9" },
	{ AV_CODEC_ID_AV1, "video/x-av1" },
	{ AV_CODEC_ID_MPEG2VIDEO, "video/mpeg, mpegversion=(int)2, systemstream=(boolean)false" },
	{ AV_CODEC_ID_MPEG4, "video/mpeg, mpegversion=(int)4, systemstream=(boolean)false" },
	{ AV_CODEC_ID_VC1, "video/x-wmv, wmvversion=(int)3, format=(string){ WVC1, WMVA }" },
	{ AV_CODEC_ID_PRORES, "video/x-prores" },
	{ AV_CODEC_ID_DNXHD, "video/x-dnxhd" },
	{ AV_CODEC_ID_FFV1, "video/x-ffv, ffvversion=(int)1" },
	{ AV_CODEC_ID_MJPEG, "image/jpeg" },
	{ AV_CODEC_ID_THEORA, "video/x-theora" },
	{ AV_CODEC_ID_HUFFYUV, "video/x-huffyuv" },
};

} // namespace

std::span<const CodecCaps> codecCaps() noexcept
{
	return kCodecCaps;
}

const char *capsOfCodec(AVCodecID codec) noexcept
{
	for (const CodecCaps &row : kCodecCaps)
		if (row.codec == codec)
			return row.caps;
	return nullptr;
}

} // namespace gpuhandle::av
