// DMA-BUF caps of gpuhandleupload/gpuhandledownload: GStreamer 1.24+'s DMA_DRM form against its
// own elements (capsfilters with drm-format, glupload), the plain form on GStreamer 1.22.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/format_mappings.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

// Last: they include Check, whose fail() macro breaks standard headers included after it.
#include "pipeline_run.h"

using namespace gpuhandle;

namespace {

constexpr bool kDmaDrm = GST_CHECK_VERSION(1, 24, 0);

// Whether `value` (a string or a list of them) holds `wanted`.
bool holds(const GValue *value, const char *wanted)
{
	if (!value)
		return false;
	if (G_VALUE_HOLDS_STRING(value))
		return std::strcmp(g_value_get_string(value), wanted) == 0;
	if (GST_VALUE_HOLDS_LIST(value))
		for (guint i = 0; i < gst_value_list_get_size(value); i++)
			if (holds(gst_value_list_get_value(value, i), wanted))
				return true;
	return false;
}

// Checks every DMABuf structure of `caps` has the form this GStreamer writes, and that NV12 is
// among them: format=DMA_DRM with drm-format NV12 (linear) on 1.24+, format NV12 before. A
// template (`anyDrmFormat`) writes format=DMA_DRM without drm-format, as glupload's does.
void checkDmaBufForm(GstCaps *caps, const char *where, bool anyDrmFormat = false)
{
	bool nv12 = false;
	guint dmabufs = 0;
	for (guint i = 0; i < gst_caps_get_size(caps); i++) {
		GstCapsFeatures *features = gst_caps_get_features(caps, i);
		if (!gst_caps_features_contains(features, "memory:DMABuf"))
			continue;
		dmabufs++;
		const GstStructure *s = gst_caps_get_structure(caps, i);
		const GValue *format = gst_structure_get_value(s, "format");
		const GValue *drm = gst_structure_get_value(s, "drm-format");
		if (kDmaDrm) {
			if (!holds(format, "DMA_DRM") || !G_VALUE_HOLDS_STRING(format)) {
				gchar *text = gst_structure_to_string(s);
				const std::string shown = text;
				g_free(text);
				ck_abort_msg("%s: a DMABuf structure without format=DMA_DRM: %s",
					     where, shown.c_str());
			}
			if (anyDrmFormat)
				ck_assert_msg(!drm, "%s: a template that names drm-formats", where);
			nv12 = nv12 || holds(drm, "NV12") || (anyDrmFormat && !drm);
		} else {
			ck_assert_msg(!drm, "%s: drm-format on GStreamer 1.22", where);
			nv12 = nv12 || holds(format, "NV12");
		}
	}
	ck_assert_msg(dmabufs > 0, "%s: no memory:DMABuf caps", where);
	ck_assert_msg(nv12, "%s: NV12 is not among the DMABuf formats", where);
}

GstElement *make(const char *factory)
{
	GstElement *element = gst_element_factory_make(factory, nullptr);
	ck_assert_msg(element, "no element %s", factory);
	return element;
}

std::string dmaBufCaps(const char *extra = "")
{
	return kDmaDrm ? std::string("video/x-raw(memory:DMABuf),format=DMA_DRM,drm-format=NV12") +
				 extra
		       : std::string("video/x-raw(memory:DMABuf),format=NV12") + extra;
}

} // namespace

