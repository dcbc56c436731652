// What gpuhandleupload and gpuhandledownload share: property enums, the target hint, row copies.
#include "gstgpuhandleelements.h"

#include <gpuhandle/sync_point.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.h>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

namespace gpuhandle::gst {

namespace {

// Both plugins (gpuhandle, gpuhandleav) link these helpers, each with its own statics: the enum
// may have been registered by the other plugin's copy already.
GType enumType(const char *name, const GEnumValue *values)
{
	if (GType known = g_type_from_name(name))
		return known;
	return g_enum_register_static(name, values);
}

} // namespace

GType backendChoiceType()
{
	static GType type = 0;
	static const GEnumValue values[] = {
		{ static_cast<int>(BackendChoice::Auto), "What downstream imports best", "auto" },
		{ static_cast<int>(BackendChoice::Cpu), "Host memory (wrapped, no copy)", "cpu" },
		{ static_cast<int>(BackendChoice::Memfd), "Sealed memfds (fd memory)", "memfd" },
		{ static_cast<int>(BackendChoice::Vulkan), "Vulkan device memory", "vulkan" },
		{ static_cast<int>(BackendChoice::Gl), "OpenGL (EGL) buffers and textures", "gl" },
		{ static_cast<int>(BackendChoice::OpenCl), "OpenCL buffers and images", "opencl" },
		{ static_cast<int>(BackendChoice::Cuda), "CUDA device memory", "cuda" },
		{ static_cast<int>(BackendChoice::VaApi), "VA-API surfaces", "vaapi" },
		{ 0, nullptr, nullptr },
	};
	if (g_once_init_enter(&type))
		g_once_init_leave(&type, enumType("GstGpuHandleBackendChoice", values));
	return type;
}

std::optional<BackendKind> backendKindOf(BackendChoice choice)
{
	switch (choice) {
	case BackendChoice::Auto: return std::nullopt;
	case BackendChoice::Cpu: return BackendKind::Cpu;
	case BackendChoice::Memfd: return BackendKind::Fd;
	case BackendChoice::Vulkan: return BackendKind::Vulkan;
	case BackendChoice::Gl: return BackendKind::OpenGL;
	case BackendChoice::OpenCl: return BackendKind::OpenCl;
	case BackendChoice::Cuda: return BackendKind::Cuda;
	case BackendChoice::VaApi: return BackendKind::VaApi;
	}
	return std::nullopt;
}

GType storageChoiceType()
{
	static GType type = 0;
	static const GEnumValue values[] = {
		{ static_cast<int>(StorageChoice::Auto), "Buffers, or what downstream imports best",
		  "auto" },
		{ static_cast<int>(StorageChoice::Buffer), "One linear buffer", "buffer" },
		{ static_cast<int>(StorageChoice::LinearImage), "Linear images, one per plane",
		  "linear-image" },
		{ static_cast<int>(StorageChoice::OptimalImage),
		  "Device-tiled images, one per plane", "optimal-image" },
		{ 0, nullptr, nullptr },
	};
	if (g_once_init_enter(&type))
		g_once_init_leave(&type, enumType("GstGpuHandleStorageChoice", values));
	return type;
}

namespace {
constexpr const char *kHintName = "GstGpuHandleTarget";
}

void addTargetHint(GstQuery *allocationQuery, const TargetHint &hint)
{
	GstStructure *params = gst_structure_new(kHintName, "backend", G_TYPE_UINT,
						 static_cast<guint>(hint.backend), "storage",
						 G_TYPE_UINT, static_cast<guint>(hint.storage),
						 nullptr);
	gst_query_add_allocation_meta(allocationQuery, GST_GPU_HANDLE_SYNC_META_API_TYPE, params);
	gst_structure_free(params);
}

std::optional<TargetHint> findTargetHint(GstQuery *allocationQuery)
{
	guint index = 0;
	if (!gst_query_find_allocation_meta(allocationQuery, GST_GPU_HANDLE_SYNC_META_API_TYPE,
					    &index))
		return std::nullopt;
	const GstStructure *params = nullptr;
	gst_query_parse_nth_allocation_meta(allocationQuery, index, &params);
	guint backend = 0, storage = 0;
	if (!params || !gst_structure_has_name(params, kHintName) ||
	    !gst_structure_get_uint(params, "backend", &backend) ||
	    !gst_structure_get_uint(params, "storage", &storage) || backend >= kBackendKindCount ||
	    storage > static_cast<guint>(FrameStorage::OptimalImage))
		return std::nullopt;
	return TargetHint{ static_cast<BackendKind>(backend), static_cast<FrameStorage>(storage) };
}

void copyPlaneRows(uint8_t *const dst[4], const uint32_t dstStride[4], const uint8_t *const src[4],
		   const uint32_t srcStride[4], const PixelFormatInfo &format, uint32_t width,
		   uint32_t height)
{
	for (uint32_t p = 0; p < format.numPlanes; ++p) {
		const PlaneInfo &plane = format.planes[p];
		const size_t rowBytes = std::min<uint64_t>(plane.rowBytes(width),
							   std::min(dstStride[p], srcStride[p]));
		const uint32_t rows = plane.rows(height);
		for (uint32_t y = 0; y < rows; ++y)
			std::memcpy(dst[p] + size_t(y) * dstStride[p],
				    src[p] + size_t(y) * srcStride[p], rowBytes);
	}
}

GstCaps *templateCaps(const char *feature)
{
	guint count = 0;
	const GstVideoFormat *formats = gst_video_formats_raw(&count);
	GValue list = G_VALUE_INIT;
	g_value_init(&list, GST_TYPE_LIST);
	for (guint i = 0; i < count; ++i) {
		if (!pixelFormatOf(formats[i]).ok())
			continue;
		GValue value = G_VALUE_INIT;
		g_value_init(&value, G_TYPE_STRING);
		g_value_set_string(&value, gst_video_format_to_string(formats[i]));
		gst_value_list_append_and_take_value(&list, &value);
	}
	GstCaps *caps = gst_caps_from_string(
		"video/x-raw, width = (int) [ 1, 32768 ], height = (int) [ 1, 32768 ], "
		"framerate = (fraction) [ 0, max ]");
	GstStructure *s = gst_caps_get_structure(caps, 0);
	gst_structure_take_value(s, "format", &list);
	if (feature)
		gst_caps_set_features(caps, 0, gst_caps_features_new(feature, nullptr));
	return caps;
}

void warnUnsupportedFormat(GstElement *element, GstQuery *capsQuery, GstVideoFormat &warned)
{
	GstCaps *filter = nullptr;
	if (GST_QUERY_TYPE(capsQuery) == GST_QUERY_ACCEPT_CAPS)
		gst_query_parse_accept_caps(capsQuery, &filter);
	else
		gst_query_parse_caps(capsQuery, &filter);
	if (!filter || gst_caps_get_size(filter) != 1)
		return;
	const gchar *name = gst_structure_get_string(gst_caps_get_structure(filter, 0), "format");
	if (!name)
		return;
	const GstVideoFormat format = gst_video_format_from_string(name);
	Result<PixelFormat> known = pixelFormatOf(format);
	if (known.ok() || format == warned)
		return;
	warned = format;
	GST_ELEMENT_WARNING(element, CORE, NEGOTIATION,
			    (_("The video format %s is not supported by gpuhandle."), name),
			    ("%s", known.error().message().c_str()));
}

guint64 defaultTimeoutNs()
{
	return static_cast<guint64>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(kDefaultWaitTimeout).count());
}

