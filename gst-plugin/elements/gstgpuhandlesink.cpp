// gpuhandlesink: video frames to other processes over a Unix socket (gpuhandle's FrameSender).
#include "gstgpuhandlesink.h"

#include "gstgpuhandlestats.h"
#include "gstgpuhandletransport.h"

#include <chrono>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <gst/gpuhandle/gstgpuhandlebufferpool.hpp>
#include <gst/gpuhandle/gstgpuhandleconvert.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.hpp>
#include <gst/gpuhandle/gstgpuhandlemetabytes.hpp>
#include <gst/gpuhandle/gstgpuhandlevideo.hpp>

GST_DEBUG_CATEGORY(gst_gpu_handle_sink_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_sink_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;
using namespace gpuhandle::gst::sink;
using namespace std::chrono_literals;

namespace {

// The longest wait for `wait-for-consumers` before the first frame.
constexpr auto kConsumerWait = 30s;

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_TYPE(GstGpuHandleSink, gst_gpu_handle_sink, GST_TYPE_BASE_SINK)
#pragma GCC diagnostic pop
GST_ELEMENT_REGISTER_DEFINE(gpuhandlesink, "gpuhandlesink", GST_RANK_NONE,
			    GST_TYPE_GPU_HANDLE_SINK);

namespace gpuhandle::gst::sink {

SinkState &stateOf(void *self)
{
	return *static_cast<GstGpuHandleSink *>(self)->state;
}

} // namespace gpuhandle::gst::sink

namespace {

// The properties a listening sender was made with.
ListenKey listenKeyOf(const SinkState &s)
{
	return { s.socketPath, s.socketMode, s.maxConsumers, s.maxInFlight, s.allowedUids };
}

// Binds the socket (under s.mutex), so that a path that cannot be used fails the state change
// with one error, before any buffer, and the path is this element's while it runs. Consumers are
// greeted once the caps are known (set_caps).
gboolean listen(GstBaseSink *bsink)
{
	SinkState &s = stateOf(bsink);
	if (s.socketPath.empty()) {
		GST_ELEMENT_ERROR(bsink, RESOURCE, NOT_FOUND,
				  (_("No socket path was given (the socket-path property).")),
				  ("socket-path is empty"));
		return FALSE;
	}
	Result<PeerRule> peers = parseAllowedUids(s.allowedUids);
	if (!peers) {
		GST_ELEMENT_ERROR(bsink, RESOURCE, SETTINGS,
				  (_("The allowed-uids property is not a list of user ids.")),
				  ("%s", peers.error().message().c_str()));
		return FALSE;
	}
	s.peers = *peers;
	FrameSenderOptions o;
	o.socketPath = s.socketPath;
	o.socketMode = s.socketMode;
	o.peers = s.peers;
	o.maxPeers = s.maxConsumers;
	o.maxInFlightPerPeer = s.maxInFlight;
	o.waitForCaps = true;
	GstElement *element = GST_ELEMENT_CAST(bsink);
	// A consumer's crash or a refused one is the consumer's problem: logged, never an error.
	o.log = [element](const Error &e) {
		GST_WARNING_OBJECT(element, "%s", e.message().c_str());
	};
	// Wakes waitForRoom. Called under the sender's lock: the sink never calls the sender
	// under heldMutex, so this order is the only one.
	SinkState *state = &s;
	o.roomChanged = [state] {
		std::lock_guard<std::mutex> held(state->heldMutex);
		state->roomEvents++;
		state->heldChanged.notify_all();
	};
	Result<std::unique_ptr<FrameSender>> sender = FrameSender::create(std::move(o));
	if (!sender) {
		if (sender.error().code() == ErrorCode::InvalidState)
			GST_ELEMENT_ERROR(bsink, RESOURCE, BUSY,
					  (_("Another producer is using the socket \"%s\"."),
					   s.socketPath.c_str()),
					  ("%s", sender.error().message().c_str()));
		else
			GST_ELEMENT_ERROR(bsink, RESOURCE, OPEN_WRITE,
					  (_("Could not listen on the socket \"%s\"."),
					   s.socketPath.c_str()),
					  ("%s", sender.error().message().c_str()));
		return FALSE;
	}
	s.sender = std::move(*sender);
	s.listening = listenKeyOf(s);
	GST_INFO_OBJECT(bsink, "listening on %s", s.socketPath.c_str());
	return TRUE;
}

// The socket is bound when the element goes to READY (gst-launch-1.0's first step), so that an
// unusable path fails there with the element's one error: GstBaseSink posts a second, generic
// one when start() fails. start() binds again only after a stop() or changed properties.
GstStateChangeReturn changeState(GstElement *element, GstStateChange transition)
{
	SinkState &s = stateOf(element);
	if (transition == GST_STATE_CHANGE_NULL_TO_READY) {
		std::lock_guard<std::mutex> lock(s.mutex);
		if (!s.sender && !listen(GST_BASE_SINK_CAST(element)))
			return GST_STATE_CHANGE_FAILURE;
	}
	const GstStateChangeReturn ret = GST_ELEMENT_CLASS(gst_gpu_handle_sink_parent_class)
						 ->change_state(element, transition);
	if (transition == GST_STATE_CHANGE_READY_TO_NULL) {
		std::unique_ptr<FrameSender> sender;
		std::lock_guard<std::mutex> lock(s.mutex);
		sender = std::move(s.sender); // Bye, and the socket file removed
		s.listening.reset();
	}
	return ret;
}

gboolean start(GstBaseSink *bsink)
{
	SinkState &s = stateOf(bsink);
	std::lock_guard<std::mutex> lock(s.mutex);
	s.counters.reset();
	s.waitedForConsumers = false;
	s.skippingStuck = false;
	s.frameTiming = {};
	s.latency = GST_CLOCK_TIME_NONE;
	gst_segment_init(&s.segment, GST_FORMAT_UNDEFINED);
	// Bound at READY, unless stopped since or the properties changed in READY.
	if (!s.sender || s.listening != listenKeyOf(s)) {
		s.sender.reset();
		if (!listen(bsink))
			return FALSE;
	}
	// The streaming thread reads these without the lock (the properties are MUTABLE_READY).
	s.config = { s.maxConsumers, s.maxInFlight, s.waitForConsumers, s.releaseTimeout };
	if (!startReleases(bsink))
		return FALSE;
	Result<std::shared_ptr<WaiterThread>> waiter = WaiterThread::create("gpuhandlesink");
	if (!waiter) {
		GST_ELEMENT_ERROR(bsink, RESOURCE, FAILED, (_("Could not start a thread.")),
				  ("%s", waiter.error().message().c_str()));
		return FALSE;
	}
	{
		// Read under heldMutex by the releases (gstgpuhandlesinkrelease.cpp).
		std::lock_guard<std::mutex> held(s.heldMutex);
		s.waiter = *waiter;
	}
	return TRUE;
}

gboolean stop(GstBaseSink *bsink)
{
	SinkState &s = stateOf(bsink);
	std::unique_ptr<FrameSender> sender;
	std::shared_ptr<WaiterThread> waiter;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		sender = std::move(s.sender);
		s.listening.reset();
		std::lock_guard<std::mutex> held(s.heldMutex);
		waiter = std::move(s.waiter);
	}
	// Bye to every consumer; every frame they held is released (the sender signals its gates,
	// which drops the zero-copy buffers), the waiter's destructor resolves the waits on
	// consumer fences, and any frame still held is counted back.
	sender.reset();
	waiter.reset();
	releaseAllHeld(s);
	freePool(s);
	std::lock_guard<std::mutex> lock(s.heldMutex);
	s.spareGates.clear();
	return TRUE;
}

gboolean setCaps(GstBaseSink *bsink, GstCaps *caps)
{
	SinkState &s = stateOf(bsink);
	GstVideoInfo info;
	if (!gst_video_info_from_caps(&info, caps)) {
		GST_ELEMENT_ERROR(bsink, CORE, NEGOTIATION, (_("The input is not raw video.")),
				  ("caps %" GST_PTR_FORMAT, static_cast<void *>(caps)));
		return FALSE;
	}
	Result<PixelFormat> format = pixelFormatOf(GST_VIDEO_INFO_FORMAT(&info));
	if (!format) {
		GST_ELEMENT_ERROR(bsink, CORE, NEGOTIATION,
				  (_("The video format is not supported by gpuhandle.")),
				  ("%s", format.error().message().c_str()));
		return FALSE;
	}
	s.info = info;
	s.format = *format;
	// Frames of the old pool still held count against the consumers' bound (see held).
	freePool(s);
	gchar *text = gst_caps_to_string(caps);
	std::string capsText(text);
	g_free(text);
	std::lock_guard<std::mutex> lock(s.mutex);
	// The sender is made in start(); the first caps let consumers in.
	if (!s.sender) {
		GST_ELEMENT_ERROR(bsink, CORE, NEGOTIATION, (_("The element was not negotiated.")),
				  ("caps before the element started"));
		return FALSE;
	}
	if (Status changed = s.sender->setCaps(capsText); !changed) {
		GST_ELEMENT_ERROR(bsink, CORE, NEGOTIATION,
				  (_("Could not send the new caps to consumers.")),
				  ("%s", changed.error().message().c_str()));
		return FALSE;
	}
	GST_INFO_OBJECT(bsink, "caps for consumers: %s", capsText.c_str());
	return TRUE;
}

// `wait-for-consumers`: before the first frame, until that many connected (bounded; a flush
// ends it).
void waitForConsumers(GstBaseSink *bsink)
{
	SinkState &s = stateOf(bsink);
	if (s.waitedForConsumers)
		return;
	s.waitedForConsumers = true;
	const guint wanted = s.config.waitForConsumers;
	if (wanted == 0)
		return;
	for (auto waited = 0ms; waited < kConsumerWait && !s.flushing.load(); waited += 100ms) {
		if (s.sender->waitForPeers(wanted, 100ms).ok())
			return;
	}
	GST_WARNING_OBJECT(bsink, "fewer than %u consumers connected: sending anyway", wanted);
}

// Shared memory (tmpfs, hugetlbfs: memfds, shm_open files) crosses only sealed against
// shrinking: consumers refuse it otherwise, also as a DMA-BUF object. Real DMA-BUFs pass.
bool shmemSealedOrNone(int fd)
{
	struct stat st {};
	struct statfs fs {};
	if (fstat(fd, &st) != 0 || fstatfs(fd, &fs) != 0)
		return false;
	const auto type = static_cast<unsigned long>(fs.f_type);
	if (!S_ISREG(st.st_mode) || (type != TMPFS_MAGIC && type != HUGETLBFS_MAGIC))
		return true;
	const int seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & F_SEAL_SHRINK) != 0;
}

// Why `frame` cannot cross the transport as it is (nullptr when it can): every resource
// fd-backed, shared memory sealed.
const char *whyNotCrossing(const Frame &frame)
{
	for (uint32_t r = 0; r < frame.numResources(); ++r) {
		const Resource &resource = frame.resource(r);
		if (const ShmFd *shm = resource.get<ShmFd>()) {
			if (!shm->isSealed())
				return "shared memory not sealed against shrinking";
		} else if (const DmaBuf *dmabuf = resource.get<DmaBuf>()) {
			for (uint32_t o = 0; o < dmabuf->desc().numObjects; ++o)
				if (!shmemSealedOrNone(dmabuf->desc().objects[o].fd.get()))
					return "a DMA-BUF object over unsealed shared memory";
		} else if (resource.kind() != ResourceKind::VulkanMemoryFd) {
			return "not every resource is fd-backed";
		}
	}
	return nullptr;
}

// The buffer as a frame over its own fds, when it is fd memory (ours from the proposed pool,
// GstFdMemory, DMA-BUFs, fd-backed GpuHandle memory); nullopt when it must be copied.
std::optional<Frame> fdFrameOf(GstBaseSink *bsink, GstBuffer *buffer)
{
	SinkState &s = stateOf(bsink);
	Result<Frame> frame = Error(ErrorCode::WrongKind, "buffer", "not fd memory");
	switch (bufferMemoryOf(buffer)) {
	case BufferMemory::GpuHandle: frame = frameFromBuffer(buffer); break;
	case BufferMemory::Fd:
	case BufferMemory::DmaBuf: frame = frameFromFdBuffer(buffer, s.info); break;
	default: return std::nullopt;
	}
	if (!frame) {
		GST_LOG_OBJECT(bsink, "copying: %s", frame.error().message().c_str());
		return std::nullopt;
	}
	if (const char *why = whyNotCrossing(*frame)) {
		GST_LOG_OBJECT(bsink, "copying: %s", why);
		return std::nullopt;
	}
	return std::move(*frame);
}

} // namespace

