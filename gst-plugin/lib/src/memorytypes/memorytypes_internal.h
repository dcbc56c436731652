// The memory-type table's private parts: each type's adapter factory (one file per type, built
// when its GStreamer library is found) and shared helpers.
#pragma once

#include <memory>
#include <optional>

#include <gst/gpuhandle/gstgpuhandlememorytypes.hpp>

namespace gpuhandle::gst::detail {

// The adapter of one type for an element in `role` (null from the stub of a type whose library
// was not found: src/stubs/).
std::unique_ptr<MemoryAdapter> systemAdapter(const MemoryTypeInfo &info, MemoryRole role);
std::unique_ptr<MemoryAdapter> dmaBufAdapter(const MemoryTypeInfo &info, MemoryRole role);
std::unique_ptr<MemoryAdapter> glAdapter(const MemoryTypeInfo &info, MemoryRole role);
std::unique_ptr<MemoryAdapter> vulkanAdapter(const MemoryTypeInfo &info, MemoryRole role);
std::unique_ptr<MemoryAdapter> cudaAdapter(const MemoryTypeInfo &info, MemoryRole role);
std::unique_ptr<MemoryAdapter> vaAdapter(const MemoryTypeInfo &info, MemoryRole role);

// The NotSupported error of a call `info`'s type does not support.
Error notSupported(const MemoryTypeInfo &info, const char *what);

// The WrongKind error of a buffer whose first memory is not `info`'s type (null when it is).
std::optional<Error> wrongMemory(const MemoryTypeInfo &info, GstMemory *mem, bool isType);

// The NullHandle error of an input without a buffer, info or device slot (null when complete).
std::optional<Error> incompleteInput(const InputBuffer &in);

// An input buffer as a frame of the device `found` names (which goes to `backend`): `make`
// wraps the buffer, and a frame the backend must take in first (CUDA, VA: ImportRoute::Direct)
// is imported.
template<typename Make>
Result<Frame> frameOnDevice(Result<BackendRef> found, BackendRef &backend, Make make,
			    bool import = false)
{
	if (!found.ok())
		return std::move(found).error();
	backend = *found;
	Result<Frame> frame = make();
	if (!import || !frame.ok())
		return frame;
	return backend->importFrame(*frame, ImportRoute::Direct);
}

// Deactivates and drops a GStreamer pool made for the old caps (or another context).
inline void dropPool(GstBufferPool *&pool)
{
	if (pool) {
		gst_buffer_pool_set_active(pool, FALSE);
		gst_clear_object(&pool);
	}
}

// A new reference on `object`, or null.
template<typename T>
T *refOrNull(T *object)
{
	return object ? static_cast<T *>(gst_object_ref(object)) : nullptr;
}

} // namespace gpuhandle::gst::detail
