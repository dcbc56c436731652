// The VA-API backend object: opening a display, capabilities, surfaces, DMA-BUF export and import.
#include <gpuhandle/format_mappings.h>

#include "vaapi/vaapi_backend_internal.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include <va/va_drm.h>
#include <va/va_drmcommon.h>

namespace gpuhandle {

namespace vaapi {

namespace {

// An open-time failure that says the backend is unavailable here (no node, no driver), not
// that the caller erred: always NotSupported.
Error unavailable(const char *field, const std::string &why)
{
	return Error::format(ErrorCode::NotSupported, field,
			     "%s: %s The VA-API backend cannot open.", kName, why.c_str());
}

// libva's error callback on our own display: kept for the open failure's message instead of
// being printed to stderr.
void recordMessage(void *context, const char *message)
{
	auto *state = static_cast<VaApiDevice *>(context);
	std::lock_guard<std::mutex> lock(state->messageMutex);
	state->lastMessage = message ? message : "";
	while (!state->lastMessage.empty() &&
	       (state->lastMessage.back() == '\n' || state->lastMessage.back() == ' '))
		state->lastMessage.pop_back();
}

// Our own display on /dev/dri/renderD(128 + index).
Status openOwnDisplay(VaApiDevice &state, uint32_t index, DeviceInfo &info)
{
	std::string path = "/dev/dri/renderD" + std::to_string(128 + static_cast<uint64_t>(index));
	int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int saved = errno;
		return unavailable("device", "no DRM render node (" + path +
						     "): " + std::strerror(saved) + ".");
	}
	state.renderNode.reset(fd);
	if (Result<DrmNode> node = DrmNode::fromPath(path.c_str()); node.ok())
		info.id.drmRenderNode = *node;
	state.display = vaGetDisplayDRM(fd);
	if (!state.display)
		return unavailable("device", "vaGetDisplayDRM gave no display for " + path + ".");
	state.ownDisplay = true; // terminated (and freed) even when vaInitialize fails
	vaSetErrorCallback(state.display, recordMessage, &state);
	vaSetInfoCallback(state.display, nullptr, nullptr);
	int major = 0;
	int minor = 0;
	if (VAStatus status = vaInitialize(state.display, &major, &minor);
	    status != VA_STATUS_SUCCESS) {
		std::string why = "vaInitialize failed on " + path + ": " + vaErrorStr(status) +
				  " (" + std::to_string(status) + ")";
		std::lock_guard<std::mutex> lock(state.messageMutex);
		if (!state.lastMessage.empty())
			why += "; libva said: " + state.lastMessage;
		return unavailable("driver", why + ".");
	}
	return {};
}

Status openHostDisplay(VaApiDevice &state, const ContextRef &context, DeviceInfo &info)
{
	if (context->backend() != BackendKind::VaApi)
		return Error::format(ErrorCode::InvalidArgument, "context",
				     "%s: the context given is a %s context, not a VA-API one.",
				     kName, backendKindName(context->backend()));
	const VaApiContext *host = *context->vaapi();
	if (!host->display)
		return Error::format(ErrorCode::NullHandle, "context",
				     "%s: the host's VaApiContext has a null VADisplay.", kName);
	state.display = host->display;
	state.hostContext = context;
	info.id.drmRenderNode = host->renderNode;
	return {};
}

// The PCI address of a render node, from sysfs (/sys/dev/char/M:m/device links to it).
std::optional<PciBusId> pciBusIdOf(const DrmNode &node)
{
	std::string link = "/sys/dev/char/" + node.toString() + "/device";
	char resolved[PATH_MAX] = {};
	if (!realpath(link.c_str(), resolved))
		return std::nullopt;
	const char *slash = std::strrchr(resolved, '/');
	Result<PciBusId> pci = PciBusId::parse(slash ? slash + 1 : resolved);
	if (!pci.ok())
		return std::nullopt;
	return *pci;
}

void describe(const VaApiDevice &state, DeviceInfo &info)
{
	info.backend = BackendKind::VaApi;
	const char *vendor = vaQueryVendorString(state.display);
	std::string text = vendor ? vendor : "VA-API driver";
	// "Intel iHD driver for Intel(R) Gen Graphics - 23.1.1 ()": the version follows " - ";
	// Mesa's string carries both in one sentence.
	size_t dash = text.find(" - ");
	info.name = dash == std::string::npos ? text : text.substr(0, dash);
	info.driverVersion = dash == std::string::npos ? text : text.substr(dash + 3);
	info.isSoftware = isSoftwareRendererName(info.name);
	if (info.id.drmRenderNode)
		info.id.pciBusId = pciBusIdOf(*info.id.drmRenderNode);
#if VA_CHECK_VERSION(1, 17, 0)
	VADisplayAttribute pci{};
	pci.type = VADisplayPCIID;
	if (vaGetDisplayAttributes(state.display, &pci, 1) == VA_STATUS_SUCCESS &&
	    (pci.flags & VA_DISPLAY_ATTRIB_GETTABLE) && pci.value) {
		info.vendorId = (static_cast<uint32_t>(pci.value) >> 16) & 0xffff;
		info.pciDeviceId = static_cast<uint32_t>(pci.value) & 0xffff;
	}
#endif
}

// The surface formats the driver lists for video processing, else its image formats.
std::vector<uint32_t> surfaceFourccs(VADisplay display)
{
	std::vector<uint32_t> fourccs;
	VAConfigID config = VA_INVALID_ID;
	if (vaCreateConfig(display, VAProfileNone, VAEntrypointVideoProc, nullptr, 0, &config) ==
	    VA_STATUS_SUCCESS) {
		unsigned int count = 0;
		if (vaQuerySurfaceAttributes(display, config, nullptr, &count) ==
			    VA_STATUS_SUCCESS &&
		    count) {
			std::vector<VASurfaceAttrib> attribs(count);
			if (vaQuerySurfaceAttributes(display, config, attribs.data(), &count) ==
			    VA_STATUS_SUCCESS)
				for (unsigned int i = 0; i < count && i < attribs.size(); ++i)
					if (attribs[i].type == VASurfaceAttribPixelFormat &&
					    attribs[i].value.type == VAGenericValueTypeInteger)
						fourccs.push_back(static_cast<uint32_t>(
							attribs[i].value.value.i));
		}
		vaDestroyConfig(display, config);
	}
	if (fourccs.empty()) {
		int max = vaMaxNumImageFormats(display);
		if (max > 0) {
			std::vector<VAImageFormat> formats(static_cast<size_t>(max));
			int count = 0;
			if (vaQueryImageFormats(display, formats.data(), &count) ==
			    VA_STATUS_SUCCESS)
				for (int i = 0; i < count && i < max; ++i)
					fourccs.push_back(formats[static_cast<size_t>(i)].fourcc);
		}
	}
	return fourccs;
}

bool driverCopies([[maybe_unused]] VADisplay display)
{
#if VA_CHECK_VERSION(1, 12, 0)
	VADisplayAttribute copy{};
	copy.type = VADisplayAttribCopy;
	return vaGetDisplayAttributes(display, &copy, 1) == VA_STATUS_SUCCESS &&
	       (copy.flags & VA_DISPLAY_ATTRIB_GETTABLE) && copy.value != 0;
#else
	return false;
#endif
}

BackendCapabilities capabilitiesOf(const VaApiDevice &state)
{
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::VaSurface };
	caps.exports = { ResourceKind::DmaBuf };
	caps.imports = { ResourceKind::VaSurface, ResourceKind::DmaBuf };
	caps.routes = { ImportRoute::Direct, ImportRoute::DmaBuf };
	caps.storages = { FrameStorage::OptimalImage };
#if VA_CHECK_VERSION(1, 12, 0)
	// Linear surfaces are asked for with VASurfaceAttribDRMFormatModifiers (libva 1.12).
	caps.storages.push_back(FrameStorage::LinearImage);
#endif
	// No modifiers listed: libva has no modifier query (VASurfaceAttribDRMFormatModifiers is
	// write-only), and the driver picks an exported surface's tiling. Each export carries its
	// own modifier in its DmaBuf.
	caps.drmModifiers = {};
	caps.cpuMap = true;
	caps.gpuCopy = state.canCopy;
	return caps;
}

// The ErrorCode a failed vaCreateSurfaces deserves.
ErrorCode createFailureCode(VAStatus status)
{
	switch (status) {
	case VA_STATUS_ERROR_ALLOCATION_FAILED: return ErrorCode::OutOfMemory;
	case VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT:
	case VA_STATUS_ERROR_ATTR_NOT_SUPPORTED:
	case VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE:
	case VA_STATUS_ERROR_INVALID_IMAGE_FORMAT:
	case VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED: return ErrorCode::NotSupported;
	default: return ErrorCode::Backend;
	}
}

// The exported fds, owned with the exported frame: each DmaBuf object borrows its fd, and the
// anchor keeps the surface's frame alive so that its id is not recycled while the DMA-BUF is used.
struct ExportAnchor final : KeepAlive {
	std::array<UniqueFd, 4> fds{};
	std::optional<Frame> source{};
};

} // namespace

