// GstVulkanImageMemory <-> gpuhandle frames, and GStreamer's Vulkan device as a gpuhandle backend.
// Built when gstreamer-vulkan-1.0 and gpuhandle's Vulkan backend are found
// (GPUHANDLE_GST_HAVE_VULKAN in <gst/gpuhandle/gstgpuhandleconfig.h>).
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <gst/base/base.h>
#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <vulkan/vulkan.h>

// GStreamer 1.22's gstvkqueue.h and gstvkcommandpool.h lack G_BEGIN_DECLS: included from C++
// without this, their functions (the queue's submit lock among them) get C++ linkage and do not
// link. What the Vulkan headers include that is not C comes first, above.
extern "C" {
#include <gst/vulkan/vulkan.h>
}

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// A gpuhandle Vulkan backend working inside `device` (open): its instance, physical device and
// VkDevice, the first queue of a graphics or compute family (the one GStreamer's Vulkan elements
// take), the device extensions GStreamer enabled that the backend looks for, and the device's
// UUIDs. It holds references to the device and the queue for as long as it or any frame it made
// lives. Cached per device: while one lives, the same device gives the same BackendRef. The
// backend submits on that queue without GStreamer's submit lock (a host Context has no lock
// hook): its map() of optimal images, copyFrame() and exportFrame() of images must not run while
// an element submits on the queue from another thread. Frames over GStreamer's own images
// (frameFromVulkanBuffer) are not the backend's: its map() and copyFrame() answer WrongKind.
// Errors: NullHandle, InvalidArgument (not a GstVulkanDevice), InvalidState (not open),
// NotSupported (no graphics or compute queue), and openBackend's errors.
GST_GPUHANDLE_API Result<BackendRef> vulkanBackendFor(GstVulkanDevice *device);

// A frame of VulkanImage resources (one per plane: GstVulkanImageMemory's image and VkDevice,
// the device UUID, the row pitch of a linear image, which is also the plane's stride) over
// `buffer`'s memories, without a copy; a buffer reference is the anchor. GStreamer 1.22's image
// memories carry no semaphore, so before returning, one submission on the device's first
// graphics/compute queue (under GStreamer's submit lock, after everything submitted there) moves
// the images from the layout their barrier state records to GENERAL, the layout gpuhandle keeps
// shared images in, and is waited for (bounded by kDefaultWaitTimeout); the memories' barrier
// state then says GENERAL. The frame's acquire point is a no-op. No other thread may use the
// memories during the call. Errors: NullHandle, WrongKind (not Vulkan image memory),
// InvalidArgument (memories that are not one per plane, or of several devices), NotSupported (a
// format, VkFormat or image size without a gpuhandle equivalent, a DRM-modifier tiling), Timeout,
// Backend (the submission failed).
GST_GPUHANDLE_API Result<Frame> frameFromVulkanBuffer(GstBuffer *buffer, const GstVideoInfo &info);

// A memory:VulkanImage buffer wrapping a frame of VulkanImage resources of `device` (one per
// plane) with gst_vulkan_image_memory_wrapped: the VkFormat GStreamer uses for each of `info`'s
// planes, optimal tiling unless the image carries a row pitch, usage TRANSFER_SRC | TRANSFER_DST
// | SAMPLED (what gpuhandle's Vulkan backend makes its images with), and a barrier state of
// GENERAL (gpuhandle leaves images it worked on there); the frame is kept alive until the last
// memory is freed. The acquire point is waited for on the CPU (bounded by `timeout`): GStreamer
// 1.22's Vulkan memories carry no semaphores. (GStreamer 1.22's vulkanupload and vulkandownload
// copy each plane with rows of exactly its width, whatever strides the caps imply.) Errors:
// NullHandle, InvalidArgument, NotSupported (a format GStreamer's Vulkan memory has no VkFormat
// for, or whose planes GStreamer and gpuhandle store differently, as YUY2), FormatMismatch
// (format, size, shared images), WrongKind (not images), DeviceMismatch (images of another
// VkDevice), Timeout, Backend.
GST_GPUHANDLE_API Result<GstBuffer *>
vulkanBufferFromFrame(const Frame &frame, GstVulkanDevice *device, const GstVideoInfo &info,
		      WaitDuration timeout = kDefaultWaitTimeout);

// For elements: the Vulkan instance and device neighbouring Vulkan elements share
// (gst_vulkan_ensure_element_data, gst_vulkan_device_run_context_query), creating a device on
// the instance when none is shared. Fields are the element's refs; it forwards set_context and
// context queries with gst_vulkan_handle_set_context / gst_vulkan_handle_context_query.
// Errors: NullHandle, NotSupported (no instance), Backend (no device could be opened).
GST_GPUHANDLE_API Status ensureVulkanDevice(GstElement *element, GstVulkanInstance **instance,
					    GstVulkanDevice **device);

} // namespace gst
} // namespace gpuhandle
