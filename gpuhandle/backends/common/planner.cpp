// The path planner: Direct, opaque fd, DMA-BUF, host pointer, GPU copy, CPU copy, in that order.
#include <gpuhandle/backends/planner.h>

#include "common/backend_internal.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuhandle {

namespace {

template<typename T>
bool contains(const std::vector<T> &values, T value)
{
	return std::find(values.begin(), values.end(), value) != values.end();
}

bool allOfKind(const Frame &frame, ResourceKind kind)
{
	for (uint32_t i = 0; i < frame.numResources(); ++i)
		if (frame.resource(i).kind() != kind)
			return false;
	return true;
}

// GPUHANDLE_DEBUG=planner (or "all", "*"): one line per route attempt on stderr.
bool plannerLogging()
{
	static const bool enabled = [] {
		const char *value = std::getenv("GPUHANDLE_DEBUG");
		return value && (std::strstr(value, "planner") || std::strstr(value, "all") ||
				 std::strchr(value, '*'));
	}();
	return enabled;
}

[[gnu::format(printf, 1, 2)]] void plannerLog(const char *fmt, ...)
{
	if (!plannerLogging())
		return;
	char line[1024];
	va_list args;
	va_start(args, fmt);
	std::vsnprintf(line, sizeof line, fmt, args);
	va_end(args);
	std::fprintf(stderr, "gpuhandle planner: %s\n", line);
}

// The handle kinds a backend exports, for messages ("none" when it exports none).
std::string exportedKinds(const Backend &backend)
{
	std::string out;
	for (ResourceKind kind : backend.capabilities().exports)
		out += std::string(out.empty() ? "" : ", ") + resourceKindName(kind);
	return out.empty() ? "none" : out;
}

// Why a copy was needed; static strings, as ExecutionPath keeps the pointer.
const char *copyReason(const Backend &target, const BackendRef &source)
{
	if (target.deviceId().isCpu)
		return "the frame's memory is not host memory the CPU can use in place";
	if (!source || source->deviceId().isCpu)
		return "the target cannot use host memory in place";
	if (sameDevice(source->deviceId(), target.deviceId()) == DeviceMatch::Different)
		return "the frame is on another device than the target";
	return "no handle type both backends share";
}

class Planner
{
public:
	Planner(const Frame &frame, Backend &target, const ImportOptions &options)
		: frame_(frame), target_(target), options_(options),
		  deadline_(Deadline::after(options.timeout))
	{
	}

