// gpuhandlesink ! gpuhandlesrc per frame against the bare FrameSender / FrameReceiver they sit on
// (issue 21's `sink-src/NV12/1920x1080`): one 1080p NV12 memfd frame at a time, from a producer to
// a consumer in this process and back (its release), through the elements (a pooled buffer
// pushed into gpuhandlesink, pulled from an appsink after gpuhandlesrc) and through the transport
// alone (a pooled frame sent, received, released), in interleaved rounds.
#include <gpuhandle/backends/backend.h>
#include <gpuhandle/fd.h>
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/release_gate.h>

#include "bench_common.h"
#include "pad_chain.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

using namespace gpuhandle;
using namespace gpuhandle::bench;
using gpuhandle::bench::media::Chain;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kWidth = 1920;
constexpr uint32_t kHeight = 1080;
constexpr size_t kPoolFrames = 4;

// The bare transport: a sender and a receiver on one socket, with a pool of memfd frames whose
// release gates say when each may be sent again.
struct Transport {
	std::unique_ptr<FrameSender> sender;
	std::unique_ptr<FrameReceiver> receiver;
	std::vector<ReleaseGate> gates;
	std::vector<Frame> pool;
	size_t next = 0;
	uint64_t sent = 0;
	std::string error{};

	explicit Transport(const std::string &path)
	{
		FrameSenderOptions so;
		so.socketPath = path;
		auto s = FrameSender::create(std::move(so));
		if (!s) {
			error = s.error().message();
			return;
		}
		sender = std::move(*s);
		FrameReceiverOptions ro;
		ro.socketPath = path;
		ro.connectTimeout = 10s;
		auto r = FrameReceiver::connect(std::move(ro));
		if (!r || !sender->waitForPeers(1, 10s).ok()) {
			error = r ? "the receiver did not connect" : r.error().message();
			return;
		}
		receiver = std::move(*r);
		// Sealed memfd frames from the fd backend, each with the gate of its pool slot.
		gpuhandle::Result<BackendRef> fdBackend = openBackend(BackendKind::Fd);
		if (!fdBackend) {
			error = fdBackend.error().message();
			return;
		}
		AllocateRequest request;
		request.format = PixelFormat::NV12;
		request.width = kWidth;
		request.height = kHeight;
		for (size_t i = 0; i < kPoolFrames; ++i) {
			gpuhandle::Result<Frame> frame = (*fdBackend)->allocate(request);
			gpuhandle::Result<ReleaseGate> gate = ReleaseGate::create();
			if (!frame || !gate) {
				error = !frame ? frame.error().message() : gate.error().message();
				return;
			}
			frame->setRelease(*gate);
			gates.push_back(*gate);
			pool.push_back(std::move(*frame));
		}
	}

	// One frame out and back: sent, received, released; false on any failure.
	bool roundTrip()
	{
		const size_t slot = next++ % pool.size();
		if (sent >= pool.size() &&
		    (!gates[slot].released().wait(5s).ok() || !gates[slot].reset().ok()))
			return false;
		auto delivered = sender->send(pool[slot]);
		sent++;
		if (!delivered || *delivered != 1)
			return false;
		auto frame = receiver->receive(5s);
		if (!frame || !*frame)
			return false;
		return (**frame).release().signal().ok();
	}
};

// The elements: a chain fed by a pad of ours into gpuhandlesink, and gpuhandlesrc into an appsink.
struct Elements {
	std::optional<Chain> producer;
	GstElement *consumer = nullptr;
	GstElement *sink = nullptr;
	GstBufferPool *pool = nullptr;
	std::string error{};

	Elements(const std::string &path, GstCaps *caps)
	{
		// The producer first, caps included (the sink listens from then on), then the
		// consumer; the sink's first frame waits for it.
		// (identity: the chain needs a bin, which one element alone is not.)
		producer.emplace("identity name=first silent=true ! gpuhandlesink sync=false "
				 "wait-for-consumers=1 socket-path=" +
					 path,
				 caps);
		GError *err = nullptr;
		consumer = gst_parse_launch(("gpuhandlesrc socket-path=" + path +
					     " connect-timeout=10000000000 ! appsink name=sink "
					     "sync=false max-buffers=2")
						    .c_str(),
					    &err);
		if (!consumer) {
			error = err ? err->message : "gst_parse_launch";
			g_clear_error(&err);
			return;
		}
		sink = gst_bin_get_by_name(GST_BIN(consumer), "sink");
		if (!producer->error.empty()) {
			error = producer->error;
			return;
		}
		gst_element_set_state(consumer, GST_STATE_PLAYING);
		// The memfd pool the sink proposes, as a source element would use it.
		GstQuery *query = gst_query_new_allocation(caps, TRUE);
		if (gst_pad_peer_query(producer->src, query) &&
		    gst_query_get_n_allocation_pools(query) > 0)
			gst_query_parse_nth_allocation_pool(query, 0, &pool, nullptr, nullptr,
							    nullptr);
		gst_query_unref(query);
		if (!pool || !gst_buffer_pool_set_active(pool, TRUE))
			error = "gpuhandlesink proposed no memfd pool";
	}
	~Elements()
	{
		if (consumer)
			gst_element_set_state(consumer, GST_STATE_NULL);
		producer.reset();
		if (pool) {
			gst_buffer_pool_set_active(pool, FALSE);
			gst_object_unref(pool);
		}
		if (sink)
			gst_object_unref(sink);
		if (consumer)
			gst_object_unref(consumer);
	}
	Elements(const Elements &) = delete;
	Elements &operator=(const Elements &) = delete;

