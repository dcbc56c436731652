// The OpenCL backend: opens a device (the host's or its own), allocates cl_mems, names routes.
#include <gpuhandle/backends/opencl_memory.h>
#include <gpuhandle/format_mappings.h>

#include "opencl/opencl_backend_internal.h"

#include <algorithm>
#include <cinttypes>
#include <sstream>

#include <CL/cl_ext.h>

namespace gpuhandle::opencl {

namespace {

constexpr const char *kName = "opencl";
// Strides of Buffer frames: a cache line, what the CPU devices' vector loads
// like.
constexpr uint32_t kPreferredAlign = 64;

std::string deviceString(cl_device_id device, cl_device_info param)
{
	size_t size = 0;
	if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS || size == 0)
		return {};
	std::string value(size, '\0');
	if (clGetDeviceInfo(device, param, size, value.data(), nullptr) != CL_SUCCESS)
		return {};
	value.resize(std::min(value.find('\0'), value.size()));
	return value;
}

template<typename T>
T deviceValue(cl_device_id device, cl_device_info param, T fallback = {})
{
	T value = fallback;
	if (clGetDeviceInfo(device, param, sizeof(value), &value, nullptr) != CL_SUCCESS)
		return fallback;
	return value;
}

bool hasExtension(const std::string &extensions, const char *name)
{
	std::istringstream words(extensions);
	std::string word;
	while (words >> word)
		if (word == name)
			return true;
	return false;
}

// The cl_context, queue and device of the host's context, retained;
// InvalidArgument when the queue is not of that context and device.
Status adoptHostContext(const Context &host, OpenClDevice &device)
{
	Result<const OpenClContext *> native = host.opencl();
	if (!native.ok())
		return Error::format(ErrorCode::InvalidArgument, "context",
				     "opencl: the backend was given a %s context; it needs "
				     "an OpenCL context.",
				     backendKindName(host.backend()));
	auto context = static_cast<cl_context>((*native)->context);
	// The host's queue, as every backend opened in a host's context takes it.
	Result<ExternalQueue> hostQueue = host.queue();
	if (!hostQueue.ok())
		return std::move(hostQueue).error();
	auto queue = static_cast<cl_command_queue>((*hostQueue->opencl())->queue);
	auto clDevice = static_cast<cl_device_id>((*native)->device);
	cl_context queueContext = nullptr;
	cl_device_id queueDevice = nullptr;
	cl_int error = clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof(queueContext),
					     &queueContext, nullptr);
	if (error == CL_SUCCESS)
		error = clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof(queueDevice),
					      &queueDevice, nullptr);
	if (error != CL_SUCCESS)
		return Error::format(ErrorCode::Backend, "context",
				     "opencl: the host's queue %p is not a "
				     "cl_command_queue (clGetCommandQueueInfo "
				     "returned %d).",
				     static_cast<void *>(queue), error);
	if (queueContext != context || queueDevice != clDevice)
		return Error::format(
			ErrorCode::InvalidArgument, "context",
			"opencl: the host's queue %p belongs to context %p and device %p, not "
			"to the "
			"context %p and device %p it was given with.",
			static_cast<void *>(queue), static_cast<void *>(queueContext),
			static_cast<void *>(queueDevice), static_cast<void *>(context),
			static_cast<void *>(clDevice));
	if ((error = clRetainContext(context)) != CL_SUCCESS)
		return Error::format(ErrorCode::Backend, "context",
				     "opencl: clRetainContext(%p) failed with %d.",
				     static_cast<void *>(context), error);
	device.context = context;
	if ((error = clRetainCommandQueue(queue)) != CL_SUCCESS)
		return Error::format(ErrorCode::Backend, "context",
				     "opencl: clRetainCommandQueue(%p) failed with %d.",
				     static_cast<void *>(queue), error);
	device.queue = queue;
	device.device = clDevice;
	return {};
}

