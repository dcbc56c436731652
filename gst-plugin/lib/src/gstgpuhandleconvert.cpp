// GstBuffer <-> Frame for system memory, GstFdMemory and GstDmaBufMemory.
#include <gpuhandle/format_mappings.h>

#include "gstgpuhandleconvertinternal.h"
#include "gstgpuhandlefdkeeper.h"
#include "thread_block_cache.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <utility>

#include <gst/allocators/allocators.h>
#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.h>
#include <gst/gpuhandle/gstgpuhandlesyncmeta.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gl/gl.h>
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
#include <gst/vulkan/vulkan.h>
#endif

GST_DEBUG_CATEGORY(gst_gpu_handle_convert_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_convert_debug

using namespace gpuhandle;

namespace {

// Allocator type names of memories whose library gpuhandle does not link: GStreamer 1.22's
// GST_CUDA_MEMORY_TYPE_NAME (gst/cuda/gstcudamemory.h) and GST_ALLOCATOR_VASURFACE
// (gst/va/gstvaallocator.h). The VA plugin's DMA-BUF allocator makes GstDmaBufMemory.
constexpr const char *kCudaMemoryType = "gst.cuda.memory";
constexpr const char *kVaMemoryType = "VAMemory";
// What a GstBuffer holds at most (gst_buffer_get_max_memory(), a constant of GStreamer's ABI).
constexpr guint kMaxMemories = 16;

} // namespace

namespace gpuhandle::gst::detail {

void initConvert()
{
	// Per buffer: a plain load once done (std::call_once costs a TLS lookup per call).
	static std::atomic<bool> done{ false };
	if (done.load(std::memory_order_acquire))
		return;
	static std::once_flag once;
	std::call_once(once, [] {
		gst_gpu_handle_init();
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_convert_debug, "gpuhandleconvert", 0,
					"gpuhandle buffer conversions");
		done.store(true, std::memory_order_release);
	});
}

GstAllocator *fdAllocator(bool dmaBuf)
{
	initConvert();
	return keepingFdAllocator(dmaBuf);
}

} // namespace gpuhandle::gst::detail

namespace {

using gpuhandle::gst::detail::initConvert;

bool hasMemType(GstMemory *mem, const char *type)
{
	return mem->allocator && mem->allocator->mem_type &&
	       std::strcmp(mem->allocator->mem_type, type) == 0;
}

gst::BufferMemory memoryKindOf(GstMemory *mem)
{
	using gst::BufferMemory;
	if (gst_is_gpu_handle_memory(mem))
		return BufferMemory::GpuHandle;
#if GPUHANDLE_GST_HAVE_GL
	if (gst_is_gl_memory(mem))
		return BufferMemory::GlMemory;
#endif
#if GPUHANDLE_GST_HAVE_VULKAN
	if (gst_is_vulkan_image_memory(mem))
		return BufferMemory::VulkanImage;
#endif
	if (hasMemType(mem, kCudaMemoryType))
		return BufferMemory::CudaMemory;
	if (hasMemType(mem, kVaMemoryType))
		return BufferMemory::VaMemory;
	// GstDmaBufAllocator derives from GstFdAllocator: ask about DMA-BUFs first.
	if (gst_is_dmabuf_memory(mem))
		return BufferMemory::DmaBuf;
	if (gst_is_fd_memory(mem))
		return BufferMemory::Fd;
	return BufferMemory::System;
}

const char *memTypeOf(GstMemory *mem)
{
	return mem && mem->allocator && mem->allocator->mem_type ? mem->allocator->mem_type
								 : "typeless";
}

GstMapFlags mapFlagsOf(MapAccess access)
{
	switch (access) {
	case MapAccess::Read: return GST_MAP_READ;
	case MapAccess::Write: return GST_MAP_WRITE;
	case MapAccess::ReadWrite: break;
	}
	return static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_WRITE);
}

// The anchor of a frame over mapped system memory, which holds a reference to the buffer: the
// GstVideoFrame map (gst_video_frame_map() takes one; the unmap drops it), or, for a buffer of
// one memory, a plain map of it with a reference of its own.
struct SystemBufferAnchor final : KeepAlive {
	~SystemBufferAnchor() override
	{
		if (videoMapped)
			gst_video_frame_unmap(&frame);
		if (bufferMapped) {
			gst_buffer_unmap(buffer, &map);
			gst_buffer_unref(buffer);
		}
	}
	GstBuffer *mappedBuffer() const
	{
		return videoMapped ? frame.buffer : bufferMapped ? buffer : nullptr;
	}
	GstVideoFrame frame{};
	bool videoMapped = false;
	GstBuffer *buffer = nullptr;
	GstMapInfo map{};
	bool bufferMapped = false;
};

