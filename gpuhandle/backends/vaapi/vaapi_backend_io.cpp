// The VA-API backend: surface lifetimes, CPU mappings (derived or copied images), copies, waits.
#include <gpuhandle/format_mappings.h>

#include "vaapi/vaapi_backend_internal.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace gpuhandle::vaapi {

namespace {

bool reads(MapAccess access)
{
	return (static_cast<uint8_t>(access) & static_cast<uint8_t>(MapAccess::Read)) != 0;
}

bool writes(MapAccess access)
{
	return (static_cast<uint8_t>(access) & static_cast<uint8_t>(MapAccess::Write)) != 0;
}

// The driver's image format of `fourcc`, for vaCreateImage.
std::optional<VAImageFormat> imageFormatOf(VADisplay display, uint32_t fourcc)
{
	int max = vaMaxNumImageFormats(display);
	if (max <= 0)
		return std::nullopt;
	std::vector<VAImageFormat> formats(static_cast<size_t>(max));
	int count = 0;
	if (vaQueryImageFormats(display, formats.data(), &count) != VA_STATUS_SUCCESS)
		return std::nullopt;
	for (int i = 0; i < count && i < max; ++i)
		if (formats[static_cast<size_t>(i)].fourcc == fourcc)
			return formats[static_cast<size_t>(i)];
	return std::nullopt;
}

// An image of the surface's pixels: derived (the surface's own memory) where the driver can and
// the layout is the frame's format, else a copy made with vaCreateImage (+ vaGetImage to read).
Result<VAImage> imageOf(VADisplay display, VASurfaceID surface, const Frame &frame, uint32_t fourcc,
			bool read, bool &derived)
{
	VAImage image{};
	image.image_id = VA_INVALID_ID;
	image.buf = VA_INVALID_ID;
	if (vaDeriveImage(display, surface, &image) == VA_STATUS_SUCCESS) {
		if (image.format.fourcc == fourcc && image.num_planes == frame.numPlanes()) {
			derived = true;
			return image;
		}
		vaDestroyImage(display, image.image_id);
	}
	derived = false;
	std::optional<VAImageFormat> format = imageFormatOf(display, fourcc);
	if (!format)
		return Error::format(
			ErrorCode::NotSupported, "format",
			"%s: the surface cannot be derived as %s and the driver has no %s image "
			"format to copy it through.",
			kName, pixelFormatName(frame.format()), pixelFormatName(frame.format()));
	if (VAStatus status = vaCreateImage(display, &*format, static_cast<int>(frame.width()),
					    static_cast<int>(frame.height()), &image);
	    status != VA_STATUS_SUCCESS)
		return vaError("frame", "vaCreateImage", status);
	if (image.num_planes != frame.numPlanes()) {
		vaDestroyImage(display, image.image_id);
		return Error::format(ErrorCode::FormatMismatch, "planes",
				     "%s: the driver's %s image has %u planes, the frame %u.",
				     kName, pixelFormatName(frame.format()), image.num_planes,
				     frame.numPlanes());
	}
	if (read) {
		if (VAStatus status = vaGetImage(display, surface, 0, 0, frame.width(),
						 frame.height(), image.image_id);
		    status != VA_STATUS_SUCCESS) {
			vaDestroyImage(display, image.image_id);
			return vaError("frame", "vaGetImage", status);
		}
	}
	return image;
}

} // namespace

VaApiDevice::~VaApiDevice()
{
	if (ownDisplay && display)
		vaTerminate(display);
	// renderNode closes after the display that used it.
}

VaApiAllocation::~VaApiAllocation()
{
	if (owned && display && id != VA_INVALID_SURFACE)
		vaDestroySurfaces(display->display, &id, 1);
}

