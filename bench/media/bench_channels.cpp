// The channel benchmark (issue 21): N producer processes of live 1080p30 NV12 into N consumer
// processes, through `gpuhandlesink ! gpuhandlesrc` and, side by side, GStreamer's own
// `shmsink ! shmsrc`: the CPU time each frame costs both processes, and the most channels that
// keep every frame on time on this machine; and the CPU per frame when each consumer reads the
// frames it gets (maps each buffer and reads a byte of every page), as a real one would.
//
// Each process is a fork of this program (made before GStreamer starts here) that runs its
// pipeline, measures its own CPU time (getrusage) and, for consumers, the frames that arrived
// within a window every process shares, then reports both through a pipe. Start-up (plugin
// loading, negotiation) falls before the window and is not counted.
#include "bench_common.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <gst/gst.h>

using namespace gpuhandle::bench;

namespace {

constexpr int kFps = 30;
// The most channels the search tries (a machine that takes more reports this many).
constexpr int kMostTried = 128;
constexpr const char *kCaps = "video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1";
// A channel is on time when its consumer got at least this share of the frames the window holds
// (one frame either side of a window edge is chance, not lateness).
constexpr double kOnTimeShare = 0.97;

struct Transport {
	const char *name;
	std::string producer; // "%s" is the socket path
	std::string consumer;
};

const Transport kGpuHandle{
	"gpuhandlesink ! gpuhandlesrc",
	std::string("videotestsrc is-live=true pattern=black ! ") + kCaps +
		" ! gpuhandlesink socket-path=%s",
	"gpuhandlesrc socket-path=%s connect-timeout=10000000000 ! fakesink name=sink sync=false"
};
const Transport kShm{ "shmsink ! shmsrc",
		      std::string("videotestsrc is-live=true pattern=black ! ") + kCaps +
			      " ! shmsink socket-path=%s wait-for-connection=false sync=false",
		      std::string("shmsrc socket-path=%s is-live=true do-timestamp=true ! ") +
			      kCaps + " ! fakesink name=sink sync=false" };

double monotonicSeconds()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// This process's CPU time so far: user and system seconds.
struct Cpu {
	double user = 0;
	double system = 0;
};

Cpu cpuSeconds()
{
	rusage usage{};
	getrusage(RUSAGE_SELF, &usage);
	auto seconds = [](const timeval &t) {
		return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
	};
	return { seconds(usage.ru_utime), seconds(usage.ru_stime) };
}

std::string withSocket(const std::string &pattern, const std::string &socket)
{
	std::string out = pattern;
	out.replace(out.find("%s"), 2, socket);
	return out;
}

std::atomic<uint64_t> g_frames{ 0 };
std::atomic<uint64_t> g_bytesRead{ 0 }; // kept, so that the reads are not optimised away

GstPadProbeReturn countFrame(GstPad *, GstPadProbeInfo *, gpointer)
{
	g_frames.fetch_add(1, std::memory_order_relaxed);
	return GST_PAD_PROBE_OK;
}

// A consumer that reads what it gets: maps the buffer and reads one byte of every 4 KiB page.
GstPadProbeReturn readFrame(GstPad *, GstPadProbeInfo *info, gpointer)
{
	GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
	GstMapInfo map;
	if (buffer && gst_buffer_map(buffer, &map, GST_MAP_READ)) {
		uint64_t sum = 0;
		for (gsize at = 0; at < map.size; at += 4096)
			sum += map.data[at];
		g_bytesRead.fetch_add(sum + 1, std::memory_order_relaxed);
		gst_buffer_unmap(buffer, &map);
	}
	return countFrame(nullptr, info, nullptr);
}

// The child: plays `description` from now to `end` (a consumer reading its frames when `read`),
// and writes "frames user-seconds
// system-seconds error" for the window [start, end) to `fd`; then plays on until `stop` (a
// producer outlives its consumer's window, whose end would otherwise see it go). Never returns.
[[noreturn]] void runChild(const std::string &description, double start, double end, double stop,
			   bool read, int fd)
{
	gst_init(nullptr, nullptr);
	std::string error = "-";
	GError *parseError = nullptr;
	GstElement *pipeline = gst_parse_launch(description.c_str(), &parseError);
	if (!pipeline) {
		dprintf(fd, "0 0 %s\n", parseError ? parseError->message : "parse");
		_exit(1);
	}
	if (GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink")) {
		GstPad *pad = gst_element_get_static_pad(sink, "sink");
		gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, read ? readFrame : countFrame,
				  nullptr, nullptr);
		gst_object_unref(pad);
		gst_object_unref(sink);
	}
	gst_element_set_state(pipeline, GST_STATE_PLAYING);
	GstBus *bus = gst_element_get_bus(pipeline);
	auto pollErrors = [&](double until) {
		while (monotonicSeconds() < until) {
			const double left = until - monotonicSeconds();
			GstMessage *message = gst_bus_timed_pop_filtered(
				bus, static_cast<GstClockTime>(std::max(left, 0.0) * GST_SECOND),
				GST_MESSAGE_ERROR);
			if (!message)
				continue;
			GError *err = nullptr;
			gst_message_parse_error(message, &err, nullptr);
			if (error == "-")
				error = err ? err->message : "error";
			g_clear_error(&err);
			gst_message_unref(message);
		}
	};
	pollErrors(start);
	const uint64_t framesBefore = g_frames.load();
	const Cpu before = cpuSeconds();
	pollErrors(end);
	const uint64_t frames = g_frames.load() - framesBefore;
	const Cpu after = cpuSeconds();
	for (char &c : error)
		if (c == '\n')
			c = ' ';
	dprintf(fd, "%llu %.6f %.6f %s\n", static_cast<unsigned long long>(frames),
		after.user - before.user, after.system - before.system, error.c_str());
	close(fd);
	pollErrors(stop);
	// Torn down, so that shmsink unlinks its shared memory (the parent removes what a killed
	// one leaves).
	gst_element_set_state(pipeline, GST_STATE_NULL);
	_exit(0);
}

