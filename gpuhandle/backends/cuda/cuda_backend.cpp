// The CUDA backend object: opening a device, capabilities, allocation, export and imports.
#include "cuda/cuda_backend_internal.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <unistd.h>

namespace gpuhandle {

namespace cuda {

namespace {

constexpr const char *kName = "cuda";
// Row alignment of the frames allocate() makes: what NPP and most kernels prefer, and more than
// any device's texture pitch alignment.
constexpr uint32_t kPreferredAlign = 256;
constexpr uint32_t kNvidiaVendorId = 0x10de;

// An open-time failure that says the backend is unavailable here (no driver, no device), not
// that the caller erred: always NotSupported, `why` a whole sentence.
Error unavailable(const char *field, const std::string &why)
{
	return Error::format(ErrorCode::NotSupported, field, "%s: %s The CUDA backend cannot open.",
			     kName, why.c_str());
}

std::string uuidText(const std::optional<Uuid> &uuid)
{
	return uuid ? formatUuid(*uuid) : std::string("(unknown)");
}

Status fillDevice(CudaDevice &state, DeviceInfo &info)
{
	const Driver &d = driver();
	char name[256] = {};
	if (CUresult r = d.deviceGetName(name, sizeof(name) - 1, state.device); r != CUDA_SUCCESS)
		return error(d, "device", "cuDeviceGetName", r);
	info.backend = BackendKind::Cuda;
	info.name = name;
	info.vendorId = kNvidiaVendorId;
	info.isSoftware = isSoftwareRendererName(info.name);

	CUuuid uuid{};
	if (d.deviceGetUuid(&uuid, state.device) == CUDA_SUCCESS) {
		Uuid value{};
		std::memcpy(value.data(), uuid.bytes, value.size());
		state.uuid = value;
		info.id.uuid = value;
	}
	char bus[32] = {};
	if (d.deviceGetPciBusId(bus, sizeof(bus) - 1, state.device) == CUDA_SUCCESS) {
		Result<PciBusId> pci = PciBusId::parse(bus);
		if (pci.ok())
			info.id.pciBusId = *pci;
	}
	size_t memory = 0;
	if (d.deviceTotalMem(&memory, state.device) == CUDA_SUCCESS)
		info.dedicatedMemoryBytes = memory;
	int value = 0;
	if (d.deviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_INTEGRATED, state.device) ==
	    CUDA_SUCCESS)
		info.isIntegrated = value != 0;
	// An integrated GPU shares the host's memory: none of it is dedicated.
	if (info.isIntegrated)
		info.dedicatedMemoryBytes = 0;
	value = 0;
	if (d.deviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, state.device) ==
	    CUDA_SUCCESS)
		state.canMapHostMemory = value != 0;
	int version = 0;
	if (d.driverGetVersion(&version) == CUDA_SUCCESS)
		info.driverVersion = "CUDA " + std::to_string(version / 1000) + "." +
				     std::to_string(version % 1000 / 10);
	return {};
}

// The host's CUDA context: its CUcontext and stream are used as they are.
Status openHostContext(CudaDevice &state, const ContextRef &context)
{
	const Driver &d = driver();
	if (context->backend() != BackendKind::Cuda)
		return Error::format(ErrorCode::InvalidArgument, "context",
				     "%s: the context given is a %s context, not a CUDA one.",
				     kName, backendKindName(context->backend()));
	const CudaContext *host = *context->cuda();
	if (!host->context)
		return Error::format(ErrorCode::NullHandle, "context",
				     "%s: the host's CudaContext has a null CUcontext.", kName);
	state.context = static_cast<CUcontext>(host->context);
	// The host's stream, as every backend opened in a host's context takes its queue.
	Result<ExternalQueue> queue = context->queue();
	if (!queue.ok())
		return std::move(queue).error();
	state.stream = static_cast<CUstream>((*queue->cuda())->stream);
	state.hostContext = context;
	ContextScope scope(d, state.context);
	if (scope.result() != CUDA_SUCCESS)
		return error(d, "context", "cuCtxPushCurrent", scope.result());
	if (CUresult r = d.ctxGetDevice(&state.device); r != CUDA_SUCCESS)
		return error(d, "context", "cuCtxGetDevice", r);
	return {};
}

// Our own device: the primary context of device `index` (shared with the CUDA runtime and
// other libraries in the process) and a stream of our own.
Status openOwnDevice(CudaDevice &state, uint32_t index)
{
	const Driver &d = driver();
	int count = 0;
	if (CUresult r = d.deviceGetCount(&count); r != CUDA_SUCCESS)
		return error(d, "driver", "cuDeviceGetCount", r);
	if (count <= 0)
		return unavailable("driver", "The CUDA driver loaded but sees no device.");
	if (index >= static_cast<uint32_t>(count))
		return Error::format(ErrorCode::NotSupported, "deviceIndex",
				     "%s: there is no CUDA device %u: the driver sees %d device%s.",
				     kName, index, count, count == 1 ? "" : "s");
	if (CUresult r = d.deviceGet(&state.device, static_cast<int>(index)); r != CUDA_SUCCESS)
		return error(d, "deviceIndex", "cuDeviceGet", r);
	if (CUresult r = d.primaryCtxRetain(&state.context, state.device); r != CUDA_SUCCESS)
		return error(d, "context", "cuDevicePrimaryCtxRetain", r);
	state.retainedPrimary = true;
	ContextScope scope(d, state.context);
	if (scope.result() != CUDA_SUCCESS)
		return error(d, "context", "cuCtxPushCurrent", scope.result());
	if (CUresult r = d.streamCreate(&state.stream, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
		return error(d, "context", "cuStreamCreate", r);
	state.ownStream = true;
	return {};
}

BackendCapabilities capabilitiesOf(const CudaDevice &state)
{
	const Driver &d = driver();
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::CudaBuffer };
	caps.imports = { ResourceKind::CudaBuffer, ResourceKind::CudaPitched2D,
			 ResourceKind::VulkanMemoryFd };
	caps.routes = { ImportRoute::Direct, ImportRoute::OpaqueFd };
	if (state.canMapHostMemory) {
		caps.imports.push_back(ResourceKind::CpuBytes);
		caps.imports.push_back(ResourceKind::CpuPlanes);
		caps.routes.push_back(ImportRoute::HostPointer);
	}
	if (state.egl) { // the EGL display on this device opened: DMA-BUFs import as EGLImages
		caps.imports.push_back(ResourceKind::DmaBuf);
		caps.routes.push_back(ImportRoute::DmaBuf);
	}
	caps.storages = { FrameStorage::Buffer };
	// No fenceExports: exportFence() has no CUDA override (a CUevent is not a fence fd).
	caps.fenceImports = { SyncKind::CudaEvent };
	if (d.waitExternalSemaphoresAsync)
		caps.fenceImports.push_back(SyncKind::CudaExternalSemaphore);
	caps.cpuMap = true;
	caps.gpuCopy = true;
	return caps;
}

uint64_t roundUp(uint64_t value, uint64_t align)
{
	return (value + align - 1) / align * align;
}

// Where each (resource, subresource) of a frame goes in the imported frame: one new resource per
// part, planes re-pointed at them (a CpuPlanes resource becomes one CUDA buffer per plane).
struct PartMap {
	uint32_t count = 0;
	std::array<std::array<uint32_t, 4>, 4> index{}; // [resource][subresource] -> new resource
};

} // namespace

bool CudaBackend::supportsFormat(PixelFormat format, FrameStorage storage) const
{
	return storage == FrameStorage::Buffer && pixelFormatInfo(format).ok();
}

Result<Frame> CudaBackend::allocate(const AllocateRequest &request)
{
	Result<FrameLayout> layout = layoutForRequest(request, kPreferredAlign, kName);
	if (!layout.ok())
		return layout.error();
	if (request.storage != FrameStorage::Buffer)
		return Error::format(
			ErrorCode::NotSupported, "storage",
			"%s: allocates %s storage only; a %s would need CUDA arrays, which this "
			"backend does not make.",
			kName, frameStorageName(FrameStorage::Buffer),
			frameStorageName(request.storage));
	state_->reclaim(); // memory of copies that timed out and have finished since
	Result<BudgetReservation> charged = charge(request);
	if (!charged.ok())
		return charged.error();
	const Driver &d = driver();
	auto allocation = std::make_shared<CudaAllocation>();
	allocation->charge = std::move(*charged);
	allocation->device = state_;
	allocation->origin = CudaAllocation::Origin::Owned;
	allocation->size = layout->size;
	{
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		if (CUresult r = d.memAlloc(&allocation->pointer, layout->size);
		    r != CUDA_SUCCESS) {
			Error failed = error(d, "size", "cuMemAlloc", r);
			return Error::format(failed.code(), "size",
					     "%s: a %ux%u %s frame (%" PRIu64
					     " bytes) could not be allocated: %s",
					     kName, request.width, request.height,
					     pixelFormatName(request.format), layout->size,
					     failed.message().c_str());
		}
	}
	Result<Resource> buffer = bufferResource(allocation);
	if (!buffer.ok())
		return buffer.error();
	return frameOverBuffer(request, *layout, std::move(*buffer));
}

Result<Frame> CudaBackend::exportFrame(const Frame &frame, ResourceKind kind)
{
	if (!holds(frame))
		return notThisBackendsFrame(kName, "exportFrame");
	// cuMemAlloc memory has no fd; an exportable allocation needs cuMemCreate with
	// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR and a reserved, mapped address range.
	return Error::format(
		ErrorCode::NotSupported, "kind",
		"%s: cannot export a frame as %s: exporting needs cuMemCreate allocations with "
		"POSIX fd handles, which this backend does not make yet.",
		kName, resourceKindName(kind));
}

Result<Frame> CudaBackend::importFrame(const Frame &frame, ImportRoute route)
{
	switch (route) {
	case ImportRoute::Direct: return importDirect(frame);
	case ImportRoute::OpaqueFd: return importOpaqueFd(frame);
	case ImportRoute::HostPointer:
		if (!state_->canMapHostMemory)
			return routeNotSupported(kName, route,
						 "this device cannot map host memory "
						 "(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY is 0).");
		return importHostPointer(frame);
	case ImportRoute::DmaBuf: return importDmaBuf(frame); // cuda_backend_egl.cpp
	case ImportRoute::GpuCopy:
	case ImportRoute::CpuCopy: break;
	}
	return routeNotSupported(
		kName, route,
		"importFrame takes zero-copy routes only (direct, opaque-fd, host-pointer); "
		"copies are the planner's.");
}

// CUDA memory already on this context: ours as it is, the host's (NVDEC output, say) borrowed
// under an anchor that keeps the source frame alive.
Result<Frame> CudaBackend::importDirect(const Frame &frame)
{
	std::array<Resource, 4> resources{};
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const Resource &resource = frame.resource(i);
		if (allocationOf(resource)) {
			resources[i] = resource;
			continue;
		}
		uint64_t pointer = 0;
		uint64_t size = 0;
		void *context = nullptr;
		std::optional<Uuid> uuid;
		if (const CudaBuffer *buffer = resource.get<CudaBuffer>()) {
			pointer = buffer->desc().pointer;
			size = buffer->desc().size;
			context = buffer->desc().context;
			uuid = buffer->desc().deviceUuid;
		} else if (const CudaPitched2D *pitched = resource.get<CudaPitched2D>()) {
			pointer = pitched->desc().pointer;
			size = pitched->desc().size;
			context = pitched->desc().context;
			uuid = pitched->desc().deviceUuid;
		} else {
			std::string why = "resource " + std::to_string(i) + " of the frame is a " +
					  resourceKindName(resource.kind()) + ", not CUDA memory.";
			return routeNotSupported(kName, ImportRoute::Direct, why.c_str());
		}
		if (uuid && state_->uuid && *uuid != *state_->uuid)
			return Error::format(
				ErrorCode::DeviceMismatch, "deviceUuid",
				"%s: resource %u of the frame is CUDA memory of device %s, but this "
				"backend's device is %s.",
				kName, i, formatUuid(*uuid).c_str(),
				uuidText(state_->uuid).c_str());
		// A pointer of another context is not valid in ours, even on the same device; a
		// null context is the producer's current one, taken as ours when the device agrees.
		if (context && context != static_cast<void *>(state_->context)) {
			std::string why =
				"resource " + std::to_string(i) +
				" of the frame belongs to another CUDA context than the backend's.";
			return routeNotSupported(kName, ImportRoute::Direct, why.c_str());
		}
		auto allocation = std::make_shared<CudaAllocation>();
		allocation->device = state_;
		allocation->origin = CudaAllocation::Origin::Borrowed;
		allocation->pointer = static_cast<CUdeviceptr>(pointer);
		allocation->size = size;
		allocation->source = frame;
		Result<Resource> buffer = bufferResource(allocation);
		if (!buffer.ok())
			return buffer.error();
		resources[i] = std::move(*buffer);
	}
	return frameLike(frame, std::span<const Resource>(resources.data(), frame.numResources()));
}

