// FFmpeg Vulkan frames and devices on lavapipe: AVVkFrame <-> Frame, semaphores, shared devices.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/planner.h>
#include <gpuhandle/ffmpeg/frame.h>
#include <gpuhandle/ffmpeg/hw_device.h>
#include <gpuhandle/ffmpeg/pixel_formats.h>
#include <gpuhandle/vulkan_resources.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <string>
#include <unistd.h>

extern "C" {
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/pixdesc.h>
#include <libavutil/version.h>
}

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "../backends/skip_probe.h"
#include "av_frames.h"
#include "fd_count.h"

using namespace gpuhandle;
using namespace gpuhandle::ffmpeg;

namespace {

constexpr const char *kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
bool g_gl = false;

bool nameLavapipeIcd()
{
	if (std::getenv("VK_ICD_FILENAMES") || access(kLavapipeIcd, R_OK) != 0)
		return false;
	setenv("VK_ICD_FILENAMES", kLavapipeIcd, 1);
	return true;
}

struct Case {
	AVPixelFormat format;
	int width;
	int height;
};
constexpr Case kCases[] = { { AV_PIX_FMT_NV12, 63, 35 },
			    { AV_PIX_FMT_YUV420P, 63, 35 },
			    { AV_PIX_FMT_RGBA, 33, 17 } };

AVBufferRef *ffmpegDevice()
{
	AVBufferRef *device = nullptr;
	const int ret =
		av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VULKAN, nullptr, nullptr, 0);
	ck_assert_msg(ret >= 0, "av_hwdevice_ctx_create(VULKAN): %d", ret);
	return device;
}

// Images per frame: FFmpeg's default (one multi-planar image from FFmpeg 6.1 where the driver
// has the format, as Mesa 25's lavapipe has) or, with PlaneImages, one image per plane.
enum class Shape { Default, PlaneImages };

AVBufferRef *framesOn(AVBufferRef *device, AVPixelFormat format, int width, int height,
		      int flags = 0, Shape shape = Shape::Default)
{
	AVBufferRef *frames = av_hwframe_ctx_alloc(device);
	ck_assert_ptr_nonnull(frames);
	auto *ctx = reinterpret_cast<AVHWFramesContext *>(frames->data);
	ctx->format = AV_PIX_FMT_VULKAN;
	ctx->sw_format = format;
	ctx->width = width;
	ctx->height = height;
	if (flags)
		static_cast<AVVulkanFramesContext *>(ctx->hwctx)->flags =
			static_cast<AVVkFrameFlags>(flags);
	if (shape == Shape::PlaneImages)
		ck_assert_ok(requestVulkanPlaneImages(frames));
	const int ret = av_hwframe_ctx_init(frames);
	ck_assert_msg(ret >= 0, "av_hwframe_ctx_init(%s %dx%d): %d", av_get_pix_fmt_name(format),
		      width, height, ret);
	return frames;
}

// `c` at a size the shape's images may have: Vulkan allows no odd width or height for a
// multi-planar image with subsampled chroma (VUID-VkImageCreateInfo-format-04712/04713), yet
// FFmpeg 6.1+ makes its default multi-planar frames at any size. Such cases are rounded up to
// even for the default shape; odd sizes run with one image per plane.
Case sizedFor(Case c, Shape shape)
{
	const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(c.format);
	if (shape == Shape::Default && (d->log2_chroma_w || d->log2_chroma_h)) {
		c.width += c.width % 2;
		c.height += c.height % 2;
	}
	return c;
}

AVVkFrame *vkFrameOf(const AVFrame *hw)
{
	return reinterpret_cast<AVVkFrame *>(hw->data[0]);
}

// The VkImages of a frame: one per plane, or one multi-planar image.
int imagesOf(const AVFrame *hw)
{
	const AVVkFrame *f = vkFrameOf(hw);
	int images = 0;
	while (images < AV_NUM_DATA_POINTERS && f->img[images] != VK_NULL_HANDLE)
		images++;
	return images;
}