	// One frame out and back: a pooled buffer pushed, pulled from the appsink and dropped (its
	// release goes back to the sink, and the buffer to its pool).
	bool roundTrip()
	{
		GstBuffer *buffer = nullptr;
		if (gst_buffer_pool_acquire_buffer(pool, &buffer, nullptr) != GST_FLOW_OK)
			return false;
		if (gst_pad_push(producer->src, buffer) != GST_FLOW_OK)
			return false;
		GstSample *sample =
			gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
		if (!sample)
			return false;
		gst_sample_unref(sample);
		return true;
	}
};

} // namespace

int main(int argc, char **argv)
{
	const Options options = parseOptions(argc, argv);
	gst_init(&argc, &argv);
	Report report("gpuhandlesink ! gpuhandlesrc against FrameSender / FrameReceiver", options);
	GstVideoInfo info;
	gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, kWidth, kHeight);
	GST_VIDEO_INFO_FPS_N(&info) = 30;
	GST_VIDEO_INFO_FPS_D(&info) = 1;
	GstCaps *caps = gst_video_info_to_caps(&info);
	const std::string dir = "/tmp/gpuhandle-bench-sink-src-" + std::to_string(getpid());
	int status = 1;
	{
		Transport bare(dir + "-bare.sock");
		Elements elements(dir + "-elements.sock", caps);
		bool ok = bare.error.empty() && elements.error.empty();
		if (!ok)
			std::printf("  could not start: %s\n",
				    (bare.error.empty() ? elements.error : bare.error).c_str());
		const int perRound = options.iterations(300, 20);
		const int rounds = options.iterations(9, 2);
		// Warm-up: connections, pools, first mappings, and the per-thread block lists and
		// the receivers' gates grown to what the threads' timing needs.
		for (int i = 0; ok && i < 10 * perRound; i++)
			ok = bare.roundTrip() && elements.roundTrip();
		std::vector<double> bareNs, elementNs;
		uint64_t bareAllocs = 0, elementAllocs = 0;
		for (int r = 0; ok && r < rounds; r++) {
			uint64_t allocs = heapAllocations();
			auto start = Clock::now();
			for (int i = 0; ok && i < perRound; i++)
				ok = bare.roundTrip();
			bareNs.push_back(nsSince(start) / perRound);
			bareAllocs += heapAllocations() - allocs;
			allocs = heapAllocations();
			start = Clock::now();
			for (int i = 0; ok && i < perRound; i++)
				ok = elements.roundTrip();
			elementNs.push_back(nsSince(start) / perRound);
			elementAllocs += heapAllocations() - allocs;
		}
		if (ok) {
			const double frames = static_cast<double>(perRound) * rounds;
			bench::Result result;
			result.name = "sink-src/NV12/1920x1080";
			result.baseline = "FrameSender -> FrameReceiver, memfd frames";
			result.baselineValue = statsOf(bareNs).median;
			result.value = statsOf(elementNs).median;
			result.targetRatio = 2.0;
			result.note = "one frame out and back at a time";
			report.add(result);
			// Target: none in steady state, through the elements (the transport's
			// own count is the baseline column).
			bench::Result allocs;
			allocs.name = "sink-src/NV12/1920x1080/allocs";
			allocs.baseline =
				"heap allocations per frame, FrameSender -> FrameReceiver";
			allocs.baselineValue = static_cast<double>(bareAllocs) / frames;
			allocs.value = static_cast<double>(elementAllocs) / frames;
			allocs.unit = "al";
			allocs.maxValue = kNoAllocations;
			allocs.note = "both processes' sides in this one process: gpuhandlesink, "
				      "gpuhandlesrc, appsink";
			report.add(allocs);
			status = report.finish();
		} else {
			std::printf("  a round trip failed\n");
		}
	}
	gst_caps_unref(caps);
	return status;
}
