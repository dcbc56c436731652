// Context factories (validation of the host's handles), typed accessors and device identity.
#include <gpuhandle/context.h>

#include "validation.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace gpuhandle {

namespace {

// VK_QUEUE_FAMILY_FOREIGN_EXT, _EXTERNAL and _IGNORED: ownership-transfer markers, not families.
constexpr uint32_t kVkFirstSpecialQueueFamily = 0xfffffffdu;

// Checks run eagerly (context creation is rare); the first failure is reported.
std::optional<Error> firstError(std::initializer_list<std::optional<Error>> checks)
{
	for (const auto &check : checks)
		if (check)
			return check;
	return std::nullopt;
}

std::optional<Error> checkFlavour(const char *type, const char *field, GlFlavour flavour)
{
	if (static_cast<uint32_t>(flavour) <= static_cast<uint32_t>(GlFlavour::Cgl))
		return std::nullopt;
	return Error::format(ErrorCode::InvalidArgument, field,
			     "%s: %s is %u; it must be egl (0), glx (1), wgl (2) or cgl (3).", type,
			     field, static_cast<uint32_t>(flavour));
}

// CGL has no display: its context (or share group) is enough. Every other binding needs one.
std::optional<Error> checkGlDisplay(const char *type, const char *field, const void *display,
				    GlFlavour flavour)
{
	if (flavour == GlFlavour::Cgl)
		return std::nullopt;
	return detail::requireHandle(type, field, display);
}

// Identities that identify nothing are refused rather than stored: two unset-but-zero UUIDs
// would otherwise make unrelated devices look the same.
std::optional<Error> checkUuid(const char *type, const char *field, const std::optional<Uuid> &uuid)
{
	if (!uuid || std::any_of(uuid->begin(), uuid->end(), [](uint8_t b) { return b != 0; }))
		return std::nullopt;
	return Error::format(
		ErrorCode::InvalidArgument, field,
		"%s: %s is all zeros, which identifies no device; leave it unset when unknown.",
		type, field);
}

std::optional<Error> checkLuid(const char *type, const char *field, const std::optional<Luid> &luid)
{
	if (!luid || luid->low != 0 || luid->high != 0)
		return std::nullopt;
	return Error::format(
		ErrorCode::InvalidArgument, field,
		"%s: %s is 0, which identifies no adapter; leave it unset when unknown.", type,
		field);
}

std::optional<Error> checkNode(const char *type, const char *field,
			       const std::optional<DrmNode> &node)
{
	if (!node || node->major != 0 || node->minor != 0)
		return std::nullopt;
	return Error::format(ErrorCode::InvalidArgument, field,
			     "%s: %s is 0:0, which is no DRM device; leave it unset when unknown.",
			     type, field);
}

std::optional<Error> checkExtensions(const char *type, const char *array,
				     const std::vector<std::string> &names)
{
	for (size_t i = 0; i < names.size(); i++) {
		if (!names[i].empty())
			continue;
		std::string field = detail::indexed(array, static_cast<uint32_t>(i), "");
		return Error::format(ErrorCode::InvalidArgument, field,
				     "%s: %s is an empty string; it must name an extension.", type,
				     field.c_str());
	}
	return std::nullopt;
}

std::optional<Error> checkGlSharing(const char *type, const std::optional<OpenClGlSharing> &sharing)
{
	if (!sharing)
		return std::nullopt;
	return firstError({
		checkFlavour(type, "glSharing.flavour", sharing->flavour),
		detail::requireHandle(type, "glSharing.glContext", sharing->glContext),
		checkGlDisplay(type, "glSharing.glDisplay", sharing->glDisplay, sharing->flavour),
	});
}

Error wrongBackend(BackendKind actual, BackendKind wanted)
{
	return Error::format(ErrorCode::WrongKind, "backend",
			     "The context is a %s context; %s() needs a %s context.",
			     backendKindName(actual), backendKindName(wanted),
			     backendKindName(wanted));
}

template<typename T>
Result<const T *> access(const Context::Native &native, BackendKind actual, BackendKind wanted)
{
	if (const T *value = std::get_if<T>(&native))
		return value;
	return wrongBackend(actual, wanted);
}

// Designated initialisers would read better, but g++ 12 warns on every member they leave out.
DeviceId identity(std::optional<Uuid> uuid, std::optional<Luid> luid = {},
		  std::optional<PciBusId> pciBusId = {}, std::optional<DrmNode> renderNode = {},
		  std::optional<uint64_t> registryId = {})
{
	DeviceId id;
	id.uuid = uuid;
	id.luid = luid;
	id.pciBusId = pciBusId;
	id.drmRenderNode = renderNode;
	id.metalRegistryId = registryId;
	return id;
}

// What each backend's values tell of the device.
struct IdentityOf {
	DeviceId operator()(std::monostate) const { return DeviceId::cpu(); }
	DeviceId operator()(const VulkanContext &c) const
	{
		return identity(c.deviceUuid, c.deviceLuid, c.pciBusId, c.renderNode);
	}
	DeviceId operator()(const GlContext &c) const
	{
		return identity(c.deviceUuid, {}, {}, c.renderNode);
	}
	DeviceId operator()(const CudaContext &c) const { return identity(c.uuid, {}, c.pciBusId); }
	DeviceId operator()(const OpenClContext &c) const
	{
		return identity(c.deviceUuid, {}, c.pciBusId);
	}
	DeviceId operator()(const VaApiContext &c) const
	{
		return identity({}, {}, {}, c.renderNode);
	}
	DeviceId operator()(const D3D11Context &c) const { return identity({}, c.luid); }
	DeviceId operator()(const D3D12Context &c) const { return identity({}, c.luid); }
	DeviceId operator()(const MetalContext &c) const
	{
		return identity({}, {}, {}, {}, c.registryId);
	}
	DeviceId operator()(const WebGpuContext &) const { return DeviceId{}; }
};

} // namespace

