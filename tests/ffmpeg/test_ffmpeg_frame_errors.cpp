// Bad input to the FFmpeg bridge: null, hardware frames, unknown and unmapped formats, negative
// linesizes, frames that are not reference-counted, crops: clear errors, nothing leaked.
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>

#include <string>
#include <vector>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "av_frames.h"
#include "fd_count.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

bool mentions(const Error &error, const char *text)
{
	return error.message().find(text) != std::string::npos;
}

START_TEST(null_frame_is_refused)
{
	test::resetAvCounts();
	ck_assert_error(frameFromAVFrame(nullptr), ErrorCode::NullHandle, "frame");
	ck_assert_error(applyFrameProperties(nullptr, {}), ErrorCode::NullHandle, "frame");
	ck_assert_int_eq(framePropertiesOf(nullptr).pts, AV_NOPTS_VALUE);
}
END_TEST

// A hardware frame without its frames context is malformed; hardware formats gpuhandle does not
// take are refused by name before the frames context is read (the one here is a dummy).
START_TEST(hardware_frames_are_refused_by_name)
{
	test::resetAvCounts();
	AVFrame *frame = av_frame_alloc();
	frame->format = AV_PIX_FMT_VULKAN;
	frame->width = 64;
	frame->height = 64;
	Result<Frame> missing = frameFromAVFrame(frame);
	ck_assert_error(missing, ErrorCode::InvalidArgument, "frame.hw_frames_ctx");
	ck_assert(mentions(missing.error(), "AV_PIX_FMT_VULKAN"));
	frame->hw_frames_ctx = av_buffer_allocz(64);
	for (AVPixelFormat hw : { AV_PIX_FMT_VDPAU, AV_PIX_FMT_QSV, AV_PIX_FMT_D3D11,
				  AV_PIX_FMT_VIDEOTOOLBOX, AV_PIX_FMT_MEDIACODEC }) {
		frame->format = hw;
		Result<Frame> refused = frameFromAVFrame(frame);
		ck_assert_error(refused, ErrorCode::NotSupported, "frame.format");
		ck_assert_msg(mentions(refused.error(), avPixelFormatName(hw).c_str()), "%s",
			      refused.error().message().c_str());
		ck_assert(isHwPixelFormat(hw));
		ck_assert_error(fromAvPixelFormat(hw), ErrorCode::NotSupported, "format");
	}
	av_frame_free(&frame);
}
END_TEST

START_TEST(unknown_and_unmapped_formats_are_refused)
{
	test::resetAvCounts();
	AVFrame *frame = test::countedAvFrame(AV_PIX_FMT_PAL8, 16, 16);
	ck_assert_ptr_nonnull(frame);
	Result<Frame> pal = frameFromAVFrame(frame);
	ck_assert_error(pal, ErrorCode::NotSupported, "frame.format");
	ck_assert(mentions(pal.error(), "AV_PIX_FMT_PAL8"));
	for (int unknown : { -1, 9999 }) {
		frame->format = unknown;
		ck_assert_error(frameFromAVFrame(frame), ErrorCode::InvalidArgument,
				"frame.format");
	}
	ck_assert_error(fromAvPixelFormat(AV_PIX_FMT_NB), ErrorCode::InvalidArgument, "format");
	ck_assert_error(toAvPixelFormat(PixelFormat::V210), ErrorCode::NotSupported, "format");
	ck_assert_error(toAvPixelFormat(PixelFormat::Unknown), ErrorCode::NotSupported, "format");
	av_frame_free(&frame);
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}
END_TEST

// A bottom-up picture (data at the last row, negative linesize) cannot be a CPU plane.
START_TEST(negative_linesize_is_refused)
{
	test::resetAvCounts();
	AVFrame *frame = test::countedAvFrame(AV_PIX_FMT_RGBA, 32, 8);
	ck_assert_ptr_nonnull(frame);
	frame->data[0] += static_cast<ptrdiff_t>(frame->linesize[0]) * 7;
	frame->linesize[0] = -frame->linesize[0];
	Result<Frame> refused = frameFromAVFrame(frame);
	ck_assert_error(refused, ErrorCode::NotSupported, "frame.linesize");
	ck_assert(mentions(refused.error(), "negative linesize"));
	av_frame_free(&frame);
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}
END_TEST

