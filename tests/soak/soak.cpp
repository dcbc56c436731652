// Soak: N frames each through the frame transport between two processes, through
// gpuhandlesink / gpuhandlesrc between two processes, and through gpuhandleupload !
// gpuhandledownload, with resident memory and open fds sampled every tenth of each run: after
// warm-up both must stay flat. CI runs 20,000 frames; bench/run.sh 1,000,000.
// usage: gpuhandle-soak [FRAMES]
#include <gpuhandle/frame_transport.h>
#include <gpuhandle/layout.h>

#include "fd_count.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gst/gst.h>

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

// Growth allowed after warm-up: allocator and page-cache noise, far below one frame per 1,000.
constexpr long kRssSlackKiB = 4096;
// Fds that come and go with the frames in flight when a sample is taken: up to max-in-flight
// frames and the pool's spares, each with its memfd, GStreamer's dup of it, its release gate's
// eventfd and a pending release watch (seen: 19 on the sink's side). A leak of one fd per 500
// frames over 20,000 frames already exceeds it.
constexpr int kFdSlack = 32;
// A pipeline's fds are judged otherwise: its buffer pools grow to a new high-water mark whenever
// the consumer process lags (the sink's side was seen at 41 fds, then 85 for the rest of a
// run), so its count steps up without a leak. Once the pipeline is gone its count must come back
// to what it was before, but for what GStreamer keeps for the process (the system clock's poll)
// ...
constexpr int kFdEndSlack = 4;
// ... and while it runs it may hold at most this many more than at the first tenth: pools that
// grow without end cross it.
constexpr int kPipelineFdBound = 128;
// How long a pipeline may take to reach EOS (the slowest, gpuhandlesink's, takes 7 s here).
constexpr GstClockTime kRunTimeout = 240 * GST_SECOND;
// AddressSanitizer keeps freed memory in quarantine (up to 256 MiB): resident memory is not a
// leak measure there, fds still are.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCheckResident = false;
#else
constexpr bool kCheckResident = true;
#endif

