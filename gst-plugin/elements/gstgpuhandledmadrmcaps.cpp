// DMA-BUF caps as GStreamer 1.24+ writes them (format=DMA_DRM, drm-format list) in caps transforms.
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/format_mappings.h>

#include "gstgpuhandleelements.h"

#include <string>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#include <gst/video/video.h>

namespace gpuhandle::gst {

namespace {

#if GST_CHECK_VERSION(1, 24, 0)

// Calls `each` with every string of a string or list-of-strings field; false when the field is
// absent (any value) or of another type.
template<typename Each>
bool forEachString(const GstStructure *s, const char *field, Each each)
{
	const GValue *value = gst_structure_get_value(s, field);
	if (!value)
		return false;
	if (G_VALUE_HOLDS_STRING(value)) {
		each(g_value_get_string(value));
		return true;
	}
	if (!GST_VALUE_HOLDS_LIST(value))
		return false;
	for (guint i = 0; i < gst_value_list_get_size(value); i++) {
		const GValue *item = gst_value_list_get_value(value, i);
		if (G_VALUE_HOLDS_STRING(item))
			each(g_value_get_string(item));
	}
	return true;
}

// Sets `field` to the one string, or the list of them; removes it when there are none.
void setStrings(GstStructure *s, const char *field, const std::vector<std::string> &values)
{
	if (values.empty()) {
		gst_structure_remove_field(s, field);
		return;
	}
	if (values.size() == 1) {
		gst_structure_set(s, field, G_TYPE_STRING, values[0].c_str(), nullptr);
		return;
	}
	GValue list = G_VALUE_INIT;
	gst_value_list_init(&list, static_cast<guint>(values.size()));
	for (const std::string &v : values) {
		GValue item = G_VALUE_INIT;
		g_value_init(&item, G_TYPE_STRING);
		g_value_set_string(&item, v.c_str());
		gst_value_list_append_and_take_value(&list, &item);
	}
	gst_structure_take_value(s, field, &list);
}

void addUnique(std::vector<std::string> &values, std::string value)
{
	for (const std::string &v : values)
		if (v == value)
			return;
	values.push_back(std::move(value));
}

#endif

} // namespace

void toPlainFormats(GstStructure *s)
{
#if GST_CHECK_VERSION(1, 24, 0)
	const char *format = gst_structure_get_string(s, "format");
	if (format && g_str_equal(format, "DMA_DRM")) {
		// Each drm-format's fourcc, whatever its modifier, as the format it holds (the
		// other memories hold the same pixels, laid out their own way).
		std::vector<std::string> formats;
		const bool listed = forEachString(s, "drm-format", [&](const char *drm) {
			guint64 modifier = 0;
			const guint32 fourcc = gst_video_dma_drm_fourcc_from_string(drm, &modifier);
			Result<PixelFormat> pixel = fromApiFormat(FormatApi::DrmFourcc, fourcc);
			if (!pixel)
				return;
			Result<uint32_t> video = toApiFormat(FormatApi::GStreamer, *pixel);
			if (video)
				addUnique(formats, gst_video_format_to_string(
							   static_cast<GstVideoFormat>(*video)));
		});
		if (listed && formats.empty())
			formats.emplace_back("UNKNOWN"); // none with a gpuhandle format: no match
		setStrings(s, "format", formats);
	}
#endif
	gst_structure_remove_field(s, "drm-format");
}

bool toDmaDrmFormats(GstStructure *s, const DrmFormatOffer &offer)
{
#if GST_CHECK_VERSION(1, 24, 0)
	// Linear first: what every DMA-BUF importer here (EGL, Vulkan, VA-API) and gpuhandle's own
	// exporters agree on (drm-format without a modifier means linear); then the target's own.
	std::vector<std::string> drm;
	const bool listed = forEachString(s, "format", [&](const char *name) {
		Result<PixelFormat> pixel = pixelFormatOf(gst_video_format_from_string(name));
		if (!pixel)
			return;
		Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, *pixel);
		if (!fourcc)
			return;
		std::vector<uint64_t> modifiers{ kDrmModifierLinear };
		if (offer.modifiers)
			for (uint64_t m : offer.modifiers(*pixel))
				if (m != kDrmModifierInvalid)
					modifiers.push_back(m);
		for (uint64_t m : modifiers) {
			gchar *text = gst_video_dma_drm_fourcc_to_string(*fourcc, m);
			if (text)
				addUnique(drm, text);
			g_free(text);
		}
	});
	if (listed && drm.empty())
		return false; // no format that travels as a DMA-BUF
	gst_structure_set(s, "format", G_TYPE_STRING, "DMA_DRM", nullptr);
	if (offer.anyModifier)
		gst_structure_remove_field(s, "drm-format");
	else
		setStrings(s, "drm-format", drm);
	return true;
#else
	(void)s;
	(void)offer;
	return true;
#endif
}

} // namespace gpuhandle::gst