START_TEST(malformed_software_frames_are_refused)
{
	test::resetAvCounts();
	// Not reference-counted: nothing could keep the planes alive.
	std::vector<uint8_t> bytes(64 * 4);
	AVFrame *plain = av_frame_alloc();
	plain->format = AV_PIX_FMT_GRAY8;
	plain->width = 16;
	plain->height = 16;
	plain->data[0] = bytes.data();
	plain->linesize[0] = 16;
	ck_assert_error(frameFromAVFrame(plain), ErrorCode::InvalidArgument, "frame.buf");
	plain->data[0] = nullptr;
	av_frame_free(&plain);

	AVFrame *frame = test::countedAvFrame(AV_PIX_FMT_NV12, 32, 16);
	ck_assert_ptr_nonnull(frame);
	uint8_t *chroma = frame->data[1];
	frame->data[1] = nullptr;
	ck_assert_error(frameFromAVFrame(frame), ErrorCode::NullHandle, "frame.data");
	frame->data[1] = chroma;
	const int linesize = frame->linesize[0];
	frame->linesize[0] = 8; // smaller than a row of 32 pixels
	ck_assert_error(frameFromAVFrame(frame), ErrorCode::OutOfRange, "planes[0].stride");
	frame->linesize[0] = 0;
	ck_assert_error(frameFromAVFrame(frame), ErrorCode::ZeroSize, "frame.linesize");
	frame->linesize[0] = linesize;
	frame->crop_left = 20;
	frame->crop_right = 12;
	ck_assert_error(frameFromAVFrame(frame), ErrorCode::OutOfRange, "crop");
	FrameProperties crop;
	crop.cropTop = 16;
	ck_assert_error(applyFrameProperties(frame, crop), ErrorCode::OutOfRange, "crop");
	frame->crop_left = frame->crop_right = 0;
	frame->width = 0;
	ck_assert_error(frameFromAVFrame(frame), ErrorCode::ZeroSize, "frame.width");
	frame->width = 32;
	ck_assert_ok(frameFromAVFrame(frame));
	av_frame_free(&frame);
	// The refused attempts referenced nothing that outlived them.
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}
END_TEST

// Frame -> AVFrame refusals: a slot the CPU cannot read and no backend to copy it, copies
// forbidden, a format FFmpeg lacks.
START_TEST(frames_the_bridge_cannot_wrap_are_refused)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	KeepAliveRef anchor = makeKeepAlive([](void *) {}, nullptr);
	Result<Frame> made = Frame::wrap(PixelFormat::GRAY8, 32, 16, {},
					 CpuSharedSlot::create({ 7, 32 * 16, 32, anchor }).value());
	ck_assert_ok(made);
	const Frame &slot = *made;
	ExecutionPath path;
	Result<AVFrame *> refused = avFrameFromFrame(slot, {}, &path);
	ck_assert(!refused.ok());
	ck_assert_msg(refused.error().code() == ErrorCode::NotSupported ||
			      refused.error().code() == ErrorCode::WrongKind,
		      "%s", refused.error().message().c_str());
	ck_assert(path.kind() == ExecutionPath::Kind::NotRun);
	AvFrameOptions noCopies;
	noCopies.allowCopies = false;
	ck_assert(!avFrameFromFrame(slot, noCopies).ok());

	std::vector<uint8_t> bytes(4096);
	Result<Frame> v210 =
		Frame::wrap(PixelFormat::V210, 48, 2, {},
			    CpuBytes::create({ bytes.data(), bytes.size(), {} }).value());
	ck_assert_ok(v210);
	ck_assert_error(avFrameFromFrame(*v210), ErrorCode::NotSupported, "format");
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Properties are checked before anything is mapped: a refusal leaves the release gate alone.
START_TEST(bad_properties_fail_before_the_release)
{
	test::resetAvCounts();
	AVFrame *source = test::countedAvFrame(AV_PIX_FMT_YUV420P, 32, 16);
	ck_assert_ptr_nonnull(source);
	{
		Result<Frame> frame = frameFromAVFrame(source);
		ck_assert_ok(frame);
		ReleaseGate gate = ReleaseGate::create().value();
		frame->setRelease(gate);
		FrameProperties props;
		props.cropLeft = 40;
		AvFrameOptions options;
		options.properties = &props;
		ck_assert_error(avFrameFromFrame(*frame, options), ErrorCode::OutOfRange, "crop");
		ck_assert(!gate.isSignaled());
	}
	av_frame_free(&source);
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
}
END_TEST

} // namespace

int main()
{
	Suite *suite = suite_create("ffmpeg-frame-errors");
	TCase *tc = tcase_create("errors");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, null_frame_is_refused);
	tcase_add_test(tc, hardware_frames_are_refused_by_name);
	tcase_add_test(tc, unknown_and_unmapped_formats_are_refused);
	tcase_add_test(tc, negative_linesize_is_refused);
	tcase_add_test(tc, malformed_software_frames_are_refused);
	tcase_add_test(tc, frames_the_bridge_cannot_wrap_are_refused);
	tcase_add_test(tc, bad_properties_fail_before_the_release);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
