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
	void *data = nullptr;  // borrowed, non-null
	uint64_t size = 0;     // bytes; non-zero
	KeepAliveRef anchor{}; // the producer's keep-alive for the bytes; may be null
};
// A checked CpuBytesDesc.
class CpuBytes : public Validated<CpuBytesDesc>
{
public:
	// Checks desc: NullHandle for null data, ZeroSize for a zero size.
	static Result<CpuBytes> create(Desc desc);

private:
	using Validated::Validated;
};

// One borrowed CPU plane: `rows` rows of `stride` bytes from `data`.
struct CpuPlane {
	// The plane's first byte; borrowed, non-null
	void *data = nullptr;
	uint32_t stride = 0; // bytes per row; at least one byte
	uint32_t rows = 0;   // rows in this plane
};

// 1..4 borrowed planes held inline (no heap), like AVFrame data[]/linesize[].
struct CpuPlanesDesc {
	uint32_t numPlanes = 0;           // 1..4
	std::array<CpuPlane, 4> planes{}; // the first numPlanes; the others are ignored
	KeepAliveRef anchor{};            // the producer's keep-alive for every plane; may be null
};
// A checked CpuPlanesDesc.
class CpuPlanes : public Validated<CpuPlanesDesc>
{
public:
	// Checks desc: OutOfRange for a plane count outside 1..4, NullHandle for a plane's null
	// data, ZeroSize for a plane's zero stride or rows.
	static Result<CpuPlanes> create(Desc desc);

private:
	using Validated::Validated;
};

// A slot in a producer's CPU staging pool, named by `slot`; the consumer cannot dereference it
// and hands it back to the producer, which owns the memory (so `anchor` is required).
struct CpuSharedSlotDesc {
	uint64_t slot = 0;     // the pool's number for the slot
	uint64_t size = 0;     // bytes; non-zero
	uint32_t rowPitch = 0; // bytes per row; at most size
	KeepAliveRef anchor{}; // required: keeps the slot taken while any copy lives
};
// A checked CpuSharedSlotDesc.
class CpuSharedSlot : public Validated<CpuSharedSlotDesc>
{
public:
	// Checks desc: ZeroSize for a zero size, OutOfRange for a rowPitch past size, NullHandle
	// without an anchor.
	static Result<CpuSharedSlot> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