// Device `index` counted over every platform's devices, with a new context and
// in-order queue.
Status openOwnDevice(uint32_t index, OpenClDevice &device)
{
	cl_uint numPlatforms = 0;
	cl_int error = clGetPlatformIDs(0, nullptr, &numPlatforms);
	if (error != CL_SUCCESS || numPlatforms == 0)
		return Error::format(ErrorCode::NotSupported, "device",
				     "opencl: no OpenCL platform is installed "
				     "(clGetPlatformIDs returned %d with %u "
				     "platforms); install an ICD such as pocl-opencl-icd.",
				     error, numPlatforms);
	std::vector<cl_platform_id> platforms(numPlatforms);
	clGetPlatformIDs(numPlatforms, platforms.data(), nullptr);
	std::vector<std::pair<cl_platform_id, cl_device_id>> devices;
	for (cl_platform_id platform : platforms) {
		cl_uint count = 0;
		if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) !=
			    CL_SUCCESS ||
		    !count)
			continue;
		std::vector<cl_device_id> ids(count);
		if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) !=
		    CL_SUCCESS)
			continue;
		for (cl_device_id id : ids)
			devices.emplace_back(platform, id);
	}
	if (index >= devices.size())
		return Error::format(ErrorCode::NotSupported, "deviceIndex",
				     "opencl: device %u was asked for, but the %u OpenCL "
				     "platforms have %zu devices.",
				     index, numPlatforms, devices.size());
	auto [platform, id] = devices[index];
	cl_context_properties properties[] = { CL_CONTEXT_PLATFORM,
					       reinterpret_cast<cl_context_properties>(platform),
					       0 };
	device.context = clCreateContext(properties, 1, &id, nullptr, nullptr, &error);
	if (!device.context)
		return Error::format(ErrorCode::NotSupported, "device",
				     "opencl: clCreateContext on device %u (%s) failed with %d.",
				     index, deviceString(id, CL_DEVICE_NAME).c_str(), error);
	device.device = id;
	device.queue = clCreateCommandQueue(device.context, id, 0, &error);
	if (!device.queue)
		return Error::format(
			ErrorCode::Backend, "device",
			"opencl: clCreateCommandQueue on device %u (%s) failed with %d.", index,
			deviceString(id, CL_DEVICE_NAME).c_str(), error);
	return {};
}

void readImageSupport(OpenClDevice &device)
{
	device.imageSupport = deviceValue<cl_bool>(device.device, CL_DEVICE_IMAGE_SUPPORT) ==
			      CL_TRUE;
	device.maxImageWidth = deviceValue<size_t>(device.device, CL_DEVICE_IMAGE2D_MAX_WIDTH);
	device.maxImageHeight = deviceValue<size_t>(device.device, CL_DEVICE_IMAGE2D_MAX_HEIGHT);
	device.maxAllocBytes = deviceValue<cl_ulong>(device.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
	if (!device.imageSupport)
		return;
	cl_uint count = 0;
	if (clGetSupportedImageFormats(device.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D, 0,
				       nullptr, &count) != CL_SUCCESS)
		return;
	device.imageFormats.resize(count);
	if (clGetSupportedImageFormats(device.context, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D,
				       count, device.imageFormats.data(), nullptr) != CL_SUCCESS)
		device.imageFormats.clear();
}

DeviceInfo readDeviceInfo(const OpenClDevice &device, const std::string &extensions,
			  const Context *host)
{
	DeviceInfo info;
	info.backend = BackendKind::OpenCl;
	info.name = device.name;
	info.driverVersion = deviceString(device.device, CL_DRIVER_VERSION);
	info.vendorId = deviceValue<cl_uint>(device.device, CL_DEVICE_VENDOR_ID);
	info.isIntegrated = deviceValue<cl_bool>(device.device, CL_DEVICE_HOST_UNIFIED_MEMORY) ==
			    CL_TRUE;
	// Global memory of a device sharing the host's is host memory, not dedicated
	// memory.
	if (!info.isIntegrated)
		info.dedicatedMemoryBytes =
			deviceValue<cl_ulong>(device.device, CL_DEVICE_GLOBAL_MEM_SIZE);
	cl_device_type type = deviceValue<cl_device_type>(device.device, CL_DEVICE_TYPE);
	// PoCL's "pthread-<cpu>" and "cpu-<cpu>" devices report CL_DEVICE_TYPE_CPU.
	info.isSoftware = (type & CL_DEVICE_TYPE_CPU) || isSoftwareRendererName(device.name);
	if (hasExtension(extensions, "cl_khr_device_uuid")) {
		Uuid uuid{};
		if (clGetDeviceInfo(device.device, CL_DEVICE_UUID_KHR, uuid.size(), uuid.data(),
				    nullptr) == CL_SUCCESS &&
		    uuid != Uuid{})
			info.id.uuid = uuid;
	}
	if (hasExtension(extensions, "cl_khr_pci_bus_info")) {
		cl_device_pci_bus_info_khr pci{};
		if (clGetDeviceInfo(device.device, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(pci), &pci,
				    nullptr) == CL_SUCCESS) {
			auto id = PciBusId::create(pci.pci_domain, pci.pci_bus, pci.pci_device,
						   pci.pci_function);
			if (id.ok())
				info.id.pciBusId = *id;
		}
	}
	// What the host told of its device fills what the driver did not say.
	if (host) {
		DeviceId told = host->deviceId();
		if (!info.id.uuid)
			info.id.uuid = told.uuid;
		if (!info.id.pciBusId)
			info.id.pciBusId = told.pciBusId;
	}
	return info;
}

BackendCapabilities readCapabilities(const OpenClDevice &device, const std::string &extensions)
{
	BackendCapabilities caps;
	caps.allocates = { ResourceKind::OpenClMem };
	// OpenCL has no memory export; external memory extensions import only.
	caps.imports = { ResourceKind::OpenClMem, ResourceKind::CpuBytes, ResourceKind::CpuPlanes };
	caps.routes = { ImportRoute::Direct, ImportRoute::HostPointer };
	caps.storages = { FrameStorage::Buffer };
	// OpenCL images are opaque (their layout is the driver's; the CPU sees them
	// only through a mapping, at a pitch chosen per map): optimal images.
	if (device.imageSupport && !device.imageFormats.empty())
		caps.storages.push_back(FrameStorage::OptimalImage);
	// No fenceExports: a cl_event does not become a fence fd here.
	if (hasExtension(extensions, "cl_khr_external_semaphore_sync_fd"))
		caps.fenceImports = { SyncKind::FenceFd };
	caps.cpuMap = true;
	caps.gpuCopy = true;
	return caps;
}

} // namespace

