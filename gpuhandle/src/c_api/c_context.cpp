// C API: gpuhandle_context over std::shared_ptr<const gpuhandle::Context>, and device identity.
#include <gpuhandle/gpuhandle_context.h>

#include "c_internal.h"

#include <string>

using namespace gpuhandle;
using namespace gpuhandle::capi;

gpuhandle_context::gpuhandle_context(std::shared_ptr<const Context> c) : value(std::move(c))
{
	if (const VulkanContext *vulkan = std::get_if<VulkanContext>(&value->native())) {
		for (const std::string &name : vulkan->enabledInstanceExtensions)
			instanceExtensions.push_back(name.c_str());
		for (const std::string &name : vulkan->enabledDeviceExtensions)
			deviceExtensions.push_back(name.c_str());
	}
}

namespace {

// Errors of PciBusId::create name "bus"; the C field is "pciBusId.bus".
Result<std::optional<PciBusId>> pciOf(bool has, const gpuhandle_pci_bus_id &p, const char *field)
{
	if (!has)
		return std::optional<PciBusId>();
	Result<PciBusId> pci = PciBusId::create(p.domain, p.bus, p.device, p.function);
	if (!pci)
		return Error(pci.error().code(), std::string(field) + "." + pci.error().field(),
			     pci.error().message());
	return std::optional<PciBusId>(*pci);
}

void putPci(const std::optional<PciBusId> &pci, bool &has, gpuhandle_pci_bus_id &out)
{
	has = pci.has_value();
	if (pci)
		out = { pci->domain(), pci->bus(), pci->device(), pci->function() };
}

std::optional<DrmNode> nodeOf(bool has, const gpuhandle_drm_node &node)
{
	return has ? std::optional<DrmNode>(DrmNode{ node.major, node.minor }) : std::nullopt;
}

void putNode(const std::optional<DrmNode> &node, bool &has, gpuhandle_drm_node &out)
{
	has = node.has_value();
	if (node)
		out = { node->major, node->minor };
}

// A C array of `count` extension names, copied; NullHandle for a NULL array or entry.
Result<std::vector<std::string>> namesOf(const char *array, const char *const *names,
					 uint32_t count)
{
	if (count && !names)
		return Error::format(ErrorCode::NullHandle, array,
				     "VulkanContext: %s is NULL but its count is %u.", array,
				     count);
	std::vector<std::string> copy;
	copy.reserve(count);
	for (uint32_t i = 0; i < count; ++i) {
		if (!names[i]) {
			std::string field = std::string(array) + "[" + std::to_string(i) + "]";
			return Error::format(
				ErrorCode::NullHandle, field,
				"VulkanContext: %s is NULL; it must name an extension.",
				field.c_str());
		}
		copy.emplace_back(names[i]);
	}
	return copy;
}

Result<VulkanContext> nativeVulkan(const gpuhandle_vulkan_context_desc &c)
{
	VulkanContext v;
	v.instance = c.instance;
	v.physicalDevice = c.physicalDevice;
	v.device = c.device;
	v.queue = c.queue;
	v.queueFamilyIndex = c.queueFamilyIndex;
	v.getInstanceProcAddr = c.getInstanceProcAddr;
	auto instanceExtensions = namesOf("enabledInstanceExtensions", c.enabledInstanceExtensions,
					  c.enabledInstanceExtensionCount);
	if (!instanceExtensions)
		return std::move(instanceExtensions).error();
	v.enabledInstanceExtensions = std::move(*instanceExtensions);
	auto deviceExtensions = namesOf("enabledDeviceExtensions", c.enabledDeviceExtensions,
					c.enabledDeviceExtensionCount);
	if (!deviceExtensions)
		return std::move(deviceExtensions).error();
	v.enabledDeviceExtensions = std::move(*deviceExtensions);
	v.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	v.driverUuid = uuidOf(c.hasDriverUuid, c.driverUuid);
	v.deviceLuid = luidOf(c.hasDeviceLuid, c.deviceLuid);
	auto pci = pciOf(c.hasPciBusId, c.pciBusId, "pciBusId");
	if (!pci)
		return std::move(pci).error();
	v.pciBusId = *pci;
	v.renderNode = nodeOf(c.hasRenderNode, c.renderNode);
	return v;
}

void cVulkan(const VulkanContext &v, const gpuhandle_context &context,
	     gpuhandle_vulkan_context_desc &c)
{
	c.instance = v.instance;
	c.physicalDevice = v.physicalDevice;
	c.device = v.device;
	c.queue = v.queue;
	c.queueFamilyIndex = v.queueFamilyIndex;
	c.getInstanceProcAddr = v.getInstanceProcAddr;
	c.enabledInstanceExtensions = context.instanceExtensions.data();
	c.enabledInstanceExtensionCount = static_cast<uint32_t>(context.instanceExtensions.size());
	c.enabledDeviceExtensions = context.deviceExtensions.data();
	c.enabledDeviceExtensionCount = static_cast<uint32_t>(context.deviceExtensions.size());
	putUuid(v.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
	putUuid(v.driverUuid, c.hasDriverUuid, c.driverUuid);
	putLuid(v.deviceLuid, c.hasDeviceLuid, c.deviceLuid);
	putPci(v.pciBusId, c.hasPciBusId, c.pciBusId);
	putNode(v.renderNode, c.hasRenderNode, c.renderNode);
}

Result<GlContext> nativeOpenGl(const gpuhandle_opengl_context_desc &c)
{
	GlContext g;
	g.display = c.display;
	g.context = c.context;
	g.shareGroup = optionalOf(c.hasShareGroup, c.shareGroup);
	g.flavour = static_cast<GlFlavour>(c.flavour);
	g.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	g.renderNode = nodeOf(c.hasRenderNode, c.renderNode);
	return g;
}

void cOpenGl(const GlContext &g, const gpuhandle_context &, gpuhandle_opengl_context_desc &c)
{
	c.display = g.display;
	c.context = g.context;
	putOptional(g.shareGroup, c.hasShareGroup, c.shareGroup);
	c.flavour = static_cast<gpuhandle_gl_flavour>(g.flavour);
	putUuid(g.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
	putNode(g.renderNode, c.hasRenderNode, c.renderNode);
}

Result<CudaContext> nativeCuda(const gpuhandle_cuda_context_desc &c)
{
	CudaContext cu;
	cu.context = c.context;
	cu.stream = c.stream;
	cu.ordinal = c.ordinal;
	cu.uuid = uuidOf(c.hasUuid, c.uuid);
	auto pci = pciOf(c.hasPciBusId, c.pciBusId, "pciBusId");
	if (!pci)
		return std::move(pci).error();
	cu.pciBusId = *pci;
	return cu;
}

void cCuda(const CudaContext &cu, const gpuhandle_context &, gpuhandle_cuda_context_desc &c)
{
	c.context = cu.context;
	c.stream = cu.stream;
	c.ordinal = cu.ordinal;
	putUuid(cu.uuid, c.hasUuid, c.uuid);
	putPci(cu.pciBusId, c.hasPciBusId, c.pciBusId);
}

Result<OpenClContext> nativeOpenCl(const gpuhandle_opencl_context_desc &c)
{
	OpenClContext cl;
	cl.context = c.context;
	cl.queue = c.queue;
	cl.device = c.device;
	if (c.hasGlSharing)
		cl.glSharing = OpenClGlSharing{ c.glSharing.glContext, c.glSharing.glDisplay,
						static_cast<GlFlavour>(c.glSharing.flavour) };
	cl.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	auto pci = pciOf(c.hasPciBusId, c.pciBusId, "pciBusId");
	if (!pci)
		return std::move(pci).error();
	cl.pciBusId = *pci;
	return cl;
}

void cOpenCl(const OpenClContext &cl, const gpuhandle_context &, gpuhandle_opencl_context_desc &c)
{
	c.context = cl.context;
	c.queue = cl.queue;
	c.device = cl.device;
	c.hasGlSharing = cl.glSharing.has_value();
	if (cl.glSharing)
		c.glSharing = { cl.glSharing->glContext, cl.glSharing->glDisplay,
				static_cast<gpuhandle_gl_flavour>(cl.glSharing->flavour) };
	putUuid(cl.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
	putPci(cl.pciBusId, c.hasPciBusId, c.pciBusId);
}

Result<VaApiContext> nativeVaApi(const gpuhandle_vaapi_context_desc &c)
{
	VaApiContext va;
	va.display = c.display;
	va.renderNode = nodeOf(c.hasRenderNode, c.renderNode);
	return va;
}

void cVaApi(const VaApiContext &va, const gpuhandle_context &, gpuhandle_vaapi_context_desc &c)
{
	c.display = va.display;
	putNode(va.renderNode, c.hasRenderNode, c.renderNode);
}

Result<D3D11Context> nativeD3D11(const gpuhandle_d3d11_context_desc &c)
{
	D3D11Context d;
	d.device = c.device;
	d.deviceContext = c.deviceContext;
	d.luid = luidOf(c.hasLuid, c.luid);
	return d;
}

void cD3D11(const D3D11Context &d, const gpuhandle_context &, gpuhandle_d3d11_context_desc &c)
{
	c.device = d.device;
	c.deviceContext = d.deviceContext;
	putLuid(d.luid, c.hasLuid, c.luid);
}

Result<D3D12Context> nativeD3D12(const gpuhandle_d3d12_context_desc &c)
{
	D3D12Context d;
	d.device = c.device;
	d.queue = c.queue;
	d.luid = luidOf(c.hasLuid, c.luid);
	return d;
}

void cD3D12(const D3D12Context &d, const gpuhandle_context &, gpuhandle_d3d12_context_desc &c)
{
	c.device = d.device;
	c.queue = d.queue;
	putLuid(d.luid, c.hasLuid, c.luid);
}

Result<MetalContext> nativeMetal(const gpuhandle_metal_context_desc &c)
{
	MetalContext m;
	m.device = c.device;
	m.queue = c.queue;
	m.registryId = optionalOf(c.hasRegistryId, c.registryId);
	return m;
}

void cMetal(const MetalContext &m, const gpuhandle_context &, gpuhandle_metal_context_desc &c)
{
	c.device = m.device;
	c.queue = m.queue;
	putOptional(m.registryId, c.hasRegistryId, c.registryId);
}

Result<WebGpuContext> nativeWebGpu(const gpuhandle_webgpu_context_desc &c)
{
	WebGpuContext w;
	w.device = c.device;
	w.queue = c.queue;
	w.adapter = c.adapter;
	w.instance = c.instance;
	return w;
}

void cWebGpu(const WebGpuContext &w, const gpuhandle_context &, gpuhandle_webgpu_context_desc &c)
{
	c.device = w.device;
	c.queue = w.queue;
	c.adapter = w.adapter;
	c.instance = w.instance;
}

// Builds the anchor first (so that its destroy runs once whatever fails), then the native
// values with `convert`, then the validated Context.
template<typename CDesc, typename Convert>
gpuhandle_status createContext(const char *function, const char *type, const CDesc *desc,
			       gpuhandle_context **out, gpuhandle_error **error,
			       Convert convert) noexcept
{
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!desc)
			return failNull(error, function, "desc");
		Result<KeepAliveRef> anchor = anchorOf(desc->anchor, type);
		if (!anchor)
			return fail(error, std::move(anchor).error());
		auto native = convert(*desc);
		if (!native)
			return fail(error, std::move(native).error());
		if (!out)
			return failNull(error, function, "out");
		auto context = Context::create(std::move(*native), std::move(*anchor));
		if (!context)
			return fail(error, std::move(context).error());
		*out = new gpuhandle_context(std::move(*context));
		return GPUHANDLE_OK;
	});
}

template<typename Native, typename CDesc, typename Fill>
gpuhandle_status getContext(const gpuhandle_context *context, CDesc *out, Fill fill) noexcept
{
	static_assert(std::is_trivially_copyable_v<CDesc>);
	if (out)
		std::memset(static_cast<void *>(out), 0, sizeof(*out));
	if (!context || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	const Native *native = std::get_if<Native>(&context->value->native());
	if (!native)
		return GPUHANDLE_ERROR_WRONG_KIND;
	fill(*native, *context, *out);
	return GPUHANDLE_OK;
}

} // namespace

extern "C" {

gpuhandle_status gpuhandle_context_new_cpu(gpuhandle_context **out,
					   gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!out)
			return failNull(error, function, "out");
		*out = new gpuhandle_context(Context::cpu());
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_context_new_vulkan(const gpuhandle_vulkan_context_desc *desc,
					      gpuhandle_context **out,
					      gpuhandle_error **error) noexcept
{
	return createContext(__func__, "VulkanContext", desc, out, error, nativeVulkan);
}

gpuhandle_status gpuhandle_context_get_vulkan(const gpuhandle_context *context,
					      gpuhandle_vulkan_context_desc *out) noexcept
{
	return getContext<VulkanContext>(context, out, cVulkan);
}

gpuhandle_status gpuhandle_context_new_opengl(const gpuhandle_opengl_context_desc *desc,
					      gpuhandle_context **out,
					      gpuhandle_error **error) noexcept
{
	return createContext(__func__, "GlContext", desc, out, error, nativeOpenGl);
}

gpuhandle_status gpuhandle_context_get_opengl(const gpuhandle_context *context,
					      gpuhandle_opengl_context_desc *out) noexcept
{
	return getContext<GlContext>(context, out, cOpenGl);
}

gpuhandle_status gpuhandle_context_new_cuda(const gpuhandle_cuda_context_desc *desc,
					    gpuhandle_context **out,
					    gpuhandle_error **error) noexcept
{
	return createContext(__func__, "CudaContext", desc, out, error, nativeCuda);
}

gpuhandle_status gpuhandle_context_get_cuda(const gpuhandle_context *context,
					    gpuhandle_cuda_context_desc *out) noexcept
{
	return getContext<CudaContext>(context, out, cCuda);
}

gpuhandle_status gpuhandle_context_new_opencl(const gpuhandle_opencl_context_desc *desc,
					      gpuhandle_context **out,
					      gpuhandle_error **error) noexcept
{
	return createContext(__func__, "OpenClContext", desc, out, error, nativeOpenCl);
}

gpuhandle_status gpuhandle_context_get_opencl(const gpuhandle_context *context,
					      gpuhandle_opencl_context_desc *out) noexcept
{
	return getContext<OpenClContext>(context, out, cOpenCl);
}

gpuhandle_status gpuhandle_context_new_vaapi(const gpuhandle_vaapi_context_desc *desc,
					     gpuhandle_context **out,
					     gpuhandle_error **error) noexcept
{
	return createContext(__func__, "VaApiContext", desc, out, error, nativeVaApi);
}

gpuhandle_status gpuhandle_context_get_vaapi(const gpuhandle_context *context,
					     gpuhandle_vaapi_context_desc *out) noexcept
{
	return getContext<VaApiContext>(context, out, cVaApi);
}

gpuhandle_status gpuhandle_context_new_d3d11(const gpuhandle_d3d11_context_desc *desc,
					     gpuhandle_context **out,
					     gpuhandle_error **error) noexcept
{
	return createContext(__func__, "D3D11Context", desc, out, error, nativeD3D11);
}

gpuhandle_status gpuhandle_context_get_d3d11(const gpuhandle_context *context,
					     gpuhandle_d3d11_context_desc *out) noexcept
{
	return getContext<D3D11Context>(context, out, cD3D11);
}

gpuhandle_status gpuhandle_context_new_d3d12(const gpuhandle_d3d12_context_desc *desc,
					     gpuhandle_context **out,
					     gpuhandle_error **error) noexcept
{
	return createContext(__func__, "D3D12Context", desc, out, error, nativeD3D12);
}

gpuhandle_status gpuhandle_context_get_d3d12(const gpuhandle_context *context,
					     gpuhandle_d3d12_context_desc *out) noexcept
{
	return getContext<D3D12Context>(context, out, cD3D12);
}

gpuhandle_status gpuhandle_context_new_metal(const gpuhandle_metal_context_desc *desc,
					     gpuhandle_context **out,
					     gpuhandle_error **error) noexcept
{
	return createContext(__func__, "MetalContext", desc, out, error, nativeMetal);
}

gpuhandle_status gpuhandle_context_get_metal(const gpuhandle_context *context,
					     gpuhandle_metal_context_desc *out) noexcept
{
	return getContext<MetalContext>(context, out, cMetal);
}

gpuhandle_status gpuhandle_context_new_webgpu(const gpuhandle_webgpu_context_desc *desc,
					      gpuhandle_context **out,
					      gpuhandle_error **error) noexcept
{
	return createContext(__func__, "WebGpuContext", desc, out, error, nativeWebGpu);
}

gpuhandle_status gpuhandle_context_get_webgpu(const gpuhandle_context *context,
					      gpuhandle_webgpu_context_desc *out) noexcept
{
	return getContext<WebGpuContext>(context, out, cWebGpu);
}

gpuhandle_context *gpuhandle_context_ref(gpuhandle_context *context) noexcept
{
	return ref(context);
}

void gpuhandle_context_unref(gpuhandle_context *context) noexcept
{
	unref(context);
}

gpuhandle_backend_kind gpuhandle_context_get_backend(const gpuhandle_context *context) noexcept
{
	return context ? static_cast<gpuhandle_backend_kind>(context->value->backend())
		       : GPUHANDLE_BACKEND_CPU;
}

} // extern "C"
