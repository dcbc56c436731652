// DRM_PRIME AVFrames over memfd objects (no /dev/dri needed): both descriptor layouts to Frames,
// DmaBuf Frames back to descriptors through a DRM frames context, malformed descriptors, fds.
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include <cstdio>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_drm.h>
#include <libavutil/mem.h>
}

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "av_frames.h"
#include "fd_count.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

constexpr uint32_t fourcc(char a, char b, char c, char d)
{
	return static_cast<uint32_t>(a) | static_cast<uint32_t>(b) << 8 |
	       static_cast<uint32_t>(c) << 16 | static_cast<uint32_t>(d) << 24;
}
constexpr uint32_t kDrmR8 = fourcc('R', '8', ' ', ' ');
constexpr uint32_t kDrmGR88 = fourcc('G', 'R', '8', '8');

// A DRM device without a DRM node (fd -1: FFmpeg opens none unless asked to) and a frames
// context of `format` on it: what a DRM_PRIME AVFrame names, and what wrapping fills.
AVBufferRef *drmFrames(PixelFormat format, int width, int height)
{
	AVBufferRef *device = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_DRM);
	ck_assert_ptr_nonnull(device);
	auto *drm = static_cast<AVDRMDeviceContext *>(
		reinterpret_cast<AVHWDeviceContext *>(device->data)->hwctx);
	drm->fd = -1;
	ck_assert_int_ge(av_hwdevice_ctx_init(device), 0);
	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	av_buffer_unref(&device);
	ck_assert_ptr_nonnull(frames);
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
	ctx->format = AV_PIX_FMT_DRM_PRIME;
	ctx->sw_format = toAvPixelFormat(format).value();
	ctx->width = width;
	ctx->height = height;
	ck_assert_int_ge(av_hwframe_ctx_init(frames), 0);
	return frames;
}

// A linear DmaBuf Frame over a new memfd (one object, tight planes) holding the pattern.
Frame memfdDmaBuf(PixelFormat format, uint32_t width, uint32_t height, uint32_t seed)
{
	FrameLayout layout = computeLayout(format, width, height).value();
	DmaBufDesc desc;
	desc.fourcc = toApiFormat(FormatApi::DrmFourcc, format).value();
	desc.modifier = kDrmModifierLinear;
	desc.width = width;
	desc.height = height;
	desc.numObjects = 1;
	desc.objects[0] = { SharedFd(test::makeMemfd(layout.size)), layout.size };
	desc.numPlanes = layout.numPlanes;
	for (uint32_t p = 0; p < layout.numPlanes; p++)
		desc.planes[p] = { 0, layout.planes[p].offset, layout.planes[p].stride };
	Frame frame = Frame::wrap(format, width, height, {}, DmaBuf::create(desc).value()).value();
	CpuMapping mapping = mapFrame(frame, MapAccess::Write).value();
	test::fillPatternOk(mapping, frame, seed);
	ck_assert_ok(mapping.unmap());
	return frame;
}

void freeDescriptor(void *, uint8_t *data)
{
	auto *d = reinterpret_cast<AVDRMFrameDescriptor *>(data);
	for (int i = 0; i < d->nb_objects; i++)
		close(d->objects[i].fd);
	av_free(d);
	test::g_avBuffersFreed++;
}