// Removes the shared-memory files shmsink made in process `pid` ("/dev/shm/shmpipe.PID.N", PID
// in five columns), which it unlinks only when torn down.
void removeShmOf(pid_t pid)
{
	char prefix[64];
	std::snprintf(prefix, sizeof prefix, "shmpipe.%5d.", static_cast<int>(pid));
	if (DIR *dir = opendir("/dev/shm")) {
		while (dirent *entry = readdir(dir))
			if (std::strncmp(entry->d_name, prefix, std::strlen(prefix)) == 0)
				unlink((std::string("/dev/shm/") + entry->d_name).c_str());
		closedir(dir);
	}
}

struct Child {
	pid_t pid = -1;
	int fd = -1;
	bool consumer = false;
};

Child spawn(const std::string &description, double start, double end, bool consumer, bool read)
{
	const double stop = consumer ? end : end + 1.0;
	int fds[2];
	if (pipe(fds) != 0)
		return {};
	const pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		runChild(description, start, end, stop, read, fds[1]);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return {};
	}
	return { pid, fds[0], consumer };
}

struct Outcome {
	bool ran = false;       // every process ran and reported
	bool onTime = false;    // every consumer got its frames
	double cpuPerFrame = 0; // seconds of CPU (producer + consumer) per frame delivered
	// The same by role and kind: producer user, producer system, consumer user, consumer
	// system.
	double parts[4] = {};
	uint64_t frames = 0;
	std::string error{};
};

