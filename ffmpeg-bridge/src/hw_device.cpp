// AVHWDeviceContext <-> Context: dispatch by type, the per-device backend cache and submit lock.
#include "hw_device_internal.h"
#include "hw_frames.h"

#include <chrono>
#include <map>
#include <thread>

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

namespace gpuhandle::ffmpeg {

namespace detail {

namespace {

// Registries keyed by the AVHWDeviceContext's address. An entry of a freed device may be found
// again only by a new device at the same address: the lock is then merely shared (harmless),
// and a backend entry has expired (the backend's Context holds its device, so a live backend's
// device cannot have been freed).
std::mutex registryMutex;

std::map<const void *, std::shared_ptr<std::recursive_mutex>> &locks()
{
	static auto *map = new std::map<const void *, std::shared_ptr<std::recursive_mutex>>();
	return *map;
}

std::map<const void *, std::weak_ptr<Backend>> &backends()
{
	static auto *map = new std::map<const void *, std::weak_ptr<Backend>>();
	return *map;
}

class AvBufferHold final : public KeepAlive
{
public:
	explicit AvBufferHold(AVBufferRef *ref) : ref_(ref) {}
	AvBufferHold(const AvBufferHold &) = delete;
	AvBufferHold &operator=(const AvBufferHold &) = delete;
	~AvBufferHold() override { av_buffer_unref(&ref_); }

private:
	AVBufferRef *ref_;
};

// The free callback of devices made by allocHwDeviceHolding(): drops the Context copy.
void freeHeldContext(AVHWDeviceContext *device)
{
	delete static_cast<ContextRef *>(device->user_opaque);
	device->user_opaque = nullptr;
}

const char *typeName(AVHWDeviceType type)
{
	const char *name = av_hwdevice_get_type_name(type);
	return name ? name : "none";
}

} // namespace

std::shared_ptr<std::recursive_mutex> deviceSubmitLock(const AVHWDeviceContext *device)
{
	std::lock_guard<std::mutex> guard(registryMutex);
	std::shared_ptr<std::recursive_mutex> &lock = locks()[device];
	if (!lock)
		lock = std::make_shared<std::recursive_mutex>();
	return lock;
}

bool lockWithin(std::recursive_mutex &mutex, WaitDuration timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;
	while (!mutex.try_lock()) {
		if (std::chrono::steady_clock::now() >= deadline)
			return false;
		std::this_thread::sleep_for(std::chrono::microseconds(200));
	}
	return true;
}

KeepAliveRef holdAvBuffer(const AVBufferRef *buffer)
{
	if (!buffer)
		return {};
	AVBufferRef *ref = av_buffer_ref(buffer);
	if (!ref)
		return {};
	return std::make_shared<AvBufferHold>(ref);
}

AVBufferRef *allocHwDeviceHolding(AVHWDeviceType type, const ContextRef &context)
{
	AVBufferRef *ref = av_hwdevice_ctx_alloc(type);
	if (!ref)
		return nullptr;
	auto *device = reinterpret_cast<AVHWDeviceContext *>(ref->data);
	device->user_opaque = new ContextRef(context);
	device->free = freeHeldContext;
	return ref;
}

Status initHwDevice(AVBufferRef *&device, const char *what)
{
	const int ret = av_hwdevice_ctx_init(device);
	if (ret >= 0)
		return {};
	av_buffer_unref(&device);
	return Error::format(ErrorCode::Backend, "context",
			     "FFmpeg could not use the %s as a device (av_hwdevice_ctx_init: %s).",
			     what, avErrorText(ret).c_str());
}

} // namespace detail

Result<AVBufferRef *> hwDeviceFromContext(const ContextRef &context)
{
	if (!context)
		return Error(ErrorCode::NullHandle, "context", "No Context was given.");
	switch (context->backend()) {
	case BackendKind::Vulkan: return detail::vulkanDeviceFromContext(context);
	case BackendKind::Cuda: return detail::cudaDeviceFromContext(context);
	case BackendKind::OpenCl: return detail::openClDeviceFromContext(context);
	case BackendKind::VaApi: return detail::vaapiDeviceFromContext(context);
	default:
		return Error::format(ErrorCode::NotSupported, "context",
				     "FFmpeg has no device type for a %s context (Vulkan, CUDA, "
				     "OpenCL and VA-API contexts have one).",
				     backendKindName(context->backend()));
	}
}

Result<ContextRef> contextFromHwDevice(const AVBufferRef *device)
{
	if (!device || !device->data)
		return Error(ErrorCode::NullHandle, "device", "No AVHWDeviceContext was given.");
	const auto *ctx = reinterpret_cast<const AVHWDeviceContext *>(device->data);
	switch (ctx->type) {
	case AV_HWDEVICE_TYPE_VULKAN: return detail::contextFromVulkanDevice(device);
	case AV_HWDEVICE_TYPE_CUDA: return detail::contextFromCudaDevice(device);
	case AV_HWDEVICE_TYPE_OPENCL: return detail::contextFromOpenClDevice(device);
	case AV_HWDEVICE_TYPE_VAAPI: return detail::contextFromVaapiDevice(device);
	default:
		return Error::format(ErrorCode::NotSupported, "device",
				     "gpuhandle has no Context for an FFmpeg %s device (vulkan, "
				     "cuda, opencl and vaapi devices have one).",
				     detail::typeName(ctx->type));
	}
}

Result<BackendRef> backendForHwDevice(const AVBufferRef *device)
{
	if (!device || !device->data)
		return Error(ErrorCode::NullHandle, "device", "No AVHWDeviceContext was given.");
	const void *key = device->data;
	{
		std::lock_guard<std::mutex> guard(detail::registryMutex);
		auto found = detail::backends().find(key);
		if (found != detail::backends().end())
			if (BackendRef backend = found->second.lock())
				return backend;
	}
	Result<ContextRef> context = contextFromHwDevice(device);
	if (!context)
		return std::move(context).error();
	BackendOpenOptions open;
	open.context = *context;
	Result<BackendRef> backend = openBackend((*context)->backend(), open);
	if (!backend)
		return backend;
	std::lock_guard<std::mutex> guard(detail::registryMutex);
	// Another thread may have opened one meanwhile: keep the first, so that all share it.
	std::weak_ptr<Backend> &entry = detail::backends()[key];
	if (BackendRef first = entry.lock())
		return first;
	entry = *backend;
	return backend;
}

Status requestVulkanPlaneImages(AVBufferRef *hwFrames)
{
	if (!hwFrames || !hwFrames->data)
		return Error(ErrorCode::NullHandle, "hwFrames", "No AVHWFramesContext was given.");
	auto *frames = reinterpret_cast<AVHWFramesContext *>(hwFrames->data);
	if (frames->format != AV_PIX_FMT_VULKAN)
		return Error::format(ErrorCode::InvalidArgument, "hwFrames",
				     "The frames context holds %s frames, not vulkan ones.",
				     av_get_pix_fmt_name(frames->format)
					     ? av_get_pix_fmt_name(frames->format)
					     : "unknown");
	return detail::requestVulkanPlaneImages(*frames);
}

HwDeviceLock::HwDeviceLock(const AVBufferRef *device)
{
	if (!device || !device->data)
		return;
	const auto *ctx = reinterpret_cast<const AVHWDeviceContext *>(device->data);
	if (ctx->type != AV_HWDEVICE_TYPE_VULKAN)
		return;
	std::shared_ptr<std::recursive_mutex> lock = detail::deviceSubmitLock(ctx);
	// Bounded: a lock held elsewhere for longer than kDefaultWaitTimeout is not taken.
	if (!detail::lockWithin(*lock, kDefaultWaitTimeout))
		return;
	// The registry keeps the mutex for the life of the process: a raw pointer suffices.
	lock_ = lock.get();
}

HwDeviceLock::~HwDeviceLock()
{
	if (lock_)
		static_cast<std::recursive_mutex *>(lock_)->unlock();
}

} // namespace gpuhandle::ffmpeg
