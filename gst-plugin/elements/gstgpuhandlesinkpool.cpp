// gpuhandlesink's copy path: sealed memfds it owns, each a frame whose gate is re-armed on reuse.
#include <gpuhandle/backends/cpu_map.h>
#include <gpuhandle/fd_resources.h>

#include "gstgpuhandlesink.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>

#define GST_CAT_DEFAULT gst_gpu_handle_sink_debug

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace gpuhandle::gst::sink {

namespace {

// How long a slot waits for its consumers before the frame is dropped: a stuck consumer slows
// the producer down to this, a crashed one costs nothing (the sender releases its frames).
constexpr auto kSlotWait = 1s;
// The longest wait for room (a consumer below its in-flight bound) before a frame is sent anyway
// (and skipped, by the sender, for the consumers at their bound).
constexpr auto kHeldWait = 1s;

// A memfd of `size` bytes sealed against shrinking and growing, so that a consumer's mapping
// can never SIGBUS.
Result<UniqueFd> sealedMemfd(size_t size)
{
	UniqueFd fd(memfd_create("gpuhandlesink", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (!fd.isValid() || ftruncate(fd.get(), static_cast<off_t>(size)) != 0 ||
	    fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		return Error::format(ErrorCode::Io, "memfd", "A %zu-byte sealed memfd failed: %s.",
				     size, std::strerror(errno));
	return fd;
}

// A slot over a new memfd laid out as `info` (GStreamer's default offsets and strides).
Result<CopySlot> makeSlot(const GstVideoInfo &info, PixelFormat format)
{
	const size_t size = GST_VIDEO_INFO_SIZE(&info);
	Result<UniqueFd> fd = sealedMemfd(size);
	if (!fd)
		return std::move(fd).error();
	void *map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd->get(), 0);
	if (map == MAP_FAILED)
		return Error::format(ErrorCode::Io, "memfd", "Mapping a %zu-byte memfd failed: %s.",
				     size, std::strerror(errno));
	CopySlot slot;
	slot.bytes = static_cast<uint8_t *>(map);
	slot.size = size;
	auto fail = [&slot](Error e) -> Result<CopySlot> {
		munmap(slot.bytes, slot.size);
		return e;
	};
	Result<ReleaseGate> gate = ReleaseGate::create();
	if (!gate)
		return fail(std::move(gate).error());
	slot.gate = *gate;
	Result<ShmFd> shm = ShmFd::create({ .fd = SharedFd(std::move(*fd)), .size = size });
	if (!shm)
		return fail(std::move(shm).error());
	FrameDesc d;
	d.format = format;
	d.width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&info));
	d.height = static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&info));
	d.numResources = 1;
	d.resources[0] = std::move(*shm);
	d.numPlanes = GST_VIDEO_INFO_N_PLANES(&info);
	for (uint32_t p = 0; p < d.numPlanes; ++p)
		d.planes[p] = { 0, 0, GST_VIDEO_INFO_PLANE_OFFSET(&info, p),
				static_cast<uint32_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, p)) };
	d.release = slot.gate;
	Result<Frame> frame = Frame::create(std::move(d));
	if (!frame)
		return fail(std::move(frame).error());
	slot.frame = std::move(*frame);
	slot.buffer = gst_buffer_new_wrapped_full(static_cast<GstMemoryFlags>(0), slot.bytes, size,
						  0, size, nullptr, nullptr);
	return slot;
}

// Re-arms the gate of a slot whose previous frame came back. False when no new gate can be made.
bool rearm(CopySlot &slot)
{
	if (slot.sentAt == 0)
		return true; // never sent: its gate is fresh
	// reset() re-arms any gate, signalled or not: only one every consumer released may be.
	if (slot.track->released && slot.gate.reset().ok())
		return true;
	// Its wait timed out (release-timeout) or was cancelled: a stuck consumer may still signal
	// the old gate, which the sender's copy of the previous frame shares, and must not release
	// this use. A fresh gate for the slot's frame.
	Result<ReleaseGate> gate = ReleaseGate::create();
	if (!gate)
		return false;
	slot.gate = *gate;
	slot.frame->setRelease(slot.gate);
	return true;
}