std::span<const std::byte> gpuhandle::gst::sink::metasOf(SinkState &s, GstBuffer *buffer)
{
	unsigned leftOut = 0;
	const size_t size = writeMetaBytes(buffer, s.metaBytes, leftOut);
	if (leftOut) {
		s.counters.metasLeftOut += leftOut;
		GST_DEBUG("%u metas of a buffer left out: more than a frame's %u bytes of metas",
			  leftOut, kWireMaxAttachment);
	}
	return { s.metaBytes.data(), size };
}

namespace {

// Sends the buffer's own memory; the buffer stays alive (its pool does not reuse it) until
// every consumer that got it released it. nullopt when the frame cannot cross (its fence).
std::optional<GstFlowReturn> sendZeroCopy(GstBaseSink *bsink, GstBuffer *buffer, Frame frame)
{
	SinkState &s = stateOf(bsink);
	Result<ReleaseGate> gate = takeGate(s);
	if (!gate) {
		GST_ELEMENT_ERROR(bsink, RESOURCE, FAILED,
				  (_("Could not send a frame to consumers.")),
				  ("%s", gate.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	frame.setRelease(*gate);
	if (!waitForRoom(s))
		return GST_FLOW_FLUSHING;
	Result<uint32_t> sent = s.sender->send(frame, s.frameTiming, metasOf(s, buffer));
	if (!sent) {
		if (sent.error().code() == ErrorCode::NotSupported) {
			GST_LOG_OBJECT(bsink, "copying: %s", sent.error().message().c_str());
			return std::nullopt;
		}
		GST_ELEMENT_ERROR(bsink, RESOURCE, WRITE,
				  (_("Could not send a frame to consumers.")),
				  ("%s", sent.error().message().c_str()));
		return GST_FLOW_ERROR;
	}
	s.counters.zeroCopy++;
	if (*sent == 0)
		s.counters.unsent++;
	trackRelease(bsink, *gate, gst_buffer_ref(buffer), nullptr, true);
	return GST_FLOW_OK;
}

GstFlowReturn render(GstBaseSink *bsink, GstBuffer *buffer)
{
	SinkState &s = stateOf(bsink);
	if (!s.sender) {
		GST_ELEMENT_ERROR(bsink, CORE, NEGOTIATION, (_("The element was not negotiated.")),
				  ("no caps reached gpuhandlesink"));
		return GST_FLOW_NOT_NEGOTIATED;
	}
	waitForConsumers(bsink);
	s.counters.frames++;
	timeFrame(bsink, buffer);
	if (std::optional<Frame> frame = fdFrameOf(bsink, buffer)) {
		if (std::optional<GstFlowReturn> ret =
			    sendZeroCopy(bsink, buffer, std::move(*frame)))
			return *ret;
	}
	return sendCopy(bsink, buffer);
}

// EOS ends the stream at every consumer too (their gpuhandlesrc pushes EOS), after the frames
// already sent, as GStreamer's unixfdsink does; the connections stay for a next stream.
gboolean event(GstBaseSink *bsink, GstEvent *event)
{
	if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT)
		segmentChanged(bsink, event);
	if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
		postStats(GST_ELEMENT(bsink)); // before basesink posts EOS on the bus
		SinkState &s = stateOf(bsink);
		std::lock_guard<std::mutex> lock(s.mutex);
		if (s.sender) {
			Result<uint32_t> told = s.sender->endStream();
			GST_DEBUG_OBJECT(bsink, "end of stream sent to %u consumers",
					 told.ok() ? *told : 0u);
		}
	}
	return GST_BASE_SINK_CLASS(gst_gpu_handle_sink_parent_class)->event(bsink, event);
}

// Upstream writes straight into memfds: a pool of GpuHandle memory over the fd backend's
// sealed memfds, which render() sends without a copy.
gboolean proposeAllocation(GstBaseSink *bsink, GstQuery *query)
{
	SinkState &s = stateOf(bsink);
	gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
	GstCaps *caps = nullptr;
	gboolean needPool = FALSE;
	gst_query_parse_allocation(query, &caps, &needPool);
	GstVideoInfo info;
	if (!caps || !needPool || !gst_video_info_from_caps(&info, caps))
		return TRUE;
	BackendRef fdBackend;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		if (!s.fdBackend) {
			Result<BackendRef> backend = openBackend(BackendKind::Fd);
			if (!backend) {
				GST_INFO_OBJECT(bsink, "no memfd pool: %s",
						backend.error().message().c_str());
				return TRUE;
			}
			s.fdBackend = *backend;
		}
		fdBackend = s.fdBackend;
	}
	GstBufferPool *pool = bufferPoolNew(fdBackend, FrameStorage::Buffer);
	GstStructure *config = gst_buffer_pool_get_config(pool);
	// Grows on demand up to what all consumers together may hold, plus the one upstream
	// writes: a consumer stuck at its bound holds its buffers while the others go on.
	const guint min = 2;
	const guint max = s.config.poolMax();
	gst_buffer_pool_config_set_params(config, caps, static_cast<guint>(info.size), min, max);
	if (!gst_buffer_pool_set_config(pool, config)) {
		GST_INFO_OBJECT(bsink, "the memfd pool refused %" GST_PTR_FORMAT,
				static_cast<void *>(caps));
		gst_object_unref(pool);
		return TRUE;
	}
	gst_query_add_allocation_pool(query, pool, static_cast<guint>(info.size), min, max);
	gst_object_unref(pool);
	return TRUE;
}

gboolean unlock(GstBaseSink *bsink)
{
	SinkState &s = stateOf(bsink);
	s.flushing = true;
	// Ends the waits for room and for a pool slot now (their predicates read the flag).
	std::lock_guard<std::mutex> lock(s.heldMutex);
	s.heldChanged.notify_all();
	return TRUE;
}

gboolean unlockStop(GstBaseSink *bsink)
{
	stateOf(bsink).flushing = false;
	return TRUE;
}

// Frames are due on the monotonic clock: with the monotonic system clock (a pipeline's usual
// clock) a pipeline time is one as it is; with another, each frame's time is converted.
gboolean setClock(GstElement *element, GstClock *clock)
{
	stateOf(element).monotonicClock = isMonotonicClock(clock);
	return GST_ELEMENT_CLASS(gst_gpu_handle_sink_parent_class)->set_clock(element, clock);
}

void finalize(GObject *object)
{
	auto *self = static_cast<GstGpuHandleSink *>(static_cast<void *>(object));
	freePool(*self->state);
	delete self->state;
	self->state = nullptr;
	G_OBJECT_CLASS(gst_gpu_handle_sink_parent_class)->finalize(object);
}

} // namespace

