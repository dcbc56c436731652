// Software AVFrames to Frames and back without a copy: formats, odd sizes, pointer identity, the
// source freed first, buffers freed exactly once, frame properties and colour carried across.
#include <gpuhandle/cpu_fence.h>
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>
#include <gpuhandle/format_mappings.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "av_frames.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

constexpr AVPixelFormat kFormats[] = { AV_PIX_FMT_YUV420P, AV_PIX_FMT_NV12,    AV_PIX_FMT_P010LE,
				       AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUYV422, AV_PIX_FMT_RGBA,
				       AV_PIX_FMT_BGR0,    AV_PIX_FMT_GRAY8 };
struct Size {
	int width = 0;
	int height = 0;
};
constexpr Size kSizes[] = { { 1, 1 }, { 33, 17 }, { 1918, 1078 }, { 3840, 2160 } };

// One AVFrame -> Frame -> AVFrame round trip of `format` at `size`, asserting every step.
void roundTrip(AVPixelFormat format, Size size, uint32_t seed, int align)
{
	const char *name = av_get_pix_fmt_name(format);
	AVFrame *source = test::countedAvFrame(format, size.width, size.height, align);
	ck_assert_msg(source != nullptr, "%s %dx%d: av_frame_get_buffer failed", name, size.width,
		      size.height);
	const int made = test::g_avBuffersMade;
	uint8_t *data[4] = {};
	int linesize[4] = {};
	{
		Result<Frame> frame = frameFromAVFrame(source);
		ck_assert_msg(frame.ok(), "%s %dx%d: %s", name, size.width, size.height,
			      frame.ok() ? "" : frame.error().message().c_str());
		ck_assert_uint_eq(frame->width(), static_cast<uint32_t>(size.width));
		ck_assert_uint_eq(frame->height(), static_cast<uint32_t>(size.height));
		// yuvj* frames are yuv*p frames with full range: they come back as yuv*p.
		const AVPixelFormat expected = toAvPixelFormat(frame->format()).value();
		ck_assert(expected == format || isFullRangeAlias(format));
		ck_assert_uint_eq(frame->numResources(), 1);
		const CpuPlanes *planes = frame->resource(0).get<CpuPlanes>();
		ck_assert_ptr_nonnull(planes);
		// The Frame's planes are the AVFrame's own bytes: no copy.
		for (uint32_t p = 0; p < frame->numPlanes(); p++) {
			data[p] = source->data[p];
			linesize[p] = source->linesize[p];
			ck_assert_ptr_eq(planes->desc().planes[p].data, source->data[p]);
			ck_assert_uint_eq(frame->plane(p).stride,
					  static_cast<uint32_t>(source->linesize[p]));
		}
		test::fillAvFrame(source, *frame, seed);
		// The caller's AVFrame goes first; the Frame's references keep the bytes.
		av_frame_free(&source);
		ck_assert_int_eq(test::g_avBuffersFreed, 0);

		ExecutionPath path;
		Result<AVFrame *> out = avFrameFromFrame(*frame, {}, &path);
		ck_assert_msg(out.ok(), "%s back: %s", name,
			      out.ok() ? "" : out.error().message().c_str());
		ck_assert(path == ExecutionPath::zeroCopy());
		AVFrame *back = *out;
		ck_assert_int_eq(back->format, expected);
		ck_assert_int_eq(back->width, size.width);
		ck_assert_int_eq(back->height, size.height);
		for (uint32_t p = 0; p < frame->numPlanes(); p++) {
			ck_assert_ptr_eq(back->data[p], data[p]);
			ck_assert_int_eq(back->linesize[p], linesize[p]);
			// Every plane lies in one of the frame's buffers.
			ck_assert_ptr_nonnull(av_frame_get_plane_buffer(back, static_cast<int>(p)));
		}
		ck_assert(!av_frame_is_writable(back));
		const std::string checked = test::checkAvFrame(back, *frame, seed);
		ck_assert_msg(checked.empty(), "%s", checked.c_str());
		// The Frame goes (end of scope) while the AVFrame still reads the bytes.
		source = back;
	}
	ck_assert_int_eq(test::g_avBuffersFreed, 0);
	ck_assert_ptr_eq(source->data[0], data[0]);
	av_frame_free(&source);
	// Every counted buffer freed, once.
	ck_assert_int_eq(test::g_avBuffersFreed, made);
	test::g_avBuffersMade = test::g_avBuffersFreed = 0;
}