// Waits until every semaphore of `hw` reaches its sem_value: FFmpeg's last submission is done.
void waitForFfmpeg(const AVFrame *hw)
{
	const auto *frames = reinterpret_cast<const AVHWFramesContext *>(hw->hw_frames_ctx->data);
	const auto *vk = static_cast<const AVVulkanDeviceContext *>(frames->device_ctx->hwctx);
	auto getDeviceProcAddr = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
		vk->get_proc_addr(vk->inst, "vkGetDeviceProcAddr"));
	auto wait = reinterpret_cast<PFN_vkWaitSemaphores>(
		getDeviceProcAddr(vk->act_dev, "vkWaitSemaphores"));
	AVVkFrame *f = vkFrameOf(hw);
	VkSemaphoreWaitInfo info{};
	info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
	info.semaphoreCount = static_cast<uint32_t>(imagesOf(hw));
	info.pSemaphores = f->sem;
	info.pValues = f->sem_value;
	ck_assert_int_eq(wait(vk->act_dev, &info, 10'000'000'000ull), VK_SUCCESS);
}

// A hardware frame of `frames` holding the pattern of `seed`, uploaded by FFmpeg.
AVFrame *uploaded(AVBufferRef *frames, const Case &c, uint32_t seed)
{
	AVFrame *sw = test::countedAvFrame(c.format, c.width, c.height);
	ck_assert_ptr_nonnull(sw);
	Frame like = frameFromAVFrame(sw).value();
	test::fillAvFrame(sw, like, seed);
	AVFrame *hw = av_frame_alloc();
	ck_assert_int_ge(av_hwframe_get_buffer(frames, hw, 0), 0);
	ck_assert_int_ge(av_hwframe_transfer_data(hw, sw, 0), 0);
	// FFmpeg 5.1 uploads asynchronously from the software frame's pages (host-pointer import)
	// without keeping them: they must outlive the upload.
	waitForFfmpeg(hw);
	av_frame_free(&sw);
	return hw;
}

// The bytes of a hardware frame, downloaded by FFmpeg, against the pattern.
std::string downloadedCheck(const AVFrame *hw, const Frame &like, uint32_t seed)
{
	AVFrame *sw = av_frame_alloc();
	ck_assert_int_ge(av_hwframe_transfer_data(sw, hw, 0), 0);
	std::string checked = test::checkAvFrame(sw, like, seed);
	av_frame_free(&sw);
	return checked;
}

int planesOf(AVPixelFormat format)
{
	return av_pix_fmt_count_planes(format);
}

// 1a. AVVkFrame images as VulkanImage resources, read by the backend on FFmpeg's device.
START_TEST(ffmpeg_frames_as_images)
{
	test::resetAvCounts();
	AVBufferRef *device = ffmpegDevice();
	uint32_t seed = 3;
	for (Shape shape : { Shape::Default, Shape::PlaneImages })
		for (const Case &listed : kCases) {
			const Case c = sizedFor(listed, shape);
			AVBufferRef *frames =
				framesOn(device, c.format, c.width, c.height, 0, shape);
			AVFrame *hw = uploaded(frames, c, seed);
			const int images = imagesOf(hw);
			const int planes = planesOf(c.format);
			ck_assert(images == planes || (images == 1 && shape == Shape::Default));
			Result<Frame> frame = frameFromAVFrame(hw);
			ck_assert_ok(frame);
			ck_assert_uint_eq(frame->numResources(), static_cast<uint32_t>(images));
			for (uint32_t r = 0; r < frame->numResources(); r++) {
				const VulkanImage *image = frame->resource(r).get<VulkanImage>();
				ck_assert_ptr_nonnull(image);
				ck_assert_uint_eq(image->desc().planes,
						  images == 1 ? static_cast<uint32_t>(planes) : 1);
			}
			for (uint32_t p = 0; p < frame->numPlanes(); p++)
				ck_assert_uint_eq(frame->plane(p).subresource, images == 1 ? p : 0);
			// The Frame holds the AVFrame's buffers: the caller may free its AVFrame at
			// once.
			av_frame_free(&hw);
			Result<BackendRef> backend = backendForHwDevice(device);
			ck_assert_ok(backend);
			ck_assert_ok(frame->acquire().wait(kDefaultWaitTimeout));
			ck_assert_string_eq(test::checkPattern(**backend, *frame, seed), "");
			av_buffer_unref(&frames);
			seed++;
		}
	av_buffer_unref(&device);
	ck_assert_int_eq(test::g_avBuffersMade, test::g_avBuffersFreed);
}
END_TEST

// An FFmpeg device inside the backend's own device (asserted: a refusal names its reason).
AVBufferRef *deviceInside(const Backend &backend)
{
	Result<AVBufferRef *> device = hwDeviceFromContext(backend.context());
	ck_assert_ok(device);
	return *device;
}

// The fds an FFmpeg device of its own leaves open for good after `cases` were uploaded once each,
// measured by the same uploads with nothing of gpuhandle's, on a device of their own: none with
// FFmpeg 5.1 on Mesa 22.3. With FFmpeg 7.1 on Mesa 25's lavapipe a plain av_hwframe_transfer_data
// leaves device memory behind (an llvmpipe memfd each), and that keeps the device's llvmpipe
// screen, with its "allocation fd", after the device is freed. The fd checks below allow for
// exactly these, so that they still catch any fd gpuhandle leaves open.
int ffmpegDeviceLeak(std::initializer_list<Case> cases, int flags, Shape shape)
{
	const int before = test::openFdCount();
	AVBufferRef *device = ffmpegDevice();
	for (const Case &c : cases) {
		AVBufferRef *frames = framesOn(device, c.format, c.width, c.height, flags, shape);
		AVFrame *hw = uploaded(frames, c, 1);
		av_frame_free(&hw);
		av_buffer_unref(&frames);
	}
	av_buffer_unref(&device);
	const int leaked = test::openFdCount() - before;
	if (leaked != 0)
		std::printf("FFmpeg's own device and uploads left %d fds open (not gpuhandle's)\n",
			    leaked);
	return leaked;
}

// 1b. Exported memory imported by the planner into another Vulkan device and into GL. Returns
// how many cases arrived zero-copy with FFmpeg's bytes.
int exportedInto(BackendKind kind)
{
	int arrived = 0;
	const int fdsBefore = test::openFdCount();
	// Once for the reference device, once more for the cases' own device and uploads.
	const int ffmpegLeak =
		2 * ffmpegDeviceLeak({ kCases[0], kCases[1], kCases[2] }, 0, Shape::PlaneImages);
	{
		AVBufferRef *device = ffmpegDevice();
		BackendRef target = openBackend(kind).value();
		uint32_t seed = 40;
		for (const Case &c : kCases) {
			AVBufferRef *frames = framesOn(device, c.format, c.width, c.height, 0,
						       Shape::PlaneImages);
			AVFrame *hw = uploaded(frames, c, seed);
			FrameFromAvOptions exportMemory;
			exportMemory.exportVulkanMemory = true;
			Result<Frame> frame = frameFromAVFrame(hw, nullptr, exportMemory);
			ck_assert_ok(frame);
			for (uint32_t r = 0; r < frame->numResources(); r++)
				ck_assert(frame->resource(r).kind() ==
					  ResourceKind::VulkanMemoryFd);
			ImportOptions options;
			options.source = backendForHwDevice(device).value();
			Result<ImportResult> imported = importFrame(*frame, *target, options);
			ck_assert_msg(imported.ok(), "%s %s: %s", backendKindName(kind),
				      av_get_pix_fmt_name(c.format),
				      imported.ok() ? "" : imported.error().message().c_str());
			ck_assert(imported->path == ExecutionPath::zeroCopy());
			ck_assert_string_eq(test::checkPattern(*target, imported->frame, seed), "");
			arrived++;
			av_frame_free(&hw);
			av_buffer_unref(&frames);
			seed++;
		}
		av_buffer_unref(&device);
	}
	ck_assert_int_eq(test::openFdCount(), fdsBefore + ffmpegLeak);
	return arrived;
}

START_TEST(exported_memory_reaches_another_vulkan_device)
{
	const int cases = static_cast<int>(std::size(kCases));
	ck_assert_int_eq(exportedInto(BackendKind::Vulkan), cases);
}
END_TEST

START_TEST(exported_memory_reaches_gl)
{
	const int cases = static_cast<int>(std::size(kCases));
	ck_assert_int_eq(exportedInto(BackendKind::OpenGL), cases);
}
END_TEST

// 2. Each import spends exactly one semaphore value; the acquire point is that value.
START_TEST(semaphore_values_advance_by_one)
{
	AVBufferRef *device = ffmpegDevice();
	const auto *hwctx = static_cast<AVVulkanDeviceContext *>(
		reinterpret_cast<AVHWDeviceContext *>(device->data)->hwctx);
	auto getDeviceProcAddr = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
		hwctx->get_proc_addr(hwctx->inst, "vkGetDeviceProcAddr"));
	auto counter = reinterpret_cast<PFN_vkGetSemaphoreCounterValue>(
		getDeviceProcAddr(hwctx->act_dev, "vkGetSemaphoreCounterValue"));
	ck_assert(counter != nullptr);
	auto waitSemaphores = reinterpret_cast<PFN_vkWaitSemaphores>(
		getDeviceProcAddr(hwctx->act_dev, "vkWaitSemaphores"));
	ck_assert(waitSemaphores != nullptr);
	const Case c = sizedFor(kCases[0], Shape::Default);
	AVBufferRef *frames = framesOn(device, c.format, c.width, c.height);
	AVFrame *hw = uploaded(frames, c, 5);
	AVVkFrame *f = vkFrameOf(hw);
	for (int round = 0; round < 3; round++) {
		uint64_t before[4] = {};
		for (int i = 0; i < imagesOf(hw); i++)
			before[i] = f->sem_value[i];
		Result<Frame> frame = frameFromAVFrame(hw);
		ck_assert_ok(frame);
		for (int i = 0; i < imagesOf(hw); i++) {
			ck_assert_uint_eq(f->sem_value[i], before[i] + 1);
			ck_assert_int_eq(f->layout[i], VK_IMAGE_LAYOUT_GENERAL);
		}
		const VulkanSemaphoreSync *raw = frame->acquire().raw<VulkanSemaphoreSync>();
		ck_assert_ptr_nonnull(raw);
		ck_assert(raw->kind == VulkanSemaphoreKind::Timeline);
		ck_assert_uint_eq(raw->semaphore, reinterpret_cast<uint64_t>(f->sem[0]));
		ck_assert_uint_eq(raw->value, f->sem_value[0]);
		ck_assert_ok(frame->acquire().wait(kDefaultWaitTimeout));
		// The acquire point is sem[0]'s value: once it is reached the submission's commands
		// are done, so sem[0] has it now. The other images' semaphores are signalled by the
		// same submission, but Vulkan does not signal a batch's semaphores at one instant
		// (lavapipe signals them one after the other), so they are waited for, bounded.
		uint64_t first = 0;
		ck_assert_int_eq(counter(hwctx->act_dev, f->sem[0], &first), VK_SUCCESS);
		ck_assert_uint_ge(first, f->sem_value[0]);
		for (int i = 1; i < imagesOf(hw); i++) {
			VkSemaphoreWaitInfo info{};
			info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
			info.semaphoreCount = 1;
			info.pSemaphores = &f->sem[i];
			info.pValues = &f->sem_value[i];
			ck_assert_int_eq(waitSemaphores(hwctx->act_dev, &info, 5'000'000'000ULL),
					 VK_SUCCESS);
		}
	}
	// FFmpeg continues the timeline: its download waits for our value and signals the next.
	AVFrame *sw = test::countedAvFrame(c.format, c.width, c.height);
	Frame like = frameFromAVFrame(sw).value();
	av_frame_free(&sw);
	ck_assert_string_eq(downloadedCheck(hw, like, 5), "");
	av_frame_free(&hw);
	av_buffer_unref(&frames);
	av_buffer_unref(&device);
}
END_TEST

// 3. A gpuhandle Vulkan frame wrapped as an AVVkFrame of a device inside the backend's device:
// into a frames context of plane images without a copy; into one of multi-planar images
// (FFmpeg 6.1+'s default, where the driver has the format) by a copy on the device into a frame
// of FFmpeg's own pool.
bool multiPlanar(const AVBufferRef *frames)
{
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 29, 100) // AVVulkanFramesContext.format[]
	const auto *ctx = reinterpret_cast<const AVHWFramesContext *>(frames->data);
	const auto *fhw = static_cast<const AVVulkanFramesContext *>(ctx->hwctx);
	return planesOf(ctx->sw_format) > 1 && fhw->format[0] != VK_FORMAT_UNDEFINED &&
	       fhw->format[1] == VK_FORMAT_UNDEFINED;
#else
	(void)frames; // FFmpeg 5.1 makes one image per plane
	return false;
#endif
}

