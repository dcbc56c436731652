// Mapping a frame's memory for the CPU: CPU memory, shared-memory fds and DMA-BUFs.
#pragma once

#include <gpuhandle/backends/export.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/result.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

namespace GPUHANDLE_INTEROP_API gpuhandle {

// How the CPU uses a mapping; the values are bits (ReadWrite is Read and Write). Write makes the
// pointers writable; a Write-only mapping need not show the memory's old contents. Other values
// fail with InvalidArgument.
enum class MapAccess : uint8_t { Read = 1, Write = 2, ReadWrite = 3 };

// A frame's planes as CPU pointers. Move-only; the destructor (or unmap()) ends the access:
// DMA-BUF objects get their DMA_BUF_IOCTL_SYNC end, mmap()ed memory is unmapped. Holds a copy
// of the frame, so the memory stays alive while mapped. Thread safety: one object is used by
// one thread at a time.
class CpuMapping
{
public:
	CpuMapping() = default;
	CpuMapping(CpuMapping &&other) noexcept;            // `other` is left empty
	CpuMapping &operator=(CpuMapping &&other) noexcept; // ends this one's access first
	CpuMapping(const CpuMapping &) = delete;
	CpuMapping &operator=(const CpuMapping &) = delete;
	~CpuMapping();

	// The planes mapped (the frame's plane count); 0 for an empty mapping.
	uint32_t numPlanes() const noexcept { return numPlanes_; }
	// Valid for plane < numPlanes(); writable only when mapped with MapAccess::Write.
	uint8_t *data(uint32_t plane) const noexcept { return planes_[plane]; }
	// Bytes from one row of `plane` to the next; valid for plane < numPlanes().
	uint32_t stride(uint32_t plane) const noexcept { return strides_[plane]; }
	// As mapped.
	MapAccess access() const noexcept { return access_; }
	// Ends the access now and reports a failure of the DMA-BUF sync end (or of `end`).
	Status unmap() noexcept;

	// For backends that map their own memory (vkMapMemory, glMapBufferRange, a staging copy):
	// the pointers stay valid until `end` runs, exactly once, from unmap() or the destructor;
	// it ends the access (writes staged bytes back, unmaps) and reports its failure. `frame` is
	// kept alive while mapped.
	static CpuMapping adopt(const Frame &frame, MapAccess access, uint32_t numPlanes,
				const std::array<uint8_t *, 4> &planes,
				const std::array<uint32_t, 4> &strides,
				std::function<Status()> end);

private:
	friend Result<CpuMapping> mapFrame(const Frame &, MapAccess, WaitDuration);
	struct Region {
		void *address = nullptr; // what mmap() returned; null for memory the frame owns
		size_t length = 0;
		int dmaBufFd = -1; // set when DMA_BUF_IOCTL_SYNC began an access on it
	};

	std::optional<Frame> frame_{}; // kept alive while mapped
	MapAccess access_ = MapAccess::Read;
	uint32_t numPlanes_ = 0;
	std::array<uint8_t *, 4> planes_{};
	std::array<uint32_t, 4> strides_{};
	uint32_t numRegions_ = 0;
	std::array<Region, 16> regions_{}; // one per mapped fd (4 resources x 4 DMA-BUF objects)
	std::function<Status()> end_{};    // an adopted mapping's end
};

// Waits for the frame's acquire point (up to `timeout`), then maps every plane. Supported
// resources: CpuBytes, CpuPlanes, ShmFd and DmaBuf (mmap, with DMA_BUF_IOCTL_SYNC around the
// access where the fd is a real dma-buf). Other kinds answer NotSupported: their backend maps
// them. Errors: the acquire wait's error (Timeout, ...), a plane without a stride, mmap failures,
// NotSupported for a DMA-BUF whose modifier is neither linear nor implicit (tiled rows).
GPUHANDLE_INTEROP_API Result<CpuMapping> mapFrame(const Frame &frame, MapAccess access,
						  WaitDuration timeout = kDefaultWaitTimeout);

} // namespace gpuhandle
