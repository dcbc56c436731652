// gpuhandlesrc's connections: to the producer at start, to the next one after it went away
// (reconnect), and the caps each brings.
#include "gstgpuhandlesrc.h"

#include <algorithm>
#include <chrono>

GST_DEBUG_CATEGORY_EXTERN(gst_gpu_handle_src_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_src_debug

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace gpuhandle::gst::src {

namespace {

// One connect() of a reconnect waits at most this long (a producer restarted by a supervisor
// binds its socket at once, and greets once it has caps); then it connects again.
constexpr auto kReconnectAttempt = 10s;

} // namespace

Result<std::unique_ptr<FrameReceiver>> connectProducer(GstBaseSrc *bsrc, const std::string &path,
						       WaitDuration timeout)
{
	SrcState &s = stateOf(bsrc);
	FrameReceiverOptions o;
	o.socketPath = path;
	o.connectTimeout = timeout;
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		o.peers = s.peers;
	}
	o.cancel = &s.flushing;
	GstElement *element = GST_ELEMENT_CAST(bsrc);
	o.log = [element](const Error &e) {
		GST_WARNING_OBJECT(element, "%s", e.message().c_str());
	};
	return FrameReceiver::connect(std::move(o));
}

bool adoptCaps(GstBaseSrc *bsrc, const std::string &caps)
{
	SrcState &s = stateOf(bsrc);
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		if (caps == s.caps)
			return true;
		s.caps = caps;
	}
	GST_INFO_OBJECT(bsrc, "the producer's caps changed: %s", caps.c_str());
	s.shmFiles.clear(); // the producer's pool for the old caps goes
	if (gst_base_src_negotiate(bsrc))
		return true;
	GST_ELEMENT_ERROR(bsrc, CORE, NEGOTIATION,
			  (_("Downstream does not accept the producer's new caps.")),
			  ("%s", caps.c_str()));
	return false;
}

GstFlowReturn reconnectProducer(GstBaseSrc *bsrc, const char *why)
{
	SrcState &s = stateOf(bsrc);
	std::string path;
	std::chrono::nanoseconds limit{};
	{
		std::lock_guard<std::mutex> lock(s.mutex);
		path = s.socketPath;
		limit = std::chrono::nanoseconds(s.reconnectTimeoutNs);
	}
	GST_INFO_OBJECT(bsrc, "the producer went away (%s): waiting for the next one on %s", why,
			path.c_str());
	{
		// Its frames still downstream keep what they need; its files are not this
		// connection's any more.
		std::unique_ptr<FrameReceiver> old;
		std::lock_guard<std::mutex> lock(s.mutex);
		old = std::move(s.receiver);
	}
	s.shmFiles.clear();
	const bool forever = limit.count() == 0;
	const auto deadline = std::chrono::steady_clock::now() + limit;
	for (;;) {
		if (s.flushing.load())
			return GST_FLOW_FLUSHING;
		const auto left = deadline - std::chrono::steady_clock::now();
		if (!forever && left <= 0ns) {
			GST_ELEMENT_ERROR(bsrc, RESOURCE, READ,
					  (_("The frame producer did not come back in time.")),
					  ("no producer on %s within %.1f s after %s", path.c_str(),
					   std::chrono::duration<double>(limit).count(), why));
			return GST_FLOW_ERROR;
		}
		const WaitDuration attempt =
			forever ? WaitDuration(kReconnectAttempt)
				: std::min<WaitDuration>(
					  std::chrono::duration_cast<WaitDuration>(left),
					  kReconnectAttempt);
		Result<std::unique_ptr<FrameReceiver>> receiver =
			connectProducer(bsrc, path, attempt);
		if (!receiver) {
			if (receiver.error().code() == ErrorCode::Cancelled)
				return GST_FLOW_FLUSHING;
			GST_DEBUG_OBJECT(bsrc, "no producer yet: %s",
					 receiver.error().message().c_str());
			continue;
		}
		std::string caps = (*receiver)->caps();
		{
			std::lock_guard<std::mutex> lock(s.mutex);
			s.receiver = std::move(*receiver);
			s.capsMessages = s.receiver->capsMessages();
		}
		s.reconnects++;
		s.timing.reset();
		s.timing.discont = true;
		GST_INFO_OBJECT(bsrc, "a producer is back on %s: %s", path.c_str(), caps.c_str());
		return adoptCaps(bsrc, caps) ? GST_FLOW_OK : GST_FLOW_NOT_NEGOTIATED;
	}
}

} // namespace gpuhandle::gst::src