// Both pad templates and both caps transforms write DMA-BUF caps in this GStreamer's form.
START_TEST(templates_and_transforms_use_the_version_form)
{
	GstElement *up = make("gpuhandleupload");
	GstElement *down = make("gpuhandledownload");
	GstPad *sink = gst_element_get_static_pad(up, "sink");
	GstPad *src = gst_element_get_static_pad(down, "src");
	GstCaps *sinkTemplate = gst_pad_get_pad_template_caps(sink);
	GstCaps *srcTemplate = gst_pad_get_pad_template_caps(src);
	checkDmaBufForm(sinkTemplate, "gpuhandleupload's sink template", true);
	checkDmaBufForm(srcTemplate, "gpuhandledownload's src template");
	// The transforms: GpuHandle NV12 caps become DMABuf caps downstream of the download, and
	// DMABuf caps (in this version's form) become GpuHandle NV12 downstream of the upload.
	GstCaps *handle = gst_caps_from_string(
		"video/x-raw(memory:GpuHandle),format=NV12,width=64,height=48,framerate=30/1");
	GstBaseTransformClass *base = GST_BASE_TRANSFORM_GET_CLASS(down);
	GstCaps *offered =
		base->transform_caps(GST_BASE_TRANSFORM(down), GST_PAD_SINK, handle, nullptr);
	checkDmaBufForm(offered, "gpuhandledownload's transform of GpuHandle NV12");
	GstCaps *dmabuf =
		gst_caps_from_string(dmaBufCaps(",width=64,height=48,framerate=30/1").c_str());
	ck_assert_msg(gst_pad_query_accept_caps(sink, dmabuf), "the upload refuses %s",
		      dmaBufCaps().c_str());
	base = GST_BASE_TRANSFORM_GET_CLASS(up);
	GstCaps *wrapped =
		base->transform_caps(GST_BASE_TRANSFORM(up), GST_PAD_SINK, dmabuf, nullptr);
	GstCaps *expected = gst_caps_from_string(
		"video/x-raw(memory:GpuHandle),format=NV12,width=64,height=48,framerate=30/1");
	if (!gst_caps_can_intersect(wrapped, expected)) {
		gchar *text = gst_caps_to_string(wrapped);
		const std::string shown = text;
		g_free(text);
		ck_abort_msg("%s became %s", dmaBufCaps().c_str(), shown.c_str());
	}
	for (guint i = 0; i < gst_caps_get_size(wrapped); i++)
		ck_assert(
			!gst_structure_has_field(gst_caps_get_structure(wrapped, i), "drm-format"));
	// A drm-format no gpuhandle format has (a vendor fourcc) matches nothing.
	if (kDmaDrm) {
		GstCaps *unknown = gst_caps_from_string(
			"video/x-raw(memory:DMABuf),format=DMA_DRM,drm-format=Q123,width=64,"
			"height=48");
		ck_assert(!gst_pad_query_accept_caps(sink, unknown));
		gst_caps_unref(unknown);
	}
	for (GstCaps *caps :
	     { sinkTemplate, srcTemplate, handle, offered, dmabuf, wrapped, expected })
		gst_caps_unref(caps);
	gst_object_unref(sink);
	gst_object_unref(src);
	gst_object_unref(up);
	gst_object_unref(down);
}
END_TEST

// The drm-format of every string in `value` (a string or a list of them).
std::vector<std::string> stringsOf(const GValue *value)
{
	std::vector<std::string> out;
	if (value && G_VALUE_HOLDS_STRING(value))
		out.emplace_back(g_value_get_string(value));
	else if (value && GST_VALUE_HOLDS_LIST(value))
		for (guint i = 0; i < gst_value_list_get_size(value); i++)
			for (std::string &one : stringsOf(gst_value_list_get_value(value, i)))
				out.push_back(std::move(one));
	return out;
}

// gpuhandleupload backend=vulkan|opengl offers DMA-BUF producers linear and every modifier that
// backend imports for the format (Backend::dmaBufImportModifiers of the same driver, opened on
// its own), and no other; auto offers linear only (templates_and_transforms_...).
START_TEST(upload_offers_the_backends_modifiers)
{
#if !GST_CHECK_VERSION(1, 24, 0)
	std::printf("drm-format lists are GStreamer 1.24+'s: nothing to check on 1.22\n");
#else
	const struct {
		const char *property;
		BackendKind kind;
	} targets[] = { { "vulkan", BackendKind::Vulkan }, { "gl", BackendKind::OpenGL } };
	const PixelFormat formats[] = { PixelFormat::NV12, PixelFormat::RGBA, PixelFormat::P010LE };
	for (const auto &target : targets) {
		Result<BackendRef> backend = openBackend(target.kind);
		if (!backend.ok()) {
			std::printf("%s: not here (%s)\n", target.property,
				    backend.error().message().c_str());
			continue;
		}
		GstElement *up = make("gpuhandleupload");
		gst_util_set_object_arg(G_OBJECT(up), "backend", target.property);
		GstBaseTransformClass *base = GST_BASE_TRANSFORM_GET_CLASS(up);
		for (PixelFormat format : formats) {
			const std::vector<uint64_t> modifiers =
				(*backend)->dmaBufImportModifiers(format);
			const uint32_t fourcc = toApiFormat(FormatApi::DrmFourcc, format).value();
			const auto video = static_cast<GstVideoFormat>(
				toApiFormat(FormatApi::GStreamer, format).value());
			std::string handleCaps =
				std::string("video/x-raw(memory:GpuHandle),format=") +
				gst_video_format_to_string(video) + ",width=64,height=48";
			GstCaps *handle = gst_caps_from_string(handleCaps.c_str());
			GstCaps *offered = base->transform_caps(GST_BASE_TRANSFORM(up), GST_PAD_SRC,
								handle, nullptr);
			std::vector<std::string> listed;
			for (guint i = 0; i < gst_caps_get_size(offered); i++)
				if (gst_caps_features_contains(gst_caps_get_features(offered, i),
							       "memory:DMABuf"))
					listed = stringsOf(gst_structure_get_value(
						gst_caps_get_structure(offered, i), "drm-format"));
			// Linear always; the backend's own besides.
			std::vector<std::string> expected;
			std::vector<uint64_t> all{ 0 };
			all.insert(all.end(), modifiers.begin(), modifiers.end());
			for (uint64_t m : all) {
				gchar *text = gst_video_dma_drm_fourcc_to_string(fourcc, m);
				if (std::find(expected.begin(), expected.end(), text) ==
				    expected.end())
					expected.emplace_back(text);
				g_free(text);
			}
			std::string shown;
			for (const std::string &one : listed)
				shown += one + " ";
			std::printf("%s %s: %s\n", target.property, pixelFormatName(format),
				    shown.c_str());
			ck_assert_msg(listed == expected, "%s %s: offered %s, %zu expected",
				      target.property, pixelFormatName(format), shown.c_str(),
				      expected.size());
			// A modifier of no vendor (0x7f) is nobody's: it matches nothing offered.
			gchar *drm =
				gst_video_dma_drm_fourcc_to_string(fourcc, 0x7f00000000000001ULL);
			const std::string foreignText =
				std::string(
					"video/x-raw(memory:DMABuf),format=DMA_DRM,drm-format=") +
				drm + ",width=64,height=48";
			g_free(drm);
			GstCaps *foreign = gst_caps_from_string(foreignText.c_str());
			ck_assert_msg(!gst_caps_can_intersect(offered, foreign), "%s: offers %s",
				      target.property, foreignText.c_str());
			gst_caps_unref(foreign);
			gst_caps_unref(offered);
			gst_caps_unref(handle);
		}
		gst_object_unref(up);
	}
#endif
}
END_TEST

