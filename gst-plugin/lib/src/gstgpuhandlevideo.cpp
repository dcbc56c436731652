// GstVideoInfo and caps <-> gpuhandle formats, layouts and colorimetry; DMA-BUF caps.
#include <gpuhandle/colorimetry_mappings.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

using namespace gpuhandle;

namespace {

const char *videoFormatName(GstVideoFormat format)
{
	if (format == GST_VIDEO_FORMAT_UNKNOWN)
		return "UNKNOWN"; // gst_video_format_to_string() refuses it with a critical
	const char *name = gst_video_format_to_string(format);
	return name ? name : "(no name)";
}

// One GStreamer colorimetry field through the core's table, the others left unknown, so that
// a field without an H.273 code (GAMMA18, ADOBERGB) leaves only itself unset.
template<typename Field>
Field fieldFromGst(GstColorimetry gst, Field Colorimetry::*field)
{
	Result<Colorimetry> ours = fromGstColorimetry(gst);
	return ours ? (*ours).*field : Colorimetry{}.*field;
}

template<typename Field>
uint32_t fieldToGst(Field value, Field Colorimetry::*field, uint32_t GstColorimetry::*gstField)
{
	Colorimetry ours{};
	ours.*field = value;
	Result<GstColorimetry> gst = toGstColorimetry(ours);
	return gst ? (*gst).*gstField : 0;
}

// Whether the frame's planes all lie in one range of one resource at CPU strides, so that
// GstVideoInfo offsets can say where they are (not several resources, DMA-BUF objects or
// CpuPlanes planes, nor an opaque plane).
bool planesInOneRange(const Frame &frame)
{
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		if (view.resource != frame.plane(0).resource || view.subresource != 0 ||
		    frame.resource(view.resource).subresourceCount() > 1 || view.stride == 0 ||
		    view.stride > G_MAXINT)
			return false;
	}
	return true;
}

Result<const PixelFormatInfo *> formatInfoOf(GstVideoFormat format)
{
	Result<PixelFormat> pixel = gst::pixelFormatOf(format);
	if (!pixel)
		return std::move(pixel).error();
	return pixelFormatInfo(*pixel);
}

#if GPUHANDLE_GST_HAVE_DMA_DRM && GST_CHECK_VERSION(1, 24, 0)
// GStreamer >= 1.24: `format=DMA_DRM, drm-format=FOURCC[:0xMODIFIER]`. The info gets the real
// format through gpuhandle's DRM table (GStreamer leaves DMA_DRM there for tiled modifiers), with
// GStreamer's default layout for it: the real layout travels in each buffer's video meta.
Result<gst::DmaDrmInfo> dmaDrmFormInfo(const GstCaps *caps)
{
	GstVideoInfoDmaDrm drm;
	gst_video_info_dma_drm_init(&drm);
	if (!gst_video_info_dma_drm_from_caps(&drm, caps))
		return Error(
			ErrorCode::InvalidArgument, "caps.drm-format",
			"The DMA_DRM caps have no drm-format that GStreamer can parse (a fourcc, "
			"optionally followed by :0x and a modifier), or no size.");
	Result<PixelFormat> pixel = fromApiFormat(FormatApi::DrmFourcc, drm.drm_fourcc);
	if (!pixel)
		return Error::format(ErrorCode::NotSupported, "caps.drm-format",
				     "DRM fourcc %" GST_FOURCC_FORMAT " has no gpuhandle format.",
				     GST_FOURCC_ARGS(drm.drm_fourcc));
	Result<GstVideoFormat> format = gst::videoFormatOf(*pixel);
	if (!format)
		return std::move(format).error();
	gst::DmaDrmInfo out;
	if (!gst_video_info_set_interlaced_format(&out.info, *format, drm.vinfo.interlace_mode,
						  static_cast<guint>(drm.vinfo.width),
						  static_cast<guint>(drm.vinfo.height)))
		return Error::format(ErrorCode::InvalidArgument, "caps",
				     "GStreamer has no layout for a %s %dx%d frame.",
				     videoFormatName(*format), drm.vinfo.width, drm.vinfo.height);
	out.info.flags = drm.vinfo.flags;
	out.info.views = drm.vinfo.views;
	out.info.chroma_site = drm.vinfo.chroma_site;
	out.info.colorimetry = drm.vinfo.colorimetry;
	out.info.par_n = drm.vinfo.par_n;
	out.info.par_d = drm.vinfo.par_d;
	out.info.fps_n = drm.vinfo.fps_n;
	out.info.fps_d = drm.vinfo.fps_d;
	out.drmFourcc = drm.drm_fourcc;
	out.modifier = drm.drm_modifier;
	out.drmFormatCaps = true;
	return out;
}
#endif

} // namespace

