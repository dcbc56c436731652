// GstVaMemory -> gpuhandle frames; GStreamer's VA display as a gpuhandle VA-API backend.
#include <gst/gpuhandle/gstgpuhandleva.hpp>

// GStreamer's VA library is unstable API: its headers print a note on every use without this.
#ifndef GST_USE_UNSTABLE_API
#define GST_USE_UNSTABLE_API 1
#endif

#include <gpuhandle/context.h>
#include <gpuhandle/vaapi_resources.h>

#include "gstgpuhandlegpushared.h"

#include <memory>
#include <mutex>
#include <optional>

#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#include <gst/va/gstva.h>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_va_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_va_debug

using namespace gpuhandle;

namespace {

void initDebug()
{
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_va_debug, "gpuhandleva", 0,
					"gpuhandle VA memory and backend");
	});
}

// GObject's type-check and class macros cast C-style; their expansions land here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
bool isVaDisplay(gpointer object)
{
	return object && GST_IS_VA_DISPLAY(object);
}

bool hasProperty(gpointer object, const char *name)
{
	return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != nullptr;
}
#pragma GCC diagnostic pop

const char *memTypeOf(GstMemory *mem)
{
	return mem && mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
								 : "typeless";
}

// The render node a GstVaDisplayDrm was opened on (its "path"); unset for other displays.
std::optional<DrmNode> renderNodeOf(GstVaDisplay *display)
{
	if (!hasProperty(display, "path"))
		return std::nullopt;
	gchar *path = nullptr;
	g_object_get(display, "path", &path, nullptr);
	std::optional<DrmNode> node;
	if (path)
		if (Result<DrmNode> found = DrmNode::fromPath(path))
			node = *found;
	g_free(path);
	return node;
}

// A reference on GStreamer's VA display, for a backend's Context.
struct DisplayHold final : KeepAlive {
	explicit DisplayHold(GstVaDisplay *d)
		: display(static_cast<GstVaDisplay *>(gst_object_ref(d)))
	{
	}
	DisplayHold(const DisplayHold &) = delete;
	DisplayHold &operator=(const DisplayHold &) = delete;
	~DisplayHold() override { gst_object_unref(display); }

	GstVaDisplay *const display;
};

using gpuhandle::gst::detail::BufferAnchor;

// One backend per object (see detail::cacheBackend in gstgpuhandlegpushared.h).
GQuark backendQuark()
{
	static const GQuark quark = g_quark_from_static_string("gpuhandle-va-backend");
	return quark;
}

} // namespace

namespace gpuhandle::gst {

Result<BackendRef> vaBackendFor(GstVaDisplay *display)
{
	initDebug();
	if (!display)
		return Error(ErrorCode::NullHandle, "display", "The GstVaDisplay is null.");
	if (!isVaDisplay(display))
		return Error(ErrorCode::InvalidArgument, "display",
			     "The object given as the VA display is not a GstVaDisplay.");
	void *handle = gst_va_display_get_va_dpy(display);
	if (!handle)
		return Error(ErrorCode::InvalidState, "display",
			     "The GstVaDisplay has no VADisplay (it is not initialized).");
	auto *object = reinterpret_cast<GObject *>(display);
	if (BackendRef cached = detail::cachedBackend(object, backendQuark()))
		return cached;
	VaApiContext native;
	native.display = handle;
	native.renderNode = renderNodeOf(display);
	Result<ContextRef> made =
		Context::create(std::move(native), std::make_shared<DisplayHold>(display));
	if (!made)
		return std::move(made).error();
	BackendOpenOptions options;
	options.context = std::move(*made);
	Result<BackendRef> opened = openBackend(BackendKind::VaApi, options);
	if (!opened)
		return std::move(opened).error();
	GST_DEBUG("gpuhandle VA-API backend opened on GStreamer's display %p: %s",
		  static_cast<void *>(display), (*opened)->deviceInfo().toString().c_str());
	return detail::cacheBackend(object, backendQuark(), std::move(*opened));
}

Result<Frame> frameFromVaBuffer(GstBuffer *buffer, const GstVideoInfo &info)
{
	initDebug();
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const guint memories = gst_buffer_n_memory(buffer);
	if (memories == 0)
		return Error(ErrorCode::WrongKind, "buffer.memory",
			     "The buffer has no memory, so no VA surface.");
	// Every memory (one VAMemory, or the DMA-BUFs of one surface) names the same surface.
	VASurfaceID surface = VA_INVALID_ID;
	GstVaDisplay *display = nullptr;
	for (guint i = 0; i < memories; i++) {
		GstMemory *mem = gst_buffer_peek_memory(buffer, i);
		const VASurfaceID id = gst_va_memory_get_surface(mem);
		if (id == VA_INVALID_ID)
			return Error::format(ErrorCode::WrongKind, "buffer.memory",
					     "Memory %u of the buffer is a %s memory without a VA "
					     "surface, not GStreamer's VA memory.",
					     i, memTypeOf(mem));
		GstVaDisplay *owner = gst_va_memory_peek_display(mem);
		if (i == 0) {
			surface = id;
			display = owner;
		} else if (id != surface || owner != display) {
			return Error::format(ErrorCode::InvalidArgument, "buffer.memory",
					     "Memory %u of the buffer is VA surface %u, memory 0 "
					     "surface %u (or of another display): one surface per "
					     "buffer is expected.",
					     i, id, surface);
		}
	}
	void *handle = display ? gst_va_display_get_va_dpy(display) : nullptr;
	if (!handle)
		return Error::format(ErrorCode::InvalidArgument, "buffer.memory",
				     "The buffer's VA surface %u belongs to no VADisplay.",
				     surface);
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format)
		return std::move(format).error();
	const PixelFormatInfo &pixels = **pixelFormatInfo(*format);
	VaSurfaceDesc native;
	native.surface = surface;
	native.display = handle;
	native.anchor = std::make_shared<BufferAnchor>(buffer);
	Result<VaSurface> resource = VaSurface::create(std::move(native));
	if (!resource)
		return std::move(resource).error();
	FrameDesc desc;
	desc.format = *format;
	desc.width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
	desc.height = static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info));
	desc.colorimetry = colorimetryOf(info);
	desc.numResources = 1;
	desc.resources[0] = std::move(*resource);
	desc.numPlanes = pixels.numPlanes; // each plane view: the surface, layout the driver's
	return Frame::create(std::move(desc));
}

Result<BackendRef> vaBackendForBuffer(GstBuffer *buffer)
{
	GstMemory *mem = buffer && gst_buffer_n_memory(buffer) > 0
				 ? gst_buffer_peek_memory(buffer, 0)
				 : nullptr;
	GstVaDisplay *display = mem ? gst_va_memory_peek_display(mem) : nullptr;
	if (!display)
		return Error(ErrorCode::WrongKind, "buffer",
			     "The buffer holds no memory of GStreamer's VA allocators.");
	return vaBackendFor(display);
}

} // namespace gpuhandle::gst