// The map function gst_buffer_add_video_meta_full() gives a video meta (GStreamer's default),
// to tell it from a producer's own.
using VideoMetaMap = decltype(GstVideoMeta::map);
VideoMetaMap defaultVideoMetaMap()
{
	static const VideoMetaMap fn = [] {
		GstBuffer *probe = gst_buffer_new();
		GstVideoMeta *meta = gst_buffer_add_video_meta(probe, GST_VIDEO_FRAME_FLAG_NONE,
							       GST_VIDEO_FORMAT_GRAY8, 2, 2);
		VideoMetaMap found = meta ? meta->map : nullptr;
		gst_buffer_unref(probe);
		return found;
	}();
	return fn;
}

// Whether a plain map of the buffer's one memory reads it as gst_video_frame_map() would: no
// video meta, or one that agrees with the caps and maps the default way. Per buffer, the plain
// map costs a third of a GstVideoFrame's (which maps each plane and checks the meta).
bool mapsAsOneMemory(GstBuffer *buffer, const GstVideoInfo &info)
{
	if (gst_buffer_n_memory(buffer) != 1)
		return false;
	const GstVideoMeta *meta = gst_buffer_get_video_meta(buffer);
	return !meta || (meta->map != nullptr && meta->map == defaultVideoMetaMap() &&
			 meta->format == GST_VIDEO_INFO_FORMAT(&info) &&
			 meta->n_planes == GST_VIDEO_INFO_N_PLANES(&info) &&
			 meta->width >= static_cast<guint>(GST_VIDEO_INFO_WIDTH(&info)) &&
			 meta->height >= static_cast<guint>(GST_VIDEO_INFO_HEIGHT(&info)));
}

// The anchor of a frame over fd memories: the buffer reference (the producer's pool slot) and
// the frame's own duplicates of the memories' fds, closed when the last copy of the frame goes.
struct FdBufferAnchor final : KeepAlive {
	explicit FdBufferAnchor(GstBuffer *b) : buffer(gst_buffer_ref(b)) {}
	~FdBufferAnchor() override { gst_buffer_unref(buffer); }
	GstBuffer *buffer;
	std::array<UniqueFd, 4> fds{};
};

Frame withSyncOf(Frame frame, GstBuffer *buffer)
{
	if (GstGpuHandleSyncMeta *meta = gst_buffer_get_gpu_handle_sync_meta(buffer)) {
		frame.setAcquire(gst::syncMetaAcquire(meta));
		frame.setRelease(gst::syncMetaRelease(meta));
	}
	return frame;
}

// A frame over one mapped range of bytes (`planes` into it), kept alive by `anchor`, with the
// buffer's sync meta.
Result<Frame> frameOverOneRange(const GstMapInfo &range, const std::array<PlaneView, 4> &planes,
				PixelFormat format, const FrameLayout &layout,
				const GstVideoInfo &info, KeepAliveRef anchor, GstBuffer *buffer)
{
	FrameDesc frameDesc;
	frameDesc.format = format;
	frameDesc.width = layout.width;
	frameDesc.height = layout.height;
	frameDesc.colorimetry = gst::colorimetryOf(info);
	frameDesc.numResources = 1;
	frameDesc.numPlanes = layout.numPlanes;
	for (uint32_t p = 0; p < layout.numPlanes; p++)
		frameDesc.planes[p] = planes[p];
	Result<CpuBytes> bytes = CpuBytes::create({ range.data, range.size, std::move(anchor) });
	if (!bytes)
		return std::move(bytes).error();
	frameDesc.resources[0] = std::move(*bytes);
	Result<Frame> frame = Frame::create(std::move(frameDesc));
	if (!frame)
		return std::move(frame).error();
	return withSyncOf(std::move(*frame), buffer);
}