long residentKiB()
{
	long pages = 0, resident = 0;
	if (FILE *f = std::fopen("/proc/self/statm", "r")) {
		if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		std::fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

// Memory and fds at each tenth of a run; flat when nothing grows after the first tenth.
struct Samples {
	const char *name;
	std::vector<long> rss;
	std::vector<int> fds;
	// A pipeline's: fds before it was made and once it was gone (-1: not a pipeline).
	int fdsBefore = -1;
	int fdsAfter = -1;

	void take()
	{
		rss.push_back(residentKiB());
		fds.push_back(test::openFdCount());
	}
	// Flat: after the first tenth (warm-up), resident memory grows by at most the slack, and
	// the second half of the run holds at most kFdSlack more fds than the first; a pipeline's
	// fds come back once it is gone and stay within kPipelineFdBound meanwhile.
	bool flat(uint64_t frames, double seconds) const
	{
		const size_t n = rss.size();
		long maxRss = 0;
		int firstHalfFds = 0, secondHalfFds = 0, minFds = 1 << 30;
		for (size_t i = 1; i < n; ++i) {
			maxRss = std::max(maxRss, rss[i]);
			minFds = std::min(minFds, fds[i]);
			int &half = i <= n / 2 ? firstHalfFds : secondHalfFds;
			half = std::max(half, fds[i]);
		}
		const long growth = n > 1 ? maxRss - rss[1] : 0;
		const int maxFds = std::max(firstHalfFds, secondHalfFds);
		const bool fdsOk = fdsBefore < 0 ? secondHalfFds <= firstHalfFds + kFdSlack
						 : fdsAfter <= fdsBefore + kFdEndSlack && n > 1 &&
							   maxFds <= fds[1] + kPipelineFdBound;
		const bool ok = n > 2 && (growth <= kRssSlackKiB || !kCheckResident) && fdsOk;
		std::printf("soak %s: %llu frames in %.1f s, resident %ld -> %ld KiB after warm-up "
			    "(+%ld KiB), fds %d..%d",
			    name, static_cast<unsigned long long>(frames), seconds,
			    n > 1 ? rss[1] : 0, n ? rss.back() : 0, growth, minFds, maxFds);
		if (fdsBefore >= 0)
			std::printf(", %d before and %d after the pipeline", fdsBefore, fdsAfter);
		std::printf(": %s\n", ok ? "flat" : "GROWING");
		return ok;
	}
};

struct ProbeState {
	uint64_t frames = 0;
	uint64_t every = 1;
	Samples *samples = nullptr;
};

GstPadProbeReturn countFrame(GstPad *, GstPadProbeInfo *, gpointer data)
{
	auto *state = static_cast<ProbeState *>(data);
	if (++state->frames % state->every == 0)
		state->samples->take();
	return GST_PAD_PROBE_OK;
}

// Runs `description` to EOS, sampling at the pad of its element "sink" every tenth of
// `frames`; true when all arrived and memory and fds stayed flat.
bool soakPipeline(const char *name, const std::string &description, uint64_t frames)
{
	Samples samples{ name, {}, {} };
	samples.fdsBefore = test::openFdCount();
	GError *parseError = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &parseError);
	if (!pipeline || parseError || !GST_IS_BIN(pipeline)) {
		std::printf("soak %s: %s\n", name,
			    parseError ? parseError->message : "no pipeline");
		g_clear_error(&parseError);
		if (pipeline)
			gst_object_unref(pipeline);
		std::fflush(stdout);
		return false;
	}
	GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
	GstPad *pad = gst_element_get_static_pad(sink, "sink");
	ProbeState state{ 0, std::max<uint64_t>(frames / 10, 1), &samples };
	gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, countFrame, &state, nullptr);
	const auto start = std::chrono::steady_clock::now();
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(pipeline);
	GstMessage *msg = gst_bus_timed_pop_filtered(
		bus, kRunTimeout, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
	const bool eos = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
	if (!msg)
		std::printf("soak %s: no end within %llu s\n", name,
			    static_cast<unsigned long long>(kRunTimeout / GST_SECOND));
	if (msg && !eos) {
		GError *e = nullptr;
		gst_message_parse_error(msg, &e, nullptr);
		std::printf("soak %s: %s\n", name, e ? e->message : "error");
		g_clear_error(&e);
	}
	if (msg)
		gst_message_unref(msg);
	const double seconds =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	gst_object_unref(bus);
	gst_object_unref(pad);
	gst_object_unref(sink);
	gst_element_set_state(pipeline, GST_STATE_NULL);
	gst_object_unref(pipeline);
	// The last references may go on GStreamer's threads (a pool thread, the sink's release
	// waiter): the count is read until it is back, for 5 s at most.
	const auto deadline = std::chrono::steady_clock::now() + 5s;
	do {
		samples.fdsAfter = test::openFdCount();
		if (samples.fdsAfter <= samples.fdsBefore + kFdEndSlack)
			break;
		std::this_thread::sleep_for(10ms);
	} while (std::chrono::steady_clock::now() < deadline);
	if (state.frames != frames)
		std::printf("soak %s: %llu of %llu frames\n", name,
			    static_cast<unsigned long long>(state.frames),
			    static_cast<unsigned long long>(frames));
	const bool ok = eos && state.frames == frames && samples.flat(frames, seconds);
	std::fflush(stdout);
	return ok;
}

std::string source(uint64_t frames)
{
	return "videotestsrc num-buffers=" + std::to_string(frames) +
	       " pattern=ball ! video/x-raw,format=NV12,width=64,height=48";
}

// The consumer process: receives and releases frames until the end, sampling itself.
int consume(const std::string &path, uint64_t frames)
{
	FrameReceiverOptions o;
	o.socketPath = path;
	o.connectTimeout = 10s;
	auto receiver = FrameReceiver::connect(std::move(o));
	if (!receiver.ok())
		return 2;
	Samples samples{ "transport consumer", {}, {} };
	const uint64_t every = std::max<uint64_t>(frames / 10, 1);
	const auto start = std::chrono::steady_clock::now();
	uint64_t got = 0;
	for (;;) {
		auto frame = (*receiver)->receive(10s);
		if (!frame.ok()) {
			std::printf("soak transport consumer: %s\n",
				    frame.error().message().c_str());
			std::fflush(stdout);
			return 3;
		}
		if (!*frame)
			break;
		(void)(**frame).release().signal();
		if (++got % every == 0)
			samples.take();
	}
	const double seconds =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	const bool ok = got == frames && samples.flat(frames, seconds);
	if (got != frames)
		std::printf("soak transport consumer: %llu of %llu frames\n",
			    static_cast<unsigned long long>(got),
			    static_cast<unsigned long long>(frames));
	std::fflush(stdout); // the child leaves with _exit
	return ok ? 0 : 1;
}

bool soakTransport(uint64_t frames)
{
	const std::string path = "/tmp/gpuhandle-soak-" + std::to_string(getpid()) + ".sock";
	std::fflush(stdout);
	const pid_t child = fork();
	if (child == 0)
		_exit(consume(path, frames));
	Samples samples{ "transport producer", {}, {} };
	bool sent = true;
	const auto start = std::chrono::steady_clock::now();
	{
		FrameSenderOptions o;
		o.socketPath = path;
		o.log = [](const Error &e) {
			std::printf("soak transport producer: %s\n", e.message().c_str());
		};
		auto sender = FrameSender::create(std::move(o));
		if (!sender.ok() || !(*sender)->waitForPeers(1, 10s).ok())
			sent = false;
		// Four pooled memfd frames, each reused once its consumer released it.
		const FrameLayout layout = computeLayout(PixelFormat::NV12, 64, 48).value();
		std::vector<std::optional<Frame>> pool;
		std::vector<ReleaseGate> gates;
		for (int i = 0; i < 4 && sent; ++i) {
			gates.push_back(ReleaseGate::create().value());
			FrameDesc d;
			d.format = PixelFormat::NV12;
			d.width = 64;
			d.height = 48;
			d.numResources = 1;
			d.resources[0] =
				ShmFd::create({ .fd = SharedFd(test::makeMemfd(layout.size, true)),
						.size = layout.size })
					.value();
			d.numPlanes = 2;
			for (uint32_t p = 0; p < 2; ++p)
				d.planes[p] = { 0, 0, layout.planes[p].offset,
						layout.planes[p].stride };
			d.release = gates.back();
			pool.push_back(Frame::create(std::move(d)).value());
		}
		const uint64_t every = std::max<uint64_t>(frames / 10, 1);
		for (uint64_t n = 0; n < frames && sent; ++n) {
			const size_t slot = n % pool.size();
			if (n >= pool.size())
				sent = gates[slot].released().wait(10s).ok() &&
				       gates[slot].reset().ok();
			if (sent) {
				auto delivered = (*sender)->send(*pool[slot]);
				sent = delivered.ok() && *delivered == 1;
			}
			if ((n + 1) % every == 0)
				samples.take();
		}
	} // Bye
	const double seconds =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	int status = 0;
	waitpid(child, &status, 0);
	const bool producerFlat = samples.flat(frames, seconds);
	const bool consumerOk = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!consumerOk)
		std::printf("soak transport consumer: failed (exit %d)\n",
			    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return sent && producerFlat && consumerOk;
}

} // namespace

