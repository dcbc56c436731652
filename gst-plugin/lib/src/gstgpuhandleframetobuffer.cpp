// Frame -> GstBuffer: system memory over CPU and memfd frames, GstFdMemory/GstDmaBufMemory over
// fds.
#include "gstgpuhandleconvertinternal.h"
#include "gstgpuhandlefdkeeper.h"
#include "thread_block_cache.h"

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <unistd.h>
#include <utility>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_convert_debug

using namespace gpuhandle;
using gpuhandle::gst::detail::fdAllocator;
using gpuhandle::gst::detail::initConvert;

namespace {

// What the memories of a system buffer share: the frame's CPU mapping, with its copy of the
// frame (so the frame's anchors and memory live). When the last memory goes nobody can read the
// bytes any more: the mapping ends and the frame's release gate is signalled.
struct MappedFrame {
	MappedFrame(CpuMapping m, ReleaseGate r) : mapping(std::move(m)), release(std::move(r)) {}
	MappedFrame(const MappedFrame &) = delete;
	MappedFrame &operator=(const MappedFrame &) = delete;
	~MappedFrame()
	{
		if (Status ended = mapping.unmap(); !ended)
			GST_WARNING("Ending the CPU mapping of a frame failed: %s",
				    ended.error().message().c_str());
		if (release.isNone())
			return;
		if (Status signalled = release.signal(); !signalled)
			GST_WARNING("Signalling the frame's release gate failed: %s",
				    signalled.error().message().c_str());
	}
	CpuMapping mapping;
	ReleaseGate release;
};
// Buffers are made and dropped per frame: the holders (with their control blocks) and each
// memory's reference to them come from the thread's block lists (thread_block_cache.h).
template<typename T>
using Recycled = ::gpuhandle::detail::ThreadRecyclingAllocator<T>;
// A memory's reference to its holder: freed with the memory.
template<typename Ref>
void dropRef(gpointer data)
{
	::gpuhandle::detail::deleteToBlocks(static_cast<Ref *>(data));
}

using MappedFrameRef = std::shared_ptr<MappedFrame>;

bool everyResource(const Frame &frame, ResourceKind a, ResourceKind b = ResourceKind::None)
{
	for (uint32_t r = 0; r < frame.numResources(); r++)
		if (frame.resource(r).kind() != a && frame.resource(r).kind() != b)
			return false;
	return true;
}

// The GstVideoMeta of a buffer whose memories start at starts[resource][subresource].
Status addVideoMeta(GstBuffer *buffer, const Frame &frame, GstVideoFormat format,
		    const std::array<std::array<gsize, 4>, 4> &starts)
{
	std::array<gsize, GST_VIDEO_MAX_PLANES> offsets{};
	std::array<gint, GST_VIDEO_MAX_PLANES> strides{};
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		if (view.stride == 0 || view.stride > G_MAXINT)
			return Error::format(
				ErrorCode::NotSupported, "planes",
				"Plane %u of the %s frame has no CPU stride (%u): an opaque "
				"layout has no GstVideoMeta.",
				p, pixelFormatName(frame.format()), view.stride);
		offsets[p] =
			starts[view.resource][view.subresource] + static_cast<gsize>(view.offset);
		strides[p] = static_cast<gint>(view.stride);
	}
	gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, format, frame.width(),
				       frame.height(), frame.numPlanes(), offsets.data(),
				       strides.data());
	return {};
}

