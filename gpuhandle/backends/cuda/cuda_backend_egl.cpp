// The CUDA backend's DMA-BUF imports: an EGLImage on the CUDA device's EGLDisplay, registered.
// libEGL is loaded with dlopen (the backend builds and links without EGL); the EGL names and
// numbers used are declared below from the Khronos registry (EGL_EXT_platform_device,
// EGL_EXT_image_dma_buf_import(_modifiers), EGL_NV_device_cuda).
#include <gpuhandle/format_mappings.h>

#include "cuda/cuda_backend_internal.h"

#include <cinttypes>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// Where the Toolkit and the EGL headers are installed, the declarations made here are checked
// against theirs (they are never used otherwise).
#if defined(GPUHANDLE_CUDA_TOOLKIT) && __has_include(<cudaEGL.h>) && __has_include(<EGL/eglext.h>)
#include <cudaEGL.h>
#define GPUHANDLE_CHECK_EGL_ABI 1
#endif

namespace gpuhandle::cuda {

namespace {

constexpr const char *kName = "cuda";
constexpr const char *kEglLibrary = "libEGL.so.1";

using EGLint = int32_t;
using EGLenum = unsigned int;
using EGLBoolean = unsigned int;
using EGLAttrib = intptr_t;
using EGLDisplay = void *;
using EGLDeviceEXT = void *;
using EGLImage = void *;
using EglProc = void (*)();

constexpr EGLint kEglExtensions = 0x3055;
constexpr EGLint kEglHeight = 0x3056;
constexpr EGLint kEglWidth = 0x3057;
constexpr EGLint kEglNone = 0x3038;
constexpr EGLenum kEglPlatformDevice = 0x313F; // EGL_PLATFORM_DEVICE_EXT
constexpr EGLint kEglCudaDevice = 0x323A;      // EGL_CUDA_DEVICE_NV
constexpr EGLenum kEglLinuxDmaBuf = 0x3270;    // EGL_LINUX_DMA_BUF_EXT
constexpr EGLint kEglLinuxDrmFourcc = 0x3271;  // EGL_LINUX_DRM_FOURCC_EXT
// EGL_DMA_BUF_PLANEn_{FD,OFFSET,PITCH}_EXT and _MODIFIER_{LO,HI}_EXT, n = 0..3.
constexpr EGLint kEglPlaneFd[4] = { 0x3272, 0x3275, 0x3278, 0x3440 };
constexpr EGLint kEglPlaneOffset[4] = { 0x3273, 0x3276, 0x3279, 0x3441 };
constexpr EGLint kEglPlanePitch[4] = { 0x3274, 0x3277, 0x327A, 0x3442 };
constexpr EGLint kEglPlaneModifierLo[4] = { 0x3443, 0x3445, 0x3447, 0x3449 };
constexpr EGLint kEglPlaneModifierHi[4] = { 0x3444, 0x3446, 0x3448, 0x344A };

#ifdef GPUHANDLE_CHECK_EGL_ABI
static_assert(kEglExtensions == EGL_EXTENSIONS && kEglHeight == EGL_HEIGHT &&
	      kEglWidth == EGL_WIDTH && kEglNone == EGL_NONE);
static_assert(kEglPlatformDevice == EGL_PLATFORM_DEVICE_EXT &&
	      kEglCudaDevice == EGL_CUDA_DEVICE_NV && kEglLinuxDmaBuf == EGL_LINUX_DMA_BUF_EXT &&
	      kEglLinuxDrmFourcc == EGL_LINUX_DRM_FOURCC_EXT);
// The plane attributes: DMA_BUF_PLANEn_{FD,OFFSET,PITCH,MODIFIER_LO,MODIFIER_HI}_EXT.
constexpr bool samePlaneAttributes(uint32_t p, EGLint fd, EGLint offset, EGLint pitch, EGLint lo,
				   EGLint hi)
{
	return kEglPlaneFd[p] == fd && kEglPlaneOffset[p] == offset && kEglPlanePitch[p] == pitch &&
	       kEglPlaneModifierLo[p] == lo && kEglPlaneModifierHi[p] == hi;
}
#define GPUHANDLE_EGL_PLANE(n)                                                                     \
	samePlaneAttributes(n, EGL_DMA_BUF_PLANE##n##_FD_EXT, EGL_DMA_BUF_PLANE##n##_OFFSET_EXT,   \
			    EGL_DMA_BUF_PLANE##n##_PITCH_EXT,                                      \
			    EGL_DMA_BUF_PLANE##n##_MODIFIER_LO_EXT,                                \
			    EGL_DMA_BUF_PLANE##n##_MODIFIER_HI_EXT)
static_assert(GPUHANDLE_EGL_PLANE(0) && GPUHANDLE_EGL_PLANE(1) && GPUHANDLE_EGL_PLANE(2) &&
	      GPUHANDLE_EGL_PLANE(3));
#undef GPUHANDLE_EGL_PLANE
static_assert(kEglFrameMaxPlanes == MAX_PLANES && kEglFrameTypeArray == CU_EGL_FRAME_TYPE_ARRAY &&
	      kEglFrameTypePitch == CU_EGL_FRAME_TYPE_PITCH &&
	      kGraphicsRegisterFlagsNone == CU_GRAPHICS_REGISTER_FLAGS_NONE);
static_assert(sizeof(EglFrame) == sizeof(CUeglFrame) &&
	      offsetof(EglFrame, planes) == offsetof(CUeglFrame, frame) &&
	      offsetof(EglFrame, width) == offsetof(CUeglFrame, width) &&
	      offsetof(EglFrame, height) == offsetof(CUeglFrame, height) &&
	      offsetof(EglFrame, depth) == offsetof(CUeglFrame, depth) &&
	      offsetof(EglFrame, pitch) == offsetof(CUeglFrame, pitch) &&
	      offsetof(EglFrame, planeCount) == offsetof(CUeglFrame, planeCount) &&
	      offsetof(EglFrame, numChannels) == offsetof(CUeglFrame, numChannels) &&
	      offsetof(EglFrame, frameType) == offsetof(CUeglFrame, frameType) &&
	      offsetof(EglFrame, colorFormat) == offsetof(CUeglFrame, eglColorFormat) &&
	      offsetof(EglFrame, arrayFormat) == offsetof(CUeglFrame, cuFormat));
#endif

} // namespace

// The EGLDisplay on one CUDA device. Never eglTerminate()d: EGL displays are one per device
// in a process and not reference counted, so terminating would end the display under every
// other user of it (the host, the GL backend); it is opened once and kept.
struct EglInterop {
	EGLDisplay display = nullptr;
	bool modifiers = false; // EGL_EXT_image_dma_buf_import_modifiers
	EGLImage (*createImage)(EGLDisplay, void *, EGLenum, void *, const EGLint *) = nullptr;
	EGLBoolean (*destroyImage)(EGLDisplay, EGLImage) = nullptr;
	EGLint (*getError)() = nullptr;
};

namespace {

// libEGL's entry points; the extension ones come from eglGetProcAddress.
struct EglLibrary {
	EglProc (*getProcAddress)(const char *) = nullptr;
	EGLBoolean (*initialize)(EGLDisplay, EGLint *, EGLint *) = nullptr;
	EGLint (*getError)() = nullptr;
	const char *(*queryString)(EGLDisplay, EGLint) = nullptr;
	EGLBoolean (*queryDevices)(EGLint, EGLDeviceEXT *, EGLint *) = nullptr;
	EGLBoolean (*queryDeviceAttrib)(EGLDeviceEXT, EGLint, EGLAttrib *) = nullptr;
	EGLDisplay (*getPlatformDisplay)(EGLenum, void *, const EGLint *) = nullptr;
	EGLImage (*createImage)(EGLDisplay, void *, EGLenum, void *, const EGLint *) = nullptr;
	EGLBoolean (*destroyImage)(EGLDisplay, EGLImage) = nullptr;
	std::string failure{}; // a sentence; empty when everything resolved
};

bool hasExtension(const char *list, std::string_view name)
{
	std::string_view rest = list ? list : "";
	while (!rest.empty()) {
		size_t end = rest.find(' ');
		if (rest.substr(0, end) == name)
			return true;
		if (end == std::string_view::npos)
			break;
		rest.remove_prefix(end + 1);
	}
	return false;
}

EglLibrary loadEgl()
{
	EglLibrary egl;
	RuntimeLibrary library(kEglLibrary, "libEGL", "egl", "every EGL 1.4 library has it");
	library.need("eglGetProcAddress", egl.getProcAddress);
	library.need("eglInitialize", egl.initialize);
	library.need("eglGetError", egl.getError);
	library.need("eglQueryString", egl.queryString);
	if (library.failure()) {
		egl.failure = library.failure()->message();
		return egl;
	}
	const char *client = egl.queryString(nullptr, kEglExtensions);
	if (!hasExtension(client, "EGL_EXT_platform_device") ||
	    !(hasExtension(client, "EGL_EXT_device_enumeration") ||
	      hasExtension(client, "EGL_EXT_device_base"))) {
		egl.failure = "EGL offers no EGL_EXT_platform_device with device enumeration "
			      "(no EGL display can be opened on a CUDA device).";
		return egl;
	}
	auto proc = [&](const char *name, auto &out) {
		out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(
			egl.getProcAddress(name));
		return out != nullptr;
	};
	if (!proc("eglQueryDevicesEXT", egl.queryDevices) ||
	    !proc("eglQueryDeviceAttribEXT", egl.queryDeviceAttrib) ||
	    !proc("eglGetPlatformDisplayEXT", egl.getPlatformDisplay) ||
	    !proc("eglCreateImageKHR", egl.createImage) ||
	    !proc("eglDestroyImageKHR", egl.destroyImage))
		egl.failure = "EGL does not resolve the device, platform-display and image "
			      "extension functions.";
	return egl;
}

const EglLibrary &eglLibrary()
{
	static const EglLibrary instance = loadEgl();
	return instance;
}

// Opens the EGLDisplay of the EGL device whose EGL_CUDA_DEVICE_NV is `device`; a sentence on
// failure.
std::string openDisplay(CUdevice device, EglInterop &out)
{
	const EglLibrary &egl = eglLibrary();
	if (!egl.failure.empty())
		return egl.failure;
	EGLint count = 0;
	if (!egl.queryDevices(0, nullptr, &count) || count <= 0)
		return "EGL enumerates no device (eglQueryDevicesEXT).";
	std::vector<EGLDeviceEXT> devices(static_cast<size_t>(count));
	if (!egl.queryDevices(count, devices.data(), &count)) {
		char why[80];
		std::snprintf(why, sizeof(why), "eglQueryDevicesEXT failed with EGL error 0x%x.",
			      static_cast<unsigned>(egl.getError()));
		return why;
	}
	EGLDeviceEXT found = nullptr;
	for (EGLint i = 0; i < count && !found; ++i) {
		EGLAttrib value = -1;
		// Devices of other vendors do not know the attribute and fail: skipped.
		if (egl.queryDeviceAttrib(devices[static_cast<size_t>(i)], kEglCudaDevice,
					  &value) &&
		    value == static_cast<EGLAttrib>(device))
			found = devices[static_cast<size_t>(i)];
	}
	if (!found)
		return "none of the " + std::to_string(count) + " EGL devices is CUDA device " +
		       std::to_string(device) + " (EGL_CUDA_DEVICE_NV).";
	EGLDisplay display = egl.getPlatformDisplay(kEglPlatformDevice, found, nullptr);
	EGLint major = 0;
	EGLint minor = 0;
	if (!display || !egl.initialize(display, &major, &minor)) {
		char why[160];
		std::snprintf(why, sizeof(why),
			      "the EGL display of CUDA device %d did not initialise (EGL error "
			      "0x%x).",
			      static_cast<int>(device), static_cast<unsigned>(egl.getError()));
		return why;
	}
	const char *extensions = egl.queryString(display, kEglExtensions);
	if (!hasExtension(extensions, "EGL_EXT_image_dma_buf_import"))
		return "the EGL display of CUDA device " + std::to_string(device) +
		       " offers no EGL_EXT_image_dma_buf_import.";
	out.createImage = egl.createImage;
	out.destroyImage = egl.destroyImage;
	out.getError = egl.getError;
	out.display = display;
	out.modifiers = hasExtension(extensions, "EGL_EXT_image_dma_buf_import_modifiers");
	return {};
}

// What one CUDA device's interop came to; kept for the process (see EglInterop).
struct CachedInterop {
	CUdevice device = 0;
	std::shared_ptr<const EglInterop> interop{};
	std::string failure{};
};

std::string fourccText(uint32_t fourcc)
{
	char text[32];
	std::snprintf(text, sizeof(text), "%c%c%c%c (0x%08x)", static_cast<char>(fourcc & 0x7f),
		      static_cast<char>((fourcc >> 8) & 0x7f),
		      static_cast<char>((fourcc >> 16) & 0x7f),
		      static_cast<char>((fourcc >> 24) & 0x7f), fourcc);
	return text;
}

// One plane of the EGLImage: where it lies in which fd (owned by the source frame).
struct SourcePlane {
	int fd = -1;
	uint64_t offset = 0;
	uint32_t pitch = 0;
};

// The source frame's DMA-BUF, checked against the frame: every resource a DmaBuf of the
// frame's fourcc, size and one modifier.
struct SourceImage {
	uint32_t fourcc = 0;
	uint64_t modifier = kDrmModifierInvalid;
	uint32_t numPlanes = 0;
	std::array<SourcePlane, 4> planes{};
};

// The registration behind the planes of an imported DMA-BUF: the EGLImage and its CUDA
// resource, the source frame (whose fds the EGLImage reads) and the device state. CUDA lets go
// of the image before EGL destroys it, each exactly once.
struct EglImport final : KeepAlive {
	std::shared_ptr<CudaDevice> device{};
	std::shared_ptr<const EglInterop> interop{};
	std::optional<Frame> source{};
	EGLImage image = nullptr;
	CUgraphicsResource resource = nullptr;