namespace gpuhandle::gst {

Result<PixelFormat> pixelFormatOf(GstVideoFormat format)
{
	// UNKNOWN, ENCODED (and 1.24's DMA_DRM) have no table entry: the lookup refuses them too,
	// but the sentence should say what they are.
	if (format == GST_VIDEO_FORMAT_UNKNOWN || format == GST_VIDEO_FORMAT_ENCODED)
		return Error::format(ErrorCode::NotSupported, "format",
				     "GstVideoFormat %s names no pixel layout.",
				     videoFormatName(format));
	Result<PixelFormat> pixel =
		fromApiFormat(FormatApi::GStreamer, static_cast<uint32_t>(format));
	if (!pixel)
		return Error::format(ErrorCode::NotSupported, "format",
				     "GstVideoFormat %s (%d) has no gpuhandle format.",
				     videoFormatName(format), static_cast<int>(format));
	return pixel;
}

Result<GstVideoFormat> videoFormatOf(PixelFormat format)
{
	Result<uint32_t> value = toApiFormat(FormatApi::GStreamer, format);
	if (!value)
		return Error::format(ErrorCode::NotSupported, "format",
				     "gpuhandle format %s has no GstVideoFormat in GStreamer 1.22.",
				     pixelFormatName(format));
	return static_cast<GstVideoFormat>(*value);
}

Colorimetry colorimetryOf(const GstVideoInfo &info)
{
	const GstVideoColorimetry &c = info.colorimetry;
	// Per buffer on the upload path: every field known is the usual case, one lookup.
	if (Result<Colorimetry> whole = fromGstColorimetry(GstColorimetry{
		    static_cast<uint32_t>(c.range), static_cast<uint32_t>(c.matrix),
		    static_cast<uint32_t>(c.transfer), static_cast<uint32_t>(c.primaries) }))
		return *whole;
	Colorimetry out;
	out.range = fieldFromGst(GstColorimetry{ static_cast<uint32_t>(c.range), 0, 0, 0 },
				 &Colorimetry::range);
	out.matrix = fieldFromGst(GstColorimetry{ 0, static_cast<uint32_t>(c.matrix), 0, 0 },
				  &Colorimetry::matrix);
	out.transfer = fieldFromGst(GstColorimetry{ 0, 0, static_cast<uint32_t>(c.transfer), 0 },
				    &Colorimetry::transfer);
	out.primaries = fieldFromGst(GstColorimetry{ 0, 0, 0, static_cast<uint32_t>(c.primaries) },
				     &Colorimetry::primaries);
	return out;
}

void setColorimetry(GstVideoInfo &info, const Colorimetry &colorimetry)
{
	GstVideoColorimetry &c = info.colorimetry;
	c.range = static_cast<GstVideoColorRange>(
		fieldToGst(colorimetry.range, &Colorimetry::range, &GstColorimetry::range));
	c.matrix = static_cast<GstVideoColorMatrix>(
		fieldToGst(colorimetry.matrix, &Colorimetry::matrix, &GstColorimetry::matrix));
	c.transfer = static_cast<GstVideoTransferFunction>(fieldToGst(
		colorimetry.transfer, &Colorimetry::transfer, &GstColorimetry::transfer));
	c.primaries = static_cast<GstVideoColorPrimaries>(fieldToGst(
		colorimetry.primaries, &Colorimetry::primaries, &GstColorimetry::primaries));
}

Result<GstVideoInfo> videoInfoOf(const Frame &frame)
{
	Result<GstVideoFormat> format = videoFormatOf(frame.format());
	if (!format)
		return std::move(format).error();
	GstVideoInfo info;
	gst_video_info_init(&info);
	if (!gst_video_info_set_format(&info, *format, frame.width(), frame.height()))
		return Error::format(ErrorCode::InvalidArgument, "width",
				     "GStreamer has no layout for a %s %ux%u frame.",
				     videoFormatName(*format), frame.width(), frame.height());
	setColorimetry(info, frame.colorimetry());
	if (!planesInOneRange(frame))
		return info;
	const PixelFormatInfo &pf = **pixelFormatInfo(frame.format());
	uint64_t span = 0;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		info.offset[p] = static_cast<gsize>(view.offset);
		info.stride[p] = static_cast<gint>(view.stride);
		span = std::max(span, view.offset + uint64_t{ view.stride } *
							    pf.planes[p].rows(frame.height()));
	}
	const uint64_t known = frame.resource(frame.plane(0).resource).byteSize(0);
	info.size = static_cast<gsize>(known ? known : span);
	return info;
}

