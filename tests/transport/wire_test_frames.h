// Frames over memfds, their wire offsets, and the socket hop, shared by the wire-format tests.
#pragma once

#include <gpuhandle/fd_resources.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/wire_format.h>

#include "fd_count.h"

#include <array>
#include <cstring>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuhandle::test {

constexpr uint32_t kW = 64, kH = 48;
constexpr uint64_t kNv12Bytes = uint64_t(kW) * kH * 3 / 2;
constexpr uint32_t kDrmNV12 = uint32_t('N') | uint32_t('V') << 8 | uint32_t('1') << 16 |
			      uint32_t('2') << 24;
constexpr Colorimetry kBt709{ ColorRange::Limited, ColorMatrix::Bt709, ColorPrimaries::Bt709,
			      ColorTransfer::Bt709 };

// Byte offsets in the message of nv12Shm() (wire_encode.cpp's field order): one ShmFd resource,
// two planes, then the acquire kind (and its fd index when it is a fence).
namespace shm {
constexpr uint32_t kId = 16, kWantsRelease = 24, kFormat = 25, kColorimetry = 37;
constexpr uint32_t kNumResources = 41, kKind = 45, kFdIndex = 49, kOffset = 53, kSize = 61;
constexpr uint32_t kNumPlanes = 69, kPlane1Offset = 93 + 8, kPlane1Stride = 93 + 16;
constexpr uint32_t kAcquireKind = 113, kAcquireFd = 117, kBytesNoop = 117, kBytesFence = 121;
} // namespace shm
// Offsets in the message of nv12DmaBuf(): one DmaBuf with two objects.
namespace dma {
constexpr uint32_t kNumObjects = 69, kObject0Size = 77, kObject1Fd = 85, kBytes = 181;
} // namespace dma
// Offsets in the message of yuv420pShm(): three ShmFd resources.
namespace yuv {
constexpr uint32_t kResource1Fd = 73, kBytes = 185;
} // namespace yuv

inline SyncPoint eventfdPoint(int eventFd)
{
	return SyncPoint::fromFenceFd(SharedFd(UniqueFd(fcntl(eventFd, F_DUPFD_CLOEXEC, 0))))
		.value();
}

inline Resource shmOf(uint64_t size)
{
	return ShmFd::create({ .fd = SharedFd(makeMemfd(size, true)), .size = size }).value();
}

// NV12 in one memfd, Y then interleaved UV.
inline Frame nv12Shm(SyncPoint acquire = SyncPoint::noop())
{
	FrameDesc d;
	d.format = PixelFormat::NV12;
	d.width = kW;
	d.height = kH;
	d.colorimetry = kBt709;
	d.numResources = 1;
	d.resources[0] = shmOf(kNv12Bytes);
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 0, kW };
	d.planes[1] = { 0, 0, uint64_t(kW) * kH, kW };
	d.acquire = std::move(acquire);
	return Frame::create(std::move(d)).value();
}

// yuv420p, one memfd per plane.
inline Frame yuv420pShm()
{
	FrameDesc d;
	d.format = PixelFormat::YUV420P;
	d.width = kW;
	d.height = kH;
	d.colorimetry = { ColorRange::Full, ColorMatrix::Bt470Bg, ColorPrimaries::Bt470Bg,
			  ColorTransfer::Srgb };
	d.numResources = 3;
	d.resources[0] = shmOf(uint64_t(kW) * kH);
	d.resources[1] = shmOf(uint64_t(kW) * kH / 4);
	d.resources[2] = shmOf(uint64_t(kW) * kH / 4);
	d.numPlanes = 3;
	d.planes[0] = { 0, 0, 0, kW };
	d.planes[1] = { 1, 0, 0, kW / 2 };
	d.planes[2] = { 2, 0, 0, kW / 2 };
	return Frame::create(std::move(d)).value();
}

// A linear NV12 DMA-BUF whose Y and UV planes live in two memfd objects.
inline Frame nv12DmaBuf()
{
	DmaBufDesc b;
	b.fourcc = kDrmNV12;
	b.modifier = kDrmModifierLinear;
	b.width = kW;
	b.height = kH;
	b.numObjects = 2;
	b.objects[0] = { SharedFd(makeMemfd(uint64_t(kW) * kH, true)), uint64_t(kW) * kH };
	b.objects[1] = { SharedFd(makeMemfd(uint64_t(kW) * kH / 2, true)), uint64_t(kW) * kH / 2 };
	b.numPlanes = 2;
	b.planes[0] = { 0, 0, kW };
	b.planes[1] = { 1, 0, kW };
	return Frame::wrap(PixelFormat::NV12, kW, kH, kBt709, DmaBuf::create(std::move(b)).value())
		.value();
}

// What a receiver holds after recvmsg: the bytes, and a new fd for each one sent (SCM_RIGHTS
// installs duplicates of the sender's files).
struct Received {
	std::array<std::byte, kWireMaxMessage> bytes{};
	uint32_t size = 0;
	std::array<UniqueFd, kWireMaxFds + 1> fds{};
	uint32_t numFds = 0;

	std::span<const std::byte> data() const noexcept { return { bytes.data(), size }; }
	std::span<UniqueFd> fdList() noexcept { return { fds.data(), numFds }; }
	template<typename T>
	void patch(uint32_t offset, T value)
	{
		std::memcpy(bytes.data() + offset, &value, sizeof(T));
	}
};

inline Received receive(const WireMessage &message)
{
	Received r;
	std::memcpy(r.bytes.data(), message.bytes.data(), message.size);
	r.size = message.size;
	for (int fd : message.fdList())
		r.fds[r.numFds++] = UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	return r;
}

// The two fds name the same open file description's inode.
inline bool sameFile(int a, int b)
{
	struct stat sa {
	}, sb{};
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino &&
	       sa.st_dev == sb.st_dev;
}

} // namespace gpuhandle::test