std::string openClDeviceName(cl_device_id device)
{
	return deviceString(device, CL_DEVICE_NAME);
}

bool OpenClDevice::takesImageFormat(uint32_t order, uint32_t type) const noexcept
{
	return std::any_of(imageFormats.begin(), imageFormats.end(), [&](const cl_image_format &f) {
		return f.image_channel_order == order && f.image_channel_data_type == type;
	});
}

Result<Resource> openClResource(std::shared_ptr<OpenClAllocation> backing, uint64_t size)
{
	void *mem = backing->mem;
	void *queue = backing->device->queue;
	auto made = OpenClMem::create({ mem, queue, size, std::move(backing) });
	if (!made.ok())
		return std::move(made).error();
	return Resource(std::move(made).value());
}

} // namespace gpuhandle::opencl

namespace gpuhandle {

Result<BackendRef> openOpenClBackend(const BackendOpenOptions &options)
{
	using namespace opencl;
	auto device = std::make_shared<OpenClDevice>();
	Status opened = options.context ? adoptHostContext(*options.context, *device)
					: openOwnDevice(options.deviceIndex, *device);
	if (!opened.ok())
		return std::move(opened).error(); // the device releases what was retained
	device->name = deviceString(device->device, CL_DEVICE_NAME);
	readImageSupport(*device);
	std::string extensions = deviceString(device->device, CL_DEVICE_EXTENSIONS);
	DeviceInfo info = readDeviceInfo(*device, extensions, options.context.get());
	BackendCapabilities caps = readCapabilities(*device, extensions);

	ContextRef context = options.context;
	if (!context) {
		OpenClContext native;
		native.context = device->context;
		native.queue = device->queue;
		native.device = device->device;
		native.deviceUuid = info.id.uuid;
		native.pciBusId = info.id.pciBusId;
		auto made = Context::create(std::move(native), device);
		if (!made.ok())
			return std::move(made).error();
		context = std::move(*made);
	}
	return BackendRef(std::make_shared<OpenClBackend>(std::move(info), std::move(caps),
							  std::move(context), std::move(device)));
}

} // namespace gpuhandle

