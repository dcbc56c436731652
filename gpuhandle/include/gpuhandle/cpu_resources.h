// CPU resources: a byte range, a set of 1..4 planes held inline, and a producer's staging slot.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <array>
#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// `size` borrowed bytes at `data`, kept valid by `anchor`.
struct CpuBytesDesc {
	void *data = nullptr;
	uint64_t size = 0;
	KeepAliveRef anchor{};
};
class CpuBytes : public Validated<CpuBytesDesc>
{
public:
	static Result<CpuBytes> create(Desc desc);

private:
	using Validated::Validated;
};

struct CpuPlane {
	void *data = nullptr;
	uint32_t stride = 0; // bytes per row; at least one byte
	uint32_t rows = 0;   // rows in this plane
};

// 1..4 borrowed planes held inline (no heap), like AVFrame data[]/linesize[].
struct CpuPlanesDesc {
	uint32_t numPlanes = 0;
	std::array<CpuPlane, 4> planes{};
	KeepAliveRef anchor{};
};
class CpuPlanes : public Validated<CpuPlanesDesc>
{
public:
	static Result<CpuPlanes> create(Desc desc);

private:
	using Validated::Validated;
};

// A slot in a producer's CPU staging pool, named by `slot`; the consumer cannot dereference it
// and hands it back to the producer, which owns the memory (so `anchor` is required).
struct CpuSharedSlotDesc {
	uint64_t slot = 0;
	uint64_t size = 0;
	uint32_t rowPitch = 0;
	KeepAliveRef anchor{};
};
class CpuSharedSlot : public Validated<CpuSharedSlotDesc>
{
public:
	static Result<CpuSharedSlot> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