// A DRM_PRIME AVFrame over a dup of `frame`'s memfd: one layer with every plane, or one layer
// per plane (R8, GR88 ...), as VA-API and V4L2 decoders give them. `edit` spoils it.
template<typename Edit>
AVFrame *drmAvFrame(const Frame &frame, AVBufferRef *frames, bool layerPerPlane, Edit edit)
{
	const DmaBufDesc &dmaBuf = frame.resource(0).get<DmaBuf>()->desc();
	auto *d = static_cast<AVDRMFrameDescriptor *>(av_mallocz(sizeof(AVDRMFrameDescriptor)));
	d->nb_objects = 1;
	d->objects[0].fd = dmaBuf.objects[0].fd.dup().release();
	d->objects[0].size = dmaBuf.objects[0].size;
	d->objects[0].format_modifier = dmaBuf.modifier;
	for (uint32_t p = 0; p < dmaBuf.numPlanes; p++) {
		AVDRMLayerDescriptor &layer = d->layers[layerPerPlane ? p : 0];
		if (layerPerPlane)
			layer.format = p == 0 ? kDrmR8 : kDrmGR88;
		else
			layer.format = dmaBuf.fourcc;
		layer.planes[layer.nb_planes].object_index = 0;
		layer.planes[layer.nb_planes].offset =
			static_cast<ptrdiff_t>(dmaBuf.planes[p].offset);
		layer.planes[layer.nb_planes].pitch = dmaBuf.planes[p].pitch;
		layer.nb_planes++;
	}
	d->nb_layers = layerPerPlane ? static_cast<int>(dmaBuf.numPlanes) : 1;
	edit(*d);
	AVFrame *out = av_frame_alloc();
	out->format = AV_PIX_FMT_DRM_PRIME;
	out->width = static_cast<int>(frame.width());
	out->height = static_cast<int>(frame.height());
	out->data[0] = reinterpret_cast<uint8_t *>(d);
	out->buf[0] = av_buffer_create(out->data[0], sizeof *d, freeDescriptor, nullptr, 0);
	test::g_avBuffersMade++;
	if (frames)
		out->hw_frames_ctx = av_buffer_ref(frames);
	return out;
}

AVFrame *drmAvFrame(const Frame &frame, AVBufferRef *frames, bool layerPerPlane)
{
	return drmAvFrame(frame, frames, layerPerPlane, [](AVDRMFrameDescriptor &) {});
}

