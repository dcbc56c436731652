// C API: gpuhandle_frame over gpuhandle::Frame, holding references on its C resources.
#include <gpuhandle/gpuhandle_frame.h>

#include "c_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

gpuhandle_frame::~gpuhandle_frame()
{
	for (gpuhandle_resource *resource : resources)
		unref(resource);
}

namespace {

Colorimetry colorimetryOf(const gpuhandle_colorimetry &c)
{
	Colorimetry colorimetry;
	colorimetry.range = static_cast<ColorRange>(c.range);
	colorimetry.matrix = static_cast<ColorMatrix>(c.matrix);
	colorimetry.primaries = static_cast<ColorPrimaries>(c.primaries);
	colorimetry.transfer = static_cast<ColorTransfer>(c.transfer);
	return colorimetry;
}

gpuhandle_colorimetry cColorimetry(const Colorimetry &c)
{
	return { static_cast<uint8_t>(c.range), static_cast<uint8_t>(c.matrix),
		 static_cast<uint8_t>(c.primaries), static_cast<uint8_t>(c.transfer) };
}

gpuhandle_plane_view cPlane(const PlaneView &p)
{
	return { p.resource, p.subresource, p.offset, p.stride };
}

} // namespace

namespace gpuhandle::capi {

gpuhandle_frame *newFrame(Frame frame, const std::array<gpuhandle_resource *, 4> &given)
{
	auto object = std::make_unique<gpuhandle_frame>(std::move(frame));
	for (uint32_t i = 0; i < object->value.numResources(); ++i)
		object->resources[i] = given[i] ? ref(given[i])
						: newResource(object->value.resource(i));
	return object.release();
}

} // namespace gpuhandle::capi

extern "C" {

gpuhandle_status gpuhandle_frame_new(const gpuhandle_frame_desc *desc, gpuhandle_frame **out,
				     gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!desc)
			return failNull(error, function, "desc");
		if (!out)
			return failNull(error, function, "out");
		FrameDesc d;
		d.format = static_cast<PixelFormat>(desc->format);
		d.width = desc->width;
		d.height = desc->height;
		d.colorimetry = colorimetryOf(desc->colorimetry);
		d.numResources = desc->numResources;
		std::array<gpuhandle_resource *, 4> given{};
		for (uint32_t i = 0; i < 4; ++i) {
			if (desc->resources[i])
				d.resources[i] = desc->resources[i]->value;
			if (i < desc->numResources)
				given[i] = desc->resources[i];
		}
		d.numPlanes = desc->numPlanes;
		for (uint32_t i = 0; i < 4; ++i) {
			const gpuhandle_plane_view &p = desc->planes[i];
			d.planes[i] = { p.resource, p.subresource, p.offset, p.stride };
		}
		Result<Frame> frame = Frame::create(std::move(d));
		if (!frame)
			return fail(error, std::move(frame).error());
		*out = newFrame(std::move(*frame), given);
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_frame_wrap(uint32_t format, uint32_t width, uint32_t height,
				      gpuhandle_colorimetry colorimetry,
				      gpuhandle_resource *resource, gpuhandle_frame **out,
				      gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!resource)
			return failNull(error, function, "resource");
		if (!out)
			return failNull(error, function, "out");
		Result<Frame> frame = Frame::wrap(static_cast<PixelFormat>(format), width, height,
						  colorimetryOf(colorimetry), resource->value);
		if (!frame)
			return fail(error, std::move(frame).error());
		*out = newFrame(std::move(*frame), { resource, nullptr, nullptr, nullptr });
		return GPUHANDLE_OK;
	});
}

gpuhandle_frame *gpuhandle_frame_ref(gpuhandle_frame *frame) noexcept
{
	return ref(frame);
}

void gpuhandle_frame_unref(gpuhandle_frame *frame) noexcept
{
	unref(frame);
}

uint32_t gpuhandle_frame_get_format(const gpuhandle_frame *frame) noexcept
{
	return frame ? static_cast<uint32_t>(frame->value.format()) : 0;
}

uint32_t gpuhandle_frame_get_width(const gpuhandle_frame *frame) noexcept
{
	return frame ? frame->value.width() : 0;
}

uint32_t gpuhandle_frame_get_height(const gpuhandle_frame *frame) noexcept
{
	return frame ? frame->value.height() : 0;
}

gpuhandle_colorimetry gpuhandle_frame_get_colorimetry(const gpuhandle_frame *frame) noexcept
{
	return cColorimetry(frame ? frame->value.colorimetry() : Colorimetry{});
}

uint32_t gpuhandle_frame_get_num_resources(const gpuhandle_frame *frame) noexcept
{
	return frame ? frame->value.numResources() : 0;
}

gpuhandle_resource *gpuhandle_frame_get_resource(const gpuhandle_frame *frame,
						 uint32_t index) noexcept
{
	if (!frame || index >= frame->value.numResources())
		return nullptr;
	return frame->resources[index];
}

uint32_t gpuhandle_frame_get_num_planes(const gpuhandle_frame *frame) noexcept
{
	return frame ? frame->value.numPlanes() : 0;
}

gpuhandle_status gpuhandle_frame_get_plane(const gpuhandle_frame *frame, uint32_t index,
					   gpuhandle_plane_view *out) noexcept
{
	if (out)
		*out = {};
	if (!frame || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	if (index >= frame->value.numPlanes())
		return GPUHANDLE_ERROR_OUT_OF_RANGE;
	*out = cPlane(frame->value.plane(index));
	return GPUHANDLE_OK;
}

gpuhandle_status gpuhandle_frame_get_desc(const gpuhandle_frame *frame,
					  gpuhandle_frame_desc *out) noexcept
{
	if (out)
		*out = {};
	if (!frame || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	const Frame &f = frame->value;
	out->format = static_cast<uint32_t>(f.format());
	out->width = f.width();
	out->height = f.height();
	out->colorimetry = cColorimetry(f.colorimetry());
	out->numResources = f.numResources();
	for (uint32_t i = 0; i < f.numResources(); ++i)
		out->resources[i] = frame->resources[i];
	out->numPlanes = f.numPlanes();
	for (uint32_t i = 0; i < f.numPlanes(); ++i)
		out->planes[i] = cPlane(f.plane(i));
	return GPUHANDLE_OK;
}

bool gpuhandle_colorimetry_is_valid(gpuhandle_colorimetry colorimetry) noexcept
{
	return colorimetryOf(colorimetry).isValid();
}

} // extern "C"