// Negotiation with GStreamer's own elements: a capsfilter with this version's DMA-BUF caps, and
// glupload, whose DMABuf sink caps are GStreamer's. The link settles on DMA-BUF caps in this
// version's form, with NV12; the frames then flow where the machine makes DMA-BUFs, or the
// element says why it cannot.
START_TEST(negotiates_dmabuf_with_gstreamer_elements)
{
	const std::string source =
		"videotestsrc num-buffers=2 ! "
		"video/x-raw,format=NV12,width=64,height=48,framerate=30/1 ! "
		"gpuhandleupload backend=vulkan ! gpuhandledownload name=down ! ";
	for (const std::string &rest :
	     { dmaBufCaps() + " ! fakesink name=sink",
	       std::string("video/x-raw(memory:DMABuf) ! glupload ! fakesink name=sink") }) {
		GError *error = nullptr;
		GstElement *pipeline = gst_parse_launch((source + rest).c_str(), &error);
		ck_assert_msg(pipeline && !error, "%s", error ? error->message : "");
		GstElement *down = gst_bin_get_by_name(GST_BIN(pipeline), "down");
		GstPad *src = gst_element_get_static_pad(down, "src");
		gst_element_set_state(pipeline, GST_STATE_PAUSED);
		// Negotiation happens before the first buffer, whether or not it then flows.
		GstMessage *message = gst_bus_timed_pop_filtered(
			GST_ELEMENT_BUS(pipeline), 30 * GST_SECOND,
			static_cast<GstMessageType>(GST_MESSAGE_ASYNC_DONE | GST_MESSAGE_ERROR));
		ck_assert_msg(message, "%s: neither prerolled nor failed in 30 s", rest.c_str());
		GstCaps *caps = gst_pad_get_current_caps(src);
		if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
			GError *why = nullptr;
			gst_message_parse_error(message, &why, nullptr);
			std::printf("%s: frames did not flow (%s)\n", rest.c_str(), why->message);
			// Only the lack of a DMA-BUF maker may stop it, and it is named.
			ck_assert_msg(std::strstr(why->message, "DMA") != nullptr, "%s: %s",
				      rest.c_str(), why->message);
			g_error_free(why);
		}
		ck_assert_msg(caps, "%s: the download's output was never negotiated", rest.c_str());
		checkDmaBufForm(caps, rest.c_str());
		gst_caps_unref(caps);
		gst_message_unref(message);
		gst_element_set_state(pipeline, GST_STATE_NULL);
		gst_object_unref(src);
		gst_object_unref(down);
		gst_object_unref(pipeline);
	}
}
END_TEST

int main(int argc, char **argv)
{
	gst_init(&argc, &argv);
	g_log_set_always_fatal(
		static_cast<GLogLevelFlags>(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING));
	gchar *version = gst_version_string();
	std::printf("%s: DMA-BUF caps in the %s form\n", version,
		    kDmaDrm ? "DMA_DRM (1.24+)" : "plain (1.22)");
	g_free(version);
	Suite *s = suite_create("gst-dma-drm");
	TCase *tc = tcase_create("gst-dma-drm");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, templates_and_transforms_use_the_version_form);
	tcase_add_test(tc, negotiates_dmabuf_with_gstreamer_elements);
	tcase_add_test(tc, upload_offers_the_backends_modifiers);
	suite_add_tcase(s, tc);
	return test::runSuite(s);
}