namespace gpuhandle::opencl {

const OpenClAllocation *OpenClBackend::backingOf(const Resource &resource) const noexcept
{
	const OpenClMem *mem = resource.get<OpenClMem>();
	if (!mem)
		return nullptr;
	auto *backing = dynamic_cast<const OpenClAllocation *>(mem->desc().anchor.get());
	return backing && backing->device == device_ ? backing : nullptr;
}

std::optional<OpenClMapTarget> OpenClBackend::mapTargetOf(const Resource &resource) const
{
	if (const OpenClAllocation *own = backingOf(resource))
		return OpenClMapTarget{ own->mem, own->image, own->width, own->height };
	const OpenClMem *mem = resource.get<OpenClMem>();
	if (!mem || !mem->desc().mem)
		return std::nullopt;
	OpenClMapTarget target;
	target.mem = static_cast<cl_mem>(mem->desc().mem);
	cl_context context = nullptr;
	cl_mem_object_type type = 0;
	if (clGetMemObjectInfo(target.mem, CL_MEM_CONTEXT, sizeof(context), &context, nullptr) !=
		    CL_SUCCESS ||
	    context != device_->context ||
	    clGetMemObjectInfo(target.mem, CL_MEM_TYPE, sizeof(type), &type, nullptr) != CL_SUCCESS)
		return std::nullopt;
	if (type == CL_MEM_OBJECT_BUFFER)
		return target;
	if (type != CL_MEM_OBJECT_IMAGE2D ||
	    clGetImageInfo(target.mem, CL_IMAGE_WIDTH, sizeof(target.width), &target.width,
			   nullptr) != CL_SUCCESS ||
	    clGetImageInfo(target.mem, CL_IMAGE_HEIGHT, sizeof(target.height), &target.height,
			   nullptr) != CL_SUCCESS)
		return std::nullopt;
	target.image = true;
	return target;
}

bool OpenClBackend::holds(const Frame &frame) const
{
	for (uint32_t i = 0; i < frame.numResources(); ++i)
		if (!backingOf(frame.resource(i)))
			return false;
	return frame.numResources() > 0;
}

bool OpenClBackend::supportsFormat(PixelFormat format, FrameStorage storage) const
{
	if (!pixelFormatInfo(format).ok())
		return false;
	if (storage == FrameStorage::Buffer)
		return true;
	if (storage != FrameStorage::OptimalImage || !device_->imageSupport)
		return false;
	Result<PlaneMappings> planes = planeApiFormats(PlaneApi::OpenClImage, format);
	if (!planes.ok())
		return false;
	for (uint32_t i = 0; i < planes->count; ++i)
		if (!device_->takesImageFormat(planes->planes[i].value, planes->planes[i].extra))
			return false;
	return true;
}

namespace {

Error allocationFailed(const char *call, uint64_t bytes, cl_int error)
{
	bool memory = error == CL_MEM_OBJECT_ALLOCATION_FAILURE || error == CL_OUT_OF_RESOURCES ||
		      error == CL_OUT_OF_HOST_MEMORY || error == CL_INVALID_BUFFER_SIZE;
	return Error::format(memory ? ErrorCode::OutOfMemory : ErrorCode::Backend, "request",
			     "opencl: %s of %" PRIu64 " bytes failed with %d.", call, bytes, error);
}

} // namespace

Result<Frame> OpenClBackend::allocate(const AllocateRequest &request)
{
	Result<FrameLayout> layout = layoutForRequest(request, kPreferredAlign, kName);
	if (!layout.ok())
		return std::move(layout).error();
	device_->reclaim(); // memory of timed-out commands that have run since
	if (request.storage == FrameStorage::OptimalImage)
		return allocateImages(request);
	if (request.storage != FrameStorage::Buffer)
		return Error::format(
			ErrorCode::NotSupported, "storage",
			"opencl: OpenCL images are opaque (no memory layout or row pitch the "
			"CPU or another API could use; a mapping picks its own pitch), so %s "
			"storage is not made; allocate buffer or optimal-image storage.",
			frameStorageName(request.storage));
	if (layout->size > device_->maxAllocBytes)
		return Error::format(ErrorCode::OutOfMemory, "request",
				     "opencl: a %ux%u %s frame needs %" PRIu64
				     " bytes, more than the %" PRIu64
				     " bytes one allocation of %s may have.",
				     request.width, request.height, pixelFormatName(request.format),
				     layout->size, device_->maxAllocBytes, device_->name.c_str());
	Result<BudgetReservation> charged = charge(request);
	if (!charged.ok())
		return std::move(charged).error();
	cl_int error = CL_SUCCESS;
	cl_mem mem =
		clCreateBuffer(device_->context, CL_MEM_READ_WRITE, layout->size, nullptr, &error);
	if (!mem)
		return allocationFailed("clCreateBuffer", layout->size, error);
	auto backing = std::make_shared<OpenClAllocation>();
	backing->device = device_;
	backing->mem = mem;
	backing->ownsMem = true;
	backing->charge = std::move(*charged);
	Result<Resource> resource = openClResource(std::move(backing), layout->size);
	if (!resource.ok())
		return std::move(resource).error();
	return frameOverBuffer(request, *layout, std::move(*resource));
}

Result<Frame> OpenClBackend::allocateImages(const AllocateRequest &request)
{
	const PixelFormatInfo *info = *pixelFormatInfo(request.format);
	Result<PlaneMappings> planes = planeApiFormats(PlaneApi::OpenClImage, request.format);
	if (!device_->imageSupport || !planes.ok() ||
	    !supportsFormat(request.format, request.storage))
		return Error::format(
			ErrorCode::NotSupported, "format",
			"opencl: %s has no optimal-image storage on %s: %s.",
			pixelFormatName(request.format), device_->name.c_str(),
			!device_->imageSupport ? "the device has no image support"
			: !planes.ok()         ? "OpenCL has no image format for one of its planes"
				       : "the device takes no image format of one of its planes");
	// The frame's charge, held by its first image.
	Result<BudgetReservation> charged = charge(request);
	if (!charged.ok())
		return std::move(charged).error();
	FrameDesc desc;
	desc.format = request.format;
	desc.width = request.width;
	desc.height = request.height;
	desc.colorimetry = request.colorimetry;
	desc.numResources = desc.numPlanes = planes->count;
	for (uint32_t i = 0; i < planes->count; ++i) {
		size_t width = info->planes[i].rowTexels(request.width);
		size_t height = info->planes[i].rows(request.height);
		if (width > device_->maxImageWidth || height > device_->maxImageHeight)
			return Error::format(ErrorCode::NotSupported, "request",
					     "opencl: plane %u of a %ux%u %s frame is a %zux%zu "
					     "image, larger than "
					     "the %zux%zu images %s makes.",
					     i, request.width, request.height,
					     pixelFormatName(request.format), width, height,
					     device_->maxImageWidth, device_->maxImageHeight,
					     device_->name.c_str());
		cl_image_format format = { planes->planes[i].value, planes->planes[i].extra };
		cl_image_desc image{};
		image.image_type = CL_MEM_OBJECT_IMAGE2D;
		image.image_width = width;
		image.image_height = height;
		cl_int error = CL_SUCCESS;
		cl_mem mem = clCreateImage(device_->context, CL_MEM_READ_WRITE, &format, &image,
					   nullptr, &error);
		if (!mem)
			return allocationFailed("clCreateImage",
						uint64_t(width) * height *
							bytesPerTexel(info->planes[i].format),
						error);
		auto backing = std::make_shared<OpenClAllocation>();
		backing->device = device_;
		backing->mem = mem;
		backing->ownsMem = true;
		backing->image = true;
		if (i == 0)
			backing->charge = std::move(*charged);
		backing->width = width;
		backing->height = height;
		Result<Resource> resource = openClResource(std::move(backing), 0);
		if (!resource.ok())
			return std::move(resource).error();
		desc.resources[i] = std::move(*resource);
		// No stride: an optimal image's rows have no pitch outside a mapping.
		desc.planes[i] = PlaneView{ i, 0, 0, 0 };
	}
	return Frame::create(std::move(desc));
}

Result<Frame> OpenClBackend::exportFrame(const Frame &frame, ResourceKind kind)
{
	if (!holds(frame))
		return notThisBackendsFrame(kName, "exportFrame");
	return Error::format(
		ErrorCode::NotSupported, "kind",
		"opencl: %s cannot export a cl_mem as %s: OpenCL has no memory export "
		"(cl_khr_external_memory, _dma_buf and _opaque_fd only import), so its "
		"frames "
		"leave it through a copy or a CPU mapping.",
		device_->name.c_str(), resourceKindName(kind));
}

Result<Frame> OpenClBackend::importFrame(const Frame &frame, ImportRoute route)
{
	switch (route) {
	case ImportRoute::Direct: return importDirect(frame);
	case ImportRoute::HostPointer: return importHostPointer(frame);
	case ImportRoute::DmaBuf:
		return routeNotSupported(
			kName, route,
			"importing DMA-BUFs needs cl_khr_external_memory_dma_buf, which "
			"gpuhandle "
			"does not use yet (no driver it is tested on offers it).");
	case ImportRoute::OpaqueFd:
		return routeNotSupported(
			kName, route,
			"importing opaque fds needs cl_khr_external_memory_opaque_fd, which "
			"gpuhandle does not use yet (no driver it is tested on offers it).");
	default: break;
	}
	return routeNotSupported(kName, route,
				 "importFrame() takes Direct or HostPointer; copies "
				 "are the planner's to make.");
}

} // namespace gpuhandle::opencl