bool VaApiBackend::supportsFormat(PixelFormat format, FrameStorage storage) const
{
	if (storage != FrameStorage::LinearImage && storage != FrameStorage::OptimalImage)
		return false;
#if !VA_CHECK_VERSION(1, 12, 0)
	if (storage == FrameStorage::LinearImage)
		return false; // no VASurfaceAttribDRMFormatModifiers to ask for linear memory
#endif
	Result<uint32_t> fourcc = toApiFormat(FormatApi::VaFourcc, format);
	if (!fourcc.ok() || !vaRtFormat(format).ok())
		return false;
	return state_->fourccs.empty() || std::find(state_->fourccs.begin(), state_->fourccs.end(),
						    *fourcc) != state_->fourccs.end();
}

Result<Frame> VaApiBackend::allocate(const AllocateRequest &request)
{
	Result<FrameLayout> layout = layoutForRequest(request, 64, kName);
	if (!layout.ok())
		return layout.error();
	if (request.storage == FrameStorage::Buffer)
		return Error::format(
			ErrorCode::NotSupported, "storage",
			"%s: VA-API allocates surfaces (linear-image or optimal-image storage), "
			"not buffers.",
			kName);
	Result<uint32_t> fourcc = toApiFormat(FormatApi::VaFourcc, request.format);
	if (!fourcc.ok())
		return Error(ErrorCode::NotSupported, "format",
			     std::string(kName) + ": " + fourcc.error().message());
	Result<uint32_t> rt = vaRtFormat(request.format);
	if (!rt.ok())
		return Error(ErrorCode::NotSupported, "format",
			     std::string(kName) + ": " + rt.error().message());
	if (!supportsFormat(request.format, request.storage))
		return Error::format(ErrorCode::NotSupported, "format",
				     "%s: the driver (%s) does not list %s surfaces in %s storage.",
				     kName, info_.name.c_str(), pixelFormatName(request.format),
				     frameStorageName(request.storage));
	std::array<VASurfaceAttrib, 2> attribs{};
	unsigned int count = 0;
	attribs[count].type = VASurfaceAttribPixelFormat;
	attribs[count].flags = VA_SURFACE_ATTRIB_SETTABLE;
	attribs[count].value.type = VAGenericValueTypeInteger;
	attribs[count].value.value.i = static_cast<int32_t>(*fourcc);
	++count;
#if VA_CHECK_VERSION(1, 12, 0)
	uint64_t linear = kDrmModifierLinear;
	VADRMFormatModifierList modifiers{};
	modifiers.num_modifiers = 1;
	modifiers.modifiers = &linear;
	if (request.storage == FrameStorage::LinearImage) {
		attribs[count].type = VASurfaceAttribDRMFormatModifiers;
		attribs[count].flags = VA_SURFACE_ATTRIB_SETTABLE;
		attribs[count].value.type = VAGenericValueTypePointer;
		attribs[count].value.value.p = &modifiers;
		++count;
	}
#endif
	Result<BudgetReservation> charged = charge(request);
	if (!charged.ok())
		return charged.error();
	auto surface = std::make_shared<VaApiAllocation>();
	surface->display = state_;
	surface->charge = std::move(*charged);
	VAStatus status = vaCreateSurfaces(state_->display, *rt, request.width, request.height,
					   &surface->id, 1, attribs.data(), count);
	if (status != VA_STATUS_SUCCESS) {
		surface->id = VA_INVALID_SURFACE;
		return Error::format(
			createFailureCode(status), "format",
			"%s: vaCreateSurfaces could not make a %ux%u %s surface (%s storage): %s "
			"(%d).",
			kName, request.width, request.height, pixelFormatName(request.format),
			frameStorageName(request.storage), vaErrorStr(status), status);
	}
	FrameDesc like;
	like.format = request.format;
	like.width = request.width;
	like.height = request.height;
	like.colorimetry = request.colorimetry;
	return frameOverSurface(like, surface);
}

