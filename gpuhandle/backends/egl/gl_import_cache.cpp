// Cached imports: GL objects attached to the exporter's fd owner (see the header).
#include "gl_import_cache.h"

#include "gl_backend_internal.h"

#include <mutex>
#include <utility>
#include <vector>

namespace gpuhandle::gl {

namespace {

bool sameExport(const VulkanExportDesc &a, const VulkanExportDesc &b)
{
	return a.allocationSize == b.allocationSize && a.memoryTypeIndex == b.memoryTypeIndex &&
	       a.dedicated == b.dedicated && a.format == b.format && a.width == b.width &&
	       a.height == b.height && a.depth == b.depth && a.tiling == b.tiling &&
	       a.usage == b.usage;
}

// What one device imported from one owner: an image once, a buffer once per size.
struct Imports {
	struct Entry {
		VulkanExportDesc exportDesc;
		uint64_t bytes = 0;
		std::shared_ptr<GlAllocation> object;
	};
	std::mutex mutex;
	std::vector<Entry> entries;
};

std::shared_ptr<Imports> importsOf(const GlDevice &device, const VulkanMemoryFd &memory)
{
	return std::static_pointer_cast<Imports>(memory.desc().fd.attachment(&device));
}

} // namespace

std::shared_ptr<GlAllocation> findImport(const GlDevice &device, const VulkanMemoryFd &memory,
					 uint64_t bytes)
{
	std::shared_ptr<Imports> imports = importsOf(device, memory);
	if (!imports)
		return nullptr;
	std::lock_guard<std::mutex> lock(imports->mutex);
	for (const Imports::Entry &e : imports->entries)
		if (e.bytes == bytes && sameExport(e.exportDesc, memory.desc().exportDesc))
			return e.object;
	return nullptr;
}

void rememberImport(const GlDevice &device, const VulkanMemoryFd &memory, uint64_t bytes,
		    std::shared_ptr<GlAllocation> object)
{
	// Attached under the device's address: the objects keep the device alive, so the address
	// cannot name another device while they live.
	auto imports = std::static_pointer_cast<Imports>(
		memory.desc().fd.attach(&device, std::make_shared<Imports>()));
	if (!imports)
		return; // not kept: the object goes with the frame's view
	std::shared_ptr<GlAllocation> dropped;
	std::lock_guard<std::mutex> lock(imports->mutex);
	if (imports->entries.size() >= kMaxImportsPerOwner) {
		dropped = std::move(imports->entries.front().object);
		imports->entries.erase(imports->entries.begin());
	}
	imports->entries.push_back({ memory.desc().exportDesc, bytes, std::move(object) });
	// `dropped` (declared before the lock) is destroyed after it is released.
}

Result<Resource> viewOf(const std::shared_ptr<GlAllocation> &cached, KeepAliveRef source)
{
	auto view = std::make_shared<GlAllocation>();
	view->device = cached->device;
	view->type = cached->type;
	view->name = cached->name;
	view->mappable = cached->mappable;
	view->size = cached->size;
	view->width = cached->width;
	view->height = cached->height;
	view->transfer = cached->transfer;
	view->names = cached;
	view->source = std::move(source);
	return resourceOf(std::move(view));
}

} // namespace gpuhandle::gl
