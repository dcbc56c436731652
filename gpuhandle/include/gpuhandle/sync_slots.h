// The frame's acquire sync point and release gate slots; their real types come with the sync issue.
#pragma once

namespace gpuhandle {

// "Wait for this before reading the frame". Only the Noop point exists so far: frames whose
// producer already finished its work.
class SyncPoint
{
public:
	static SyncPoint noop() noexcept { return {}; }
	bool isNoop() const noexcept { return true; }
};

// "Signal this when done with the frame", so a pooled producer can reuse the memory. Only the
// empty gate exists so far: producers that do not reuse memory.
class ReleaseGate
{
public:
	static ReleaseGate none() noexcept { return {}; }
	bool isNone() const noexcept { return true; }
};

} // namespace gpuhandle