// N channels of `transport` for `seconds` after `warmup` seconds; consumers read their frames
// when `reading`.
Outcome runChannels(const Transport &transport, int n, double warmup, double seconds,
		    const std::string &dir, bool reading = false)
{
	// Every producer first, then (once their sockets exist: shmsrc does not wait for one) every
	// consumer; the window opens `warmup` seconds after the last one started, plus the time the
	// processes take to start side by side (about 0.1 s of CPU each, on two cores).
	constexpr double kSocketsUp = 0.5;
	const double start = monotonicSeconds() + kSocketsUp + warmup + 0.1 * n;
	const double end = start + seconds;
	std::vector<Child> children;
	auto socketOf = [&](int i) { return dir + "/" + std::to_string(i) + ".sock"; };
	for (int i = 0; i < n; i++) {
		unlink(socketOf(i).c_str());
		children.push_back(spawn(withSocket(transport.producer, socketOf(i)), start, end,
					 false, false));
	}
	g_usleep(static_cast<gulong>(kSocketsUp * 1e6));
	for (int i = 0; i < n; i++)
		children.push_back(spawn(withSocket(transport.consumer, socketOf(i)), start, end,
					 true, reading));
	Outcome out;
	out.ran = true;
	out.onTime = true;
	double cpu = 0;
	const auto expected = static_cast<uint64_t>(seconds * kFps * kOnTimeShare);
	for (Child &child : children) {
		if (child.pid < 0) {
			out.ran = false;
			continue;
		}
		char line[512] = {};
		ssize_t got = 0, total = 0;
		while (total < static_cast<ssize_t>(sizeof line) - 1 &&
		       (got = read(child.fd, line + total, sizeof line - 1 - total)) > 0)
			total += got;
		close(child.fd);
		int status = 0;
		// Children that hang past their time are ended: they reported already.
		for (int tries = 0; waitpid(child.pid, &status, WNOHANG) == 0; tries++) {
			if (tries == 60)
				kill(child.pid, SIGKILL);
			g_usleep(100000);
		}
		removeShmOf(child.pid);
		unsigned long long frames = 0;
		double user = 0, system = 0;
		char error[400] = {};
		if (std::sscanf(line, "%llu %lf %lf %399[^\n]", &frames, &user, &system, error) <
		    3) {
			out.ran = false;
			out.error = "a process reported nothing";
			continue;
		}
		if (std::strcmp(error, "-") != 0 && out.error.empty())
			out.error = error;
		cpu += user + system;
		out.parts[child.consumer ? 2 : 0] += user;
		out.parts[child.consumer ? 3 : 1] += system;
		if (child.consumer) {
			out.frames += frames;
			if (frames < expected)
				out.onTime = false;
		}
	}
	for (int i = 0; i < n; i++)
		unlink(socketOf(i).c_str());
	const double perFrame = out.frames ? 1.0 / static_cast<double>(out.frames) : 0;
	out.cpuPerFrame = cpu * perFrame;
	for (double &part : out.parts)
		part *= perFrame;
	if (!out.error.empty())
		out.ran = false;
	return out;
}

// The round with the median CPU per frame, among those that ran (null when none did).
const Outcome *medianOutcome(const std::vector<Outcome> &outcomes)
{
	std::vector<const Outcome *> ran;
	for (const Outcome &o : outcomes)
		if (o.ran)
			ran.push_back(&o);
	if (ran.empty())
		return nullptr;
	std::sort(ran.begin(), ran.end(), [](const Outcome *a, const Outcome *b) {
		return a->cpuPerFrame < b->cpuPerFrame;
	});
	return ran[ran.size() / 2];
}

// The rounds' CPU per frame, "a-b us" (or one figure).
std::string spread(const std::vector<Outcome> &outcomes)
{
	double low = 0, high = 0;
	bool any = false;
	for (const Outcome &o : outcomes) {
		if (!o.ran)
			continue;
		low = any ? std::min(low, o.cpuPerFrame) : o.cpuPerFrame;
		high = any ? std::max(high, o.cpuPerFrame) : o.cpuPerFrame;
		any = true;
	}
	char text[64];
	if (low == high)
		std::snprintf(text, sizeof text, "%.0f us", low * 1e6);
	else
		std::snprintf(text, sizeof text, "%.0f-%.0f us", low * 1e6, high * 1e6);
	return text;
}

// Where one transport's CPU per frame goes.
std::string parts(const Outcome &o)
{
	char text[160];
	std::snprintf(text, sizeof text,
		      "producer %.0f us user + %.0f us system, consumer %.0f + %.0f",
		      o.parts[0] * 1e6, o.parts[1] * 1e6, o.parts[2] * 1e6, o.parts[3] * 1e6);
	return text;
}