START_TEST(software_frames_round_trip_without_a_copy)
{
	test::resetAvCounts();
	uint32_t seed = 1;
	for (AVPixelFormat format : kFormats)
		for (Size size : kSizes)
			roundTrip(format, size, seed++, 0);
	ck_assert_uint_gt(seed, 1);
}
END_TEST

START_TEST(explicit_alignments_round_trip)
{
	test::resetAvCounts();
	uint32_t seed = 7;
	for (int align : { 1, 16, 64 })
		for (AVPixelFormat format : kFormats)
			roundTrip(format, { 33, 17 }, seed++, align);
	ck_assert_int_eq(test::g_avBuffersMade, 0);
}
END_TEST

// Every AVPixelFormat of the core's table that this libavutil knows wraps and comes back.
START_TEST(every_mapped_format_wraps)
{
	test::resetAvCounts();
	int wrapped = 0;
	for (const FormatMapping &row : formatMappings(FormatApi::FFmpeg)) {
		const AVPixelFormat format = av_get_pix_fmt(row.name);
		if (format == AV_PIX_FMT_NONE) {
			std::printf("%s: not in this libavutil\n", row.name);
			continue;
		}
		ck_assert(fromAvPixelFormat(format).value() == row.format);
		roundTrip(format, { 33, 17 }, static_cast<uint32_t>(wrapped + 3), 0);
		wrapped++;
	}
	ck_assert_int_gt(wrapped, 40);
}
END_TEST

// Two AVFrames over one Frame, and Frames over those: the source buffers are freed once, when
// the last of them goes, whatever the order.
START_TEST(buffers_are_freed_exactly_once)
{
	test::resetAvCounts();
	AVFrame *source = test::countedAvFrame(AV_PIX_FMT_NV12, 64, 32);
	ck_assert_ptr_nonnull(source);
	const int made = test::g_avBuffersMade; // one buffer for all planes in FFmpeg 5.1
	ck_assert_int_ge(made, 1);
	Result<Frame> frame = frameFromAVFrame(source);
	ck_assert_ok(frame);
	AVFrame *a = avFrameFromFrame(*frame).value();
	AVFrame *b = av_frame_clone(a);
	ck_assert_ptr_nonnull(b);
	Result<Frame> again = frameFromAVFrame(b);
	ck_assert_ok(again);
	AVFrame *c = avFrameFromFrame(*again).value();
	ck_assert_ptr_eq(c->data[1], source->data[1]);
	av_frame_free(&source);
	av_frame_free(&a);
	frame = Error(ErrorCode::Cancelled, "", "dropped");
	av_frame_free(&b);
	ck_assert_int_eq(test::g_avBuffersFreed, 0);
	again = Error(ErrorCode::Cancelled, "", "dropped");
	ck_assert_int_eq(test::g_avBuffersFreed, 0);
	av_frame_free(&c);
	ck_assert_int_eq(test::g_avBuffersFreed, made);
}
END_TEST

// A 64x16 RGBA frame over `bytes`, rows of 256 bytes, kept alive by `anchor`.
Result<Frame> rgbaFrame(std::vector<uint8_t> &bytes, const KeepAliveRef &anchor)
{
	FrameDesc desc;
	desc.format = PixelFormat::RGBA;
	desc.width = 64;
	desc.height = 16;
	desc.numResources = 1;
	desc.resources[0] = CpuBytes::create({ bytes.data(), bytes.size(), anchor }).value();
	desc.numPlanes = 1;
	desc.planes[0] = PlaneView{ 0, 0, 0, 256 };
	return Frame::create(std::move(desc));
}