Result<FrameLayout> bufferLayout(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const GstVideoFormat gstFormat = GST_VIDEO_INFO_FORMAT(&info);
	Result<const PixelFormatInfo *> found = formatInfoOf(gstFormat);
	if (!found)
		return std::move(found).error();
	const PixelFormatInfo &pf = **found;
	if (GST_VIDEO_INFO_N_PLANES(&info) != pf.numPlanes)
		return Error::format(ErrorCode::NotSupported, "format",
				     "GStreamer's %s has %u planes, gpuhandle's %s %u.",
				     videoFormatName(gstFormat), GST_VIDEO_INFO_N_PLANES(&info),
				     pf.name, pf.numPlanes);
	const uint32_t width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
	const uint32_t height = static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info));
	const gsize bufferSize = gst_buffer_get_size(buffer);
	GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
	// Without a video meta, gst_video_frame_map() wants the whole of info.size.
	if (!meta && bufferSize < info.size)
		return Error::format(ErrorCode::InvalidArgument, "buffer",
				     "The buffer holds %" G_GSIZE_FORMAT " bytes; a %s %ux%u frame "
				     "without a video meta needs %" G_GSIZE_FORMAT ".",
				     bufferSize, videoFormatName(gstFormat), width, height,
				     info.size);
	FrameLayout layout;
	layout.format = pf.format;
	layout.width = width;
	layout.height = height;
	layout.numPlanes = pf.numPlanes;
	layout.size = meta ? bufferSize : info.size;
	for (uint32_t p = 0; p < pf.numPlanes; p++) {
		const PlaneInfo &plane = pf.planes[p];
		// A video meta's offsets count from the buffer's start, across its memories.
		const gint stride = meta ? meta->stride[p] : info.stride[p];
		const uint64_t offset = meta ? meta->offset[p] : info.offset[p];
		const uint64_t row = plane.rowBytes(width);
		const uint32_t rows = plane.rows(height);
		if (stride <= 0 || static_cast<uint64_t>(stride) < row)
			return Error::format(
				ErrorCode::InvalidArgument, "stride",
				"Plane %u of the %s %ux%u frame has a stride of %d bytes; a "
				"row takes %" PRIu64 ".",
				p, videoFormatName(gstFormat), width, height, stride, row);
		const std::optional<uint64_t> end =
			planeEnd(offset, static_cast<uint64_t>(stride), rows, row);
		if (!end || *end > bufferSize)
			return Error::format(
				ErrorCode::InvalidArgument, "buffer",
				"Plane %u of the %s %ux%u frame ends at byte %s (offset %" PRIu64
				", stride %d, %u rows), past the end of "
				"the buffer (%" G_GSIZE_FORMAT " bytes).",
				p, videoFormatName(gstFormat), width, height,
				end ? std::to_string(*end).c_str() : "2^64 or later", offset,
				stride, rows, bufferSize);
		PlaneLayout &out = layout.planes[p];
		out.width =
			static_cast<uint32_t>((uint64_t{ width } + plane.hsub - 1) / plane.hsub);
		out.height = rows;
		out.stride = static_cast<uint32_t>(stride);
		out.offset = offset;
		out.size = static_cast<uint64_t>(stride) * rows;
	}
	return layout;
}