START_TEST(backend_frames_wrap_as_avvkframes)
{
	BackendRef backend = openBackend(BackendKind::Vulkan).value();
	Result<AVBufferRef *> device = hwDeviceFromContext(backend->context());
	ck_assert_ok(device);
	uint32_t seed = 60;
	for (Shape shape : { Shape::PlaneImages, Shape::Default })
		for (const Case &listed : kCases) {
			const Case c = sizedFor(listed, shape);
			const PixelFormat format = fromAvPixelFormat(c.format).value();
			AllocateRequest request;
			request.format = format;
			request.width = static_cast<uint32_t>(c.width);
			request.height = static_cast<uint32_t>(c.height);
			request.storage = FrameStorage::OptimalImage;
			Result<Frame> frame = backend->allocate(request);
			ck_assert_ok(frame);
			test::writePatternOk(*backend, *frame, seed);
			ReleaseGate gate = ReleaseGate::create().value();
			frame->setRelease(gate);
			AVBufferRef *frames =
				framesOn(*device, c.format, c.width, c.height, 0, shape);
			const bool copied = multiPlanar(frames);
			ck_assert(!copied || shape == Shape::Default);
			AvFrameOptions options;
			options.hwFrames = frames;
			options.source = backend; // FFmpeg's device has a backend of its own
			ExecutionPath path;
			Result<AVFrame *> wrapped = avFrameFromFrame(*frame, options, &path);
			ck_assert_ok(wrapped);
			AVFrame *hw = *wrapped;
			ck_assert_int_eq(hw->format, AV_PIX_FMT_VULKAN);
			ck_assert_int_eq(imagesOf(hw), copied ? 1 : planesOf(c.format));
			ck_assert_msg(path.isCopy() == copied, "%s %s: %s (%s)",
				      av_get_pix_fmt_name(c.format),
				      copied ? "multi-planar" : "plane images",
				      path.isCopy() ? "copied" : "zero-copy", path.reason());
			AVVkFrame *f = vkFrameOf(hw);
			if (!copied)
				ck_assert_uint_eq(f->sem_value[0], 0);
			// A copy reads the source no more once it returns: its producer has it
			// back.
			ck_assert(gate.isSignaled() == copied);
			ck_assert_string_eq(downloadedCheck(hw, *frame, seed), "");
			av_frame_free(&hw);
			if (!copied)
				ck_assert(gate.isSignaled());
			// The images are back in GENERAL for the backend: it reads them again.
			ck_assert_string_eq(test::checkPattern(*backend, *frame, seed), "");
			av_buffer_unref(&frames);
			seed++;
		}
	av_buffer_unref(&*device);
}
END_TEST