// A Frame the bridge did not make: its anchor is released once, after the last AVFrame buffer.
START_TEST(the_frame_anchor_is_released_once)
{
	test::resetAvCounts();
	static int released = 0;
	std::vector<uint8_t> bytes(64 * 16 * 4, 0x5a);
	KeepAliveRef anchor = makeKeepAlive([](void *) { released++; }, nullptr);
	Result<Frame> made = rgbaFrame(bytes, anchor);
	ck_assert_ok(made);
	Frame frame = std::move(*made);
	made = Error(ErrorCode::Cancelled, "", "moved");
	anchor.reset();
	Result<AVFrame *> wrapped = avFrameFromFrame(frame);
	ck_assert_ok(wrapped);
	AVFrame *a = *wrapped;
	AVFrame *b = av_frame_clone(a);
	ck_assert_ptr_eq(a->data[0], bytes.data());
	ck_assert_int_eq(a->linesize[0], 256);
	frame = Frame::wrap(PixelFormat::GRAY8, 1, 1, {},
			    CpuBytes::create({ bytes.data(), 1, {} }).value())
			.value();
	av_frame_free(&a);
	ck_assert_int_eq(released, 0);
	ck_assert_int_eq(b->data[0][255], 0x5a);
	av_frame_free(&b);
	ck_assert_int_eq(released, 1);
}
END_TEST

START_TEST(properties_and_colour_are_carried)
{
	test::resetAvCounts();
	AVFrame *source = test::countedAvFrame(AV_PIX_FMT_YUV420P, 64, 48);
	ck_assert_ptr_nonnull(source);
	source->pts = 9000;
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
	source->duration = 3000;
#else
	source->pkt_duration = 3000;
#endif
	source->time_base = AVRational{ 1, 90000 };
	source->sample_aspect_ratio = AVRational{ 16, 11 };
	source->crop_left = 2;
	source->crop_right = 6;
	source->crop_top = 0;
	source->crop_bottom = 8;
	source->color_range = AVCOL_RANGE_MPEG;
	source->colorspace = AVCOL_SPC_BT2020_NCL;
	source->color_primaries = AVCOL_PRI_BT2020;
	source->color_trc = AVCOL_TRC_SMPTE2084;
	FrameProperties props;
	Result<Frame> frame = frameFromAVFrame(source, &props);
	ck_assert_ok(frame);
	ck_assert(frame->colorimetry() ==
		  (Colorimetry{ ColorRange::Limited, ColorMatrix::Bt2020Ncl, ColorPrimaries::Bt2020,
				ColorTransfer::Pq }));
	ck_assert_int_eq(props.pts, 9000);
	ck_assert_int_eq(props.duration, 3000);
	ck_assert_int_eq(props.timeBase.den, 90000);
	ck_assert_int_eq(props.sampleAspectRatio.num, 16);
	ck_assert_int_eq(props.sampleAspectRatio.den, 11);
	ck_assert_uint_eq(props.cropLeft, 2);
	ck_assert_uint_eq(props.cropRight, 6);
	ck_assert_uint_eq(props.cropBottom, 8);
	// Crop is carried, not applied: the Frame is the whole buffer.
	ck_assert_uint_eq(frame->width(), 64);
	ck_assert_uint_eq(frame->height(), 48);

	AvFrameOptions options;
	options.properties = &props;
	AVFrame *back = avFrameFromFrame(*frame, options).value();
	ck_assert_int_eq(back->pts, 9000);
	ck_assert_int_eq(framePropertiesOf(back).duration, 3000);
	ck_assert_int_eq(back->time_base.num, 1);
	ck_assert_int_eq(back->time_base.den, 90000);
	ck_assert_int_eq(back->sample_aspect_ratio.num, 16);
	ck_assert_uint_eq(back->crop_left, 2);
	ck_assert_uint_eq(back->crop_right, 6);
	ck_assert_uint_eq(back->crop_bottom, 8);
	ck_assert_int_eq(back->color_range, AVCOL_RANGE_MPEG);
	ck_assert_int_eq(back->colorspace, AVCOL_SPC_BT2020_NCL);
	ck_assert_int_eq(back->color_primaries, AVCOL_PRI_BT2020);
	ck_assert_int_eq(back->color_trc, AVCOL_TRC_SMPTE2084);
	// FFmpeg itself can apply the crop the AVFrame carries.
	ck_assert_int_eq(av_frame_apply_cropping(back, AV_FRAME_CROP_UNALIGNED), 0);
	ck_assert_int_eq(back->width, 56);
	ck_assert_int_eq(back->height, 40);
	av_frame_free(&back);
	av_frame_free(&source);
	frame = Error(ErrorCode::Cancelled, "", "dropped");
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}
END_TEST