// Where plane `p` of `layout` lies: memory `index`, `skip` bytes into it. InvalidArgument when
// its rows run past that memory (GStreamer maps a plane from one memory).
Status findPlaneMemory(GstBuffer *buffer, const FrameLayout &layout, const PixelFormatInfo &pf,
		       uint32_t p, guint &index, gsize &skip)
{
	const PlaneLayout &plane = layout.planes[p];
	guint length = 0;
	if (!gst_buffer_find_memory(buffer, static_cast<gsize>(plane.offset), 1, &index, &length,
				    &skip))
		return Error::format(ErrorCode::InvalidArgument, "buffer",
				     "Plane %u starts at byte %" PRIu64
				     ", outside the buffer's memories.",
				     p, plane.offset);
	GstMemory *mem = gst_buffer_peek_memory(buffer, index);
	const uint64_t end = skip + uint64_t{ plane.stride } * (plane.height - 1) +
			     pf.planes[p].rowBytes(layout.width);
	if (end > mem->size)
		return Error::format(ErrorCode::InvalidArgument, "buffer",
				     "Plane %u runs to byte %" PRIu64
				     " of memory %u, which holds %" G_GSIZE_FORMAT
				     " bytes: a plane must lie in one memory.",
				     p, end, index, mem->size);
	return {};
}

Result<int> dupFd(int fd, std::array<UniqueFd, 4> &fds, uint32_t slot)
{
	fds[slot].reset(fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (!fds[slot].isValid())
		return Error::format(ErrorCode::Io, "fd", "Duplicating fd %d failed: %s.", fd,
				     std::strerror(errno));
	return fds[slot].get();
}

} // namespace

namespace gpuhandle::gst {

const char *bufferMemoryName(BufferMemory memory) noexcept
{
	switch (memory) {
	case BufferMemory::System: return "system";
	case BufferMemory::Fd: return "fd";
	case BufferMemory::DmaBuf: return "dmabuf";
	case BufferMemory::GpuHandle: return "gpuhandle";
	case BufferMemory::GlMemory: return "gl";
	case BufferMemory::VulkanImage: return "vulkan-image";
	case BufferMemory::CudaMemory: return "cuda";
	case BufferMemory::VaMemory: return "va";
	case BufferMemory::Mixed: return "mixed";
	}
	return "unknown";
}

BufferMemory bufferMemoryOf(GstBuffer *buffer)
{
	initConvert();
	const guint n = buffer ? gst_buffer_n_memory(buffer) : 0;
	if (n == 0)
		return BufferMemory::System;
	const BufferMemory first = memoryKindOf(gst_buffer_peek_memory(buffer, 0));
	for (guint i = 1; i < n; i++)
		if (memoryKindOf(gst_buffer_peek_memory(buffer, i)) != first)
			return BufferMemory::Mixed;
	return first;
}

Result<Frame> frameFromSystemBuffer(GstBuffer *buffer, const GstVideoInfo &info, MapAccess access)
{
	initConvert();
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format)
		return std::move(format).error();
	Result<FrameLayout> layout = bufferLayout(buffer, info);
	if (!layout)
		return std::move(layout).error();
	if (access != MapAccess::Read && !gst_buffer_is_writable(buffer))
		return Error(
			ErrorCode::InvalidArgument, "buffer",
			"The buffer is shared (not writable), so it cannot be mapped for writing.");
	// Made and dropped per buffer: its block is reused on the streaming thread.
	auto anchor = std::allocate_shared<SystemBufferAnchor>(
		::gpuhandle::detail::ThreadRecyclingAllocator<SystemBufferAnchor>{});
	const PixelFormatInfo &pf = **pixelFormatInfo(*format);
	// One memory (the usual system buffer): one range of bytes with the planes at their
	// offsets, which a consumer of the GpuHandle memory maps as one, as it would the original.
	if (mapsAsOneMemory(buffer, info)) {
		if (!gst_buffer_map(buffer, &anchor->map, mapFlagsOf(access)))
			return Error::format(
				ErrorCode::InvalidArgument, "buffer",
				"gst_buffer_map() failed on the %s %dx%d buffer (a memory of type "
				"%s that does not map on the CPU?).",
				gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
				GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info),
				memTypeOf(gst_buffer_peek_memory(buffer, 0)));
		anchor->buffer = gst_buffer_ref(buffer);
		anchor->bufferMapped = true;
		std::array<PlaneView, 4> planes{};
		for (uint32_t p = 0; p < pf.numPlanes; p++)
			planes[p] = PlaneView{ 0, 0, layout->planes[p].offset,
					       layout->planes[p].stride };
		return frameOverOneRange(anchor->map, planes, *format, *layout, info, anchor,
					 buffer);
	}
	GstVideoInfo mapInfo = info; // gst_video_frame_map() takes a non-const info
	if (!gst_video_frame_map(&anchor->frame, &mapInfo, buffer, mapFlagsOf(access)))
		return Error::format(
			ErrorCode::InvalidArgument, "buffer",
			"gst_video_frame_map() failed on the %s %dx%d buffer (memories of "
			"type %s that do not map on the CPU?).",
			gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)),
			GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info),
			memTypeOf(gst_buffer_peek_memory(buffer, 0)));
	anchor->videoMapped = true;
	const GstMapInfo &whole = anchor->frame.map[0];
	if (gst_buffer_n_memory(buffer) == 1 && whole.data) {
		std::array<PlaneView, 4> planes{};
		for (uint32_t p = 0; p < pf.numPlanes; p++)
			planes[p] = PlaneView{
				0, 0,
				static_cast<uint64_t>(
					static_cast<uint8_t *>(anchor->frame.data[p]) - whole.data),
				static_cast<uint32_t>(anchor->frame.info.stride[p])
			};
		return frameOverOneRange(whole, planes, *format, *layout, info, anchor, buffer);
	}
	CpuPlanesDesc desc;
	desc.numPlanes = pf.numPlanes;
	for (uint32_t p = 0; p < pf.numPlanes; p++) {
		desc.planes[p].data = anchor->frame.data[p];
		desc.planes[p].stride = static_cast<uint32_t>(anchor->frame.info.stride[p]);
		desc.planes[p].rows = pf.planes[p].rows(layout->height);
	}
	desc.anchor = anchor;
	Result<CpuPlanes> planes = CpuPlanes::create(std::move(desc));
	if (!planes)
		return std::move(planes).error();
	Result<Frame> frame = Frame::wrap(*format, layout->width, layout->height,
					  colorimetryOf(info), std::move(*planes));
	if (!frame)
		return std::move(frame).error();
	return withSyncOf(std::move(*frame), buffer);
}