WaitDuration timeoutFromNs(guint64 ns)
{
	return std::chrono::duration_cast<WaitDuration>(
		std::chrono::nanoseconds(static_cast<int64_t>(std::min(ns, kMaxTimeoutNs))));
}

SlicedWait waitSliced(const SyncPoint &point, WaitDuration timeout,
		      const std::atomic<bool> &flushing, std::chrono::nanoseconds &waited,
		      std::optional<Error> &why)
{
	constexpr auto kSlice = std::chrono::milliseconds(20);
	const auto started = std::chrono::steady_clock::now();
	const auto deadline = started + timeout;
	for (;;) {
		if (flushing.load(std::memory_order_acquire)) {
			waited = std::chrono::steady_clock::now() - started;
			return SlicedWait::Flushing;
		}
		const auto left = std::chrono::duration_cast<WaitDuration>(
			deadline - std::chrono::steady_clock::now());
		Status done =
			point.wait(std::clamp<WaitDuration>(left, WaitDuration::zero(), kSlice));
		const bool late = std::chrono::steady_clock::now() >= deadline;
		if (done.ok() || done.error().code() != ErrorCode::Timeout || late) {
			waited = std::chrono::steady_clock::now() - started;
			if (done.ok())
				return SlicedWait::Signaled;
			why = done.error();
			return SlicedWait::Failed;
		}
	}
}

void keepInputAlive(GstBuffer *output, GstBuffer *input)
{
	gst_buffer_add_parent_buffer_meta(output, input);
}