Result<DmaDrmInfo> dmaDrmInfoFromCaps(const GstCaps *caps)
{
	if (!caps || !gst_caps_is_fixed(caps))
		return Error(ErrorCode::InvalidArgument, "caps",
			     "DMA-BUF caps must be fixed video caps (one structure, all fields "
			     "fixed).");
	const GstStructure *s = gst_caps_get_structure(caps, 0);
	if (!gst_structure_has_name(s, "video/x-raw"))
		return Error::format(ErrorCode::InvalidArgument, "caps",
				     "The caps are %s, not video/x-raw.",
				     gst_structure_get_name(s));
	const char *formatName = gst_structure_get_string(s, "format");
	if (formatName && std::strcmp(formatName, "DMA_DRM") == 0) {
#if GPUHANDLE_GST_HAVE_DMA_DRM && GST_CHECK_VERSION(1, 24, 0)
		return dmaDrmFormInfo(caps);
#else
		return Error(
			ErrorCode::NotSupported, "caps.format",
			"Caps with format=DMA_DRM (and a drm-format field) need GStreamer 1.24; "
			"gpuhandle was built against an older GStreamer, which names DMA-BUF "
			"formats as plain video formats.");
#endif
	}
	DmaDrmInfo out;
	if (!gst_video_info_from_caps(&out.info, caps))
		return Error::format(ErrorCode::InvalidArgument, "caps",
				     "GStreamer cannot read video caps with format %s (a format, "
				     "width and height are needed).",
				     formatName ? formatName : "(none)");
	Result<PixelFormat> pixel = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&out.info));
	if (!pixel)
		return std::move(pixel).error();
	Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, *pixel);
	if (!fourcc)
		return Error::format(ErrorCode::NotSupported, "caps.format",
				     "%s has no DRM fourcc, so it cannot travel as a DMA-BUF.",
				     videoFormatName(GST_VIDEO_INFO_FORMAT(&out.info)));
	out.drmFourcc = *fourcc;
	// GStreamer 1.22's plain form cannot say: its elements all mean linear.
	out.modifier = kDrmModifierLinear;
	out.drmFormatCaps = false;
	return out;
}

GstCaps *dmaDrmInfoToCaps(const DmaDrmInfo &info)
{
#if GPUHANDLE_GST_HAVE_DMA_DRM && GST_CHECK_VERSION(1, 24, 0)
	if (info.drmFormatCaps) {
		if (info.modifier == kDrmModifierInvalid || info.drmFourcc == 0)
			return nullptr; // GStreamer's drm-format cannot spell either
		GstVideoInfoDmaDrm drm;
		gst_video_info_dma_drm_init(&drm);
		drm.vinfo = info.info;
		drm.drm_fourcc = info.drmFourcc;
		drm.drm_modifier = info.modifier;
		return gst_video_info_dma_drm_to_caps(&drm);
	}
#endif
	GstCaps *caps = gst_video_info_to_caps(&info.info);
	if (!caps)
		return nullptr;
	gst_caps_set_features(caps, 0,
			      gst_caps_features_new_single(GST_CAPS_FEATURE_MEMORY_DMABUF));
	return caps;
}

bool hasDmaDrmCaps() noexcept
{
#if GPUHANDLE_GST_HAVE_DMA_DRM && GST_CHECK_VERSION(1, 24, 0)
	return true;
#else
	return false;
#endif
}

} // namespace gpuhandle::gst