/**
 * \class Context
 * \brief The host application's own GPU context, for gpuhandle to work inside
 *
 * A Context holds the native handles of one backend as borrowed plain values: gpuhandle never
 * destroys them. The host keeps them alive, or hands an anchor that the Context holds. It is
 * built only by the validating create() overloads and shared as a ContextRef: it cannot be
 * copied, so every consumer of one host context sees the same object.
 * Thread safety: immutable after creation; the native handles' own rules still apply.
 */

Context::Context(BackendKind backend, Native native, KeepAliveRef anchor)
	: backend_(backend), native_(std::move(native)), anchor_(std::move(anchor))
{
}

// Every factory ends here: the first failed check, or the new context.
Result<ContextRef> Context::build(BackendKind backend, Native native, KeepAliveRef anchor,
				  std::optional<Error> error)
{
	if (error)
		return std::move(*error);
	return ContextRef(new Context(backend, std::move(native), std::move(anchor)));
}

/**
 * \brief The host CPU as a context: work runs on the calling thread, memory is system memory
 */
ContextRef Context::cpu()
{
	return ContextRef(new Context(BackendKind::Cpu, std::monostate{}, {}));
}

/**
 * \brief Wraps the host's Vulkan instance, device and queue
 *
 * instance, physicalDevice, device and queue must be non-null (NullHandle). queueFamilyIndex
 * must be a real family, not VK_QUEUE_FAMILY_IGNORED / EXTERNAL / FOREIGN_EXT (OutOfRange).
 * Extension names must be non-empty, and UUIDs, LUID and render node, when set, non-zero
 * (InvalidArgument).
 */
