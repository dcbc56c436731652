// The video decoder gpuhandle-avbridge and gpuhandleavdec share (ffmpeg-bridge/av/) on real
// libavcodec: a stream FFmpeg's own MJPEG encoder made decodes frame for frame at its size, and a
// hardware type FFmpeg does not know is an error listing the ones it does.
#include "av_decoder.h"

#include <string>
#include <vector>

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
}

#include "check_helpers.h"

using namespace gpuhandle;
using namespace gpuhandle::av;

namespace {

constexpr int kWidth = 64, kHeight = 48, kFrames = 5;

// kFrames 64x48 frames encoded by FFmpeg's MJPEG encoder, each a packet.
std::vector<AVPacket *> encodedStream()
{
	const AVCodec *encoder = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
	ck_assert_ptr_nonnull(encoder);
	AVCodecContext *ctx = avcodec_alloc_context3(encoder);
	ctx->width = kWidth;
	ctx->height = kHeight;
	ctx->pix_fmt = AV_PIX_FMT_YUVJ420P;
	ctx->time_base = AVRational{ 1, 30 };
	ck_assert_int_eq(avcodec_open2(ctx, encoder, nullptr), 0);
	std::vector<AVPacket *> packets;
	AVFrame *frame = av_frame_alloc();
	frame->width = kWidth;
	frame->height = kHeight;
	frame->format = AV_PIX_FMT_YUVJ420P;
	ck_assert_int_eq(av_frame_get_buffer(frame, 0), 0);
	for (int i = 0; i <= kFrames; ++i) {
		if (i < kFrames) {
			for (int p = 0; p < 3; ++p)
				for (int y = 0; y < (p ? kHeight / 2 : kHeight); ++y)
					for (int x = 0; x < (p ? kWidth / 2 : kWidth); ++x)
						frame->data[p][y * frame->linesize[p] + x] =
							static_cast<uint8_t>(x * 3 + y + i * 20);
			frame->pts = i;
		}
		ck_assert_int_eq(avcodec_send_frame(ctx, i < kFrames ? frame : nullptr), 0);
		for (;;) {
			AVPacket *packet = av_packet_alloc();
			if (avcodec_receive_packet(ctx, packet) < 0) {
				av_packet_free(&packet);
				break;
			}
			packets.push_back(packet);
		}
	}
	av_frame_free(&frame);
	avcodec_free_context(&ctx);
	return packets;
}

} // namespace

START_TEST(a_stream_decodes_frame_for_frame)
{
	std::vector<AVPacket *> packets = encodedStream();
	ck_assert_uint_eq(packets.size(), kFrames);
	AVCodecParameters *parameters = avcodec_parameters_alloc();
	parameters->codec_type = AVMEDIA_TYPE_VIDEO;
	parameters->codec_id = AV_CODEC_ID_MJPEG;
	parameters->width = kWidth;
	parameters->height = kHeight;
	VideoDecoder decoder;
	ck_assert(decoder.create(avcodec_find_decoder(AV_CODEC_ID_MJPEG), parameters,
				 AVRational{ 1, 30 })
			  .ok());
	avcodec_parameters_free(&parameters);
	ck_assert(decoder.open().ok());
	ck_assert_ptr_null(decoder.device());
	int decoded = 0;
	AVFrame *frame = av_frame_alloc();
	for (size_t i = 0; i <= packets.size(); ++i) {
		ck_assert_int_eq(avcodec_send_packet(decoder.context(),
						     i < packets.size() ? packets[i] : nullptr),
				 0);
		while (avcodec_receive_frame(decoder.context(), frame) == 0) {
			ck_assert_int_eq(frame->width, kWidth);
			ck_assert_int_eq(frame->height, kHeight);
			ck_assert_int_eq(frame->pts, decoded);
			++decoded;
			av_frame_unref(frame);
		}
	}
	av_frame_free(&frame);
	for (AVPacket *&packet : packets)
		av_packet_free(&packet);
	ck_assert_int_eq(decoded, kFrames);
	ck_assert_int_eq(decoder.fallbackFormat(), AV_PIX_FMT_NONE);
}
END_TEST

START_TEST(an_unknown_hardware_type_lists_the_known_ones)
{
	VideoDecoder decoder;
	ck_assert(decoder.create(avcodec_find_decoder(AV_CODEC_ID_MJPEG), nullptr,
				 AVRational{ 1, 30 })
			  .ok());
	Status unknown = decoder.useHardware("no-such-device");
	ck_assert(!unknown.ok());
	ck_assert_int_eq(static_cast<int>(unknown.error().code()),
			 static_cast<int>(ErrorCode::InvalidArgument));
	const std::string &why = unknown.error().message();
	ck_assert_msg(why.find("no-such-device") != std::string::npos &&
			      why.find("vulkan") != std::string::npos,
		      "%s", why.c_str());
}
END_TEST

int main()
{
	Suite *s = suite_create("av_decoder");
	TCase *tc = tcase_create("decoder");
	tcase_add_test(tc, a_stream_decodes_frame_for_frame);
	tcase_add_test(tc, an_unknown_hardware_type_lists_the_known_ones);
	suite_add_tcase(s, tc);
	return gpuhandle::test::runSuite(s);
}
