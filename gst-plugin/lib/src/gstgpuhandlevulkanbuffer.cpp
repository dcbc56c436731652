// Vulkan image memory buffers wrapping gpuhandle frames' images (vulkanBufferFromFrame).
#include <gpuhandle/format_mappings.h>

#include "gstgpuhandlegpushared.h"
#include "gstgpuhandlevulkaninternal.h"

#include <array>
#include <memory>
#include <string_view>

#include <gst/gpuhandle/gstgpuhandlevulkan.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_vulkan_debug

using namespace gpuhandle;
using namespace gpuhandle::gst::detail;

namespace {

// What gpuhandle's Vulkan backend makes its images with, and so what wrapped memories say.
constexpr VkImageUsageFlags kWrappedUsage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
					    VK_IMAGE_USAGE_TRANSFER_DST_BIT |
					    VK_IMAGE_USAGE_SAMPLED_BIT;

// The formats gst_vulkan_format_from_video_info() of GStreamer 1.22 knows: it asserts on any
// other (later versions answer VK_FORMAT_UNDEFINED, which is refused too).
constexpr std::string_view kVulkanMemoryFormats[] = {
	"RGBA", "RGBx", "BGRA", "BGRx", "ARGB",  "xRGB",      "ABGR",  "xBGR",
	"RGB",  "BGR",  "AYUV", "YUY2", "UYVY",  "NV12",      "NV21",  "Y444",
	"Y42B", "Y41B", "I420", "YV12", "GRAY8", "GRAY16_LE", "RGB16", "BGR16",
};

bool isVulkanMemoryFormat(GstVideoFormat format)
{
	const char *name = gst_video_format_to_string(format);
	if (!name)
		return false;
	for (std::string_view known : kVulkanMemoryFormats)
		if (known == name)
			return true;
	return false;
}

// Each memory of a buffer made by vulkanBufferFromFrame holds one of these.
void dropFrame(gpointer frame)
{
	delete static_cast<std::shared_ptr<const Frame> *>(frame);
}

// The VkFormat GStreamer gives each plane's image when it holds one image per plane: 1.22's
// per-plane table; from 1.24, the device's answer with multi-planar formats left out (the old
// per-plane call answers VK_FORMAT_UNDEFINED for planes a multi-planar format now holds).
Result<std::array<VkFormat, GST_VIDEO_MAX_PLANES>>
gstreamerPlaneFormats(GstVulkanDevice *device, GstVideoInfo &info, bool linear)
{
	std::array<VkFormat, GST_VIDEO_MAX_PLANES> formats{};
#if GST_CHECK_VERSION(1, 24, 0)
	int images = 0;
	VkImageUsageFlags usage = 0;
	if (!gst_vulkan_format_from_video_info_2(
		    device, &info, linear ? VK_IMAGE_TILING_LINEAR : VK_IMAGE_TILING_OPTIMAL, TRUE,
		    kWrappedUsage, formats.data(), &images, &usage) ||
	    images != static_cast<int>(GST_VIDEO_INFO_N_PLANES(&info)))
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "GStreamer's Vulkan device has no %s images for %s "
				     "with gpuhandle's usage (transfer and sampling).",
				     linear ? "linear" : "optimal",
				     videoFormatName(GST_VIDEO_INFO_FORMAT(&info)));
	// GStreamer's table (1.24 to 1.26 at least) names only the first plane's format where the
	// planes share one (I420, Y42B, Y444: R8 for each); a later plane it leaves undefined has
	// the format of the one before.
	for (guint p = 1; p < GST_VIDEO_INFO_N_PLANES(&info); p++)
		if (formats[p] == VK_FORMAT_UNDEFINED)
			formats[p] = formats[p - 1];
#else
	(void)device;
	(void)linear;
	for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++)
		formats[p] = gst_vulkan_format_from_video_info(&info, p);
#endif
	return formats;
}

} // namespace