// Vulkan memory exported as an OPAQUE_FD: imported as external memory and mapped as one buffer.
// Buffers and linear images import (their planes are rows at the frame's strides); optimally
// tiled images would need a CUDA mipmapped array.
Result<Frame> CudaBackend::importOpaqueFd(const Frame &frame)
{
	const Driver &d = driver();
	for (uint32_t p = 0; p < frame.numPlanes(); ++p)
		if (frame.plane(p).stride == 0)
			return routeNotSupported(
				kName, ImportRoute::OpaqueFd,
				"the frame has an optimally tiled plane (no stride); only "
				"Vulkan buffers and linear images import as CUDA buffers.");
	std::array<Resource, 4> resources{};
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const VulkanMemoryFd *memory = frame.resource(i).get<VulkanMemoryFd>();
		if (!memory) {
			std::string why = "resource " + std::to_string(i) + " of the frame is a " +
					  resourceKindName(frame.resource(i).kind()) +
					  ", not a VulkanMemoryFd.";
			return routeNotSupported(kName, ImportRoute::OpaqueFd, why.c_str());
		}
		const VulkanMemoryFdDesc &desc = memory->desc();
		if (desc.deviceUuid && state_->uuid && *desc.deviceUuid != *state_->uuid)
			return Error::format(
				ErrorCode::DeviceMismatch, "deviceUuid",
				"%s: the Vulkan memory of resource %u was exported by device %s, but "
				"this CUDA device is %s; an opaque fd imports only on the same GPU.",
				kName, i, formatUuid(*desc.deviceUuid).c_str(),
				uuidText(state_->uuid).c_str());
		// CUDA owns the fd once the import succeeds, so it gets a duplicate.
		UniqueFd fd = desc.fd.dup();
		if (!fd.isValid()) {
			int saved = errno;
			return Error::format(
				ErrorCode::BadFd, "fd",
				"%s: the fd %d of resource %u could not be duplicated: %s.", kName,
				desc.fd.get(), i, std::strerror(saved));
		}
		auto allocation = std::make_shared<CudaAllocation>();
		allocation->device = state_;
		allocation->origin = CudaAllocation::Origin::External;
		allocation->size = desc.exportDesc.allocationSize;
		allocation->source = frame;
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		CUDA_EXTERNAL_MEMORY_HANDLE_DESC handle{};
		handle.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
		handle.handle.fd = fd.get();
		handle.size = desc.exportDesc.allocationSize;
		handle.flags = desc.exportDesc.dedicated ? kExternalMemoryDedicated : 0;
		if (CUresult r = d.importExternalMemory(&allocation->external, &handle);
		    r != CUDA_SUCCESS)
			return error(d, "fd", "cuImportExternalMemory", r);
		(void)fd.release(); // the driver closes it with the external memory
		CUDA_EXTERNAL_MEMORY_BUFFER_DESC buffer{};
		buffer.offset = 0;
		buffer.size = desc.exportDesc.allocationSize;
		if (CUresult r = d.externalMemoryGetMappedBuffer(&allocation->pointer,
								 allocation->external, &buffer);
		    r != CUDA_SUCCESS)
			return error(d, "fd", "cuExternalMemoryGetMappedBuffer", r);
		Result<Resource> resource = bufferResource(allocation);
		if (!resource.ok())
			return resource.error();
		resources[i] = std::move(*resource);
	}
	return frameLike(frame, std::span<const Resource>(resources.data(), frame.numResources()));
}