// The formats a memory's GStreamer elements take (the memory-type table's videoFormats: GL and
// Vulkan have fixed lists; GStreamer's GL library aborts on others), or null for any format.
namespace {

const GstStructure *formatsOf(const char *feature)
{
	// Parsed once for the process's life, like GstStaticCaps: the leaks tracer must not list
	// them, and the list is never destroyed, so that memcheck still finds them reachable at
	// exit.
	using Parsed = std::vector<std::pair<const char *, GstCaps *>>;
	static const Parsed *parsed = [] {
		auto *all = new Parsed();
		for (const MemoryTypeInfo &type : memoryTypes()) {
			if (!type.videoFormats)
				continue;
			GstCaps *caps = gst_caps_from_string(type.videoFormats);
			GST_MINI_OBJECT_FLAG_SET(caps, GST_MINI_OBJECT_FLAG_MAY_BE_LEAKED);
			all->emplace_back(type.feature, caps);
		}
		return all;
	}();
	for (const auto &[name, caps] : *parsed)
		if (g_str_equal(feature, name))
			return gst_caps_get_structure(caps, 0);
	return nullptr;
}

} // namespace

gboolean transformMetaKeepingPixels(GstBaseTransform *, GstBuffer *, GstMeta *meta, GstBuffer *)
{
	const gchar *const *tags = gst_meta_api_type_get_tags(meta->info->api);
	if (!tags)
		return TRUE;
	static const char *const kStillTrue[] = { GST_META_TAG_VIDEO_STR,
						  GST_META_TAG_VIDEO_ORIENTATION_STR,
						  GST_META_TAG_VIDEO_SIZE_STR,
						  GST_META_TAG_VIDEO_COLORSPACE_STR };
	for (const gchar *const *tag = tags; *tag; ++tag) {
		bool known = false;
		for (const char *keep : kStillTrue)
			known = known || g_strcmp0(*tag, keep) == 0;
		if (!known)
			return FALSE;
	}
	return TRUE;
}

GstCaps *capsWithFeatures(GstCaps *caps, const std::vector<const char *> &features,
			  const DrmFormatOffer &offer)
{
	GstCaps *out = gst_caps_new_empty();
	for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
		for (const char *feature : features) {
			GstStructure *s = gst_structure_copy(gst_caps_get_structure(caps, i));
			gst_structure_remove_fields(s, "texture-target", nullptr);
			toPlainFormats(s);
			if (g_str_equal(feature, "memory:DMABuf") && !toDmaDrmFormats(s, offer)) {
				gst_structure_free(s);
				continue;
			}
			if (const GstStructure *formats = formatsOf(feature)) {
				GstStructure *both = gst_structure_intersect(s, formats);
				gst_structure_free(s);
				if (!both)
					continue;
				s = both;
			}
			if (g_str_equal(feature, "memory:GLMemory"))
				gst_structure_set(s, "texture-target", G_TYPE_STRING, "2D",
						  nullptr);
			out = gst_caps_merge_structure_full(
				out, s, gst_caps_features_new(feature, nullptr));
		}
	}
	return out;
}

GstCaps *intersectFilter(GstCaps *caps, GstCaps *filter)
{
	if (!filter)
		return caps;
	GstCaps *both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
	gst_caps_unref(caps);
	return both;
}

GParamSpec *timeoutParamSpec(const char *blurb)
{
	return g_param_spec_uint64(
		"timeout", "Timeout", blurb, 1, kMaxTimeoutNs, defaultTimeoutNs(),
		static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
					 GST_PARAM_MUTABLE_READY));
}

GParamSpec *statsParamSpec()
{
	return g_param_spec_boxed("stats", "Statistics",
				  "Frames and the paths they took: frames, zero-copy, gpu-copies, "
				  "cpu-copies, fence-waits, wait-time (ns)",
				  GST_TYPE_STRUCTURE,
				  static_cast<GParamFlags>(G_PARAM_READABLE |
							   G_PARAM_STATIC_STRINGS));
}

void noteFlush(GstEvent *event, std::atomic<bool> &flushing)
{
	if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_START)
		flushing.store(true, std::memory_order_release);
	else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP)
		flushing.store(false, std::memory_order_release);
}

void noteFlush(GstStateChange transition, std::atomic<bool> &flushing)
{
	// Before the pads deactivate (which waits for the streaming thread): a fence wait in
	// progress returns FLUSHING instead of holding the state change for its timeout.
	if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
		flushing.store(true, std::memory_order_release);
	else if (transition == GST_STATE_CHANGE_READY_TO_PAUSED)
		flushing.store(false, std::memory_order_release);
}

void postElementError(GstElement *element, GQuark domain, gint code, gchar *text,
		      const Error &error, const char *file, const char *function, int line)
{
	GstStructure *details = gst_structure_new("gpuhandle-error", "code", G_TYPE_STRING,
						  errorCodeName(error.code()), "kind",
						  G_TYPE_STRING, errorKindName(error.kind()),
						  "field", G_TYPE_STRING, error.field(), nullptr);
	// Takes text, the debug string and the details.
	gst_element_message_full_with_details(element, GST_MESSAGE_ERROR, domain, code, text,
					      g_strdup(error.message().c_str()), file, function,
					      line, details);
}

} // namespace gpuhandle::gst