START_TEST(frames_of_another_device_go_through_the_planner)
{
	BackendRef backend = openBackend(BackendKind::Vulkan).value();
	BackendRef other = openBackend(g_gl ? BackendKind::OpenGL : BackendKind::Cpu).value();
	AVBufferRef *device = deviceInside(*backend);
	const Case c{ AV_PIX_FMT_RGBA, 64, 32 };
	AllocateRequest request;
	request.format = PixelFormat::RGBA;
	request.width = 64;
	request.height = 32;
	request.storage = g_gl ? FrameStorage::OptimalImage : FrameStorage::Buffer;
	Frame frame = other->allocate(request).value();
	test::writePatternOk(*other, frame, 77);
	AVBufferRef *frames = framesOn(device, c.format, c.width, c.height);
	// backendForHwDevice() shares a device's backend only while someone holds it: held here,
	// the planner's copy (into buffers) and the copy into the images an AVVkFrame needs are
	// made by the same backend, which copyFrame() requires.
	BackendRef inside = backendForHwDevice(device).value();
	AvFrameOptions options;
	options.hwFrames = frames;
	options.source = other;
	ExecutionPath path;
	Result<AVFrame *> wrapped = avFrameFromFrame(frame, options, &path);
	ck_assert_ok(wrapped);
	std::printf("%s frame into FFmpeg's Vulkan device: %s (%s)\n",
		    backendKindName(other->kind()), path.isCopy() ? "copied" : "zero-copy",
		    path.reason());
	ck_assert(path.isCopy());
	ck_assert_msg(*path.reason() != '\0', "a copy says why");
	AVFrame *hw = *wrapped;
	ck_assert_string_eq(downloadedCheck(hw, frame, 77), "");
	av_frame_free(&hw);
	av_buffer_unref(&frames);
	av_buffer_unref(&device);
}
END_TEST