Status syncSurface(VADisplay display, VASurfaceID surface, WaitDuration timeout)
{
	Deadline deadline = Deadline::after(timeout);
#if VA_CHECK_VERSION(1, 9, 0)
	uint64_t ns = deadline.isNever() ? VA_TIMEOUT_INFINITE
					 : static_cast<uint64_t>(deadline.remaining().count());
	VAStatus bounded = vaSyncSurface2(display, surface, ns);
	if (bounded == VA_STATUS_SUCCESS)
		return {};
	if (bounded == VA_STATUS_ERROR_TIMEDOUT)
		return waitTimeoutError(BackendKind::VaApi, timeout);
	if (bounded != VA_STATUS_ERROR_UNIMPLEMENTED)
		return vaError("frame", "vaSyncSurface2", bounded);
#endif
	// vaSyncSurface has no timeout: poll the surface's status until it is no longer being
	// rendered, backing off from 50 us to 1 ms, then sync (at once: nothing is pending).
	WaitDuration slice = std::chrono::microseconds(50);
	for (;;) {
		VASurfaceStatus status = VASurfaceReady;
		VAStatus queried = vaQuerySurfaceStatus(display, surface, &status);
		// A driver without the query leaves the unbounded sync.
		if (queried == VA_STATUS_ERROR_UNIMPLEMENTED)
			break;
		if (queried != VA_STATUS_SUCCESS)
			return vaError("frame", "vaQuerySurfaceStatus", queried);
		if (!(status & VASurfaceRendering))
			break;
		if (deadline.expired())
			return waitTimeoutError(BackendKind::VaApi, timeout);
		std::this_thread::sleep_for(std::min(slice, deadline.remaining()));
		slice = std::min<WaitDuration>(slice * 2, std::chrono::milliseconds(1));
	}
	if (VAStatus status = vaSyncSurface(display, surface); status != VA_STATUS_SUCCESS)
		return vaError("frame", "vaSyncSurface", status);
	return {};
}

Error vaError(const char *field, const char *call, VAStatus status)
{
	return Error::format(ErrorCode::Backend, field, "%s: %s failed: %s (%d).", kName, call,
			     vaErrorStr(status), status);
}

Result<Frame> frameOverSurface(const FrameDesc &like,
			       const std::shared_ptr<VaApiAllocation> &surface)
{
	VaSurfaceDesc native;
	native.surface = surface->id;
	native.display = surface->display->display;
	native.anchor = surface;
	Result<VaSurface> resource = VaSurface::create(std::move(native));
	if (!resource.ok())
		return resource.error();
	FrameDesc desc = like;
	desc.numResources = 1;
	desc.resources = {};
	desc.resources[0] = std::move(*resource);
	Result<const PixelFormatInfo *> info = pixelFormatInfo(like.format);
	if (!info.ok())
		return info.error();
	desc.numPlanes = (*info)->numPlanes;
	desc.planes = {};
	return Frame::create(std::move(desc));
}

const VaApiAllocation *VaApiBackend::surfaceOf(const Frame &frame) const
{
	if (frame.numResources() != 1)
		return nullptr;
	const VaSurface *surface = frame.resource(0).get<VaSurface>();
	if (!surface)
		return nullptr;
	const auto *anchor = dynamic_cast<const VaApiAllocation *>(surface->desc().anchor.get());
	if (!anchor || anchor->display != state_)
		return nullptr;
	return anchor;
}

bool VaApiBackend::holds(const Frame &frame) const
{
	return surfaceOf(frame) != nullptr;
}

