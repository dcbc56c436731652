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
inline constexpr uint64_t kDrmModifierInvalid = 0x00ffffffffffffffULL; // no modifier (implicit)

// One memory object of a DMA-BUF.
struct DmaBufObject {
	SharedFd fd{};     // open (BadFd otherwise); owned, or borrowed through its anchor
	uint64_t size = 0; // bytes; checked against the fd's own size where the kernel reports one
};
// One plane of a DMA-BUF: where in which object its rows lie.
struct DmaBufPlane {
	// Index of the object holding the plane (< numObjects)
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
	// DRM_FORMAT_MOD_*: kDrmModifierLinear, kDrmModifierInvalid (implicit) or a vendor's
	uint64_t modifier = kDrmModifierInvalid;
	uint32_t width = 0;                    // pixels; non-zero
	uint32_t height = 0;                   // pixels; non-zero
	uint32_t numObjects = 0;               // 1..4
	std::array<DmaBufObject, 4> objects{}; // the first numObjects; the others hold no fd
	uint32_t numPlanes = 0;                // 1..4
	std::array<DmaBufPlane, 4> planes{};   // the first numPlanes; the others are ignored
};
// A checked DmaBufDesc; copies share its fds.
class DmaBuf : public Validated<DmaBufDesc>
{
public:
	// Checks desc as described above. The error names the field ("objects[1].size"): ZeroSize,
	// OutOfRange (a count, index, offset or size past its bound), BadFd (an fd that is not
	// open), InvalidArgument (fourcc 0, a plane count the fourcc does not have, an unused
	// object holding an fd).
	static Result<DmaBuf> create(Desc desc);

private:
	using Validated::Validated;
};

// A shared-memory fd (memfd_create, shm_open) holding `size` bytes from `offset`.
// `seals` is read from the fd (F_GET_SEALS) at creation; a memfd sealed against shrinking can
// be mapped by a consumer without fear of SIGBUS.
struct ShmFdDesc {
	SharedFd fd{}; // a regular file; owned, or borrowed through its anchor
	// Bytes from the start of the file
	uint64_t offset = 0;
	uint64_t size = 0;  // bytes; non-zero, and offset + size within the file
	uint32_t seals = 0; // filled in by create(); any value given is ignored
};
// A checked ShmFdDesc; copies share its fd.
class ShmFd : public Validated<ShmFdDesc>
{
public:
	// Checks desc against the file and reads its seals. BadFd when the fd is not open (or
	// fstat fails), ZeroSize, InvalidArgument when it is not a regular file, OutOfRange when
	// the range runs past the end of the file.
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
