// KeepAlive: an anchor from a producer that keeps a borrowed handle valid while any copy lives.
#pragma once

#include <gpuhandle/export.h>

#include <memory>

namespace GPUHANDLE_API gpuhandle {

// A producer (an AVFrame reference, a GstBuffer, a pool slot) derives from KeepAlive, or uses
// makeKeepAlive(); the borrowed handle stays valid until the last KeepAliveRef is dropped.
// Thread safety: the anchor may be released on any thread.
class KeepAlive
{
public:
	virtual ~KeepAlive() = default;
	// Called by an importer once the consumer-side synchronisation succeeded, so a producer can
	// skip its own release-time rebalancing (a D3D11 keyed-mutex release, say). Default:
	// nothing.
	virtual void markConsumed() noexcept {}
};

// Shared, copyable anchor: copying costs one atomic increment, nothing is allocated.
using KeepAliveRef = std::shared_ptr<KeepAlive>;

// C-style anchor: `destroy(data)` runs once when the last reference goes (GDestroyNotify style).
// `consumed`, when non-null, runs on markConsumed(). Returns null when destroy is null.
GPUHANDLE_API KeepAliveRef makeKeepAlive(void (*destroy)(void *data), void *data,
					 void (*consumed)(void *data) = nullptr);

} // namespace gpuhandle