int main(int argc, char **argv)
{
	const uint64_t frames = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 20000;
	if (frames < 10) {
		std::fprintf(stderr, "usage: %s [FRAMES >= 10]\n", argv[0]);
		return 2;
	}
	// Forks happen before GStreamer starts any thread in this process.
	const bool transport = soakTransport(frames);
	const std::string path =
		"/tmp/gpuhandle-soak-elements-" + std::to_string(getpid()) + ".sock";
	std::fflush(stdout);
	const pid_t producer = fork();
	if (producer == 0) {
		gst_init(nullptr, nullptr);
		_exit(soakPipeline("gpuhandlesink producer",
				   source(frames) +
					   " ! gpuhandleupload backend=memfd ! gpuhandlesink "
					   "name=sink sync=false max-consumers=1 socket-path=" +
					   path + " wait-for-consumers=1",
				   frames)
			      ? 0
			      : 1);
	}
	gst_init(&argc, &argv);
	const bool consumer = soakPipeline(
		"gpuhandlesrc consumer",
		"gpuhandlesrc socket-path=" + path +
			" connect-timeout=10000000000 ! gpuhandledownload ! fakesink name=sink sync=false",
		frames);
	int status = 0;
	waitpid(producer, &status, 0);
	const bool elements = consumer && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	const bool pipeline = soakPipeline(
		"upload/download (memfd)",
		source(frames) + " ! gpuhandleupload backend=memfd ! gpuhandledownload ! fakesink "
				 "name=sink sync=false",
		frames);
	const bool ok = transport && elements && pipeline;
	std::printf("soak: %llu frames each through the transport, gpuhandlesink/gpuhandlesrc and "
		    "upload/download: %s\n",
		    static_cast<unsigned long long>(frames), ok ? "memory and fds flat" : "FAILED");
	return ok ? 0 : 1;
}
