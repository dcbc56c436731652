// Cached imports: the GL objects imported from an exporter's allocation (a Vulkan memory fd) live
// with that allocation's fd owner, so that a pooled frame is imported into GL once, not per frame.
#pragma once

#include <gpuhandle/keep_alive.h>
#include <gpuhandle/resource.h>
#include <gpuhandle/result.h>
#include <gpuhandle/vulkan_resources.h>

#include <memory>

namespace gpuhandle::gl {

struct GlAllocation; // gl_backend_internal.h
struct GlDevice;

// The objects `device` imported earlier from `memory` for `bytes` (buffers; 0 for images), else
// null. They are attached to the fd's owner (SharedFd::attach, keyed by the device): an
// exporter that hands out its allocation's own SharedFd, as the Vulkan backend's exportFrame
// does, gets them back for every frame of it, and they go with the allocation's last copy.
std::shared_ptr<GlAllocation> findImport(const GlDevice &device, const VulkanMemoryFd &memory,
					 uint64_t bytes);
// Keeps `object` with `memory`'s owner. The object must hold neither a source nor a copy of the
// SharedFd (the owner would never go); at most kMaxImportsPerOwner per device, oldest dropped.
void rememberImport(const GlDevice &device, const VulkanMemoryFd &memory, uint64_t bytes,
		    std::shared_ptr<GlAllocation> object);
inline constexpr size_t kMaxImportsPerOwner = 4;

// A frame's own anchor over cached objects: their names, and `source` (the frame they were
// imported from) held until GL is done with them; the cached object deletes the names.
Result<Resource> viewOf(const std::shared_ptr<GlAllocation> &cached, KeepAliveRef source);

} // namespace gpuhandle::gl