// The bytes a frame over one ShmFd resource shows a peer without GstVideoMeta, when its planes
// lie where GStreamer's default layout for `info` puts them (and the resource holds them all);
// 0 when they do not, and the buffer needs its video meta.
gsize defaultLayoutSize(const Frame &frame, GstVideoFormat format, const GstVideoInfo &info)
{
	if (frame.numResources() != 1 || !frame.resource(0).get<ShmFd>() ||
	    format != GST_VIDEO_INFO_FORMAT(&info) ||
	    frame.width() != static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info)) ||
	    frame.height() != static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info)) ||
	    frame.numPlanes() != GST_VIDEO_INFO_N_PLANES(&info))
		return 0;
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		if (view.offset != GST_VIDEO_INFO_PLANE_OFFSET(&info, p) ||
		    static_cast<gint>(view.stride) != GST_VIDEO_INFO_PLANE_STRIDE(&info, p))
			return 0;
	}
	const gsize size = GST_VIDEO_INFO_SIZE(&info);
	return frame.resource(0).byteSize(0) >= size ? size : 0;
}

// A GstFdMemory (or GstDmaBufMemory) over a duplicate of `fd`, showing `size` bytes from
// `offset`; the memory owns and closes the duplicate.
Result<GstMemory *> fdMemory(const SharedFd &fd, uint64_t offset, uint64_t size, bool dmaBuf)
{
	UniqueFd copy = fd.dup();
	if (!copy.isValid())
		return Error::format(ErrorCode::Io, "fd", "Duplicating fd %d failed: %s.", fd.get(),
				     std::strerror(errno));
	const gsize total = static_cast<gsize>(offset + size);
	GstMemory *mem = dmaBuf ? gst_dmabuf_allocator_alloc(fdAllocator(true), copy.get(), total)
				: gst_fd_allocator_alloc(fdAllocator(false), copy.get(), total,
							 GST_FD_MEMORY_FLAG_NONE);
	if (!mem)
		return Error::format(ErrorCode::Io, "fd", "GStreamer made no memory for fd %d.",
				     fd.get());
	(void)copy.release(); // the memory closes it now
	if (offset)
		gst_memory_resize(mem, static_cast<gssize>(offset), static_cast<gsize>(size));
	return mem;
}

} // namespace

namespace gpuhandle::gst {

Result<GstBuffer *> systemBufferFromFrame(const Frame &frame, bool writable, WaitDuration timeout)
{
	initConvert();
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		const ResourceKind kind = frame.resource(r).kind();
		if (kind != ResourceKind::CpuBytes && kind != ResourceKind::CpuPlanes &&
		    kind != ResourceKind::ShmFd)
			return Error::format(
				ErrorCode::WrongKind, "frame.resources",
				"Resource %u of the frame is a %s; system memory wraps "
				"CpuBytes, CpuPlanes and ShmFd resources only (others are "
				"mapped or copied by their backend).",
				r, resourceKindName(kind));
	}
	Result<GstVideoFormat> format = videoFormatOf(frame.format());
	if (!format)
		return std::move(format).error();
	// Waits for the acquire point: system-memory consumers read as soon as they get the buffer.
	Result<CpuMapping> mapped =
		mapFrame(frame, writable ? MapAccess::ReadWrite : MapAccess::Read, timeout);
	if (!mapped)
		return std::move(mapped).error();
	auto holder = std::allocate_shared<MappedFrame>(Recycled<MappedFrame>{}, std::move(*mapped),
							frame.release());
	const CpuMapping &mapping = holder->mapping;
	GstBuffer *buffer = gst_buffer_new();
	std::array<std::array<gsize, 4>, 4> starts{};
	std::array<std::array<bool, 4>, 4> made{};
	gsize total = 0;
	// One memory per CPU range: a resource, or each plane of a CpuPlanes resource.
	for (uint32_t p = 0; p < frame.numPlanes(); p++) {
		const PlaneView &view = frame.plane(p);
		if (made[view.resource][view.subresource])
			continue;
		const uint64_t size = frame.resource(view.resource).byteSize(view.subresource);
		uint8_t *base = mapping.data(p) - view.offset;
		GstMemory *mem = gst_memory_new_wrapped(
			writable ? static_cast<GstMemoryFlags>(0) : GST_MEMORY_FLAG_READONLY, base,
			static_cast<gsize>(size), 0, static_cast<gsize>(size),
			::gpuhandle::detail::newFromBlocks<MappedFrameRef>(holder),
			dropRef<MappedFrameRef>);
		gst_buffer_append_memory(buffer, mem);
		made[view.resource][view.subresource] = true;
		starts[view.resource][view.subresource] = total;
		total += static_cast<gsize>(size);
	}
	if (Status meta = addVideoMeta(buffer, frame, *format, starts); !meta) {
		gst_buffer_unref(buffer);
		return std::move(meta).error();
	}
	return buffer;
}