// Both layouts of NV12 (and one layer of YUV420P) become one DmaBuf of the frame's fourcc
// whose mapping has the bytes; the AVFrame may go first; no fd outlives the frames.
START_TEST(drm_descriptors_become_one_dmabuf)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	struct Case {
		PixelFormat format;
		uint32_t width, height;
		bool layerPerPlane;
	};
	uint32_t seed = 3;
	for (const Case &c :
	     { Case{ PixelFormat::NV12, 64, 48, false }, Case{ PixelFormat::NV12, 33, 17, true },
	       Case{ PixelFormat::YUV420P, 35, 19, false } }) {
		AVBufferRef *frames =
			drmFrames(c.format, static_cast<int>(c.width), static_cast<int>(c.height));
		Frame source = memfdDmaBuf(c.format, c.width, c.height, seed);
		AVFrame *av = drmAvFrame(source, frames, c.layerPerPlane);
		Result<Frame> frame = frameFromAVFrame(av);
		ck_assert_ok(frame);
		av_frame_free(&av);
		av_buffer_unref(&frames);
		// The frame's own references keep the descriptor's buffer.
		ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade - 1);
		ck_assert(frame->format() == c.format);
		ck_assert_uint_eq(frame->numResources(), 1);
		const DmaBuf *dmaBuf = frame->resource(0).get<DmaBuf>();
		ck_assert_ptr_nonnull(dmaBuf);
		ck_assert_uint_eq(dmaBuf->desc().fourcc,
				  toApiFormat(FormatApi::DrmFourcc, c.format).value());
		ck_assert_uint_eq(dmaBuf->desc().numPlanes, frame->numPlanes());
		ck_assert_uint_eq(dmaBuf->desc().modifier, kDrmModifierLinear);
		CpuMapping mapping = mapFrame(*frame, MapAccess::Read).value();
		test::checkPatternOk(mapping, *frame, seed);
		ck_assert_ok(mapping.unmap());
		frame = Error(ErrorCode::Fatal, "", "dropped");
		ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
		seed++;
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// A DmaBuf Frame wrapped into a DRM frames context: one layer, dup'd fds of the same memfd,
// its offsets and pitches; read back as a Frame with the same bytes; the fds close with it.
START_TEST(dmabuf_frames_wrap_as_drm_descriptors)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	for (PixelFormat format : { PixelFormat::NV12, PixelFormat::YUV420P, PixelFormat::RGBA }) {
		AVBufferRef *frames = drmFrames(format, 40, 30);
		Frame source = memfdDmaBuf(format, 40, 30, 9);
		ReleaseGate gate = ReleaseGate::create().value();
		source.setRelease(gate);
		AvFrameOptions options;
		options.hwFrames = frames;
		ExecutionPath path;
		Result<AVFrame *> wrapped = avFrameFromFrame(source, options, &path);
		ck_assert_ok(wrapped);
		ck_assert(path == ExecutionPath::zeroCopy());
		AVFrame *av = *wrapped;
		ck_assert_int_eq(av->format, AV_PIX_FMT_DRM_PRIME);
		ck_assert_ptr_nonnull(av->hw_frames_ctx);
		const auto *d = reinterpret_cast<const AVDRMFrameDescriptor *>(av->data[0]);
		const DmaBufDesc &desc = source.resource(0).get<DmaBuf>()->desc();
		ck_assert_int_eq(d->nb_objects, 1);
		ck_assert_int_ne(d->objects[0].fd, desc.objects[0].fd.get());
		struct stat a {
		}, b{};
		ck_assert_int_eq(fstat(d->objects[0].fd, &a), 0);
		ck_assert_int_eq(fstat(desc.objects[0].fd.get(), &b), 0);
		ck_assert_uint_eq(a.st_ino, b.st_ino);
		ck_assert_uint_eq(d->objects[0].size, desc.objects[0].size);
		ck_assert_uint_eq(d->objects[0].format_modifier, kDrmModifierLinear);
		ck_assert_int_eq(d->nb_layers, 1);
		ck_assert_uint_eq(d->layers[0].format, desc.fourcc);
		ck_assert_int_eq(d->layers[0].nb_planes, static_cast<int>(desc.numPlanes));
		for (uint32_t p = 0; p < desc.numPlanes; p++) {
			ck_assert_int_eq(d->layers[0].planes[p].object_index, 0);
			ck_assert_int_eq(d->layers[0].planes[p].offset,
					 static_cast<ptrdiff_t>(desc.planes[p].offset));
			ck_assert_int_eq(d->layers[0].planes[p].pitch, desc.planes[p].pitch);
		}
		// Held until FFmpeg frees the frame.
		ck_assert(!gate.isSignaled());
		Result<Frame> back = frameFromAVFrame(av);
		ck_assert_ok(back);
		av_frame_free(&av);
		CpuMapping mapping = mapFrame(*back, MapAccess::Read).value();
		test::checkPatternOk(mapping, *back, 9);
		ck_assert_ok(mapping.unmap());
		back = Error(ErrorCode::Fatal, "", "dropped");
		ck_assert(gate.isSignaled());
		av_buffer_unref(&frames);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Malformed descriptors: a clear InvalidArgument each, nothing leaked.
START_TEST(malformed_descriptors_are_refused)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	AVBufferRef *frames = drmFrames(PixelFormat::NV12, 32, 16);
	std::optional<Frame> source = memfdDmaBuf(PixelFormat::NV12, 32, 16, 1);
	struct Spoil {
		const char *what;
		void (*edit)(AVDRMFrameDescriptor &);
		const char *expected; // in the message
	};
	const Spoil spoils[] = {
		{ "five planes",
		  [](AVDRMFrameDescriptor &d) {
			  d.nb_layers = 2;
			  d.layers[0].nb_planes = 4;
			  for (int p = 2; p < 4; p++)
				  d.layers[0].planes[p] = d.layers[0].planes[1];
			  d.layers[1].format = kDrmR8;
			  d.layers[1].nb_planes = 1;
			  d.layers[1].planes[0] = d.layers[0].planes[0];
		  },
		  "more than 4 planes" },
		{ "object index out of range",
		  [](AVDRMFrameDescriptor &d) { d.layers[0].planes[1].object_index = 1; },
		  "object_index" },
		{ "negative fd",
		  [](AVDRMFrameDescriptor &d) {
			  close(d.objects[0].fd);
			  d.objects[0].fd = -1;
		  },
		  "fd" },
		{ "no objects",
		  [](AVDRMFrameDescriptor &d) {
			  close(d.objects[0].fd);
			  d.nb_objects = 0;
		  },
		  "nb_objects" },
		{ "no layers", [](AVDRMFrameDescriptor &d) { d.nb_layers = 0; }, "nb_layers" },
		{ "zero pitch", [](AVDRMFrameDescriptor &d) { d.layers[0].planes[0].pitch = 0; },
		  "pitch" },
	};
	for (const Spoil &spoil : spoils) {
		AVFrame *av = drmAvFrame(*source, frames, false, spoil.edit);
		Result<Frame> frame = frameFromAVFrame(av);
		ck_assert_msg(!frame.ok(), "%s was accepted", spoil.what);
		ck_assert_error(frame, ErrorCode::InvalidArgument, "frame.data");
		ck_assert_msg(frame.error().message().find(spoil.expected) != std::string::npos,
			      "%s: %s", spoil.what, frame.error().message().c_str());
		av_frame_free(&av);
	}
	// A layer of another format than the frames context's.
	AVFrame *other = drmAvFrame(*source, frames, false, [](AVDRMFrameDescriptor &d) {
		d.layers[0].format = fourcc('Y', 'U', '1', '2');
	});
	ck_assert_error(frameFromAVFrame(other), ErrorCode::FormatMismatch, "frame.data");
	av_frame_free(&other);
	// Without its frames context a DRM_PRIME frame says nothing of its format.
	AVFrame *orphan = drmAvFrame(*source, nullptr, false);
	ck_assert_error(frameFromAVFrame(orphan), ErrorCode::InvalidArgument,
			"frame.hw_frames_ctx");
	av_frame_free(&orphan);
	av_buffer_unref(&frames);
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
	source.reset();
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Wrapping checks what it is given: a frames context of another format, a frame that is not a
// DMA-BUF and cannot become one without the fd backend's copy.
START_TEST(wrap_refuses_mismatched_frames_contexts)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	{
		AVBufferRef *frames = drmFrames(PixelFormat::YUV420P, 32, 16);
		Frame source = memfdDmaBuf(PixelFormat::NV12, 32, 16, 1);
		AvFrameOptions options;
		options.hwFrames = frames;
		ck_assert_error(avFrameFromFrame(source, options), ErrorCode::InvalidArgument,
				"options.hwFrames");
		av_buffer_unref(&frames);
		frames = drmFrames(PixelFormat::NV12, 16, 16);
		options.hwFrames = frames;
		ck_assert_error(avFrameFromFrame(source, options), ErrorCode::InvalidArgument,
				"options.hwFrames");
		av_buffer_unref(&frames);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

// Host memory reaches a DRM frames context through the fd backend: copied into a sealed memfd
// and exported as a udmabuf where the kernel has /dev/udmabuf, else refused saying why.
START_TEST(host_frames_become_dmabufs_where_udmabuf_exists)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	{
		AVBufferRef *frames = drmFrames(PixelFormat::NV12, 64, 32);
		AVFrame *sw = test::countedAvFrame(AV_PIX_FMT_NV12, 64, 32);
		Frame host = frameFromAVFrame(sw).value();
		test::fillAvFrame(sw, host, 17);
		AvFrameOptions options;
		options.hwFrames = frames;
		Result<AVFrame *> wrapped = avFrameFromFrame(host, options);
		if (access("/dev/udmabuf", R_OK | W_OK) != 0) {
			std::printf(
				"No /dev/udmabuf here: host memory is refused, as it should.\n");
			ck_assert_error(wrapped, ErrorCode::NotSupported, "frame");
			ck_assert_msg(wrapped.error().message().find("DMA-BUF") !=
					      std::string::npos,
				      "%s", wrapped.error().message().c_str());
		} else {
			ck_assert_ok(wrapped);
			Result<Frame> back = frameFromAVFrame(*wrapped);
			ck_assert_ok(back);
			AVFrame *freed = *wrapped;
			av_frame_free(&freed);
			CpuMapping mapping = mapFrame(*back, MapAccess::Read).value();
			test::checkPatternOk(mapping, *back, 17);
			ck_assert_ok(mapping.unmap());
		}
		av_frame_free(&sw);
		av_buffer_unref(&frames);
	}
	ck_assert_int_eq(test::g_avBuffersFreed, test::g_avBuffersMade);
	ck_assert_int_eq(test::openFdCount(), fdsBefore);
}
END_TEST

} // namespace

int main()
{
	Suite *suite = suite_create("ffmpeg-drm");
	TCase *tc = tcase_create("drm");
	tcase_set_timeout(tc, 50);
	tcase_add_test(tc, drm_descriptors_become_one_dmabuf);
	tcase_add_test(tc, dmabuf_frames_wrap_as_drm_descriptors);
	tcase_add_test(tc, malformed_descriptors_are_refused);
	tcase_add_test(tc, wrap_refuses_mismatched_frames_contexts);
	tcase_add_test(tc, host_frames_become_dmabufs_where_udmabuf_exists);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