// CPU memory registered with the driver and used in place (no copy): every part (a CpuBytes
// range, each plane of a CpuPlanes) must start on a page; the registration covers whole pages.
Result<Frame> CudaBackend::importHostPointer(const Frame &frame)
{
	const Driver &d = driver();
	const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
	struct Part {
		void *data = nullptr;
		uint64_t size = 0;
	};
	std::array<Part, 4> parts{};
	PartMap map;
	for (uint32_t i = 0; i < frame.numResources(); ++i) {
		const Resource &resource = frame.resource(i);
		std::array<Part, 4> found{};
		uint32_t count = 0;
		if (const CpuBytes *bytes = resource.get<CpuBytes>()) {
			found[count++] = Part{ bytes->desc().data, bytes->desc().size };
		} else if (const CpuPlanes *planes = resource.get<CpuPlanes>()) {
			for (uint32_t j = 0; j < planes->desc().numPlanes; ++j) {
				const CpuPlane &plane = planes->desc().planes[j];
				found[count++] =
					Part{ plane.data, uint64_t(plane.stride) * plane.rows };
			}
		} else {
			std::string why = "resource " + std::to_string(i) + " of the frame is a " +
					  resourceKindName(resource.kind()) + ", not CPU memory.";
			return routeNotSupported(kName, ImportRoute::HostPointer, why.c_str());
		}
		for (uint32_t j = 0; j < count; ++j) {
			if (map.count == parts.size())
				return routeNotSupported(
					kName, ImportRoute::HostPointer,
					"the frame's CPU memory has more than 4 parts; a "
					"frame holds at most 4 CUDA buffers.");
			if (reinterpret_cast<uintptr_t>(found[j].data) % page) {
				char why[200];
				std::snprintf(
					why, sizeof(why),
					"part %u of resource %u (at %p) is not aligned to the %" PRIu64
					"-byte page cuMemHostRegister needs.",
					j, i, found[j].data, page);
				return routeNotSupported(kName, ImportRoute::HostPointer, why);
			}
			map.index[i][j] = map.count;
			parts[map.count++] = found[j];
		}
	}
	std::array<Resource, 4> resources{};
	for (uint32_t k = 0; k < map.count; ++k) {
		auto allocation = std::make_shared<CudaAllocation>();
		allocation->device = state_;
		allocation->origin = CudaAllocation::Origin::HostRegistered;
		allocation->size = parts[k].size;
		allocation->source = frame;
		ContextScope scope(d, state_->context);
		if (scope.result() != CUDA_SUCCESS)
			return error(d, "context", "cuCtxPushCurrent", scope.result());
		if (CUresult r = d.memHostRegister(parts[k].data, roundUp(parts[k].size, page),
						   kMemHostRegisterDeviceMap);
		    r != CUDA_SUCCESS) {
			if (static_cast<int>(r) == kErrorHostMemoryAlreadyRegistered)
				return Error::format(
					ErrorCode::NotSupported, "route",
					"%s: the CPU memory at %p is already registered with CUDA "
					"(imported twice at once?).",
					kName, parts[k].data);
			return error(d, "route", "cuMemHostRegister", r);
		}
		allocation->host = parts[k].data; // registered: the destructor unregisters it
		if (CUresult r = d.memHostGetDevicePointer(&allocation->pointer, parts[k].data, 0);
		    r != CUDA_SUCCESS)
			return error(d, "route", "cuMemHostGetDevicePointer", r);
		Result<Resource> resource = bufferResource(allocation);
		if (!resource.ok())
			return resource.error();
		resources[k] = std::move(*resource);
	}
	FrameDesc desc = frame.desc();
	desc.numResources = map.count;
	desc.resources = resources;
	for (uint32_t p = 0; p < desc.numPlanes; ++p) {
		PlaneView &plane = desc.planes[p];
		plane.resource = map.index[plane.resource][plane.subresource];
		plane.subresource = 0;
	}
	return Frame::create(std::move(desc));
}

} // namespace cuda