static void gst_gpu_handle_sink_class_init(GstGpuHandleSinkClass *klass)
{
	GObjectClass *object = G_OBJECT_CLASS(klass);
	object->finalize = finalize;
	installProperties(object);

	GstElementClass *element = GST_ELEMENT_CLASS(klass);
	gst_element_class_set_static_metadata(
		element, "gpuhandle sink", "Sink/Video",
		"Sends video frames to other processes over a Unix socket: fd memory without a "
		"copy, other memory copied into sealed memfds",
		"gpuhandle developers");
	GstCaps *sinkCaps = templateCaps(GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY);
	gst_caps_append(sinkCaps, templateCaps(GST_CAPS_FEATURE_MEMORY_GPU_HANDLE));
	gst_element_class_add_pad_template(element, gst_pad_template_new("sink", GST_PAD_SINK,
									 GST_PAD_ALWAYS, sinkCaps));
	gst_caps_unref(sinkCaps);

	GstBaseSinkClass *base = GST_BASE_SINK_CLASS(klass);
	base->start = start;
	base->stop = stop;
	base->set_caps = setCaps;
	base->render = render;
	base->event = event;
	base->propose_allocation = proposeAllocation;
	element->set_clock = setClock;
	element->change_state = changeState;
	base->unlock = unlock;
	base->unlock_stop = unlockStop;
	GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_sink_debug, "gpuhandlesink", 0, "gpuhandle sink");
}

static void gst_gpu_handle_sink_init(GstGpuHandleSink *self)
{
	self->state = new SinkState();
	self->state->element = GST_ELEMENT_CAST(self);
	// The last sample would pin a buffer of the small pool proposed upstream.
	gst_base_sink_set_last_sample_enabled(GST_BASE_SINK(self), FALSE);
}