bool hasElements()
{
	for (const char *name : { "gpuhandlesink", "gpuhandlesrc", "shmsink", "shmsrc" }) {
		GstElementFactory *factory = gst_element_factory_find(name);
		if (!factory)
			return false;
		gst_object_unref(factory);
	}
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	const Options options = parseOptions(argc, argv);
	Report report("channels: N live 1080p30 NV12 producer processes into N consumers", options);
	char dirTemplate[] = "/tmp/gpuhandle-channels.XXXXXX";
	const char *dir = mkdtemp(dirTemplate);
	if (!dir)
		return 1;
	// Whether the elements are there is asked in a child: GStreamer must not start here before
	// the forks.
	if (const pid_t probe = fork(); probe == 0) {
		gst_init(nullptr, nullptr);
		_exit(hasElements() ? 0 : 77);
	} else {
		int status = 0;
		if (probe < 0 || waitpid(probe, &status, 0) != probe || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			std::printf(
				"  skip: gpuhandlesink, gpuhandlesrc, shmsink or shmsrc is missing\n");
			rmdir(dir);
			return 77;
		}
	}
	const double warmup = options.shortMode ? 1.0 : 1.5;
	const double seconds = options.shortMode ? 1.0 : 5.0;

	// One channel each: the CPU a frame costs the two processes, plainly and with consumers
	// that read every frame (what mapping a received frame costs). One 5 s window of one
	// channel moves by 10-25% between runs of the same thing, so full mode takes the median of
	// three interleaved rounds, each transport going first in turn.
	const int rounds = options.shortMode ? 1 : 3;
	for (const bool reading : { false, true }) {
		std::vector<Outcome> shm, gh;
		for (int r = 0; r < rounds; r++) {
			for (int first = 0; first < 2; first++) {
				const bool shmNow = (first == 0) == (r % 2 == 0);
				(shmNow ? shm : gh)
					.push_back(runChannels(shmNow ? kShm : kGpuHandle, 1,
							       warmup, seconds, dir, reading));
			}
		}
		const Outcome *shmMedian = medianOutcome(shm);
		const Outcome *ghMedian = medianOutcome(gh);
		if (!shmMedian || !ghMedian) {
			std::string why = "no process reported";
			for (const auto *outcomes : { &gh, &shm })
				for (const Outcome &o : *outcomes)
					if (!o.ran && !o.error.empty())
						why = o.error;
			std::printf("  one channel did not run%s: %s\n",
				    reading ? " (reading)" : "", why.c_str());
			if (reading)
				continue;
			rmdir(dir);
			return 1;
		}
		Result cpu;
		cpu.name = reading ? "channels/NV12/1920x1080@30/cpu-per-frame-read"
				   : "channels/NV12/1920x1080@30/cpu-per-frame";
		cpu.baseline = "shmsink ! shmsrc";
		cpu.baselineValue = shmMedian->cpuPerFrame * 1e9;
		cpu.value = ghMedian->cpuPerFrame * 1e9;
		cpu.targetRatio = 1.0;
		cpu.note = std::string(reading ? "each consumer mapping every buffer and reading a "
						 "byte of each page; "
					       : "") +
			   "producer and consumer process CPU per delivered frame, 1 channel" +
			   (rounds > 1 ? ", median of " + std::to_string(rounds) +
						 " interleaved rounds (" + spread(gh) +
						 " against " + spread(shm) + ")"
				       : std::string()) +
			   "; gpuhandle: " + parts(*ghMedian) + "; shm: " + parts(*shmMedian);
		report.add(cpu);
	}

	// The most channels on time, for each: N doubles while every consumer gets its frames,
	// then a bisection between the last N on time and the first late one.
	if (!options.shortMode) {
		int most[2] = { 0, 0 };
		const Transport *transports[2] = { &kGpuHandle, &kShm };
		for (int t = 0; t < 2; t++) {
			auto onTime = [&](int n) {
				const Outcome o =
					runChannels(*transports[t], n, warmup, seconds, dir);
				std::printf("  %s, %d channels: %s, %.0f us CPU per frame%s%s\n",
					    transports[t]->name, n, o.onTime ? "on time" : "late",
					    o.cpuPerFrame * 1e6, o.error.empty() ? "" : ": ",
					    o.error.c_str());
				std::fflush(stdout);
				return o.ran && o.onTime;
			};
			int good = 0, bad = kMostTried + 1;
			for (int n = 1; n <= kMostTried; n *= 2) {
				if (!onTime(n)) {
					bad = n;
					break;
				}
				good = n;
			}
			while (bad - good > 1 && good < kMostTried) {
				const int mid = (good + bad) / 2;
				(onTime(mid) ? good : bad) = mid;
			}
			most[t] = good;
		}
		Result channels;
		channels.name = "channels/NV12/1920x1080@30/most-on-time";
		channels.baseline = "shmsink ! shmsrc";
		// Lower is better in the report: the inverse of the channel count.
		channels.unit = "1/channels";
		channels.baselineValue = most[1] ? 1.0 / most[1] : 0;
		channels.value = most[0] ? 1.0 / most[0] : 0;
		channels.targetRatio = 1.0;
		auto count = [&](int n) {
			return std::to_string(n) + (n == kMostTried ? " (the most tried)" : "");
		};
		channels.note = "gpuhandle " + count(most[0]) + " channels, shm " + count(most[1]) +
				" (every consumer >= 97% of its frames)";
		report.add(channels);
	}
	rmdir(dir);
	return report.finish();
}