Result<CpuMapping> VaApiBackend::map(const Frame &frame, MapAccess access, WaitDuration timeout)
{
	const VaApiAllocation *surface = surfaceOf(frame);
	if (!surface)
		return notThisBackendsFrame(kName, "map");
	if (access != MapAccess::Read && access != MapAccess::Write &&
	    access != MapAccess::ReadWrite)
		return Error::format(ErrorCode::InvalidArgument, "access",
				     "%s: map access %u is not Read, Write or ReadWrite.", kName,
				     static_cast<unsigned>(access));
	Deadline deadline = Deadline::after(timeout);
	if (Status waited = frame.acquire().wait(timeout); !waited.ok())
		return waited.error();
	Result<uint32_t> fourcc = toApiFormat(FormatApi::VaFourcc, frame.format());
	if (!fourcc.ok())
		return Error(ErrorCode::NotSupported, "format",
			     std::string(kName) + ": " + fourcc.error().message());
	VADisplay display = state_->display;
	const VASurfaceID id = surface->id;
	if (Status synced = syncSurface(display, id, deadline.remaining()); !synced.ok())
		return synced.error();
	bool derived = false;
	Result<VAImage> image = imageOf(display, id, frame, *fourcc, reads(access), derived);
	if (!image.ok())
		return image.error();
	void *data = nullptr;
	if (VAStatus status = vaMapBuffer(display, image->buf, &data);
	    status != VA_STATUS_SUCCESS) {
		vaDestroyImage(display, image->image_id);
		return vaError("frame", "vaMapBuffer", status);
	}
	std::array<uint8_t *, 4> planes{};
	std::array<uint32_t, 4> strides{};
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		planes[p] = static_cast<uint8_t *>(data) + image->offsets[p];
		strides[p] = image->pitches[p];
	}
	// Ends once: unmaps, uploads a copied image the caller wrote (a derived one is the
	// surface's own memory), frees the image. The state keeps the display alive.
	std::shared_ptr<VaApiDevice> state = state_;
	bool upload = writes(access) && !derived;
	uint32_t width = frame.width();
	uint32_t height = frame.height();
	VAImage mapped = *image;
	auto end = [state, id, mapped, upload, width, height]() -> Status {
		Status result;
		if (VAStatus status = vaUnmapBuffer(state->display, mapped.buf);
		    status != VA_STATUS_SUCCESS)
			result = vaError("frame", "vaUnmapBuffer", status);
		if (upload && result.ok())
			if (VAStatus status = vaPutImage(state->display, id, mapped.image_id, 0, 0,
							 width, height, 0, 0, width, height);
			    status != VA_STATUS_SUCCESS)
				result = vaError("frame", "vaPutImage", status);
		vaDestroyImage(state->display, mapped.image_id);
		return result;
	};
	return CpuMapping::adopt(frame, access, frame.numPlanes(), planes, strides, std::move(end));
}

Status VaApiBackend::copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout)
{
	const VaApiAllocation *to = surfaceOf(dst);
	const VaApiAllocation *from = surfaceOf(src);
	if (!to || !from)
		return notThisBackendsFrame(kName, "copyFrame");
	if (dst.format() != src.format() || dst.width() != src.width() ||
	    dst.height() != src.height())
		return Error::format(
			ErrorCode::FormatMismatch, "dst",
			"%s: copyFrame copies between frames of one format and size; the source "
			"is %s %ux%u, the destination %s %ux%u.",
			kName, pixelFormatName(src.format()), src.width(), src.height(),
			pixelFormatName(dst.format()), dst.width(), dst.height());
#if VA_CHECK_VERSION(1, 12, 0)
	if (!state_->canCopy)
		return Error::format(
			ErrorCode::NotSupported, "copy",
			"%s: the driver (%s) does not offer vaCopy (VADisplayAttribCopy is 0).",
			kName, info_.name.c_str());
	Deadline deadline = Deadline::after(timeout);
	if (Status waited = src.acquire().wait(timeout); !waited.ok())
		return waited;
	if (Status waited = dst.acquire().wait(deadline.remaining()); !waited.ok())
		return waited;
	VACopyObject target{};
	target.obj_type = VACopyObjectSurface;
	target.object.surface_id = to->id;
	VACopyObject source{};
	source.obj_type = VACopyObjectSurface;
	source.object.surface_id = from->id;
	// Queued without waiting (VA_EXEC_SYNC would block with no timeout); the bounded sync on
	// the destination then waits for it. The surfaces live on in their frames' anchors.
	VACopyOption option{};
	option.bits.va_copy_sync = VA_EXEC_ASYNC;
	option.bits.va_copy_mode = VA_EXEC_MODE_DEFAULT;
	if (VAStatus status = vaCopy(state_->display, &target, &source, option);
	    status != VA_STATUS_SUCCESS)
		return vaError("copy", "vaCopy", status);
	return syncSurface(state_->display, to->id, deadline.remaining());
#else
	(void)timeout;
	return Error::format(
		ErrorCode::NotSupported, "copy",
		"%s: gpuhandle was built against libva older than 2.12 (VA-API 1.12), which "
		"has no vaCopy.",
		kName);
#endif
}

} // namespace gpuhandle::vaapi