// A GpuHandle frame whose format is not the caps' cannot be laid into the slot: its planes
// differ. Its size may differ (a producer's padding, a stale buffer): the common area is copied.
std::optional<Error> checkFrameFits(GstBaseSink *sink, const Frame &frame, const SinkState &s)
{
	if (frame.format() != s.format)
		return Error::format(ErrorCode::InvalidArgument, "buffer.format",
				     "The GpuHandle frame is %s but the caps say %s.",
				     pixelFormatName(frame.format()), pixelFormatName(s.format));
	const auto width = static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&s.info));
	const auto height = static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&s.info));
	if (frame.width() != width || frame.height() != height)
		GST_WARNING_OBJECT(sink, "a %ux%u frame for %ux%u caps: %ux%u copied",
				   frame.width(), frame.height(), width, height,
				   std::min(frame.width(), width),
				   std::min(frame.height(), height));
	return std::nullopt;
}

// GpuHandle memory through its frame's backend (CPU planes, images, device memory), anything
// else through gst_video_frame_map. Posts the element error when the input does not map, or is
// a GpuHandle frame of another format than the caps (a broken producer: the stream stops
// rather than send garbage).
bool copyInto(GstBaseSink *sink, GstBuffer *buffer, CopySlot &slot)
{
	SinkState &s = stateOf(sink);
	GstVideoFrame out;
	if (!gst_video_frame_map(&out, &s.info, slot.buffer, GST_MAP_WRITE)) {
		GST_ELEMENT_ERROR(sink, RESOURCE, FAILED,
				  (_("Could not send a frame to consumers.")),
				  ("the memfd slot did not map"));
		return false;
	}
	std::string why;
	if (bufferMemoryOf(buffer) == BufferMemory::GpuHandle) {
		Result<Frame> frame = frameFromBuffer(buffer);
		if (frame) {
			if (std::optional<Error> misfit = checkFrameFits(sink, *frame, s))
				frame = std::move(*misfit);
		}
		const BackendRef backend = memoryBackend(gst_buffer_peek_memory(buffer, 0));
		Result<CpuMapping> in =
			!frame    ? Result<CpuMapping>(frame.error())
			: backend ? backend->map(*frame, MapAccess::Read, kDefaultWaitTimeout)
				  : mapFrame(*frame, MapAccess::Read);
		Result<const PixelFormatInfo *> info = pixelFormatInfo(s.format);
		if (in && info) {
			const uint8_t *src[4] = {};
			uint32_t srcStride[4] = {}, dstStride[4] = {};
			uint8_t *dst[4] = {};
			const uint32_t planes = std::min<uint32_t>(frame->numPlanes(),
								   GST_VIDEO_FRAME_N_PLANES(&out));
			for (uint32_t p = 0; p < planes && p < 4; ++p) {
				src[p] = in->data(p);
				srcStride[p] = in->stride(p);
				dst[p] =
					static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&out, p));
				dstStride[p] = static_cast<uint32_t>(
					GST_VIDEO_FRAME_PLANE_STRIDE(&out, p));
			}
			copyPlaneRows(
				dst, dstStride, src, srcStride, **info,
				std::min(frame->width(),
					 static_cast<uint32_t>(GST_VIDEO_INFO_WIDTH(&s.info))),
				std::min(frame->height(),
					 static_cast<uint32_t>(GST_VIDEO_INFO_HEIGHT(&s.info))));
			(void)in->unmap();
		} else {
			why = !in ? in.error().message() : info.error().message();
		}
	} else {
		GstVideoFrame in;
		if (gst_video_frame_map(&in, &s.info, buffer, GST_MAP_READ)) {
			if (!gst_video_frame_copy(&out, &in))
				why = "gst_video_frame_copy failed";
			gst_video_frame_unmap(&in);
		} else {
			why = "gst_video_frame_map failed";
		}
	}
	gst_video_frame_unmap(&out);
	if (!why.empty())
		GST_ELEMENT_ERROR(sink, STREAM, FORMAT,
				  (_("An input buffer could not be used as a video frame.")),
				  ("%s", why.c_str()));
	return why.empty();
}

CopySlot *freeSlot(SinkState &s)
{
	for (CopySlot &slot : s.pool)
		if (!slot.track->outstanding.load())
			return &slot;
	return nullptr;
}