// 4. Devices: one inside a gpuhandle device shares its DeviceId; FFmpeg's gives lavapipe's UUIDs.
START_TEST(devices_share_their_identity)
{
	BackendRef backend = openBackend(BackendKind::Vulkan).value();
	AVBufferRef *inside = deviceInside(*backend);
	Result<ContextRef> back = contextFromHwDevice(inside);
	ck_assert_ok(back);
	ck_assert((*back)->backend() == BackendKind::Vulkan);
	ck_assert(sameDevice((*back)->deviceId(), backend->deviceId()) == DeviceMatch::Same);
	ck_assert((*back)->vulkan().value()->device ==
		  backend->context()->vulkan().value()->device);

	// FFmpeg works inside the backend's device: its upload is read by the backend itself.
	const Case c = sizedFor(kCases[0], Shape::Default);
	AVBufferRef *frames = framesOn(inside, c.format, c.width, c.height);
	AVFrame *hw = uploaded(frames, c, 90);
	Frame frame = frameFromAVFrame(hw).value();
	ck_assert_ok(frame.acquire().wait(kDefaultWaitTimeout));
	ck_assert_string_eq(test::checkPattern(*backend, frame, 90), "");
	av_frame_free(&hw);

	AVBufferRef *own = ffmpegDevice();
	Result<ContextRef> described = contextFromHwDevice(own);
	ck_assert_ok(described);
	const VulkanContext &vk = *(*described)->vulkan().value();
	ck_assert(vk.deviceUuid.has_value() && vk.driverUuid.has_value());
	ck_assert(*vk.deviceUuid == *backend->deviceId().uuid);
	ck_assert(*vk.driverUuid == *backend->context()->vulkan().value()->driverUuid);
	ck_assert_ptr_nonnull(vk.queue);
	ck_assert(!vk.enabledDeviceExtensions.empty());
	ck_assert(vk.queueLock != nullptr);

	// A Context that does not list its extensions cannot make an FFmpeg device.
	VulkanContext silent = *backend->context()->vulkan().value();
	silent.enabledDeviceExtensions.clear();
	ContextRef unlisted = Context::create(silent).value();
	ck_assert_error(hwDeviceFromContext(unlisted), ErrorCode::NotSupported,
			"context.enabledDeviceExtensions");
	av_buffer_unref(&frames);
	av_buffer_unref(&own);
	av_buffer_unref(&inside);
}
END_TEST