Result<ContextRef> Context::create(VulkanContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "VulkanContext";
	std::optional<Error> familyError;
	if (native.queueFamilyIndex >= kVkFirstSpecialQueueFamily)
		familyError = Error::format(
			ErrorCode::OutOfRange, "queueFamilyIndex",
			"%s: queueFamilyIndex is 0x%x, a queue-ownership marker, not a queue family.",
			type, native.queueFamilyIndex);
	auto error = firstError({
		detail::requireHandle(type, "instance", native.instance),
		detail::requireHandle(type, "physicalDevice", native.physicalDevice),
		detail::requireHandle(type, "device", native.device),
		detail::requireHandle(type, "queue", native.queue),
		familyError,
		checkExtensions(type, "enabledInstanceExtensions",
				native.enabledInstanceExtensions),
		checkExtensions(type, "enabledDeviceExtensions", native.enabledDeviceExtensions),
		checkUuid(type, "deviceUuid", native.deviceUuid),
		checkUuid(type, "driverUuid", native.driverUuid),
		checkLuid(type, "deviceLuid", native.deviceLuid),
		checkNode(type, "renderNode", native.renderNode),
	});
	return build(BackendKind::Vulkan, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's OpenGL or GLES context
 *
 * context must be non-null, and display too unless the flavour is CGL (NullHandle); the flavour
 * must be one of GlFlavour's values, deviceUuid and renderNode non-zero when set
 * (InvalidArgument).
 */
Result<ContextRef> Context::create(GlContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "GlContext";
	auto error = firstError({
		checkFlavour(type, "flavour", native.flavour),
		checkGlDisplay(type, "display", native.display, native.flavour),
		detail::requireHandle(type, "context", native.context),
		checkUuid(type, "deviceUuid", native.deviceUuid),
		checkNode(type, "renderNode", native.renderNode),
	});
	return build(BackendKind::OpenGL, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's CUDA context and stream
 *
 * context must be non-null (NullHandle); stream may be null, the legacy default stream, and
 * CU_STREAM_LEGACY (0x1) and CU_STREAM_PER_THREAD (0x2) are accepted as they are. ordinal must
 * be >= 0 (OutOfRange); uuid non-zero when set (InvalidArgument).
 */
Result<ContextRef> Context::create(CudaContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "CudaContext";
	std::optional<Error> ordinalError;
	if (native.ordinal < 0)
		ordinalError = Error::format(ErrorCode::OutOfRange, "ordinal",
					     "%s: ordinal is %d; a CUDA device ordinal is >= 0.",
					     type, native.ordinal);
	auto error = firstError({
		detail::requireHandle(type, "context", native.context),
		ordinalError,
		checkUuid(type, "uuid", native.uuid),
	});
	return build(BackendKind::Cuda, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's OpenCL context, queue and device
 *
 * context, queue and device must be non-null (NullHandle). With glSharing, its glContext must be
 * non-null, and glDisplay too unless the flavour is CGL (NullHandle, field "glSharing.glContext"
 * and so on); the flavour must be valid and deviceUuid non-zero when set (InvalidArgument).
 */
Result<ContextRef> Context::create(OpenClContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "OpenClContext";
	auto error = firstError({
		detail::requireHandle(type, "context", native.context),
		detail::requireHandle(type, "queue", native.queue),
		detail::requireHandle(type, "device", native.device),
		checkGlSharing(type, native.glSharing),
		checkUuid(type, "deviceUuid", native.deviceUuid),
	});
	return build(BackendKind::OpenCl, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's VA-API display
 *
 * display must be non-null (NullHandle). renderNode is optional, because a display opened on X11
 * or Wayland does not tell its node; when set it must not be 0:0 (InvalidArgument). It is stored
 * as device numbers so that it compares with DeviceId::drmRenderNode; DrmNode::fromPath() turns
 * the path given to vaGetDisplayDRM's open() into one.
 */
Result<ContextRef> Context::create(VaApiContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "VaApiContext";
	auto error = firstError({
		detail::requireHandle(type, "display", native.display),
		checkNode(type, "renderNode", native.renderNode),
	});
	return build(BackendKind::VaApi, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's D3D11 device and immediate context
 *
 * device and deviceContext must be non-null (NullHandle); luid non-zero when set (InvalidArgument).
 */
Result<ContextRef> Context::create(D3D11Context native, KeepAliveRef anchor)
{
	constexpr const char *type = "D3D11Context";
	auto error = firstError({
		detail::requireHandle(type, "device", native.device),
		detail::requireHandle(type, "deviceContext", native.deviceContext),
		checkLuid(type, "luid", native.luid),
	});
	return build(BackendKind::D3D11, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's D3D12 device and command queue
 *
 * device and queue must be non-null (NullHandle); luid non-zero when set (InvalidArgument).
 */
Result<ContextRef> Context::create(D3D12Context native, KeepAliveRef anchor)
{
	constexpr const char *type = "D3D12Context";
	auto error = firstError({
		detail::requireHandle(type, "device", native.device),
		detail::requireHandle(type, "queue", native.queue),
		checkLuid(type, "luid", native.luid),
	});
	return build(BackendKind::D3D12, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's Metal device and command queue
 *
 * device and queue must be non-null (NullHandle); registryId non-zero when set (InvalidArgument).
 */
Result<ContextRef> Context::create(MetalContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "MetalContext";
	std::optional<Error> registryError;
	if (native.registryId && *native.registryId == 0)
		registryError = Error::format(
			ErrorCode::InvalidArgument, "registryId",
			"%s: registryId is 0, which identifies no device; leave it unset when unknown.",
			type);
	auto error = firstError({
		detail::requireHandle(type, "device", native.device),
		detail::requireHandle(type, "queue", native.queue),
		registryError,
	});
	return build(BackendKind::Metal, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief Wraps the host's WebGPU (webgpu.h) device and queue
 *
 * device and queue must be non-null (NullHandle); adapter and instance may be null.
 */
Result<ContextRef> Context::create(WebGpuContext native, KeepAliveRef anchor)
{
	constexpr const char *type = "WebGpuContext";
	auto error = firstError({
		detail::requireHandle(type, "device", native.device),
		detail::requireHandle(type, "queue", native.queue),
	});
	return build(BackendKind::WebGpu, std::move(native), std::move(anchor), std::move(error));
}

/**
 * \brief What the context knows of its physical device's identity
 *
 * The CPU context gives DeviceId::cpu(); the others give the identities they were created with
 * (an empty DeviceId when none were given, which sameDevice() answers with Unknown).
 */
DeviceId Context::deviceId() const
{
	return std::visit(IdentityOf{}, native_);
}

/**
 * \fn Context::vulkan()
 * \brief The Vulkan handles, or WrongKind (field "backend") when the context is another backend's
 *
 * The other accessors (opengl(), cuda(), opencl(), vaapi(), d3d11(), d3d12(), metal(), webgpu())
 * do the same for their backend; each is named as backendKindName() names its backend. The
 * pointer lives as long as the Context.
 */
Result<const VulkanContext *> Context::vulkan() const
{
	return access<VulkanContext>(native_, backend_, BackendKind::Vulkan);
}
Result<const GlContext *> Context::opengl() const
{
	return access<GlContext>(native_, backend_, BackendKind::OpenGL);
}
Result<const CudaContext *> Context::cuda() const
{
	return access<CudaContext>(native_, backend_, BackendKind::Cuda);
}
Result<const OpenClContext *> Context::opencl() const
{
	return access<OpenClContext>(native_, backend_, BackendKind::OpenCl);
}
Result<const VaApiContext *> Context::vaapi() const
{
	return access<VaApiContext>(native_, backend_, BackendKind::VaApi);
}
Result<const D3D11Context *> Context::d3d11() const
{
	return access<D3D11Context>(native_, backend_, BackendKind::D3D11);
}
Result<const D3D12Context *> Context::d3d12() const
{
	return access<D3D12Context>(native_, backend_, BackendKind::D3D12);
}
Result<const MetalContext *> Context::metal() const
{
	return access<MetalContext>(native_, backend_, BackendKind::Metal);
}
Result<const WebGpuContext *> Context::webgpu() const
{
	return access<WebGpuContext>(native_, backend_, BackendKind::WebGpu);
}

/**
 * \brief The host's queue, as the ExternalQueue that backends opened in this context submit on
 *
 * Built through ExternalQueue's validating factories, so a queue that cannot be one (a
 * queue-ownership marker as a Vulkan family) is refused here as there. VA-API contexts have no
 * queue, and a Metal or WebGPU queue is not the per-call command buffer or encoder an
 * ExternalQueue names: NotSupported, saying so.
 */
Result<ExternalQueue> Context::queue() const
{
	struct Visitor {
		Result<ExternalQueue> operator()(const std::monostate &) const
		{
			return ExternalQueue::cpu();
		}
		Result<ExternalQueue> operator()(const VulkanContext &c) const
		{
			return ExternalQueue::create(VulkanQueue{ c.queue, c.queueFamilyIndex });
		}
		Result<ExternalQueue> operator()(const GlContext &c) const
		{
			return ExternalQueue::create(GlQueue{ c.context });
		}
		Result<ExternalQueue> operator()(const CudaContext &c) const
		{
			return ExternalQueue::create(CudaStream{ c.stream });
		}
		Result<ExternalQueue> operator()(const OpenClContext &c) const
		{
			return ExternalQueue::create(OpenClQueue{ c.queue });
		}
		Result<ExternalQueue> operator()(const D3D11Context &c) const
		{
			return ExternalQueue::create(D3D11DeviceContext{ c.deviceContext });
		}
		Result<ExternalQueue> operator()(const D3D12Context &c) const
		{
			return ExternalQueue::create(D3D12Queue{ c.queue });
		}
		Result<ExternalQueue> operator()(const VaApiContext &) const
		{
			return none(
				"A VA-API context has no queue: VA orders the work on each surface.");
		}
		Result<ExternalQueue> operator()(const MetalContext &) const
		{
			return none("A Metal command queue is not a command buffer: pass one "
				    "MetalCommandBuffer per call.");
		}
		Result<ExternalQueue> operator()(const WebGpuContext &) const
		{
			return none(
				"A WebGPU queue is not a command encoder: pass one WebGpuEncoder "
				"per call.");
		}
		static Error none(const char *why)
		{
			return Error(ErrorCode::NotSupported, "queue", why);
		}
	};
	return std::visit(Visitor{}, native_);
}

} // namespace gpuhandle