	Result<ImportResult> run();

private:
	Result<ImportResult> finish(Frame out, ImportRoute route, ExecutionPath path,
				    bool waitedOnCpu);
	void refuse(ImportRoute route, Error why)
	{
		plannerLog("%s into %s: %s refused: %s", pixelFormatName(frame_.format()),
			   target_.deviceInfo().name.c_str(), importRouteName(route),
			   why.message().c_str());
		if (!stop_ && endsThePlan(why))
			stop_ = why;
		tried_.push_back({ route, std::move(why) });
	}
	std::optional<Frame> tryFdRoute(ImportRoute route, ResourceKind kind);
	std::optional<Frame> tryHostPointer();
	std::optional<Frame> tryGpuCopy();
	Result<Frame> cpuCopy();
	// Copies read the frame: its producer must be done first. Waited at most once per import,
	// within the import's one deadline; a failed wait is remembered, not repeated.
	Status waitAcquire() { return waitOnce(frame_.acquire()); }
	Status waitOnce(const SyncPoint &point)
	{
		if (waited_ || point.isNoop())
			return {};
		if (waitError_)
			return *waitError_;
		auto start = std::chrono::steady_clock::now();
		Status status = point.wait(deadline_.remaining());
		fenceWait_ += std::chrono::steady_clock::now() - start;
		waited_ = status.ok();
		if (!status.ok())
			waitError_ = status.error();
		return status;
	}
	Error noRoute() const;
	// options.copyStorage where the target makes it for this format, else the first storage it
	// does (VA-API has surfaces only, host memory buffers only).
	FrameStorage copyStorage() const
	{
		if (target_.supportsFormat(frame_.format(), options_.copyStorage))
			return options_.copyStorage;
		for (FrameStorage storage : target_.capabilities().storages)
			if (target_.supportsFormat(frame_.format(), storage))
				return storage;
		return options_.copyStorage;
	}
	// The acquire point for the target when its queue cannot wait on the point's own kind: the
	// source exports it as a fence fd (only where it says it can: exports may consume a binary
	// semaphore's signal), which the target imports, or which is carried as is where the
	// target waits on fence fds. `exported` gets the fd point even when the target refuses it,
	// because the original point may no longer be waitable after the export.
	std::optional<SyncPoint> fenceForTarget(const SyncPoint &point,
						std::optional<SyncPoint> &exported) const
	{
		const BackendRef &source = options_.source;
		if (!source || !contains(source->capabilities().fenceExports, point.kind()))
			return std::nullopt;
		Result<SyncPoint> fd = source->exportFence(point);
		if (!fd.ok()) {
			plannerLog("fence: %s", fd.error().message().c_str());
			return std::nullopt;
		}
		exported = *fd;
		if (contains(target_.capabilities().fenceImports, SyncKind::FenceFd))
			return std::move(*fd);
		Result<SyncPoint> imported = target_.importFence(*fd);
		if (!imported.ok()) {
			plannerLog("fence: %s", imported.error().message().c_str());
			return std::nullopt;
		}
		return std::move(*imported);
	}
	// Whether the target's own queue can wait on a point of `kind`: fence fds it imports, or
	// its own API's primitives when the frame comes from the same device object (a semaphore of
	// one VkDevice means nothing to another without an export, which the planner does not do).
	bool targetWaitsOnDevice(SyncKind kind) const
	{
		if (!contains(target_.capabilities().fenceImports, kind))
			return false;
		if (kind == SyncKind::FenceFd)
			return true;
		const BackendRef &source = options_.source;
		return backendOf(kind) == target_.kind() &&
		       (target_.holds(frame_) ||
			(source &&
			 (source.get() == &target_ || source->context() == target_.context())));
	}