Result<GstBuffer *> fdBufferFromFrame(const Frame &frame, bool allowShm)
{
	return detail::fdBufferFromFrameWith(frame, allowShm, nullptr, nullptr);
}

Result<GstBuffer *> detail::fdBufferFromFrameWith(const Frame &frame, bool allowShm,
						  ShmMemorySource source, void *sourceData,
						  const GstVideoInfo *defaultLayout, bool *laidOut)
{
	initConvert();
	const bool dmaBuf = everyResource(frame, ResourceKind::DmaBuf);
	if (!dmaBuf && !(allowShm && everyResource(frame, ResourceKind::ShmFd)))
		return Error::format(ErrorCode::WrongKind, "frame.resources",
				     "The frame's resources (the first a %s) are not all DmaBuf%s.",
				     resourceKindName(frame.resource(0).kind()),
				     allowShm ? ", nor all ShmFd" : " (ShmFd is not allowed here)");
	Result<GstVideoFormat> format = videoFormatOf(frame.format());
	if (!format)
		return std::move(format).error();
	// The bytes of the one memory a frame in the default layout shows (0: all, with a meta).
	const gsize exactSize = defaultLayout ? defaultLayoutSize(frame, *format, *defaultLayout)
					      : 0;
	if (laidOut)
		*laidOut = exactSize != 0;
	auto keep = std::allocate_shared<const Frame>(Recycled<Frame>{}, frame);
	GstBuffer *buffer = gst_buffer_new();
	std::array<std::array<gsize, 4>, 4> starts{};
	gsize total = 0;
	for (uint32_t r = 0; r < frame.numResources(); r++) {
		const Resource &resource = frame.resource(r);
		const uint32_t parts = dmaBuf ? resource.get<DmaBuf>()->desc().numObjects : 1;
		for (uint32_t o = 0; o < parts; o++) {
			const ShmFd *shm = resource.get<ShmFd>();
			const uint64_t shmSize = exactSize ? exactSize : resource.byteSize(0);
			GstMemory *shared = source && shm
						    ? source(sourceData, shm->desc().fd,
							     shm->desc().offset, shmSize, keep)
						    : nullptr;
			Result<GstMemory *> mem =
				shared   ? Result<GstMemory *>(shared)
				: dmaBuf ? fdMemory(resource.get<DmaBuf>()->desc().objects[o].fd, 0,
						    resource.byteSize(o), true)
					 : fdMemory(shm->desc().fd, shm->desc().offset, shmSize,
						    false);
			if (!mem) {
				gst_buffer_unref(buffer);
				return std::move(mem).error();
			}
			if (!shared)
				gpuhandle::gst::detail::keepFrameUntilFreed(*mem, keep);
			gst_buffer_append_memory(buffer, *mem);
			starts[r][o] = total;
			total += (*mem)->size;
		}
	}
	if (Status meta = exactSize ? Status{} : addVideoMeta(buffer, frame, *format, starts);
	    !meta) {
		gst_buffer_unref(buffer);
		return std::move(meta).error();
	}
	// Never waited here: a DMA-BUF consumer waits on the GPU, or on the CPU when it maps.
	if (!frame.acquire().isNoop() || !frame.release().isNone())
		addSyncMeta(buffer, frame.acquire(), frame.release());
	return buffer;
}

} // namespace gpuhandle::gst