// Colour values gpuhandle has no code for become Unknown field by field; yuvj means full range.
START_TEST(unknown_colour_values_become_unknown)
{
	test::resetAvCounts();
	AVFrame *source = test::countedAvFrame(AV_PIX_FMT_YUVJ420P, 16, 16);
	ck_assert_ptr_nonnull(source);
	source->colorspace = AVCOL_SPC_NB;
	source->color_primaries = AVCOL_PRI_BT709;
	source->color_trc = AVCOL_TRC_RESERVED;
	Frame frame = frameFromAVFrame(source).value();
	ck_assert(frame.format() == PixelFormat::YUV420P);
	ck_assert(frame.colorimetry() ==
		  (Colorimetry{ ColorRange::Full, ColorMatrix::Unknown, ColorPrimaries::Bt709,
				ColorTransfer::Unknown }));
	ck_assert_error(fromAvColorFields(AVCOL_RANGE_JPEG, AVCOL_SPC_NB, AVCOL_PRI_BT709,
					  AVCOL_TRC_BT709),
			ErrorCode::NotSupported, "space");
	ck_assert_string_eq(avPixelFormatName(AV_PIX_FMT_P010LE), "AV_PIX_FMT_P010LE");
	ck_assert_string_eq(avPixelFormatName(-5), "AVPixelFormat -5");
	av_frame_free(&source);
}
END_TEST

// The acquire point is waited for, bounded, before an AVFrame is returned; the release gate is
// signalled when the last AVFrame buffer goes.
START_TEST(acquire_is_waited_and_release_signalled)
{
	test::resetAvCounts();
	static int released = 0;
	std::vector<uint8_t> bytes(64 * 16 * 4, 0x11);
	Frame frame = rgbaFrame(bytes, makeKeepAlive([](void *) { released++; }, nullptr)).value();
	std::shared_ptr<CpuFence> fence = CpuFence::create().value();
	frame.setAcquire(fence->point());
	ReleaseGate gate = ReleaseGate::create().value();
	frame.setRelease(gate);

	AvFrameOptions quick;
	quick.timeout = std::chrono::milliseconds(30);
	ck_assert_error(avFrameFromFrame(frame, quick), ErrorCode::Timeout, "timeout");
	ck_assert(!gate.isSignaled());

	std::thread producer([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		bytes[0] = 0x22; // written before the fence signals
		fence->signal();
	});
	Result<AVFrame *> wrapped = avFrameFromFrame(frame);
	producer.join();
	ck_assert_ok(wrapped);
	AVFrame *out = *wrapped;
	ck_assert_uint_eq(out->data[0][0], 0x22);
	frame = rgbaFrame(bytes, {}).value();
	ck_assert(!gate.isSignaled());
	ck_assert_int_eq(released, 0);
	av_frame_free(&out);
	ck_assert(gate.isSignaled());
	ck_assert_int_eq(released, 1);
}
END_TEST

} // namespace

int main()
{
	Suite *suite = suite_create("ffmpeg-frame");
	TCase *tc = tcase_create("software");
	tcase_set_timeout(tc, 100);
	tcase_add_test(tc, software_frames_round_trip_without_a_copy);
	tcase_add_test(tc, explicit_alignments_round_trip);
	tcase_add_test(tc, every_mapped_format_wraps);
	tcase_add_test(tc, buffers_are_freed_exactly_once);
	tcase_add_test(tc, the_frame_anchor_is_released_once);
	tcase_add_test(tc, properties_and_colour_are_carried);
	tcase_add_test(tc, unknown_colour_values_become_unknown);
	tcase_add_test(tc, acquire_is_waited_and_release_signalled);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