GstBuffer *sourceBufferOf(const Frame &frame)
{
	if (frame.numResources() != 1)
		return nullptr;
	const KeepAliveRef *kept = nullptr;
	if (const CpuPlanes *planes = frame.resource(0).get<CpuPlanes>())
		kept = &planes->desc().anchor;
	else if (const CpuBytes *bytes = frame.resource(0).get<CpuBytes>())
		kept = &bytes->desc().anchor;
	if (!kept)
		return nullptr;
	const auto *anchor = dynamic_cast<const SystemBufferAnchor *>(kept->get());
	GstBuffer *mapped = anchor ? anchor->mappedBuffer() : nullptr;
	return mapped ? gst_buffer_ref(mapped) : nullptr;
}

Result<Frame> frameFromFdBuffer(GstBuffer *buffer, const GstVideoInfo &info, uint64_t modifier)
{
	initConvert();
	if (!buffer)
		return Error(ErrorCode::NullHandle, "buffer", "The buffer is null.");
	const BufferMemory kind = bufferMemoryOf(buffer);
	if (kind != BufferMemory::DmaBuf && kind != BufferMemory::Fd)
		return Error::format(
			ErrorCode::WrongKind, "buffer.memory",
			"The buffer holds %s memory (memory 0 is of type %s), not fd or "
			"DMA-BUF memories only.",
			bufferMemoryName(kind), memTypeOf(gst_buffer_peek_memory(buffer, 0)));
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format)
		return std::move(format).error();
	Result<FrameLayout> layout = bufferLayout(buffer, info);
	if (!layout)
		return std::move(layout).error();
	const PixelFormatInfo &pf = **pixelFormatInfo(*format);
	if (gst_buffer_n_memory(buffer) > kMaxMemories)
		return Error::format(ErrorCode::InvalidArgument, "buffer.memory",
				     "The buffer has %u memories, more than GStreamer allows (%u).",
				     gst_buffer_n_memory(buffer), kMaxMemories);
	const bool dmaBuf = kind == BufferMemory::DmaBuf;
	uint32_t fourcc = 0;
	if (dmaBuf) {
		Result<uint32_t> drm = toApiFormat(FormatApi::DrmFourcc, *format);
		if (!drm)
			return Error::format(
				ErrorCode::NotSupported, "format",
				"%s has no DRM fourcc, so its DMA-BUF cannot be described.",
				pf.name);
		fourcc = *drm;
	}

	auto anchor = std::make_shared<FdBufferAnchor>(buffer);
	// Each memory that holds a plane becomes a part (a DMA-BUF object, or a ShmFd resource),
	// in plane order; DMA-BUF memories sharing one fd are one object.
	std::array<int, kMaxMemories> partOfMemory{};
	partOfMemory.fill(-1);
	std::array<int, 4> partFd{};
	std::array<guint, 4> partMemory{};
	uint32_t parts = 0;
	DmaBufDesc dmaDesc;
	FrameDesc desc;
	desc.format = *format;
	desc.width = layout->width;
	desc.height = layout->height;
	desc.colorimetry = colorimetryOf(info);
	desc.numPlanes = pf.numPlanes;
	for (uint32_t p = 0; p < pf.numPlanes; p++) {
		guint index = 0;
		gsize skip = 0;
		if (Status found = findPlaneMemory(buffer, *layout, pf, p, index, skip); !found)
			return std::move(found).error();
		GstMemory *mem = gst_buffer_peek_memory(buffer, index);
		const int fd = gst_fd_memory_get_fd(mem);
		int part = partOfMemory[index];
		for (uint32_t i = 0; part < 0 && dmaBuf && i < parts; i++)
			if (partFd[i] == fd)
				part = static_cast<int>(i);
		if (part < 0) {
			if (parts == 4)
				return Error::format(ErrorCode::InvalidArgument, "buffer.memory",
						     "The planes lie in more than 4 memories.");
			part = static_cast<int>(parts);
			partFd[parts] = fd;
			partMemory[parts] = index;
			parts++;
		}
		partOfMemory[index] = part;
		const uint32_t stride = layout->planes[p].stride;
		if (dmaBuf) {
			// A DMA-BUF object starts at the fd's byte 0: the memory's own offset goes
			// into the plane's.
			dmaDesc.planes[p] = { static_cast<uint32_t>(part), mem->offset + skip,
					      stride };
			desc.planes[p] = { 0, static_cast<uint32_t>(part), mem->offset + skip,
					   stride };
		} else {
			desc.planes[p] = { static_cast<uint32_t>(part), 0, skip, stride };
		}
	}

	for (uint32_t i = 0; i < parts; i++) {
		Result<int> fd = dupFd(partFd[i], anchor->fds, i);
		if (!fd)
			return std::move(fd).error();
		SharedFd shared = SharedFd::borrow(*fd, anchor);
		GstMemory *mem = gst_buffer_peek_memory(buffer, partMemory[i]);
		if (dmaBuf) {
			// The object spans what the memories of this fd can reach.
			uint64_t size = 0;
			for (guint m = 0; m < gst_buffer_n_memory(buffer); m++) {
				GstMemory *other = gst_buffer_peek_memory(buffer, m);
				gsize maxsize = 0;
				gst_memory_get_sizes(other, nullptr, &maxsize);
				if (gst_fd_memory_get_fd(other) == partFd[i] && maxsize > size)
					size = maxsize;
			}
			dmaDesc.objects[i] = { std::move(shared), size };
			continue;
		}
		Result<ShmFd> shm = ShmFd::create({ std::move(shared), mem->offset, mem->size, 0 });
		if (!shm)
			return std::move(shm).error();
		desc.resources[i] = std::move(*shm);
	}
	if (dmaBuf) {
		dmaDesc.fourcc = fourcc;
		dmaDesc.modifier = modifier;
		dmaDesc.width = layout->width;
		dmaDesc.height = layout->height;
		dmaDesc.numObjects = parts;
		dmaDesc.numPlanes = pf.numPlanes;
		Result<DmaBuf> resource = DmaBuf::create(std::move(dmaDesc));
		if (!resource)
			return std::move(resource).error();
		desc.resources[0] = std::move(*resource);
		desc.numResources = 1;
	} else {
		desc.numResources = parts;
	}
	Result<Frame> frame = Frame::create(std::move(desc));
	if (!frame)
		return std::move(frame).error();
	return withSyncOf(std::move(*frame), buffer);
}

} // namespace gpuhandle::gst