Result<Frame> VaApiBackend::exportFrame(const Frame &frame, ResourceKind kind)
{
	const VaApiAllocation *surface = surfaceOf(frame);
	if (!surface)
		return notThisBackendsFrame(kName, "exportFrame");
	if (kind != ResourceKind::DmaBuf)
		return Error::format(ErrorCode::NotSupported, "kind",
				     "%s: surfaces export as DMA-BUFs only, not as %s.", kName,
				     resourceKindName(kind));
	// The export does not synchronise: the surface's pending work must finish first (bounded:
	// exportFrame has no budget of its own).
	if (Status synced = syncSurface(state_->display, surface->id, kDefaultWaitTimeout);
	    !synced.ok())
		return synced.error();
	VADRMPRIMESurfaceDescriptor prime{};
	VAStatus status = vaExportSurfaceHandle(
		state_->display, surface->id, VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2,
		VA_EXPORT_SURFACE_READ_WRITE | VA_EXPORT_SURFACE_COMPOSED_LAYERS, &prime);
	if (status != VA_STATUS_SUCCESS)
		return Error::format(
			status == VA_STATUS_ERROR_UNIMPLEMENTED ||
					status == VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE
				? ErrorCode::NotSupported
				: ErrorCode::Backend,
			"kind", "%s: vaExportSurfaceHandle (DRM PRIME 2) failed: %s (%d).", kName,
			vaErrorStr(status), status);
	// Owned at once, so that every fd is closed exactly once whatever fails below.
	auto anchor = std::make_shared<ExportAnchor>();
	for (uint32_t i = 0; i < prime.num_objects && i < anchor->fds.size(); ++i)
		anchor->fds[i].reset(prime.objects[i].fd);
	anchor->source = frame;
	if (prime.num_objects < 1 || prime.num_objects > 4 || prime.num_layers != 1)
		return Error::format(
			ErrorCode::Backend, "kind",
			"%s: vaExportSurfaceHandle gave %u objects and %u layers; composed "
			"layers need 1..4 objects and one layer.",
			kName, prime.num_objects, prime.num_layers);
	DmaBufDesc desc;
	desc.fourcc = prime.layers[0].drm_format;
	desc.modifier = prime.objects[0].drm_format_modifier;
	desc.width = frame.width();
	desc.height = frame.height();
	desc.numObjects = prime.num_objects;
	for (uint32_t i = 0; i < prime.num_objects; ++i) {
		desc.objects[i].fd = SharedFd::borrow(anchor->fds[i].get(), anchor);
		desc.objects[i].size = prime.objects[i].size;
	}
	desc.numPlanes = std::min<uint32_t>(prime.layers[0].num_planes, 4);
	for (uint32_t i = 0; i < desc.numPlanes; ++i) {
		desc.planes[i].objectIndex = prime.layers[0].object_index[i];
		desc.planes[i].offset = prime.layers[0].offset[i];
		desc.planes[i].pitch = prime.layers[0].pitch[i];
	}
	Result<DmaBuf> dmabuf = DmaBuf::create(std::move(desc));
	if (!dmabuf.ok())
		return dmabuf.error();
	Result<Frame> exported = Frame::wrap(frame.format(), frame.width(), frame.height(),
					     frame.colorimetry(), Resource(std::move(*dmabuf)));
	if (!exported.ok())
		return exported.error();
	exported->setAcquire(frame.acquire());
	exported->setRelease(frame.release());
	return exported;
}

