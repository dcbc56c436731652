// Shared by the element tests: caps strings, a videotestsrc source of them, the appsink, the odd
// size and the formats gpuhandleupload advertises.
#pragma once

#include "pipeline_run.h"

#include <string>
#include <vector>

#include <gst/gst.h>

namespace gpuhandle::test::elements {

inline std::string rawCaps(const char *format, Size size)
{
	return "video/x-raw,format=" + std::string(format) +
	       ",width=" + std::to_string(size.width) + ",height=" + std::to_string(size.height) +
	       ",framerate=30/1";
}

inline std::string source(const char *format, Size size, int buffers = 2)
{
	return "videotestsrc num-buffers=" + std::to_string(buffers) + " pattern=smpte ! " +
	       rawCaps(format, size);
}

inline constexpr const char *kSink = "appsink name=sink sync=false";

// One format at one size through gpuhandleupload backend=`backend` ! gpuhandledownload and back:
// the same visible pixels as the same source without gpuhandle, both elements counting its two
// frames. Fails the test otherwise; returns the frames compared.
inline guint64 checkRoundTrip(const char *backend, const char *format, Size size)
{
	Run reference = runPipeline(source(format, size) + " ! " + kSink);
	ck_assert_msg(reference.error.empty(), "%s", reference.error.c_str());
	Run run = runPipeline(
		source(format, size) + " ! gpuhandleupload name=up backend=" + backend +
		" ! gpuhandledownload name=down ! " + rawCaps(format, size) + " ! " + kSink);
	ck_assert_msg(run.error.empty(), "%s %s %dx%d: %s", backend, format, size.width,
		      size.height, run.error.c_str());
	ck_assert_uint_eq(run.frames, 2);
	ck_assert_msg(run.bytes == reference.bytes, "%s %s %dx%d: bytes differ%s", backend, format,
		      size.width, size.height, firstDifference(run.bytes, reference.bytes).c_str());
	ck_assert_uint_eq(run.stat("up", "frames"), 2);
	ck_assert_uint_eq(run.stat("down", "frames"), 2);
	return run.frames;
}

// Odd in both directions: a chroma plane's last column and row hold one pixel's share, and no
// stride is the row's width.
inline constexpr Size kOddSize{ 33, 17 };

// The formats of the first plain `video/x-raw` structure (system memory) of gpuhandleupload's
// sink pad template.
inline std::vector<std::string> advertisedFormats()
{
	GstElementFactory *factory = gst_element_factory_find("gpuhandleupload");
	ck_assert_msg(factory != nullptr, "gpuhandleupload is not registered");
	std::vector<std::string> formats;
	for (const GList *l = gst_element_factory_get_static_pad_templates(factory); l;
	     l = l->next) {
		auto *tmpl = static_cast<GstStaticPadTemplate *>(l->data);
		if (tmpl->direction != GST_PAD_SINK)
			continue;
		GstCaps *caps = gst_static_pad_template_get_caps(tmpl);
		for (guint i = 0; i < gst_caps_get_size(caps) && formats.empty(); ++i) {
			GstCapsFeatures *features = gst_caps_get_features(caps, i);
			if (features && !gst_caps_features_is_any(features) &&
			    !gst_caps_features_is_equal(features,
							GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY))
				continue;
			const GValue *list =
				gst_structure_get_value(gst_caps_get_structure(caps, i), "format");
			ck_assert(list != nullptr && GST_VALUE_HOLDS_LIST(list));
			for (guint f = 0; f < gst_value_list_get_size(list); ++f)
				formats.emplace_back(
					g_value_get_string(gst_value_list_get_value(list, f)));
		}
		gst_caps_unref(caps);
	}
	gst_object_unref(factory);
	// The template lists 61 formats on GStreamer 1.22; fewer would mean the lookup went wrong.
	ck_assert_uint_ge(formats.size(), 40);
	return formats;
}

} // namespace gpuhandle::test::elements