// 5. Bad input is refused without spending a semaphore value or leaking fds and references.
START_TEST(bad_input_is_refused)
{
	test::resetAvCounts();
	const int fdsBefore = test::openFdCount();
	const Case c = sizedFor(kCases[0], Shape::Default);
	const int ffmpegLeak =
		2 * ffmpegDeviceLeak({ c }, AV_VK_FRAME_FLAG_CONTIGUOUS_MEMORY, Shape::Default);
	{
		AVBufferRef *device = ffmpegDevice();
		AVBufferRef *contiguous = framesOn(device, c.format, c.width, c.height,
						   AV_VK_FRAME_FLAG_CONTIGUOUS_MEMORY);
		AVFrame *hw = uploaded(contiguous, c, 1);
		const uint64_t before = vkFrameOf(hw)->sem_value[0];
		// FFmpeg's upload may still hold a reference of its own: compare with it.
		const int bufferRefs = av_buffer_get_ref_count(hw->buf[0]);
		const int framesRefs = av_buffer_get_ref_count(hw->hw_frames_ctx);
		FrameFromAvOptions exportMemory;
		exportMemory.exportVulkanMemory = true;
		Result<Frame> refused = frameFromAVFrame(hw, nullptr, exportMemory);
		ck_assert_error(refused, ErrorCode::NotSupported, "options.exportVulkanMemory");
		std::printf("contiguous frames: %s\n", refused.error().message().c_str());
		ck_assert_uint_eq(vkFrameOf(hw)->sem_value[0], before);
		ck_assert_int_eq(av_buffer_get_ref_count(hw->buf[0]), bufferRefs);
		ck_assert_int_eq(av_buffer_get_ref_count(hw->hw_frames_ctx), framesRefs);
		av_frame_free(&hw);
		av_buffer_unref(&contiguous);

		BackendRef backend = openBackend(BackendKind::Vulkan).value();
		AVBufferRef *inside = deviceInside(*backend);
		AllocateRequest request;
		request.format = PixelFormat::NV12;
		request.width = 64;
		request.height = 32;
		request.storage = FrameStorage::OptimalImage;
		Frame frame = backend->allocate(request).value();
		AvFrameOptions options;
		for (const Case &bad :
		     { Case{ AV_PIX_FMT_RGBA, 64, 32 }, Case{ AV_PIX_FMT_NV12, 32, 32 } }) {
			AVBufferRef *frames = framesOn(inside, bad.format, bad.width, bad.height);
			options.hwFrames = frames;
			ck_assert_error(avFrameFromFrame(frame, options),
					ErrorCode::InvalidArgument, "options.hwFrames");
			ck_assert_int_eq(av_buffer_get_ref_count(frames), 1);
			av_buffer_unref(&frames);
		}
		av_buffer_unref(&inside);
		av_buffer_unref(&device);
	}
	ck_assert_int_eq(test::g_avBuffersMade, test::g_avBuffersFreed);
	ck_assert_int_eq(test::openFdCount(), fdsBefore + ffmpegLeak);
}
END_TEST