Result<Frame> VaApiBackend::importFrame(const Frame &frame, ImportRoute route)
{
	switch (route) {
	case ImportRoute::Direct: return importDirect(frame);
	case ImportRoute::DmaBuf: return importDmaBuf(frame);
	case ImportRoute::OpaqueFd:
		return routeNotSupported(
			kName, route,
			"VA-API takes no Vulkan opaque fds; export the memory as a DMA-BUF.");
	case ImportRoute::HostPointer:
		return routeNotSupported(
			kName, route,
			"VA-API wraps host memory only as USER_PTR surfaces, which drivers "
			"rarely offer; this backend does not.");
	case ImportRoute::GpuCopy:
	case ImportRoute::CpuCopy: break;
	}
	return routeNotSupported(
		kName, route,
		"importFrame takes zero-copy routes only (direct, dma-buf); copies are the "
		"planner's.");
}

// A surface on this display: ours as it is, the host's (a decoder's output) borrowed under an
// anchor that keeps the source frame, and so the host's surface, alive.
Result<Frame> VaApiBackend::importDirect(const Frame &frame)
{
	if (holds(frame))
		return frame;
	const VaSurface *native = frame.numResources() == 1 ? frame.resource(0).get<VaSurface>()
							    : nullptr;
	if (!native)
		return routeNotSupported(kName, ImportRoute::Direct,
					 "the frame is not one VA surface.");
	if (native->desc().display != state_->display)
		return routeNotSupported(kName, ImportRoute::Direct,
					 "the frame's surface belongs to another VADisplay.");
	auto surface = std::make_shared<VaApiAllocation>();
	surface->display = state_;
	surface->id = native->desc().surface;
	surface->owned = false;
	surface->source = frame;
	return frameOverSurface(frame.desc(), surface);
}