Result<BackendRef> openCudaBackend(const BackendOpenOptions &options)
{
	using namespace cuda;
	const Driver &d = driver();
	if (d.failure)
		return unavailable(d.failure->field(), d.failure->message());
	if (d.missingBackendCall)
		return unavailable("driver", std::string("The CUDA driver (") + kLibrary +
						     ") lacks " + d.missingBackendCall +
						     ": it is older than the backend needs.");
	auto state = std::make_shared<CudaDevice>();
	Status opened = options.context ? openHostContext(*state, options.context)
					: openOwnDevice(*state, options.deviceIndex);
	if (!opened.ok())
		return opened.error();
	DeviceInfo info;
	if (Status filled = fillDevice(*state, info); !filled.ok())
		return filled.error();
	attachEglInterop(*state);
	ContextRef context = options.context;
	if (!context) {
		CudaContext native;
		native.context = state->context;
		native.stream = state->stream;
		native.ordinal = static_cast<int32_t>(state->device);
		native.uuid = state->uuid;
		native.pciBusId = info.id.pciBusId;
		Result<ContextRef> made = Context::create(std::move(native), state);
		if (!made.ok())
			return made.error();
		context = std::move(*made);
	}
	BackendCapabilities caps = capabilitiesOf(*state);
	return BackendRef(std::make_shared<CudaBackend>(std::move(info), std::move(caps),
							std::move(context), std::move(state)));
}

} // namespace gpuhandle