std::string probeFfmpegVulkan()
{
	AVBufferRef *device = nullptr;
	int ret = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VULKAN, nullptr, nullptr, 0);
	if (ret < 0 && nameLavapipeIcd())
		ret = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VULKAN, nullptr, nullptr, 0);
	if (ret < 0) {
		char text[AV_ERROR_MAX_STRING_SIZE] = {};
		av_strerror(ret, text, sizeof text);
		return std::string("FFmpeg could not create a Vulkan device (") + text + ")";
	}
	av_buffer_unref(&device);
	Result<BackendRef> opened = openBackend(BackendKind::Vulkan);
	return opened.ok() ? std::string()
			   : "the Vulkan backend did not open: " + opened.error().message();
}

std::string probeGl()
{
	Result<BackendRef> opened = openBackend(BackendKind::OpenGL);
	return opened.ok() ? std::string()
			   : "the GL backend did not open: " + opened.error().message();
}

} // namespace

int main()
{
	// Probed in children so that no driver thread exists when Check forks each test.
	nameLavapipeIcd();
	if (int status = test::probeInChild(probeFfmpegVulkan); status != 0)
		return status;
	g_gl = test::probeInChild(probeGl) == 0;
	Suite *suite = suite_create("ffmpeg-vulkan");
	TCase *tc = tcase_create("vulkan");
	tcase_set_timeout(tc, 150);
	tcase_add_test(tc, ffmpeg_frames_as_images);
	tcase_add_test(tc, exported_memory_reaches_another_vulkan_device);
	if (g_gl)
		tcase_add_test(tc, exported_memory_reaches_gl);
	else
		std::printf("The GL cases are skipped (the reason is above).\n");
	tcase_add_test(tc, semaphore_values_advance_by_one);
	tcase_add_test(tc, backend_frames_wrap_as_avvkframes);
	tcase_add_test(tc, frames_of_another_device_go_through_the_planner);
	tcase_add_test(tc, devices_share_their_identity);
	tcase_add_test(tc, bad_input_is_refused);
	suite_add_tcase(suite, tc);
	return test::runSuite(suite);
}
