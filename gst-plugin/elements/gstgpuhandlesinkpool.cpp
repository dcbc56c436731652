// gpuhandlesink's copy path (sealed memfds it owns) and the tracking of every frame sent.
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
#include <thread>
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
constexpr auto kSlice = 100ms;
// A sent frame is counted as back after this even when a consumer still holds it (a zero-copy
// buffer goes back to its pool): the producer does not stall for good behind a stuck consumer.
constexpr auto kReleaseTimeout = 30s;
// The longest wait for room (fewer than max-in-flight frames held) before a frame is sent
// anyway (and skipped, by the sender, for the consumers at their bound).
constexpr auto kHeldWait = 1s;
// The longest wait in stop() for consumers to hand back the frames they hold.
constexpr auto kDrainWait = 1s;

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

// Waits (bounded, ended by a flush) until the consumers of the slot's previous frame released
// it, and re-arms its gate. False when it did not come back in time.
bool reclaim(SinkState &s, CopySlot &slot)
{
	std::unique_lock<std::mutex> lock(s.heldMutex);
	for (auto waited = 0ms; *slot.outstanding && waited < kSlotWait && !s.flushing.load();
	     waited += kSlice)
		s.heldChanged.wait_for(lock, kSlice);
	if (*slot.outstanding)
		return false;
	if (slot.gate.reset().ok())
		return true;
	// Never signalled (its wait timed out): a fresh gate for the slot's frame.
	Result<ReleaseGate> gate = ReleaseGate::create();
	if (!gate)
		return false;
	slot.gate = *gate;
	slot.frame->setRelease(slot.gate);
	return true;
}

// GpuHandle memory through its frame's backend (CPU planes, images, device memory), anything
// else through gst_video_frame_map. Posts the element error when the input does not map.
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
			for (uint32_t p = 0; p < frame->numPlanes() && p < 4; ++p) {
				src[p] = in->data(p);
				srcStride[p] = in->stride(p);
				dst[p] =
					static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&out, p));
				dstStride[p] = static_cast<uint32_t>(
					GST_VIDEO_FRAME_PLANE_STRIDE(&out, p));
			}
			copyPlaneRows(dst, dstStride, src, srcStride, **info, frame->width(),
				      frame->height());
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
	s.nextSlot = 0;
}

bool waitForRoom(SinkState &s)
{
	// Bounded: a stuck consumer costs kHeldWait per frame, and is then skipped by the sender.
	std::unique_lock<std::mutex> lock(s.heldMutex);
	for (auto waited = 0ms; s.held >= s.maxInFlight && waited < kHeldWait && !s.flushing.load();
	     waited += 100ms)
		s.heldChanged.wait_for(lock, 100ms);
	return !s.flushing.load();
}

void trackRelease(GstBaseSink *bsink, const ReleaseGate &gate, GstBuffer *keep,
		  std::shared_ptr<std::atomic<bool>> outstanding)
{
	SinkState &s = stateOf(bsink);
	{
		std::lock_guard<std::mutex> lock(s.heldMutex);
		s.held++;
		if (outstanding)
			*outstanding = true;
	}
	// The state outlives the waiter (stop() destroys the waiter first, resolving every wait).
	SinkState *state = &s;
	GstElement *element = GST_ELEMENT_CAST(bsink);
	WaitCallback done = [state, element, keep, outstanding](Status released) {
		if (!released && released.error().code() != ErrorCode::Cancelled)
			GST_WARNING_OBJECT(element, "a frame came back late: %s",
					   released.error().message().c_str());
		if (keep)
			gst_buffer_unref(keep);
		std::lock_guard<std::mutex> lock(state->heldMutex);
		if (outstanding)
			*outstanding = false;
		state->held--;
		state->heldChanged.notify_all();
	};
	if (!s.waiter->enqueue(gate.released(), kReleaseTimeout, done)) {
		// No thread to wait on: wait here, bounded, rather than lose track of the frame.
		done(gate.released().wait(kReleaseTimeout));
	}
}

// Before Bye: lets consumers hand back the frames they hold, so that no Release is left unread
// in the sender's sockets when they close (a socket closed with unread data resets the
// connection, and the consumer would see a crash rather than the end of the stream). Bounded,
// and over once releases stop coming for a moment: a consumer's sink may keep its last buffer
// until it sees the end of the stream.
void drainReleases(SinkState &s)
{
	auto allBack = [&s] {
		std::lock_guard<std::mutex> lock(s.heldMutex);
		return s.held == 0;
	};
	uint64_t releases = s.sender->stats().releases;
	int quiet = 0;
	for (auto waited = 0ms; waited < kDrainWait && quiet < 5 && !allBack(); waited += 10ms) {
		std::this_thread::sleep_for(10ms);
		const uint64_t now = s.sender->stats().releases;
		quiet = now == releases ? quiet + 1 : 0;
		releases = now;
	}
}

GstFlowReturn sendCopy(GstBaseSink *sink, GstBuffer *buffer)
{
	SinkState &s = stateOf(sink);
	if (s.pool.empty()) {
		// As many slots as a consumer may hold, so that the next slot is free once the
		// slowest consumer is below its bound: nothing is skipped, the producer waits.
		for (guint i = 0; i < std::max(s.maxInFlight, 2u); ++i) {
			Result<CopySlot> slot = makeSlot(s.info, s.format);
			if (!slot) {
				freePool(s);
				GST_ELEMENT_ERROR(
					sink, RESOURCE, NO_SPACE_LEFT,
					(_("Could not allocate shared memory for frames.")),
					("%s", slot.error().message().c_str()));
				return GST_FLOW_ERROR;
			}
			s.pool.push_back(std::move(*slot));
		}
	}
	if (!waitForRoom(s))
		return GST_FLOW_FLUSHING;
	CopySlot &slot = s.pool[s.nextSlot];
	if (!reclaim(s, slot)) {
		if (s.flushing.load())
			return GST_FLOW_FLUSHING;
		s.counters.dropped++;
		GST_WARNING_OBJECT(sink,
				   "a consumer held the frame of slot %zu for over %lld ms: "
				   "frame dropped",
				   s.nextSlot, static_cast<long long>(kSlotWait.count() * 1000));
		return GST_FLOW_OK;
	}
	if (!copyInto(sink, buffer, slot))
		return GST_FLOW_ERROR;
	s.nextSlot = (s.nextSlot + 1) % s.pool.size();
	Result<uint32_t> sent = s.sender->send(*slot.frame);
	if (!sent) {
		GST_ELEMENT_ERROR(sink, RESOURCE, WRITE,
				  (_("Could not send a frame to consumers.")),
				  ("%s", sent.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	trackRelease(sink, slot.gate, nullptr, slot.outstanding);
	s.counters.copied++;
	if (*sent == 0)
		s.counters.unsent++;
	return GST_FLOW_OK;
}

} // namespace gpuhandle::gst::sink
