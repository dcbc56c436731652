// Linux fd resources: a DMA-BUF (objects, planes, fourcc, modifier) and a shared-memory fd.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <array>
#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// DRM_FORMAT_MOD_LINEAR and DRM_FORMAT_MOD_INVALID (the "implicit modifier" of drm_fourcc.h).
inline constexpr uint64_t kDrmModifierLinear = 0;
inline constexpr uint64_t kDrmModifierInvalid = 0x00ffffffffffffffULL;

struct DmaBufObject {
	SharedFd fd{};
	uint64_t size = 0; // bytes; checked against the fd's own size where the kernel reports one
};
struct DmaBufPlane {
	uint32_t objectIndex = 0;
	uint64_t offset = 0; // bytes from the start of the object
	uint32_t pitch = 0;  // bytes per row
};

// What AVDRMFrameDescriptor and VADRMPRIMESurfaceDescriptor carry: 1..4 objects, 1..4 planes
// over them, one DRM fourcc and one modifier for the whole surface.
// For formats gpuhandle knows and linear (or implicit) modifiers, plane geometry is checked:
// the plane count matches the fourcc, each pitch holds a row, each plane fits in its object.
// Tiled or compressed modifiers may add planes (CCS) and change pitch meaning, so for them only
// indices, counts and offsets are checked.
struct DmaBufDesc {
	uint32_t fourcc = 0; // DRM_FORMAT_*
	uint64_t modifier = kDrmModifierInvalid;
	uint32_t width = 0;
	uint32_t height = 0;
	uint32_t numObjects = 0;
	std::array<DmaBufObject, 4> objects{};
	uint32_t numPlanes = 0;
	std::array<DmaBufPlane, 4> planes{};
};
class DmaBuf : public Validated<DmaBufDesc>
{
public:
	static Result<DmaBuf> create(Desc desc);

private:
	using Validated::Validated;
};

// A shared-memory fd (memfd_create, shm_open) holding `size` bytes from `offset`.
// `seals` is read from the fd (F_GET_SEALS) at creation; a memfd sealed against shrinking can
// be mapped by a consumer without fear of SIGBUS.
struct ShmFdDesc {
	SharedFd fd{};
	uint64_t offset = 0;
	uint64_t size = 0;
	uint32_t seals = 0; // filled in by create(); any value given is ignored
};
class ShmFd : public Validated<ShmFdDesc>
{
public:
	static Result<ShmFd> create(Desc desc);
	// Sealed against shrinking (F_SEAL_SHRINK): its size can no longer drop under a mapping.
	bool isSealed() const;
	// Bytes [offset, offset + size) of the file (offset from the file's start, as in the desc),
	// which must lie inside this range; the same fd (shared) and seals. Checked against this
	// range without a system call: what create() checked of the file holds for the part.
	// OutOfRange when the part is not inside, InvalidArgument when it is empty.
	Result<ShmFd> slice(uint64_t offset, uint64_t size) const;

private:
	using Validated::Validated;
};

} // namespace gpuhandle