namespace gpuhandle::gst {

Result<GstBuffer *> vulkanBufferFromFrame(const Frame &frame, GstVulkanDevice *device,
					  const GstVideoInfo &info, WaitDuration timeout)
{
	initVulkanDebug();
	if (!device)
		return Error(ErrorCode::NullHandle, "device", "The GstVulkanDevice is null.");
	if (!isVulkanDevice(device))
		return Error(ErrorCode::InvalidArgument, "device",
			     "The object given as the Vulkan device is not a GstVulkanDevice.");
	const GstVideoFormat videoFormat = GST_VIDEO_INFO_FORMAT(&info);
	Result<PixelFormat> format = pixelFormatOfInfo(info);
	if (!format)
		return std::move(format).error();
	if (!isVulkanMemoryFormat(videoFormat))
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "GStreamer's Vulkan image memory has no VkFormat for %s.",
				     videoFormatName(videoFormat));
	const uint32_t planes = GST_VIDEO_INFO_N_PLANES(&info);
	if (frame.format() != *format ||
	    frame.width() != static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info)) ||
	    frame.height() != static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)) ||
	    frame.numPlanes() != planes)
		return Error::format(
			ErrorCode::FormatMismatch, "info",
			"The frame is a %ux%u %s frame of %u planes; the video info says "
			"%dx%d %s.",
			frame.width(), frame.height(), pixelFormatName(frame.format()),
			frame.numPlanes(), GST_VIDEO_INFO_WIDTH(&info),
			GST_VIDEO_INFO_HEIGHT(&info), videoFormatName(videoFormat));
	Result<PlaneMappings> ours = planeApiFormats(PlaneApi::VkFormat, *format);
	if (!ours)
		return Error::format(ErrorCode::NotSupported, "info.format",
				     "gpuhandle has no per-plane VkFormats for %s: %s",
				     pixelFormatName(*format), ours.error().message().c_str());
	GstVideoInfo query = info; // gst_vulkan_format_from_video_info takes a mutable pointer
	const PixelFormatInfo &pixels = **pixelFormatInfo(*format);
	// One image per plane, or one multi-planar image holding every plane as an aspect.
	const Resource &first = frame.resource(frame.plane(0).resource);
	const bool multiPlanar = planes > 1 && frame.numResources() == 1 &&
				 first.get<VulkanImage>() &&
				 first.get<VulkanImage>()->desc().planes == planes;
	std::array<const VulkanImage *, GST_VIDEO_MAX_PLANES> images{};
	std::array<VkFormat, GST_VIDEO_MAX_PLANES> formats{};
	if (multiPlanar) {
#if GST_CHECK_VERSION(1, 24, 0)
		images[0] = first.get<VulkanImage>();
		Result<uint32_t> whole = toApiFormat(FormatApi::VkFormat, *format);
		if (!whole)
			return std::move(whole).error();
		formats[0] = static_cast<VkFormat>(*whole);
		if (images[0]->desc().device != static_cast<void *>(device->device))
			return Error::format(
				ErrorCode::DeviceMismatch, "frame",
				"The frame's image belongs to VkDevice %p, not GStreamer's "
				"device %p.",
				images[0]->desc().device, static_cast<void *>(device->device));
		for (uint32_t p = 0; p < planes; p++)
			if (frame.plane(p).subresource != p || frame.plane(p).offset != 0)
				return Error::format(
					ErrorCode::FormatMismatch, "frame",
					"Plane %u is not aspect %u of the multi-planar "
					"image.",
					p, p);
#else
		return Error(ErrorCode::NotSupported, "frame",
			     "The frame is one multi-planar VkImage; GStreamer 1.22's Vulkan "
			     "memories hold one single-plane image per plane (1.24 and later "
			     "hold multi-planar images).");
#endif
	}
	for (uint32_t p = 0; p < planes && !multiPlanar; p++) {
		const PlaneView &view = frame.plane(p);
		const Resource &resource = frame.resource(view.resource);
		images[p] = resource.get<VulkanImage>();
		if (!images[p])
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"Plane %u of the frame lives in a %s resource, not a Vulkan "
				"image.",
				p, resourceKindName(resource.kind()));
		for (uint32_t q = 0; q < p; q++)
			if (frame.plane(q).resource == view.resource)
				return Error::format(
					ErrorCode::FormatMismatch, "frame",
					"Planes %u and %u share one image; GStreamer's "
					"Vulkan memories hold one image per plane.",
					q, p);
		if (images[p]->desc().device != static_cast<void *>(device->device))
			return Error::format(
				ErrorCode::DeviceMismatch, "frame",
				"Plane %u's image belongs to VkDevice %p, not GStreamer's "
				"device %p.",
				p, images[p]->desc().device, static_cast<void *>(device->device));
		formats[p] = static_cast<VkFormat>(ours->planes[p].value);
	}
	if (!multiPlanar) {
		// GStreamer's own VkFormat for each plane image, where it has one per plane.
		Result<std::array<VkFormat, GST_VIDEO_MAX_PLANES>> theirs =
			gstreamerPlaneFormats(device, query, frame.plane(0).stride != 0);
		if (!theirs)
			return std::move(theirs).error();
		for (uint32_t p = 0; p < planes; p++)
			if ((*theirs)[p] != formats[p])
				return Error::format(
					ErrorCode::NotSupported, "info.format",
					"GStreamer holds plane %u of %s as VkFormat %d, gpuhandle "
					"as %s (%u): the two do not describe the image alike.",
					p, videoFormatName(videoFormat),
					static_cast<int>((*theirs)[p]), ours->planes[p].name,
					ours->planes[p].value);
	}
	// GStreamer 1.22's Vulkan memories carry no semaphore: its elements use them at once.
	if (Status acquired = frame.acquire().wait(timeout); !acquired)
		return std::move(acquired).error();
	auto kept = std::make_shared<const Frame>(frame);
	GstBuffer *buffer = gst_buffer_new();
	const uint32_t memories = multiPlanar ? 1 : planes;
	for (uint32_t p = 0; p < memories; p++) {
		const PlaneInfo &plane = pixels.planes[p];
		const VulkanImageDesc &d = images[p]->desc();
		const VkImageTiling tiling = d.rowPitch || frame.plane(p).stride
						     ? VK_IMAGE_TILING_LINEAR
						     : VK_IMAGE_TILING_OPTIMAL;
		// A multi-planar image's extent is the frame's rounded up to whole chroma texels
		// (Vulkan's rule for subsampled multi-planar formats).
		const uint32_t width =
			multiPlanar ? plane.rowTexels(frame.width()) + (frame.width() & 1)
				    : plane.rowTexels(frame.width());
		const uint32_t height = multiPlanar
						? plane.rows(frame.height()) + (frame.height() & 1)
						: plane.rows(frame.height());
		GstMemory *mem = gst_vulkan_image_memory_wrapped(
			device, reinterpret_cast<VkImage>(d.image), formats[p], width, height,
			tiling, kWrappedUsage, new std::shared_ptr<const Frame>(kept), dropFrame);
		// On failure GStreamer has freed the memory it began, and called the notify with
		// it.
		if (!mem) {
			gst_buffer_unref(buffer);
			return Error::format(
				ErrorCode::Backend, "frame",
				"GStreamer made no Vulkan image memory wrapping plane %u.", p);
		}
		// gpuhandle leaves the images it works on in GENERAL (its convention for images
		// shared with other users), with its own work finished: GStreamer starts from
		// there.
		auto *image = reinterpret_cast<GstVulkanImageMemory *>(mem);
		image->barrier.image_layout = VK_IMAGE_LAYOUT_GENERAL;
		gst_buffer_append_memory(buffer, mem);
	}
	return buffer;
}

} // namespace gpuhandle::gst
