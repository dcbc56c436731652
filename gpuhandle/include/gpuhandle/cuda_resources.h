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
	uint32_t pitch = 0;
	uint32_t numPlanes = 1;                 // 1..4
	std::array<uint64_t, 4> planeOffsets{}; // strictly increasing, each < size
	uint64_t size = 0;
	void *context = nullptr; // CUcontext the pointer belongs to (may be null: current context)
	std::optional<Uuid> deviceUuid{};
	KeepAliveRef anchor{};
};
class CudaPitched2D : public Validated<CudaPitched2DDesc>
{
public:
	static Result<CudaPitched2D> create(Desc desc);

private:
	using Validated::Validated;
};

// A flat CUdeviceptr allocation of `size` bytes.
struct CudaBufferDesc {
	uint64_t pointer = 0;
	uint64_t size = 0;
	void *context = nullptr;
	std::optional<Uuid> deviceUuid{};
	KeepAliveRef anchor{};
};
class CudaBuffer : public Validated<CudaBufferDesc>
{
public:
	static Result<CudaBuffer> create(Desc desc);

private:
	using Validated::Validated;
};

// A CUsurfObject over a CUarray of width x height elements.
struct CudaSurfaceDesc {
	uint64_t surface = 0;  // CUsurfObject
	void *array = nullptr; // CUarray it was created over (may be null when unknown)
	uint32_t width = 0;
	uint32_t height = 0;
	void *context = nullptr;
	std::optional<Uuid> deviceUuid{};
	KeepAliveRef anchor{};
};
class CudaSurface : public Validated<CudaSurfaceDesc>
{
public:
	static Result<CudaSurface> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