	EglImport() = default;
	EglImport(const EglImport &) = delete;
	EglImport &operator=(const EglImport &) = delete;
	~EglImport() override
	{
		if (resource) {
			const Driver &d = driver();
			ContextScope scope(d, device->context);
			d.graphicsUnregisterResource(resource);
		}
		if (image)
			interop->destroyImage(interop->display, image);
	}
};

Result<SourceImage> sourceImage(const Frame &frame, const EglInterop &interop)
{
	Result<uint32_t> fourcc = toApiFormat(FormatApi::DrmFourcc, frame.format());
	if (!fourcc.ok())
		return Error::format(ErrorCode::NotSupported, "format",
				     "%s: a %s frame has no DRM fourcc, so it has no DMA-BUF form.",
				     kName, pixelFormatName(frame.format()));
	SourceImage image;
	image.fourcc = *fourcc;
	for (uint32_t r = 0; r < frame.numResources(); ++r) {
		const DmaBuf *dmaBuf = frame.resource(r).get<DmaBuf>();
		if (!dmaBuf) {
			std::string why = "resource " + std::to_string(r) + " of the frame is a " +
					  resourceKindName(frame.resource(r).kind()) +
					  ", not a DmaBuf.";
			return routeNotSupported(kName, ImportRoute::DmaBuf, why.c_str());
		}
		const DmaBufDesc &d = dmaBuf->desc();
		if (d.fourcc != image.fourcc)
			return Error::format(
				ErrorCode::FormatMismatch, "fourcc",
				"%s: the DMA-BUF of resource %u has fourcc %s, but a %s "
				"frame's is %s.",
				kName, r, fourccText(d.fourcc).c_str(),
				pixelFormatName(frame.format()), fourccText(image.fourcc).c_str());
		if (d.width != frame.width() || d.height != frame.height())
			return Error::format(
				ErrorCode::FormatMismatch, "size",
				"%s: the DMA-BUF of resource %u is %ux%u, but the frame "
				"is %ux%u.",
				kName, r, d.width, d.height, frame.width(), frame.height());
		if (r == 0)
			image.modifier = d.modifier;
		else if (d.modifier != image.modifier)
			return Error::format(ErrorCode::FormatMismatch, "modifier",
					     "%s: the frame's DMA-BUFs have different modifiers "
					     "(0x%016" PRIx64 " and 0x%016" PRIx64 ").",
					     kName, image.modifier, d.modifier);
	}
	bool linear = image.modifier == kDrmModifierLinear || image.modifier == kDrmModifierInvalid;
	if (!linear && !interop.modifiers)
		return Error::format(ErrorCode::NotSupported, "modifier",
				     "%s: the DMA-BUF has modifier 0x%016" PRIx64 ", and the EGL "
				     "display offers no EGL_EXT_image_dma_buf_import_modifiers.",
				     kName, image.modifier);
	if (linear) {
		// Linear planes are where the frame says (its views may span several DmaBufs).
		image.numPlanes = frame.numPlanes();
		for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
			const PlaneView &view = frame.plane(p);
			const DmaBufDesc &d = frame.resource(view.resource).get<DmaBuf>()->desc();
			image.planes[p] = SourcePlane{ d.objects[view.subresource].fd.get(),
						       view.offset, view.stride };
		}
	} else {
		// A tiled surface is described whole by its DmaBuf (with any metadata planes).
		if (frame.numResources() != 1)
			return Error::format(ErrorCode::NotSupported, "resources",
					     "%s: a tiled DMA-BUF (modifier 0x%016" PRIx64
					     ") imports "
					     "from one DmaBuf resource, not %u.",
					     kName, image.modifier, frame.numResources());
		const DmaBufDesc &d = frame.resource(0).get<DmaBuf>()->desc();
		image.numPlanes = d.numPlanes;
		for (uint32_t p = 0; p < d.numPlanes; ++p)
			image.planes[p] = SourcePlane{ d.objects[d.planes[p].objectIndex].fd.get(),
						       d.planes[p].offset, d.planes[p].pitch };
	}
	for (uint32_t p = 0; p < image.numPlanes; ++p)
		if (image.planes[p].offset > INT32_MAX || image.planes[p].pitch > INT32_MAX)
			return Error::format(ErrorCode::OutOfRange, "planes",
					     "%s: plane %u of the DMA-BUF (offset %" PRIu64
					     ", pitch %u) does not fit EGL's 32-bit attributes.",
					     kName, p, image.planes[p].offset,
					     image.planes[p].pitch);
	return image;
}

// The eglCreateImageKHR attributes of `image` (EGL_EXT_image_dma_buf_import).
std::vector<EGLint> imageAttributes(const Frame &frame, const SourceImage &image,
				    const EglInterop &interop)
{
	std::vector<EGLint> attributes = { kEglWidth,          static_cast<EGLint>(frame.width()),
					   kEglHeight,         static_cast<EGLint>(frame.height()),
					   kEglLinuxDrmFourcc, static_cast<EGLint>(image.fourcc) };
	for (uint32_t p = 0; p < image.numPlanes; ++p) {
		attributes.insert(attributes.end(),
				  { kEglPlaneFd[p], image.planes[p].fd, kEglPlaneOffset[p],
				    static_cast<EGLint>(image.planes[p].offset), kEglPlanePitch[p],
				    static_cast<EGLint>(image.planes[p].pitch) });
		// Without the modifiers extension a linear buffer goes without one (implicit).
		if (image.modifier != kDrmModifierInvalid && interop.modifiers)
			attributes.insert(attributes.end(),
					  { kEglPlaneModifierLo[p],
					    static_cast<EGLint>(image.modifier & 0xffffffffu),
					    kEglPlaneModifierHi[p],
					    static_cast<EGLint>(image.modifier >> 32) });
	}
	attributes.push_back(kEglNone);
	return attributes;
}

} // namespace

void attachEglInterop(CudaDevice &state)
{
	const Driver &d = driver();
	if (!d.graphicsEglRegisterImage || !d.graphicsResourceGetMappedEglFrame ||
	    !d.graphicsUnregisterResource) {
		state.eglUnavailable = "the CUDA driver lacks the EGL interop calls "
				       "(cuGraphicsEGLRegisterImage, "
				       "cuGraphicsResourceGetMappedEglFrame).";
		return;
	}
	static std::mutex mutex;
	static std::vector<CachedInterop> cache;
	std::lock_guard<std::mutex> lock(mutex);
	for (const CachedInterop &cached : cache)
		if (cached.device == state.device) {
			state.egl = cached.interop;
			state.eglUnavailable = cached.failure;
			return;
		}
	CachedInterop cached;
	cached.device = state.device;
	auto interop = std::make_shared<EglInterop>();
	cached.failure = openDisplay(state.device, *interop);
	if (cached.failure.empty())
		cached.interop = std::move(interop);
	state.egl = cached.interop;
	state.eglUnavailable = cached.failure;
	cache.push_back(std::move(cached));
}

// The DMA-BUF as an EGLImage on the CUDA device's display, registered with CUDA: a pitch-linear
// CUeglFrame gives one device pointer per plane, each plane a CudaBuffer whose anchor holds
// the registration (and through it the source frame).
Result<Frame> CudaBackend::importDmaBuf(const Frame &frame)
{
	if (!state_->egl) {
		std::string why =
			"DMA-BUFs import into CUDA through EGL, and " + state_->eglUnavailable;
		return routeNotSupported(kName, ImportRoute::DmaBuf, why.c_str());
	}
	const EglInterop &interop = *state_->egl;
	const Driver &d = driver();
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "%s: %s", kName,
				     info.error().message().c_str());
	Result<SourceImage> source = sourceImage(frame, interop);
	if (!source.ok())
		return source.error();
	std::vector<EGLint> attributes = imageAttributes(frame, *source, interop);
	auto registration = std::make_shared<EglImport>();
	registration->device = state_;
	registration->interop = state_->egl;
	registration->source = frame;
	registration->image = interop.createImage(interop.display, nullptr, kEglLinuxDmaBuf,
						  nullptr, attributes.data());
	if (!registration->image)
		return Error::format(ErrorCode::Backend, "frame",
				     "%s: eglCreateImageKHR of the %ux%u %s DMA-BUF (fourcc %s, "
				     "modifier 0x%016" PRIx64 ") failed with EGL error 0x%x.",
				     kName, frame.width(), frame.height(),
				     pixelFormatName(frame.format()),
				     fourccText(source->fourcc).c_str(), source->modifier,
				     static_cast<unsigned>(interop.getError()));
	EglFrame mapped;
	{
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		if (CUresult r = d.graphicsEglRegisterImage(&registration->resource,
							    registration->image,
							    kGraphicsRegisterFlagsNone);
		    r != CUDA_SUCCESS)
			return error(d, "frame", "cuGraphicsEGLRegisterImage", r);
		if (CUresult r = d.graphicsResourceGetMappedEglFrame(&mapped,
								     registration->resource, 0, 0);
		    r != CUDA_SUCCESS)
			return error(d, "frame", "cuGraphicsResourceGetMappedEglFrame", r);
	}
	if (mapped.frameType != kEglFrameTypePitch)
		return Error::format(
			ErrorCode::NotSupported, "modifier",
			"%s: CUDA maps this DMA-BUF (modifier 0x%016" PRIx64 ") as "
			"CUDA arrays (a block-linear frame), which this backend does "
			"not import yet; only pitch-linear frames become CUDA buffers.",
			kName, source->modifier);
	const PixelFormatInfo &format = **info;
	if (mapped.planeCount != format.numPlanes)
		return Error::format(ErrorCode::NotSupported, "planes",
				     "%s: CUDA maps the %s DMA-BUF as %u planes, not %u.", kName,
				     format.name, mapped.planeCount, format.numPlanes);
	if (mapped.width < frame.width() || mapped.height < frame.height())
		return Error::format(ErrorCode::FormatMismatch, "size",
				     "%s: CUDA maps the DMA-BUF as %ux%u, smaller than the %ux%u "
				     "frame.",
				     kName, mapped.width, mapped.height, frame.width(),
				     frame.height());
	FrameDesc desc = frame.desc();
	desc.numResources = format.numPlanes;
	desc.resources = {};
	const uint32_t sourcePitch = source->planes[0].pitch;
	for (uint32_t p = 0; p < format.numPlanes; ++p) {
		// CUeglFrame gives plane 0's pitch only: the others are the DMA-BUF's where CUDA
		// kept its pitch, or CUDA's where the DMA-BUF's planes share plane 0's.
		uint32_t stride = source->planes[p].pitch;
		if (mapped.pitch != sourcePitch) {
			if (stride != sourcePitch)
				return Error::format(
					ErrorCode::NotSupported, "planes",
					"%s: CUDA maps plane 0 at a pitch of %u bytes, not the "
					"DMA-BUF's %u, and plane %u's pitch (%u) differs from "
					"plane 0's, so its pitch in CUDA is unknown.",
					kName, mapped.pitch, sourcePitch, p, stride);
			stride = mapped.pitch;
		}
		const uint64_t rowBytes = format.planes[p].rowBytes(frame.width());
		if (stride < rowBytes)
			return Error::format(
				ErrorCode::FormatMismatch, "planes",
				"%s: plane %u has a pitch of %u bytes in CUDA, less than "
				"a row of %" PRIu64 " bytes.",
				kName, p, stride, rowBytes);
		auto allocation = std::make_shared<CudaAllocation>();
		allocation->device = state_;
		allocation->origin = CudaAllocation::Origin::Borrowed;
		allocation->pointer = reinterpret_cast<CUdeviceptr>(mapped.planes.pitched[p]);
		allocation->size = uint64_t(stride) * format.planes[p].rows(frame.height());
		allocation->owner = registration;
		Result<Resource> resource = bufferResource(allocation);
		if (!resource.ok())
			return resource.error();
		desc.resources[p] = std::move(*resource);
		desc.planes[p] = PlaneView{ p, 0, 0, stride };
	}
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle::cuda