// One DMA-BUF resource (every plane in it) becomes a surface through DRM PRIME 2, described as
// one composed layer; the surface's anchor keeps the DMA-BUF frame alive.
Result<Frame> VaApiBackend::importDmaBuf(const Frame &frame)
{
	const DmaBuf *dmabuf = frame.numResources() == 1 ? frame.resource(0).get<DmaBuf>()
							 : nullptr;
	if (!dmabuf)
		return routeNotSupported(
			kName, ImportRoute::DmaBuf,
			"the frame is not one DMA-BUF resource holding every plane.");
	Result<uint32_t> fourcc = toApiFormat(FormatApi::VaFourcc, frame.format());
	if (!fourcc.ok())
		return Error(ErrorCode::NotSupported, "format",
			     std::string(kName) + ": " + fourcc.error().message());
	Result<uint32_t> rt = vaRtFormat(frame.format());
	if (!rt.ok())
		return Error(ErrorCode::NotSupported, "format",
			     std::string(kName) + ": " + rt.error().message());
	const DmaBufDesc &source = dmabuf->desc();
	VADRMPRIMESurfaceDescriptor prime{};
	prime.fourcc = *fourcc;
	prime.width = frame.width();
	prime.height = frame.height();
	prime.num_objects = source.numObjects;
	for (uint32_t i = 0; i < source.numObjects; ++i) {
		if (!isOpenFd(source.objects[i].fd.get()))
			return Error::format(ErrorCode::BadFd, "fd",
					     "%s: DMA-BUF object %u's fd %d is not open.", kName, i,
					     source.objects[i].fd.get());
		if (source.objects[i].size > UINT32_MAX)
			return Error::format(
				ErrorCode::NotSupported, "size",
				"%s: DMA-BUF object %u is %llu bytes; VA-API describes at most "
				"4 GiB per object.",
				kName, i, static_cast<unsigned long long>(source.objects[i].size));
		prime.objects[i].fd = source.objects[i].fd.get(); // VA does not take ownership
		prime.objects[i].size = static_cast<uint32_t>(source.objects[i].size);
		prime.objects[i].drm_format_modifier = source.modifier;
	}
	prime.num_layers = 1;
	prime.layers[0].drm_format = source.fourcc;
	prime.layers[0].num_planes = frame.numPlanes();
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const PlaneView &plane = frame.plane(p);
		if (plane.offset > UINT32_MAX)
			return Error::format(
				ErrorCode::NotSupported, "planes",
				"%s: plane %u starts %llu bytes into its object; VA-API takes "
				"32-bit offsets.",
				kName, p, static_cast<unsigned long long>(plane.offset));
		prime.layers[0].object_index[p] = plane.subresource;
		prime.layers[0].offset[p] = static_cast<uint32_t>(plane.offset);
		prime.layers[0].pitch[p] = plane.stride;
	}
	std::array<VASurfaceAttrib, 2> attribs{};
	attribs[0].type = VASurfaceAttribMemoryType;
	attribs[0].flags = VA_SURFACE_ATTRIB_SETTABLE;
	attribs[0].value.type = VAGenericValueTypeInteger;
	attribs[0].value.value.i = static_cast<int32_t>(VA_SURFACE_ATTRIB_MEM_TYPE_DRM_PRIME_2);
	attribs[1].type = VASurfaceAttribExternalBufferDescriptor;
	attribs[1].flags = VA_SURFACE_ATTRIB_SETTABLE;
	attribs[1].value.type = VAGenericValueTypePointer;
	attribs[1].value.value.p = &prime;
	auto surface = std::make_shared<VaApiAllocation>();
	surface->display = state_;
	VAStatus status = vaCreateSurfaces(state_->display, *rt, frame.width(), frame.height(),
					   &surface->id, 1, attribs.data(), 2);
	if (status != VA_STATUS_SUCCESS) {
		surface->id = VA_INVALID_SURFACE;
		return Error::format(
			createFailureCode(status), "route",
			"%s: vaCreateSurfaces could not import the %ux%u %s DMA-BUF (DRM fourcc "
			"0x%08x, modifier 0x%016llx): %s (%d).",
			kName, frame.width(), frame.height(), pixelFormatName(frame.format()),
			source.fourcc, static_cast<unsigned long long>(source.modifier),
			vaErrorStr(status), status);
	}
	surface->source = frame;
	return frameOverSurface(frame.desc(), surface);
}

} // namespace vaapi

Result<BackendRef> openVaApiBackend(const BackendOpenOptions &options)
{
	using namespace vaapi;
	auto state = std::make_shared<VaApiDevice>();
	DeviceInfo info;
	Status opened = options.context ? openHostDisplay(*state, options.context, info)
					: openOwnDisplay(*state, options.deviceIndex, info);
	if (!opened.ok())
		return opened.error();
	describe(*state, info);
	state->fourccs = surfaceFourccs(state->display);
	state->canCopy = driverCopies(state->display);
	ContextRef context = options.context;
	if (!context) {
		VaApiContext native;
		native.display = state->display;
		native.renderNode = info.id.drmRenderNode;
		Result<ContextRef> made = Context::create(std::move(native), state);
		if (!made.ok())
			return made.error();
		context = std::move(*made);
	}
	BackendCapabilities caps = capabilitiesOf(*state);
	return BackendRef(std::make_shared<VaApiBackend>(std::move(info), std::move(caps),
							 std::move(context), std::move(state)));
}

} // namespace gpuhandle
