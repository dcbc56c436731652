// CUDA resources: a pitched 2D allocation with its planes, a flat buffer, a surface object.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/uuid.h>
#include <gpuhandle/validated.h>

#include <array>
#include <cstdint>
#include <optional>

namespace GPUHANDLE_API gpuhandle {

// A CUdeviceptr from cuMemAllocPitch (NVDEC output, say): planes at the producer's byte offsets
// (NVDEC pads the luma plane, so offsets are never derived), `pitch` bytes per row, `size` bytes
// in all (a CUdeviceptr carries no size of its own).
struct CudaPitched2DDesc {
	uint64_t pointer = 0; // CUdeviceptr
	// Bytes per row; non-zero, at most size
	uint32_t pitch = 0;
	uint32_t numPlanes = 1;                 // 1..4
	std::array<uint64_t, 4> planeOffsets{}; // strictly increasing, each < size
	// Bytes in all; non-zero
	uint64_t size = 0;
	void *context = nullptr; // CUcontext the pointer belongs to (may be null: current context)
	// The device's UUID (cuDeviceGetUuid), when known: the CUDA backend of another device
	// refuses the memory (DeviceMismatch)
	std::optional<Uuid> deviceUuid{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the allocation; may be null
};
// A checked CudaPitched2DDesc.
class CudaPitched2D : public Validated<CudaPitched2DDesc>
{
public:
	// Checks desc: NullHandle for a zero pointer, ZeroSize for a zero pitch or size, OutOfRange
	// for a pitch past size, a plane count outside 1..4 or an offset not inside,
	// InvalidArgument for offsets not strictly increasing.
	static Result<CudaPitched2D> create(Desc desc);

private:
	using Validated::Validated;
};

// A flat CUdeviceptr allocation of `size` bytes.
struct CudaBufferDesc {
	uint64_t pointer = 0;    // CUdeviceptr; non-zero
	uint64_t size = 0;       // bytes; non-zero
	void *context = nullptr; // CUcontext the pointer belongs to (may be null: current context)
	// The device's UUID (cuDeviceGetUuid), when known: the CUDA backend of another device
	// refuses the memory (DeviceMismatch)
	std::optional<Uuid> deviceUuid{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the allocation; may be null
};
// A checked CudaBufferDesc.
class CudaBuffer : public Validated<CudaBufferDesc>
{
public:
	// Checks desc: NullHandle for a zero pointer, ZeroSize for a zero size.
	static Result<CudaBuffer> create(Desc desc);

private:
	using Validated::Validated;
};

// A CUsurfObject over a CUarray of width x height elements.
struct CudaSurfaceDesc {
	uint64_t surface = 0;  // CUsurfObject
	void *array = nullptr; // CUarray it was created over (may be null when unknown)
	// Elements per row of the array; non-zero
	uint32_t width = 0;
	// Rows of the array; non-zero
	uint32_t height = 0;
	void *context = nullptr; // CUcontext the surface belongs to (may be null: current context)
	std::optional<Uuid> deviceUuid{}; // the device's UUID (cuDeviceGetUuid), when known
	KeepAliveRef anchor{};            // the producer's keep-alive for the surface; may be null
};
// A checked CudaSurfaceDesc.
class CudaSurface : public Validated<CudaSurfaceDesc>
{
public:
	// Checks desc: NullHandle for a zero surface, ZeroSize for a zero width or height.
	static Result<CudaSurface> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
