// Private helpers every backend shares: request checks, frames over one buffer, the factories.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/layout.h>

#include <cstdint>
#include <span>

namespace gpuhandle {

// Checks a request (format known, size non-zero, storage, alignment a power of two <= 4096) and
// returns its layout: StrideAlign with request.strideAlign, or `preferredAlign` when that is 0.
Result<FrameLayout> layoutForRequest(const AllocateRequest &request, uint32_t preferredAlign,
				     const char *backendName);

// A frame whose planes are `layout`'s planes inside resource 0 (one buffer holding them all).
Result<Frame> frameOverBuffer(const AllocateRequest &request, const FrameLayout &layout,
			      Resource buffer);

// The same planes, format, size, colour and sync as `like`, over `resources`.
Result<Frame> frameLike(const Frame &like, std::span<const Resource> resources);

// "this frame is not one of the <name> backend's" (WrongKind) and "<name>: <what> is not
// supported" (NotSupported) errors, worded alike everywhere.
Error notThisBackendsFrame(const char *backendName, const char *operation);
Error routeNotSupported(const char *backendName, ImportRoute route, const char *why);

// The frame's layout planes when its strides are those of `format` at its size, for backends
// that import memory they did not allocate: each plane's row bytes must fit its stride.
Status checkPlaneStrides(const Frame &frame, const char *backendName);

// Memory the CPU reaches directly (CpuBytes, CpuPlanes) and through mmap (ShmFd, DmaBuf).
bool isCpuMemory(const Resource &resource) noexcept;
bool isFdMemory(const Resource &resource) noexcept;
bool isHostMemory(const Resource &resource) noexcept; // either of the two
// Whether every resource of `frame` passes `test` (false for a frame without resources).
bool allResources(const Frame &frame, bool (*test)(const Resource &) noexcept) noexcept;

// The layout of a host-memory (cpu, fd) Buffer request, and its size in whole pages: page-aligned
// memory is what Vulkan, CUDA and udmabuf take in place. NotSupported for image storages.
Result<FrameLayout> hostBufferLayout(const AllocateRequest &request, const char *backendName,
				     uint64_t &pagedSize);

// What the host-memory backends (cpu, fd) share: buffers of every known format, and no device
// copy (the planner copies their bytes on the CPU).
class HostMemoryBackend : public Backend
{
public:
	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;

protected:
	using Backend::Backend;
};

// An API gpuhandle was configured without: its folder's stub (<api>_stub.cpp, compiled instead of
// its sources; gpuhandle/backends/meson.build) defines open<Api>Backend() and every public call
// of the API, each answering notBuilt(): NotSupported on `field`, naming the call, the API and
// the development files that were missing. The one "not built" answer of every backend.
struct MissingApi {
	const char *name;  // "Vulkan"
	const char *files; // "vulkan.h, libvulkan-dev"
};
Error notBuilt(const MissingApi &api, const char *call, const char *field);

// The factories openBackend() dispatches to; a backend that is not built answers from its stub.
Result<BackendRef> openCpuBackend(const BackendOpenOptions &options);
Result<BackendRef> openFdBackend(const BackendOpenOptions &options);
Result<BackendRef> openVulkanBackend(const BackendOpenOptions &options);
Result<BackendRef> openGlBackend(const BackendOpenOptions &options);
Result<BackendRef> openOpenClBackend(const BackendOpenOptions &options);
Result<BackendRef> openCudaBackend(const BackendOpenOptions &options);
Result<BackendRef> openVaApiBackend(const BackendOpenOptions &options);

} // namespace gpuhandle