	const Frame &frame_;
	Backend &target_;
	const ImportOptions &options_;
	std::vector<RouteAttempt> tried_{};
	Deadline deadline_;
	bool waited_ = false;
	std::optional<Error> waitError_{};
	std::optional<Error> stop_{}; // the refusal that ends the plan (endsThePlan)
	std::chrono::nanoseconds fenceWait_{ 0 };
};

Result<ImportResult> Planner::finish(Frame out, ImportRoute route, ExecutionPath path,
				     bool waitedOnCpu)
{
	ImportResult result{ std::move(out),      route,      path,
			     FenceTransfer::None, fenceWait_, std::move(tried_) };
	result.tried.push_back({ route, std::nullopt });
	const SyncPoint &acquire = frame_.acquire();
	if (!acquire.isNoop()) {
		std::optional<SyncPoint> exported;
		if (waitedOnCpu || waited_) {
			result.fence = FenceTransfer::CpuWait;
			result.frame.setAcquire(SyncPoint::noop());
		} else if (targetWaitsOnDevice(acquire.kind())) {
			result.fence = FenceTransfer::Carried;
		} else if (std::optional<SyncPoint> moved = fenceForTarget(acquire, exported)) {
			result.fence = FenceTransfer::Carried;
			result.frame.setAcquire(std::move(*moved));
		} else {
			// The target's queue cannot wait on this kind: wait here, so that what the
			// caller gets is ready to use (on the exported fd when the export took the
			// signal).
			Status waited = waitOnce(exported ? *exported : acquire);
			if (!waited.ok())
				return std::move(waited).error();
			result.fence = FenceTransfer::CpuWait;
			result.frame.setAcquire(SyncPoint::noop());
		}
		result.fenceWait = fenceWait_;
	}
	plannerLog("%s %ux%u into %s: %s (%s%s%s), fence %s", pixelFormatName(frame_.format()),
		   frame_.width(), frame_.height(), target_.deviceInfo().name.c_str(),
		   importRouteName(route), executionPathKindName(path.kind()),
		   *path.reason() ? ": " : "", path.reason(), fenceTransferName(result.fence));
	return result;
}

std::optional<Frame> Planner::tryFdRoute(ImportRoute route, ResourceKind kind)
{
	if (!contains(target_.capabilities().routes, route)) {
		refuse(route,
		       Error::format(ErrorCode::NotSupported, "route", "%s does not import %ss.",
				     target_.deviceInfo().name.c_str(), resourceKindName(kind)));
		return std::nullopt;
	}
	std::optional<Frame> candidate;
	if (allOfKind(frame_, kind)) {
		candidate = frame_;
	} else if (options_.source && contains(options_.source->capabilities().exports, kind)) {
		Result<Frame> exported = options_.source->exportFrame(frame_, kind);
		if (!exported.ok()) {
			refuse(route, std::move(exported).error());
			return std::nullopt;
		}
		candidate = std::move(*exported);
	} else {
		if (options_.source)
			refuse(route, Error::format(ErrorCode::NotSupported, "source",
						    "the frame is not in %ss and %s exports none.",
						    resourceKindName(kind),
						    options_.source->deviceInfo().name.c_str()));
		else
			refuse(route,
			       Error::format(
				       ErrorCode::NotSupported, "source",
				       "the frame is not in %ss and no source backend was given to export it.",
				       resourceKindName(kind)));
		return std::nullopt;
	}
	Result<Frame> imported = target_.importFrame(*candidate, route);
	if (!imported.ok()) {
		refuse(route, std::move(imported).error());
		return std::nullopt;
	}
	return std::move(*imported);
}

std::optional<Frame> Planner::tryHostPointer()
{
	constexpr ImportRoute route = ImportRoute::HostPointer;
	if (!contains(target_.capabilities().routes, route)) {
		refuse(route, Error::format(ErrorCode::NotSupported, "route",
					    "%s does not use host memory in place.",
					    target_.deviceInfo().name.c_str()));
		return std::nullopt;
	}
	// Only memory that is host memory already: a GPU frame mapped through a staging copy is not
	// zero-copy, and is left to the copy routes.
	if (!allResources(frame_, isHostMemory)) {
		refuse(route, Error(ErrorCode::NotSupported, "frame",
				    "the frame is not in host memory, memfds or DMA-BUFs."));
		return std::nullopt;
	}
	// Fd memory is mapped here (an mmap: still zero-copy), so every target sees plain host
	// memory.
	std::optional<Frame> candidate;
	if (allResources(frame_, isCpuMemory) || target_.holds(frame_)) {
		candidate = frame_;
	} else {
		// Mapped for reading and writing as long as the import lives: a DMA-BUF's
		// CPU-access bracket (DMA_BUF_IOCTL_SYNC) stays open until the imported frame goes.
		if (Status waited = waitAcquire(); !waited.ok()) {
			refuse(route, std::move(waited).error());
			return std::nullopt;
		}
		Result<Frame> mapped =
			mapAsCpuFrame(frame_, MapAccess::ReadWrite, nullptr, deadline_.remaining());
		if (!mapped.ok()) {
			refuse(route, std::move(mapped).error());
			return std::nullopt;
		}
		candidate = std::move(*mapped);
	}
	Result<Frame> imported = target_.importFrame(*candidate, route);
	if (!imported.ok()) {
		refuse(route, std::move(imported).error());
		return std::nullopt;
	}
	return std::move(*imported);
}

// The source copies on its device into memory the target exported (or into its own exportable
// memory that the target then imports); the bytes never leave the device.
std::optional<Frame> Planner::tryGpuCopy()
{
	constexpr ImportRoute route = ImportRoute::GpuCopy;
	const BackendRef &source = options_.source;
	if (!source || !source->capabilities().gpuCopy) {
		refuse(route, Error(ErrorCode::NotSupported, "source",
				    source ? "the source backend has no device copy."
					   : "no source backend to copy with."));
		return std::nullopt;
	}
	if (sameDevice(source->deviceId(), target_.deviceId()) == DeviceMatch::Different) {
		refuse(route, Error::format(ErrorCode::DeviceMismatch, "target",
					    "%s and %s are different devices.",
					    source->deviceInfo().name.c_str(),
					    target_.deviceInfo().name.c_str()));
		return std::nullopt;
	}
	Status waited = waitAcquire();
	if (!waited.ok()) {
		refuse(route, std::move(waited).error());
		return std::nullopt;
	}
	AllocateRequest request{ frame_.format(),
				 frame_.width(),
				 frame_.height(),
				 frame_.colorimetry(),
				 copyStorage(),
				 0,
				 true };
	// The same backend: a plain device copy.
	if (source.get() == &target_) {
		Result<Frame> dst = target_.allocate(request);
		Status copied = dst.ok() ? target_.copyFrame(*dst, frame_, deadline_.remaining())
					 : Status(dst.error());
		if (!copied.ok()) {
			refuse(route, std::move(copied).error());
			return std::nullopt;
		}
		return std::move(*dst);
	}
	const std::pair<ResourceKind, ImportRoute> shared[] = {
		{ ResourceKind::VulkanMemoryFd, ImportRoute::OpaqueFd },
		{ ResourceKind::DmaBuf, ImportRoute::DmaBuf }
	};
	std::string why;
	// Into target memory that the source imports.
	for (auto [kind, via] : shared) {
		if (!contains(target_.capabilities().exports, kind) ||
		    !contains(source->capabilities().routes, via))
			continue;
		Result<Frame> dst = target_.allocate(request);
		Result<Frame> exported = dst.ok() ? target_.exportFrame(*dst, kind)
						  : Result<Frame>(dst.error());
		Result<Frame> view = exported.ok() ? source->importFrame(*exported, via)
						   : Result<Frame>(exported.error());
		Status copied = view.ok() ? source->copyFrame(*view, frame_, deadline_.remaining())
					  : Status(view.error());
		if (copied.ok())
			return std::move(*dst);
		if (endsThePlan(copied.error())) {
			refuse(route, std::move(copied).error());
			return std::nullopt;
		}
		why += copied.error().message() + " ";
	}
	// Into source memory that the target imports (the zero-copy route after one device copy):
	// the storage the target wants where the source makes it, else one both take.
	AllocateRequest staged = request;
	if (!source->supportsFormat(staged.format, staged.storage))
		for (FrameStorage storage : target_.capabilities().storages)
			if (source->supportsFormat(staged.format, storage) &&
			    target_.supportsFormat(staged.format, storage)) {
				staged.storage = storage;
				break;
			}
	for (auto [kind, via] : shared) {
		if (!contains(source->capabilities().exports, kind) ||
		    !contains(target_.capabilities().routes, via))
			continue;
		Result<Frame> staging = source->allocate(staged);
		Status copied = staging.ok()
					? source->copyFrame(*staging, frame_, deadline_.remaining())
					: Status(staging.error());
		Result<Frame> exported = copied.ok() ? source->exportFrame(*staging, kind)
						     : Result<Frame>(copied.error());
		Result<Frame> imported = exported.ok() ? target_.importFrame(*exported, via)
						       : Result<Frame>(exported.error());
		if (imported.ok())
			return std::move(*imported);
		if (endsThePlan(imported.error())) {
			refuse(route, std::move(imported).error());
			return std::nullopt;
		}
		why += imported.error().message() + " ";
	}
	if (why.empty())
		why = "the two backends share no exportable handle type (opaque fd or DMA-BUF): " +
		      source->deviceInfo().name + " (" + backendKindName(source->kind()) +
		      ") exports " + exportedKinds(*source) + " and " + target_.deviceInfo().name +
		      " (" + backendKindName(target_.kind()) + ") exports " +
		      exportedKinds(target_) + ".";
	refuse(route, Error(ErrorCode::NotSupported, "target", why));
	return std::nullopt;
}

Result<Frame> Planner::cpuCopy()
{
	AllocateRequest request{ frame_.format(),
				 frame_.width(),
				 frame_.height(),
				 frame_.colorimetry(),
				 options_.copyStorage,
				 0,
				 false };
	Status waited = waitAcquire();
	if (!waited.ok())
		return std::move(waited).error();
	request.storage = copyStorage();
	Result<Frame> dst = target_.allocate(request);
	if (!dst.ok())
		return std::move(dst).error();
	const bool sourceMaps = options_.source && options_.source->holds(frame_);
	Result<CpuMapping> src =
		sourceMaps ? options_.source->map(frame_, MapAccess::Read, deadline_.remaining())
			   : mapFrame(frame_, MapAccess::Read, deadline_.remaining());
	if (!src.ok())
		return std::move(src).error();
	Result<CpuMapping> out = target_.map(*dst, MapAccess::Write, deadline_.remaining());
	if (!out.ok())
		return std::move(out).error();
	Status copied =
		copyMappedPlanes(*out, *src, frame_.format(), frame_.width(), frame_.height());
	if (!copied.ok())
		return std::move(copied).error();
	Status written = out->unmap();
	if (!written.ok())
		return std::move(written).error();
	return std::move(*dst);
}

Error Planner::noRoute() const
{
	std::string message = std::string("No zero-copy route takes this ") +
			      pixelFormatName(frame_.format()) + " frame into " +
			      target_.deviceInfo().name + " and copies are forbidden:";
	for (const RouteAttempt &attempt : tried_)
		message += std::string(" ") + importRouteName(attempt.route) + ": " +
			   (attempt.why ? attempt.why->message() : std::string("taken")) + ";";
	message.back() = '.';
	return Error(ErrorCode::NotSupported, "allowCopies", message);
}

Result<ImportResult> Planner::run()
{
	if (target_.holds(frame_))
		return finish(frame_, ImportRoute::Direct, ExecutionPath::zeroCopy(), false);
	// Memory of the target's API on its context that it did not make (a host's CUDA pointers, a
	// decoder's VA surfaces, the host's cl_mems) is wrapped by importFrame(Direct).
	if (contains(target_.capabilities().routes, ImportRoute::Direct)) {
		Result<Frame> wrapped = target_.importFrame(frame_, ImportRoute::Direct);
		if (wrapped.ok())
			return finish(std::move(*wrapped), ImportRoute::Direct,
				      ExecutionPath::zeroCopy(), false);
		refuse(ImportRoute::Direct, std::move(wrapped).error());
	} else {
		refuse(ImportRoute::Direct, Error::format(ErrorCode::NotSupported, "frame",
							  "the frame is not in %s's memory.",
							  target_.deviceInfo().name.c_str()));
	}
	// Each route in turn; a refusal that ends the plan (a lost device, a passed deadline) is
	// the answer, others pass to the next route.
	for (ImportRoute route :
	     { ImportRoute::OpaqueFd, ImportRoute::DmaBuf, ImportRoute::HostPointer }) {
		if (stop_)
			return *stop_;
		std::optional<Frame> out = route == ImportRoute::OpaqueFd
						   ? tryFdRoute(route, ResourceKind::VulkanMemoryFd)
					   : route == ImportRoute::DmaBuf
						   ? tryFdRoute(route, ResourceKind::DmaBuf)
						   : tryHostPointer();
		if (out)
			return finish(std::move(*out), route, ExecutionPath::zeroCopy(), false);
	}
	if (stop_)
		return *stop_;
	if (!options_.allowCopies)
		return noRoute();
	if (std::optional<Frame> out = tryGpuCopy())
		return finish(
			std::move(*out), ImportRoute::GpuCopy,
			ExecutionPath::gpuCopy("the target cannot use the frame's memory in place"),
			true);
	if (stop_)
		return *stop_;
	Result<Frame> copied = cpuCopy();
	if (!copied.ok()) {
		Error error = std::move(copied).error();
		refuse(ImportRoute::CpuCopy, error);
		return error;
	}
	return finish(std::move(*copied), ImportRoute::CpuCopy,
		      ExecutionPath::cpuCopy(copyReason(target_, options_.source)), true);
}

} // namespace

bool endsThePlan(const Error &why) noexcept
{
	// The device is gone, or time is up: other routes cannot succeed, and a copy would hide the
	// fault from the caller.
	return why.code() == ErrorCode::DeviceLost || why.code() == ErrorCode::Fatal ||
	       why.code() == ErrorCode::Timeout;
}

const char *fenceTransferName(FenceTransfer transfer) noexcept
{
	switch (transfer) {
	case FenceTransfer::None: return "none";
	case FenceTransfer::Carried: return "carried";
	case FenceTransfer::CpuWait: return "cpu-wait";
	}
	return "unknown";
}

Result<ImportResult> importFrame(const Frame &frame, Backend &target, const ImportOptions &options)
{
	return Planner(frame, target, options).run();
}

} // namespace gpuhandle
