// What gpuhandleupload and gpuhandledownload share: property enums, the target hint, row copies.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/pixel_format.h>
#include <gpuhandle/sync_point.h>

#include "gpuhandle_i18n.h" // _() for the user text of element errors and warnings

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

namespace gpuhandle::gst {

// The `backend` property of gpuhandleupload (GEnum GstGpuHandleBackendChoice).
enum class BackendChoice : int {
	Auto = 0,
	Cpu = 1,
	Memfd = 2,
	Vulkan = 3,
	Gl = 4,
	OpenCl = 5,
	Cuda = 6,
	VaApi = 7,
};
GType backendChoiceType();
// The backend kind a choice names; nullopt for Auto.
std::optional<BackendKind> backendKindOf(BackendChoice choice);

// The `storage` property of gpuhandleupload (GEnum GstGpuHandleStorageChoice): Auto is Buffer,
// unless downstream asked for images (see the target hint).
enum class StorageChoice : int { Auto = 0, Buffer = 1, LinearImage = 2, OptimalImage = 3 };
GType storageChoiceType();

// The target hint: gpuhandledownload tells upstream, in the allocation query (as the params of
// the GstGpuHandleSyncMeta API it accepts), which backend it will import into and what storage
// imports there without a copy; gpuhandleupload's `auto` choices follow it.
struct TargetHint {
	BackendKind backend = BackendKind::Cpu;
	FrameStorage storage = FrameStorage::Buffer;
};
void addTargetHint(GstQuery *allocationQuery, const TargetHint &hint);
std::optional<TargetHint> findTargetHint(GstQuery *allocationQuery);

// Copies the visible rows of every plane of a `format` frame between two sets of CPU pointers
// (the rows and row bytes of the core's format table).
void copyPlaneRows(uint8_t *const dst[4], const uint32_t dstStride[4], const uint8_t *const src[4],
		   const uint32_t srcStride[4], const PixelFormatInfo &format, uint32_t width,
		   uint32_t height);

// Both elements' GstBaseTransform::transform_meta: they change a frame's memory, never its
// pixels, size, orientation or colorimetry, so a meta whose tags are only among video,
// orientation, size and colorspace stays true and is carried (avdec_h264's SEI user data,
// crop, time codes, regions of interest); untagged metas are carried as GstBaseTransform
// carries them; any other tag (memory metas, GstBaseTransform drops those itself) is not.
gboolean transformMetaKeepingPixels(GstBaseTransform *trans, GstBuffer *outbuf, GstMeta *meta,
				    GstBuffer *inbuf);

// Which drm-format lists DMABuf caps get on GStreamer 1.24+.
struct DrmFormatOffer {
	// A pad template: format=DMA_DRM with any drm-format, as GStreamer's glupload writes its
	// template (the caps transform names them).
	bool anyModifier = false;
	// Besides linear, the modifiers of each format that the target backend imports
	// (Backend::dmaBufImportModifiers); unset: linear only, which every importer here takes
	// and gpuhandle's exporters make.
	std::function<std::vector<uint64_t>(PixelFormat)> modifiers{};
};

// `caps` with every structure given each of `features` (fields of other memories removed; GL and
// Vulkan memory limited to the formats GStreamer's elements take for them, GL textures 2D;
// DMABuf, on GStreamer 1.24 and later, in its format=DMA_DRM form, with `offer`'s drm-formats).
GstCaps *capsWithFeatures(GstCaps *caps, const std::vector<const char *> &features,
			  const DrmFormatOffer &offer = {});
// GStreamer 1.24+'s DMA-BUF caps (gstgpuhandledmadrmcaps.cpp). toPlainFormats: a DMA_DRM
// structure's drm-format list becomes the format list it holds, and drm-format goes (any
// structure). toDmaDrmFormats: a plain structure's formats become format=DMA_DRM and the
// drm-format list `offer` names; false when none of them travels as a DMA-BUF. Before 1.24 the
// plain form is the DMABuf form: toDmaDrmFormats changes nothing.
void toPlainFormats(GstStructure *s);
bool toDmaDrmFormats(GstStructure *s, const DrmFormatOffer &offer = {});
// transform_caps' last step: `caps` intersected with `filter` (when set), `caps` consumed.
GstCaps *intersectFilter(GstCaps *caps, GstCaps *filter);

// Posts an element error whose debug text is `error`'s sentence and whose details structure
// ("gpuhandle-error": code, kind, field as strings) tells the application what to do about it
// (ErrorKind: recoverable, configuration, fatal). Use through GPUHANDLE_ELEMENT_ERROR.
void postElementError(GstElement *element, GQuark domain, gint code, gchar *text,
		      const Error &error, const char *file, const char *function, int line);
#define GPUHANDLE_ELEMENT_ERROR(el, domain, code, text, error)                                     \
	::gpuhandle::gst::postElementError(reinterpret_cast<GstElement *>(el),                     \
					   GST_##domain##_ERROR, GST_##domain##_ERROR_##code,      \
					   _gst_element_error_printf text, (error), __FILE__,      \
					   GST_FUNCTION, __LINE__)

// The properties both elements have.
GParamSpec *timeoutParamSpec(const char *blurb);
GParamSpec *statsParamSpec();

// Keeps an element's flushing flag: set by FLUSH_START and by the change to READY, cleared by
// FLUSH_STOP and by the change to PAUSED.
void noteFlush(GstEvent *event, std::atomic<bool> &flushing);
void noteFlush(GstStateChange transition, std::atomic<bool> &flushing);

// The GstVideoFormats gpuhandle has a format for, as a caps list value ("format" field).
GstCaps *templateCaps(const char *feature);

// A caps or accept-caps query whose caps fix a format gpuhandle has no entry for (a capsfilter or
// an appsrc upstream):
// negotiation then fails in the source with a bare "not-negotiated", so this posts an element
// warning naming the format, once per format (`warned` is the element's memory of it).
void warnUnsupportedFormat(GstElement *element, GstQuery *capsQuery, GstVideoFormat &warned);

// The default `timeout` property: gpuhandle's default wait timeout, in nanoseconds; and its
// largest value (one day: larger ones would overflow the deadline arithmetic).
guint64 defaultTimeoutNs();
inline constexpr guint64 kMaxTimeoutNs = 86400ull * 1000000000ull;
// The property's value as a wait duration.
WaitDuration timeoutFromNs(guint64 ns);

// A fence wait that a flush or a state change can end: waits for `point` in slices of 20 ms,
// looking at `flushing` between them, until `timeout`. Sets `waited` to the time spent.
enum class SlicedWait { Signaled, Flushing, Failed };
SlicedWait waitSliced(const SyncPoint &point, WaitDuration timeout,
		      const std::atomic<bool> &flushing, std::chrono::nanoseconds &waited,
		      std::optional<Error> &why);

// The output aliases `input`'s memory (a zero-copy wrap or import): the output keeps the input
// buffer alive (a GstParentBufferMeta), so that a pool upstream does not reuse the memory while
// the output is still read.
void keepInputAlive(GstBuffer *output, GstBuffer *input);

} // namespace gpuhandle::gst