// The slot for the next copy: one whose frame came back, else a new one while the pool is below
// its size (slots are made on demand: most streams need a few), else the first to come back
// within kSlotWait (any: the oldest may be a stuck consumer's). Null when none came back in
// time (or a flush ended the wait), or, with `ret` an error (posted), when none can be made.
CopySlot *pickSlot(GstBaseSink *sink, SinkState &s, GstFlowReturn &ret)
{
	if (CopySlot *slot = freeSlot(s))
		return slot;
	if (s.pool.size() < s.config.poolMax()) {
		Result<CopySlot> slot = makeSlot(s.info, s.format);
		if (!slot) {
			GST_ELEMENT_ERROR(sink, RESOURCE, NO_SPACE_LEFT,
					  (_("Could not allocate shared memory for frames.")),
					  ("%s", slot.error().message().c_str()));
			ret = GST_FLOW_ERROR;
			return nullptr;
		}
		s.pool.push_back(std::move(*slot));
		return &s.pool.back();
	}
	// A slot's release updates its track and notifies under heldMutex, as unlock() does.
	std::unique_lock<std::mutex> lock(s.heldMutex);
	CopySlot *slot = nullptr;
	s.heldChanged.wait_for(lock, kSlotWait, [&] {
		return s.flushing.load() || (slot = freeSlot(s)) != nullptr;
	});
	return s.flushing.load() ? nullptr : slot;
}

} // namespace

void freePool(SinkState &s)
{
	// Consumers hold their own fds and mappings; the sender holds its copy of each frame (and
	// so of its gate) until they released it.
	for (CopySlot &slot : s.pool) {
		gst_buffer_unref(slot.buffer);
		munmap(slot.bytes, slot.size);
	}
	s.pool.clear();
}

bool waitForRoom(SinkState &s)
{
	// A consumer at its bound is waited for (bounded), so that a briefly slow one misses
	// nothing. One that stays there past kHeldWait is stuck: from then on only a frame that no
	// consumer can take waits, and the stuck one is skipped by the sender while the others go
	// on, until every consumer has room again.
	const auto deadline = std::chrono::steady_clock::now() + kHeldWait;
	uint64_t seen = 0;
	for (bool first = true;; first = false) {
		if (!first) {
			// The sender's roomChanged moves roomEvents: read before the stats, so
			// that a change after them ends the wait below at once.
			std::lock_guard<std::mutex> lock(s.heldMutex);
			seen = s.roomEvents;
		}
		if (s.flushing.load())
			return false;
		const FrameSenderStats stats = s.sender->stats();
		if (stats.peersWithRoom == stats.peersConnected) {
			s.skippingStuck = false;
			return true;
		}
		if (stats.peersWithRoom > 0 && s.skippingStuck)
			return true;
		if (std::chrono::steady_clock::now() >= deadline) {
			s.skippingStuck = true;
			return true;
		}
		if (first)
			continue; // the steady state takes no lock: stats only
		std::unique_lock<std::mutex> lock(s.heldMutex);
		s.heldChanged.wait_until(lock, deadline,
					 [&] { return s.roomEvents != seen || s.flushing.load(); });
	}
}

GstFlowReturn sendCopy(GstBaseSink *sink, GstBuffer *buffer)
{
	SinkState &s = stateOf(sink);
	if (!waitForRoom(s))
		return GST_FLOW_FLUSHING;
	GstFlowReturn made = GST_FLOW_OK;
	CopySlot *slot = pickSlot(sink, s, made);
	if (made != GST_FLOW_OK)
		return made;
	if (s.flushing.load())
		return GST_FLOW_FLUSHING;
	if (!slot) {
		s.counters.dropped++;
		GST_WARNING_OBJECT(sink,
				   "consumers held every one of %zu memfd slots for over %lld ms: "
				   "frame dropped",
				   s.pool.size(), static_cast<long long>(kSlotWait.count() * 1000));
		return GST_FLOW_OK;
	}
	if (!rearm(*slot)) {
		GST_ELEMENT_ERROR(sink, RESOURCE, FAILED,
				  (_("Could not send a frame to consumers.")),
				  ("no release gate could be made"));
		return GST_FLOW_ERROR;
	}
	if (!copyInto(sink, buffer, *slot))
		return GST_FLOW_ERROR;
	Result<uint32_t> sent = s.sender->send(*slot->frame, s.frameTiming, metasOf(s, buffer));
	if (!sent) {
		GST_ELEMENT_ERROR(sink, RESOURCE, WRITE,
				  (_("Could not send a frame to consumers.")),
				  ("%s", sent.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	slot->sentAt = ++s.copiesSent;
	trackRelease(sink, slot->gate, nullptr, slot->track);
	s.counters.copied++;
	if (*sent == 0)
		s.counters.unsent++;
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::sink
